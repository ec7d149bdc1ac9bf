// Runs one hook once, through the command or HTTP port, and says in words how it went. It never
// sees a key: what a hook gets is the validator's id and address, the phase and the chain URL.
import type { HookDefinition, HookPoint } from './hooks-file.ts';
import {
  SHOWN_OUTPUT_CHARS,
  type CommandPort,
  type GroupEnd,
  type HttpPort,
} from './hook-ports.ts';

/** What a hook is told about the action it runs around. */
export interface HookContext {
  readonly point: HookPoint;
  readonly validatorId: string;
  readonly address: string;
  readonly chainUrl: string;
  /** The action this run belongs to (the journal's key of the run). */
  readonly actionKey: string;
  /** A stake's service URL. */
  readonly serviceUrl?: string | undefined;
}

export type HookResult =
  /** `note`: what else happened (it left processes behind, and they were stopped). */
  | { readonly ok: true; readonly durationMs: number; readonly note?: string | undefined }
  | {
      readonly ok: false;
      readonly cancelled: boolean;
      readonly error: string;
      readonly durationMs: number;
    };

export interface HookRunnerPorts {
  readonly command: CommandPort;
  readonly http: HttpPort;
  /** PATH of a command hook (the manager's own, by default). */
  readonly path: string;
  readonly now: () => number;
}

/** The environment of a command hook: its own `env`, then the manager's variables over them. */
export function hookEnvironment(
  hook: HookDefinition,
  context: HookContext,
  path: string,
): Record<string, string> {
  return {
    PATH: path,
    ...hook.env,
    CM_HOOK_NAME: hook.name,
    CM_HOOK_PHASE: context.point,
    CM_VALIDATOR_ID: context.validatorId,
    CM_VALIDATOR_ADDRESS: context.address,
    CM_CHAIN_RPC_URL: context.chainUrl,
    CM_ACTION_KEY: context.actionKey,
    ...(context.serviceUrl === undefined ? {} : { CM_SERVICE_URL: context.serviceUrl }),
  };
}

/** The JSON body of an HTTP hook. */
export function hookBody(hook: HookDefinition, context: HookContext): Record<string, unknown> {
  return {
    hook: hook.name,
    phase: context.point,
    validator: {
      id: context.validatorId,
      address: context.address,
      ...(context.serviceUrl === undefined ? {} : { serviceUrl: context.serviceUrl }),
    },
    chainUrl: context.chainUrl,
    actionKey: context.actionKey,
  };
}

export async function runHook(
  hook: HookDefinition,
  context: HookContext,
  ports: HookRunnerPorts,
  signal: AbortSignal,
): Promise<HookResult> {
  const started = ports.now();
  const took = (): number => ports.now() - started;
  const fail = (error: string, cancelled = false): HookResult => ({
    ok: false,
    cancelled,
    error,
    durationMs: took(),
  });
  const seconds = `${hook.timeoutMs / 1000} s`;
  if (hook.target.kind === 'command') {
    const [file, ...args] = hook.target.command;
    const outcome = await ports.command.run({
      file: file ?? '',
      args,
      env: hookEnvironment(hook, context, ports.path),
      timeoutMs: hook.timeoutMs,
      signal,
      key: `${context.validatorId}|${hook.name}`,
    });
    switch (outcome.kind) {
      case 'exited': {
        const left = outcome.group === undefined ? '' : `; ${leftBehind(outcome.group)}`;
        return outcome.exitCode === 0
          ? { ok: true, durationMs: took(), ...(left === '' ? {} : { note: left.slice(2) }) }
          : fail(`exited with ${outcome.exitCode}${left}${shown(outcome.output)}`);
      }
      case 'timeout':
        return fail(`did not finish within ${seconds}${killed(outcome.group)}`);
      case 'cancelled':
        return fail('cancelled', true);
      case 'output-too-large':
        return fail(`wrote more output than allowed${killed(outcome.group)}`);
      case 'still-running':
        return fail(
          `not started again: ${outcome.processes} process(es) of its last run (process group ${outcome.pgid}) are still alive after SIGKILL`,
        );
      case 'not-run':
        return fail(`could not run (${outcome.reason})`);
    }
  }
  const outcome = await ports.http.post({
    url: hook.target.url,
    body: hookBody(hook, context),
    timeoutMs: hook.timeoutMs,
    signal,
  });
  switch (outcome.kind) {
    case 'answered':
      return outcome.status >= 200 && outcome.status < 300
        ? { ok: true, durationMs: took() }
        : fail(`answered HTTP ${outcome.status}${shown(outcome.body)}`);
    case 'timeout':
      return fail(`did not answer within ${seconds}`);
    case 'cancelled':
      return fail('cancelled', true);
    case 'unreachable':
      return fail(`unreachable (${outcome.reason})`);
  }
}

/** The end of a process group a run had to stop, in words. */
function killed(group: GroupEnd | undefined): string {
  if (group === undefined) return ' (killed)';
  return `; killed its process group (${count(group.processes)}, ${how(group)})${survivors(group)}`;
}

/** A run that exited but left processes of its group behind. */
function leftBehind(group: GroupEnd): string {
  return `left ${count(group.processes)} behind; stopped (${how(group)})${survivors(group)}`;
}

function count(n: number): string {
  return `${n} process${n === 1 ? '' : 'es'}`;
}

function how(group: GroupEnd): string {
  return group.sigkill ? 'SIGTERM, then SIGKILL' : 'SIGTERM';
}

function survivors(group: GroupEnd): string {
  return group.survivors === 0
    ? ''
    : `; ${count(group.survivors)} still alive: not run again until they are gone`;
}

function shown(output: string): string {
  const text = output.trim().replace(/\s+/g, ' ');
  if (text === '') return '';
  return `: ${text.length > SHOWN_OUTPUT_CHARS ? `…${text.slice(-SHOWN_OUTPUT_CHARS)}` : text}`;
}
