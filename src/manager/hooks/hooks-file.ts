// The hooks file (`--hooks-file` / CM_HOOKS_FILE, YAML or JSON): parsed and validated once at
// start, every problem reported together by name, then frozen hook definitions.
import { accessSync, constants, readFileSync, statSync } from 'node:fs';
import { isAbsolute } from 'node:path';
import { parse } from 'yaml';

/** Where in a validator's lifecycle a hook runs. */
export const HookPoint = {
  preStake: 'pre-stake',
  postStake: 'post-stake',
  preUnstake: 'pre-unstake',
  postUnstake: 'post-unstake',
  readiness: 'readiness',
} as const;
export type HookPoint = (typeof HookPoint)[keyof typeof HookPoint];

/** `block`: the action (or, after it, the hook) waits until the hook passes; `continue`: recorded, not waited on. */
export const FailurePolicy = { block: 'block', continue: 'continue' } as const;
export type FailurePolicy = (typeof FailurePolicy)[keyof typeof FailurePolicy];

export type HookTarget =
  | { readonly kind: 'command'; readonly command: readonly string[] }
  | { readonly kind: 'http'; readonly url: string };

export interface HookDefinition {
  /** Unique in the file; names the hook in reasons, Events, metrics and the journal. */
  readonly name: string;
  readonly on: HookPoint;
  readonly target: HookTarget;
  /** Extra environment of a command hook (the manager's own CM_HOOK_* variables win). */
  readonly env: Readonly<Record<string, string>>;
  readonly timeoutMs: number;
  readonly failurePolicy: FailurePolicy;
}

export const DEFAULT_HOOK_TIMEOUT_SECONDS = 30;
export const MAX_HOOK_TIMEOUT_SECONDS = 3_600;
const FIELDS = new Set(['name', 'on', 'command', 'http', 'env', 'timeoutSeconds', 'failurePolicy']);
const POINTS = new Set<string>(Object.values(HookPoint));
const NAME_RE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/;
const ENV_NAME_RE = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Every problem of a hooks file, each naming the hook (by index and name) and the field. */
export class HooksFileError extends Error {
  readonly code = 'HOOKS_FILE_INVALID';
  readonly problems: readonly string[];
  constructor(path: string, problems: readonly string[]) {
    super(`invalid hooks file ${path}:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'HooksFileError';
    this.problems = problems;
  }
}

/** What the file checks may look at on disk (tests replace it). */
export interface FileFacts {
  read(path: string): string;
  /** Permission bits of a file; throws when it does not exist. */
  mode(path: string): number;
  isExecutable(path: string): boolean;
}

export const diskFacts: FileFacts = {
  read: (path) => readFileSync(path, 'utf8'),
  mode: (path) => statSync(path).mode,
  isExecutable: (path) => {
    try {
      accessSync(path, constants.X_OK);
      return statSync(path).isFile();
    } catch {
      return false;
    }
  },
};

/**
 * Reads and validates the hooks file. Refuses a file (or a hook command) that users other than
 * its owner may write: whoever can edit it can make the manager run anything.
 */
export function loadHooksFile(path: string, facts: FileFacts = diskFacts): HookDefinition[] {
  let mode: number;
  let text: string;
  try {
    mode = facts.mode(path);
    text = facts.read(path);
  } catch (error: unknown) {
    throw new HooksFileError(path, [`cannot read the file: ${(error as Error).message}`]);
  }
  if ((mode & 0o022) !== 0)
    throw new HooksFileError(path, [
      `the file is writable by users other than its owner (mode ${(mode & 0o777).toString(8)}); chmod go-w it`,
    ]);
  let document: unknown;
  try {
    document = parse(text);
  } catch (error: unknown) {
    throw new HooksFileError(path, [`not YAML or JSON: ${(error as Error).message}`]);
  }
  const { hooks, problems } = parseHooks(document, facts);
  if (problems.length > 0) throw new HooksFileError(path, problems);
  return hooks;
}

/** Validates a parsed document `{hooks: [...]}`; returns the hooks and every problem found. */
export function parseHooks(
  document: unknown,
  facts: Pick<FileFacts, 'mode' | 'isExecutable'> = diskFacts,
): { hooks: HookDefinition[]; problems: string[] } {
  const problems: string[] = [];
  const hooks: HookDefinition[] = [];
  if (!isRecord(document) || !Array.isArray(document.hooks)) {
    return { hooks, problems: ['expected an object with a "hooks" list'] };
  }
  for (const key of Object.keys(document))
    if (key !== 'hooks') problems.push(`unknown top-level field "${key}"`);
  const names = new Set<string>();
  const perPoint = new Map<string, number>();
  document.hooks.forEach((raw: unknown, index: number) => {
    const where = `hooks[${index}]`;
    if (!isRecord(raw)) {
      problems.push(`${where}: expected an object`);
      return;
    }
    const before = problems.length;
    for (const key of Object.keys(raw))
      if (!FIELDS.has(key)) problems.push(`${where}: unknown field "${key}"`);
    const on = raw.on;
    if (typeof on !== 'string' || !POINTS.has(on)) {
      problems.push(
        `${where}: unknown hook ${JSON.stringify(on)}; expected one of ${[...POINTS].join(', ')}`,
      );
    }
    const count = (perPoint.get(String(on)) ?? 0) + 1;
    perPoint.set(String(on), count);
    const name = raw.name ?? `${String(on)}-${count}`;
    const label = `${where} (${typeof name === 'string' ? name : '?'})`;
    if (typeof name !== 'string' || !NAME_RE.test(name))
      problems.push(`${label}: name must match ${NAME_RE.source}`);
    else if (names.has(name)) problems.push(`${label}: duplicate name "${name}"`);
    else names.add(name);

    const target = parseTarget(raw, label, problems, facts);
    const env = parseEnv(raw.env, label, problems);
    const timeout = raw.timeoutSeconds ?? DEFAULT_HOOK_TIMEOUT_SECONDS;
    if (
      typeof timeout !== 'number' ||
      !Number.isFinite(timeout) ||
      timeout <= 0 ||
      timeout > MAX_HOOK_TIMEOUT_SECONDS
    )
      problems.push(
        `${label}: bad timeoutSeconds ${JSON.stringify(timeout)}; expected a number above 0 and at most ${MAX_HOOK_TIMEOUT_SECONDS}`,
      );
    const policy = raw.failurePolicy ?? FailurePolicy.block;
    if (policy !== FailurePolicy.block && policy !== FailurePolicy.continue)
      problems.push(
        `${label}: bad failurePolicy ${JSON.stringify(policy)}; expected block or continue`,
      );
    if (problems.length > before || target === undefined) return;
    hooks.push(
      Object.freeze({
        name: name as string,
        on: on as HookPoint,
        target,
        env,
        timeoutMs: Math.round((timeout as number) * 1000),
        failurePolicy: policy as FailurePolicy,
      }),
    );
  });
  return { hooks, problems };
}

function parseTarget(
  raw: Record<string, unknown>,
  label: string,
  problems: string[],
  facts: Pick<FileFacts, 'mode' | 'isExecutable'>,
): HookTarget | undefined {
  const { command, http } = raw;
  if ((command === undefined) === (http === undefined)) {
    problems.push(`${label}: needs exactly one of "command" or "http"`);
    return undefined;
  }
  if (command !== undefined) {
    if (
      !Array.isArray(command) ||
      command.length === 0 ||
      !command.every((part) => typeof part === 'string')
    ) {
      problems.push(`${label}: command must be a non-empty list of strings (no shell)`);
      return undefined;
    }
    const program = command[0] as string;
    if (!isAbsolute(program)) {
      problems.push(`${label}: relative path ${JSON.stringify(program)}; use an absolute path`);
      return undefined;
    }
    if (!facts.isExecutable(program)) {
      problems.push(`${label}: ${program} is not an executable file`);
      return undefined;
    }
    if ((facts.mode(program) & 0o022) !== 0) {
      problems.push(`${label}: ${program} is writable by users other than its owner`);
      return undefined;
    }
    return { kind: 'command', command: Object.freeze([...command]) };
  }
  if (typeof http !== 'string') {
    problems.push(`${label}: http must be a URL string`);
    return undefined;
  }
  try {
    const url = new URL(http);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('protocol');
    if (url.username !== '' || url.password !== '') {
      problems.push(`${label}: http URL must not carry credentials`);
      return undefined;
    }
    return { kind: 'http', url: url.href };
  } catch {
    problems.push(`${label}: bad http URL ${JSON.stringify(http)}; expected http(s)://…`);
    return undefined;
  }
}

function parseEnv(raw: unknown, label: string, problems: string[]): Record<string, string> {
  if (raw === undefined) return {};
  if (!isRecord(raw)) {
    problems.push(`${label}: env must be a map of NAME: value`);
    return {};
  }
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(raw)) {
    if (!ENV_NAME_RE.test(name)) problems.push(`${label}: bad env name ${JSON.stringify(name)}`);
    else if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean')
      problems.push(`${label}: env ${name} must be a string`);
    else env[name] = String(value);
  }
  return Object.freeze(env);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
