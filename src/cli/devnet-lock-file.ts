// What `<dir>/devnet.lock` says: which devnet process holds the folder, and whether it still runs.
// Read by the devnet (src/devnet/lock.ts takes and releases the lock) and by the debug CLI, which
// sends a devnet's token only while the devnet that wrote it runs.
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { asStamp, isSameProcess, type ProcessStamp } from './process-stamp.ts';

export const LOCK_FILE = 'devnet.lock';

/** What the lock file says about its holder. */
export interface LockHolder {
  process: ProcessStamp;
  startedAt: string;
  /** Filled in once the devnet is ready. */
  urls?: { kubeApi?: string; chain?: string; manager?: string | null };
}

/** "pid 1234, started 15:34:02, manager http://…, chain http://…". */
export function describeHolder(holder: LockHolder): string {
  const parts = [`pid ${holder.process.pid}`, `started ${holder.startedAt}`];
  if (holder.urls?.manager) parts.push(`manager ${holder.urls.manager}`);
  if (holder.urls?.chain !== undefined) parts.push(`chain ${holder.urls.chain}`);
  if (holder.urls?.kubeApi !== undefined) parts.push(`kube ${holder.urls.kubeApi}`);
  return parts.join(', ');
}

/** The holder a lock file's text names (undefined when it is not a lock of this format). */
export function parseHolder(text: string): LockHolder | undefined {
  try {
    const value = JSON.parse(text) as Partial<LockHolder> | null;
    const stamp = asStamp(value?.process);
    if (stamp === undefined || typeof value?.startedAt !== 'string') return undefined;
    return { ...value, process: stamp, startedAt: value.startedAt };
  } catch {
    return undefined;
  }
}

/** The holder recorded in `<dir>/devnet.lock` (undefined when there is no readable lock). */
export async function readLock(dir: string): Promise<LockHolder | undefined> {
  try {
    return parseHolder(await readFile(join(dir, LOCK_FILE), 'utf8'));
  } catch {
    return undefined;
  }
}

/** True when the lock's holder is a process that still runs (same pid, start time, command). */
export function isHolderAlive(holder: LockHolder): boolean {
  return isSameProcess(holder.process);
}

/** Whether the devnet that wrote a folder's devnet.json still runs, from the folder's lock. */
export type DevnetState =
  /** The lock's holder runs, and it is the devnet that wrote the file: its manager and token. */
  | { kind: 'running'; holder: LockHolder }
  /** A devnet runs there, not the one that wrote the file (it is starting: not ready yet). */
  | { kind: 'starting'; holder: LockHolder }
  /** No lock (or none this code reads): the devnet stopped. */
  | { kind: 'stopped' }
  /** The lock of a process that is gone: the devnet was killed (SIGKILL) and left its files. */
  | { kind: 'gone'; holder: LockHolder };

/**
 * The state of the devnet of `dir` whose devnet.json says `written` (its pid and start, absent in
 * files of older devnets: the lock's holder is then taken to be the writer). Synchronous: two
 * small reads from /proc and the folder, for CLIs that decide whether to send a token.
 */
export function devnetStateOf(
  dir: string,
  written: { pid?: number; startedAt?: string },
): DevnetState {
  let holder: LockHolder | undefined;
  try {
    holder = parseHolder(readFileSync(join(dir, LOCK_FILE), 'utf8'));
  } catch {
    holder = undefined;
  }
  if (holder === undefined) return { kind: 'stopped' };
  if (!isHolderAlive(holder)) return { kind: 'gone', holder };
  const same =
    (written.pid === undefined || written.pid === holder.process.pid) &&
    (written.startedAt === undefined || written.startedAt === holder.startedAt);
  return same ? { kind: 'running', holder } : { kind: 'starting', holder };
}

/**
 * Why a devnet's manager is not asked, for a CLI's error: the folder, what happened, and what
 * starts one there (`npm start` for ./.devnet, named by `given` — how the user named the folder —
 * for any other).
 */
export function notRunningReason(dir: string, state: DevnetState, given?: string): string {
  const start = given === undefined ? 'npm start' : `npx cluster-manager devnet --dir ${given}`;
  switch (state.kind) {
    case 'running':
      return `the devnet in ${dir} runs (pid ${state.holder.process.pid})`;
    case 'starting':
      return `the devnet in ${dir} is starting (pid ${state.holder.process.pid}); try again once it prints \`devnet ready\``;
    case 'gone':
      return `the devnet in ${dir} is not running: its process (pid ${state.holder.process.pid}) was killed; \`${start}\` starts a new one (and stops what the killed one left)`;
    case 'stopped':
      return `the devnet in ${dir} is not running (it was stopped); \`${start}\` starts one (\`--resume\` tries to bring its chain back)`;
  }
}
