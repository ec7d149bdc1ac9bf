// `<dir>/devnet.json`, the file through which a running devnet tells its clients where it is:
// its shape, and how a client finds it (`--devnet DIR`, else the nearest `.devnet` holding one,
// from the current folder up, as git finds `.git`).
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { devnetStateOf, notRunningReason, type DevnetState } from './devnet-lock-file.ts';
import { CliError, ExitCode } from './program.ts';

/** The folder a devnet uses when none is given (relative to the current folder). */
export const DEFAULT_DEVNET_DIR = '.devnet';

/**
 * What `<dir>/devnet.json` holds: everything a client needs to use the devnet. Fields are only
 * ever added: a reader of an older file sees the same names with the same meaning.
 */
export interface DevnetInfo {
  kubeApi: string;
  kubeconfig: string;
  namespace: string;
  statefulSet: string;
  validators: number;
  keys: number;
  pacemaker: 'auto' | 'manual';
  blockIntervalMs: number;
  txMode: 'rpc' | 'cli';
  /**
   * The chain's fidelity profile (`v1`: Pocket V1 as its code runs). Absent in files of older
   * devnets: `intended`.
   */
  fidelity?: 'intended' | 'v1';
  /** The chain RPC (the devnet's full node; with fidelity v1 the first validator's). */
  chainRpcUrl: string;
  /** The control RPC of the manager the devnet started; null with `--no-manager`. */
  managerUrl: string | null;
  token: string | null;
  managerLog: string | null;
  dir: string;
  /**
   * Where a manager of this devnet listens: the devnet's own, or (with `--no-manager`) one
   * started from `manager.env`. Absent in files of older devnets.
   */
  managerRpcUrl?: string;
  /** The devnet's process and when it started (absent in files of older devnets). */
  pid?: number;
  startedAt?: string;
  /**
   * When the devnet stopped cleanly; its `token` is then null (a stopped devnet's token is
   * nobody's to send). Absent while it runs, and in a file a killed devnet left.
   */
  stoppedAt?: string;
}

/**
 * The nearest `.devnet` folder that holds a devnet.json: in `cwd`, else in its parent, and so on
 * up to the root (as git finds `.git`), so a command typed in `P/sub/dir` finds `P/.devnet`.
 * Undefined when there is none.
 */
export function nearestDevnetDir(cwd: string): string | undefined {
  for (let dir = resolve(cwd); ;) {
    const candidate = join(dir, DEFAULT_DEVNET_DIR);
    if (existsSync(join(candidate, 'devnet.json'))) return candidate;
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

/**
 * Whether a command typed in `cwd` finds the devnet folder `dir` by itself: `dir` is a `.devnet`
 * in `cwd` or above it, and no `.devnet` with a devnet.json lies nearer. (Looks at the disk only
 * for folders between the two.)
 */
export function findsByItself(cwd: string, dir: string): boolean {
  const folder = resolve(dir);
  const home = dirname(folder);
  const here = resolve(cwd);
  const up = relative(home, here);
  if (basename(folder) !== DEFAULT_DEVNET_DIR || up.startsWith('..') || isAbsolute(up))
    return false;
  for (let d = here; d !== home; d = dirname(d))
    if (existsSync(join(d, DEFAULT_DEVNET_DIR, 'devnet.json'))) return false;
  return true;
}

/** A devnet found for a client command: its info and the folder it came from. */
export interface FoundDevnet {
  info: DevnetInfo;
  dir: string;
  /** Given explicitly (`--devnet`), rather than found from the current folder up. */
  explicit: boolean;
  /** As the user named the folder (`--devnet`'s value); undefined for a `.devnet` found by itself. */
  given: string | undefined;
  /** Whether the devnet that wrote the file still runs (its lock): only then is its token used. */
  state: DevnetState;
}

/** The error for a devnet found but not running: nothing is sent to the URL its file names. */
export function notRunning(found: FoundDevnet): CliError {
  return new CliError(
    `${notRunningReason(found.dir, found.state, found.given)}; pass --server to ask another manager`,
    ExitCode.failed,
  );
}

/**
 * Reads `<dir>/devnet.json`. Undefined when the file does not exist; a file that cannot be read
 * or is not a devnet's is a CliError naming it.
 */
export async function readDevnetInfo(dir: string): Promise<DevnetInfo | undefined> {
  const path = join(resolve(dir), 'devnet.json');
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error: unknown) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return undefined;
    throw new CliError(`cannot read ${path} (${code ?? 'error'})`, ExitCode.failed);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new CliError(`${path} is not JSON; start the devnet again`, ExitCode.failed);
  }
  const info = parsed as Partial<DevnetInfo> | null;
  if (
    typeof info !== 'object' ||
    info === null ||
    typeof info.chainRpcUrl !== 'string' ||
    typeof info.kubeconfig !== 'string' ||
    typeof info.namespace !== 'string' ||
    !(typeof info.managerUrl === 'string' || info.managerUrl === null)
  )
    throw new CliError(`${path} is not a devnet's devnet.json`, ExitCode.failed);
  return info as DevnetInfo;
}

/**
 * The devnet a client command talks to: `--devnet DIR` when given (it must exist), else the
 * nearest `.devnet` with a devnet.json from the current folder up, else undefined.
 */
export async function findDevnet(options: {
  devnet?: string | undefined;
  cwd?: string;
}): Promise<FoundDevnet | undefined> {
  const cwd = options.cwd ?? process.cwd();
  if (options.devnet !== undefined) {
    const dir = resolve(cwd, options.devnet);
    const info = await readDevnetInfo(dir);
    if (info === undefined)
      throw new CliError(
        `no devnet in ${dir} (no devnet.json): start one with \`cluster-manager devnet --dir ${options.devnet}\``,
        ExitCode.failed,
      );
    return { info, dir, explicit: true, given: options.devnet, state: devnetStateOf(dir, info) };
  }
  const dir = nearestDevnetDir(cwd);
  const info = dir === undefined ? undefined : await readDevnetInfo(dir);
  return dir === undefined || info === undefined
    ? undefined
    : { info, dir, explicit: false, given: undefined, state: devnetStateOf(dir, info) };
}

/** The control RPC of a devnet's manager (its own, or one started from its manager.env). */
export function managerUrlOf(info: DevnetInfo): string | undefined {
  return info.managerUrl ?? info.managerRpcUrl;
}
