// The devnet's claim on its folder: `<dir>/devnet.lock`, taken before anything in the folder is
// touched. A second devnet on the same folder is refused at once and told which one runs there;
// the lock of a devnet that is gone (its process no longer runs) is taken over.
import { randomBytes } from 'node:crypto';
import { link, mkdir, readFile, rename, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  describeHolder,
  isHolderAlive,
  LOCK_FILE,
  parseHolder,
  readLock,
  type LockHolder,
} from '../cli/devnet-lock-file.ts';
import { stampOf, type ProcessStamp } from '../cli/process-stamp.ts';

// The reading side lives with the CLI, which checks a devnet is alive before it sends its token.
export { describeHolder, isHolderAlive, LOCK_FILE, readLock, type LockHolder };

/** The folder is held by a devnet that is still running. */
export class DevnetBusyError extends Error {
  readonly holder: LockHolder;
  constructor(dir: string, holder: LockHolder) {
    super(`${dir} is in use by a running devnet (${describeHolder(holder)})`);
    this.name = 'DevnetBusyError';
    this.holder = holder;
  }
}

export interface DevnetLock {
  readonly dir: string;
  /** When this devnet took the folder (ISO 8601): what a refused start is told. */
  readonly startedAt: string;
  /** A devnet that had died holding the folder, whose lock this one took over. */
  readonly takenOverFrom: LockHolder | undefined;
  /** Records the devnet's URLs in the lock, for whoever is refused next. */
  update(urls: NonNullable<LockHolder['urls']>): Promise<void>;
  /** Removes the lock if it is still this process's. */
  release(): Promise<void>;
}

/**
 * Takes `<dir>/devnet.lock` for this process (creating `dir`, mode 700, if needed). Throws
 * DevnetBusyError when a running devnet holds it; takes over the lock of one that is gone.
 * The file appears whole or not at all (written aside, then hard-linked into place).
 */
export async function acquireDevnetLock(dir: string): Promise<DevnetLock> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const me = stampOf(process.pid);
  if (me === undefined) throw new Error('cannot read this process from /proc');
  const holder: LockHolder = { process: me, startedAt: new Date().toISOString() };
  const path = join(dir, LOCK_FILE);
  let takenOverFrom: LockHolder | undefined;
  for (let attempt = 0; ; attempt++) {
    if (await placeLock(path, holder)) break;
    const current = await readLock(dir);
    if (current === undefined) {
      // Unreadable: a lock of a format this code does not know; never guess it is stale.
      if (attempt < 3) continue;
      throw new Error(`${path} exists but cannot be read; remove it if no devnet runs there`);
    }
    if (isHolderAlive(current)) throw new DevnetBusyError(dir, current);
    if (attempt >= 3) throw new DevnetBusyError(dir, current);
    if (await setAsideStale(path, current)) takenOverFrom ??= current;
  }
  return {
    dir,
    startedAt: holder.startedAt,
    takenOverFrom,
    update: async (urls) => {
      holder.urls = { ...holder.urls, ...urls };
      const aside = `${path}.${randomBytes(4).toString('hex')}`;
      await writeFile(aside, `${JSON.stringify(holder)}\n`, { mode: 0o600 });
      if (isOurs(await readLock(dir), me)) await rename(aside, path);
      else await unlink(aside).catch(() => undefined);
    },
    release: async () => {
      if (isOurs(await readLock(dir), me)) await unlink(path).catch(() => undefined);
    },
  };
}

function isOurs(holder: LockHolder | undefined, me: ProcessStamp): boolean {
  return (
    holder !== undefined &&
    holder.process.pid === me.pid &&
    holder.process.startTime === me.startTime
  );
}

/** Creates the lock atomically with its content; false when a lock is already there. */
async function placeLock(path: string, holder: LockHolder): Promise<boolean> {
  const aside = `${path}.${randomBytes(4).toString('hex')}`;
  await writeFile(aside, `${JSON.stringify(holder)}\n`, { mode: 0o600 });
  try {
    await link(aside, path);
    return true;
  } catch (error: unknown) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  } finally {
    await unlink(aside).catch(() => undefined);
  }
}

/**
 * Moves a stale lock out of the way. Two starts may find the same stale lock: the lock is first
 * renamed to a name of this process, then checked to be the stale one; a fresh lock moved by
 * mistake is put back (link fails if a third start placed its own meanwhile).
 */
async function setAsideStale(path: string, stale: LockHolder): Promise<boolean> {
  const mine = `${path}.stale-${process.pid}`;
  try {
    await rename(path, mine);
  } catch {
    return false; // someone else moved it first; try placing ours again
  }
  const moved = parseHolder(await readFile(mine, 'utf8').catch(() => ''));
  const same =
    moved !== undefined &&
    moved.process.pid === stale.process.pid &&
    moved.process.startTime === stale.process.startTime;
  if (!same) await link(mine, path).catch(() => undefined);
  await unlink(mine).catch(() => undefined);
  return same;
}
