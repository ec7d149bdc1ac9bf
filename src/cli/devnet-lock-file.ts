// What `<dir>/devnet.lock` says: which devnet process holds the folder, and whether it still runs.
// Read by the devnet (src/devnet/lock.ts takes and releases the lock) and by the debug CLI, which
// sends a devnet's token only while the devnet that wrote it runs.
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
