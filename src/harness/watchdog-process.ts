// The harness's watchdog program (started by watchdog.ts, never by hand): `watchdog-process.ts
// <pid> <dir>`. It minds the devnet of `dir` that process <pid> (a test process) started. While
// <pid> holds the folder's lock it waits; once the lock is released (the devnet stopped) it exits;
// should <pid> be gone while still holding it — a file that failed, a worker vitest SIGTERMed after
// a timeout, SIGKILL — it stops what the devnet left running (its node processes are detached and
// would outlive the test process), then exits.
import { existsSync } from 'node:fs';
import { appendFile } from 'node:fs/promises';
import { join } from 'node:path';
import { stopLeftovers } from '../devnet/cleanup.ts';
import {
  acquireDevnetLock,
  DevnetBusyError,
  isHolderAlive,
  readLock,
  type DevnetLock,
  type LockHolder,
} from '../devnet/lock.ts';
import { WATCHDOG_LOG } from './watchdog.ts';

/**
 * How often the lock and the test process are looked at. Every harness devnet runs one of these
 * for as long as it runs: at 100 ms it cost 0.5 CPU s a minute (a third of an idle devnet's
 * manager), at 500 ms about 0.1; a dead test process's devnet is stopped at most half a second
 * later.
 */
const POLL_MS = 500;

async function main(parentPid: number, dir: string): Promise<void> {
  // The lock names the test process (it took the lock before starting this watchdog): its pid,
  // start time and command line, so a pid the kernel reuses later is not taken for it.
  const parent = await readLock(dir);
  if (parent?.process.pid !== parentPid) return;
  for (;;) {
    const holder = await readLock(dir);
    const held =
      holder?.process.pid === parent.process.pid &&
      holder.process.startTime === parent.process.startTime;
    if (!held) return; // released: the devnet stopped (or its start failed and cleaned up)
    if (!isHolderAlive(parent)) {
      await clean(dir, parent);
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

/**
 * Stops what the devnet of `dir` left, under its lock (taken over from the dead test process): a
 * devnet some other live process started there meanwhile is left alone.
 */
async function clean(dir: string, parent: LockHolder): Promise<void> {
  let lock: DevnetLock | undefined;
  try {
    lock = await acquireDevnetLock(dir);
    const stopped = await stopLeftovers(dir);
    if (stopped.length > 0 && existsSync(dir))
      await appendFile(
        join(dir, WATCHDOG_LOG),
        `${new Date().toISOString()} the test process (pid ${parent.process.pid}) ended without stopping this devnet; stopped ${stopped.length} process(es): ${stopped.map((s) => s.pid).join(', ')}\n`,
        { mode: 0o600 },
      );
  } catch (error: unknown) {
    if (!(error instanceof DevnetBusyError)) throw error;
  } finally {
    await lock?.release();
  }
}

await main(Number(process.argv[2]), process.argv[3] ?? '');
