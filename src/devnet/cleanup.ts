// Cleaning a devnet's folder: stopping the processes a dead devnet left running (found by their
// recorded pids and checked, or by a working folder inside the devnet's), and removing the files
// a devnet writes. Used by a fresh start and by `cluster-manager devnet reset`.
import { readdir, rm, rmdir } from 'node:fs/promises';
import { join } from 'node:path';
import { acquireDevnetLock, type LockHolder } from './lock.ts';
import {
  managersOf,
  processesInside,
  PROCESSES_FILE,
  recordedProcesses,
} from './process-record.ts';
import { isSameProcess, isStillExiting, stampOf, type ProcessStamp } from '../cli/process-stamp.ts';

/** Everything a devnet writes in its folder (the lock aside); nothing else there is touched. */
export const DEVNET_FILES = [
  'devnet.json',
  'kubeconfig',
  // The manager's kubeconfig: its ServiceAccount's token (manager-identity.ts).
  'manager-kubeconfig',
  'manager.env',
  'manager.log',
  'journal.sqlite',
  'journal.sqlite-wal',
  'journal.sqlite-shm',
  'emulator',
  'chain',
  // Node's compile cache of the devnet's processes (ADR 0017), unless NODE_COMPILE_CACHE says else.
  'compile-cache',
  PROCESSES_FILE,
] as const;

/**
 * What `--resume` keeps: the chain, its nodes' folders, the journal and the manager's log (and
 * the compile cache, which only makes the restart faster).
 */
export const RESUMED_FILES: readonly string[] = [
  'chain',
  'compile-cache',
  'emulator',
  'journal.sqlite',
  'journal.sqlite-wal',
  'journal.sqlite-shm',
  'manager.log',
];

/** Our own programs (sources or bundles): a process inside the folder that runs anything else is never signalled. */
const OURS = /(?:^|[\s/])(?:localnet-node|localnet-cli|cluster-manager)(?:\.ts|\.mjs)?(?:\s|$)/;

/**
 * Stops what a devnet of `dir` left running: the recorded processes that are still the same
 * processes (pid, start time, command line), processes of ours running inside the folder, and
 * its managers (found by their environment: one started just before the devnet died may not be
 * recorded yet).
 * SIGKILL: their chain and files are being thrown away. Waits until they are gone.
 */
export async function stopLeftovers(dir: string): Promise<ProcessStamp[]> {
  const targets = new Map<number, ProcessStamp>();
  for (const stamp of await recordedProcesses(dir)) targets.set(stamp.pid, stamp);
  for (const pid of await processesInside(join(dir, 'emulator'))) {
    const stamp = stampOf(pid);
    if (stamp !== undefined && OURS.test(stamp.command)) targets.set(pid, stamp);
  }
  for (const pid of managersOf(dir)) {
    const stamp = stampOf(pid);
    if (stamp !== undefined) targets.set(pid, stamp);
  }
  // The caller itself (a watchdog its devnet recorded as one of its processes) is not stopped.
  targets.delete(process.pid);
  for (const stamp of targets.values()) {
    // Checked again right before the signal: the pid must still be that process.
    if (!isSameProcess(stamp)) continue;
    try {
      process.kill(stamp.pid, 'SIGKILL');
    } catch {
      // gone meanwhile
    }
  }
  // Until every thread has exited: their ports are free only then (a --resume takes them again).
  const running = (stamp: ProcessStamp): boolean => isSameProcess(stamp) || isStillExiting(stamp);
  const deadline = Date.now() + 10_000;
  while ([...targets.values()].some(running)) {
    if (Date.now() > deadline) {
      const left = [...targets.values()].filter(running).map((s) => s.pid);
      throw new Error(`processes ${left.join(', ')} did not stop`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return [...targets.values()];
}

/** Removes the devnet's files from `dir` (not the lock, nor `keep`); returns the names removed. */
export async function removeDevnetFiles(
  dir: string,
  keep: readonly string[] = [],
): Promise<string[]> {
  const present = new Set(await readdir(dir).catch(() => []));
  const removed: string[] = [];
  for (const name of DEVNET_FILES) {
    if (!present.has(name) || keep.includes(name)) continue;
    await rm(join(dir, name), { recursive: true, force: true });
    removed.push(name);
  }
  return removed;
}

export interface ResetReport {
  /** The devnet that had held the folder, when it was gone without releasing it. */
  previous: LockHolder | undefined;
  stopped: ProcessStamp[];
  removed: string[];
}

/**
 * `cluster-manager devnet reset`: takes the folder's lock (refused with DevnetBusyError while a
 * devnet runs there), stops the leftovers, removes the files, then the lock and the folder if
 * nothing else is in it.
 */
export async function resetDevnet(dir: string): Promise<ResetReport> {
  const lock = await acquireDevnetLock(dir);
  try {
    const stopped = await stopLeftovers(dir);
    const removed = await removeDevnetFiles(dir);
    return { previous: lock.takenOverFrom, stopped, removed };
  } finally {
    await lock.release();
    await rmdir(dir).catch(() => undefined);
  }
}
