// `<dir>/devnet.json`, the file through which a running devnet tells its clients where it is:
// its shape, and how a client finds it (`--devnet DIR`, else `.devnet` in the current folder).
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
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

/** A devnet found for a client command: its info and the folder it came from. */
export interface FoundDevnet {
  info: DevnetInfo;
  dir: string;
  /** Given explicitly (`--devnet`), rather than found in the current folder. */
  explicit: boolean;
  /** As the user named the folder (`--devnet`'s value); undefined for ./.devnet found by itself. */
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
 * The devnet a client command talks to: `--devnet DIR` when given (it must exist), else
 * `.devnet` in the current folder when it has a devnet.json, else undefined.
 */
export async function findDevnet(options: {
  devnet?: string | undefined;
  cwd?: string;
}): Promise<FoundDevnet | undefined> {
  if (options.devnet !== undefined) {
    const dir = resolve(options.cwd ?? process.cwd(), options.devnet);
    const info = await readDevnetInfo(dir);
    if (info === undefined)
      throw new CliError(
        `no devnet in ${dir} (no devnet.json): start one with \`cluster-manager devnet --dir ${options.devnet}\``,
        ExitCode.failed,
      );
    return { info, dir, explicit: true, given: options.devnet, state: devnetStateOf(dir, info) };
  }
  const dir = resolve(options.cwd ?? process.cwd(), DEFAULT_DEVNET_DIR);
  const info = await readDevnetInfo(dir);
  return info === undefined
    ? undefined
    : { info, dir, explicit: false, given: undefined, state: devnetStateOf(dir, info) };
}

/** The control RPC of a devnet's manager (its own, or one started from its manager.env). */
export function managerUrlOf(info: DevnetInfo): string | undefined {
  return info.managerUrl ?? info.managerRpcUrl;
}
