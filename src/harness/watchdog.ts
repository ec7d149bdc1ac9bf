// Every process a harness started is stopped even when the test process never gets to stop it: a
// failed or timed-out test whose worker vitest SIGTERMs (then SIGKILLs 500 ms later; no exit hook
// runs), a worker killed outright. Each devnet a harness starts gets a watchdog process
// (watchdog-process.ts) in a session of its own, which outlives the test process and stops what
// the devnet left once that process is gone while it still held the devnet's folder.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** Where a watchdog that stopped something says so (in the devnet's folder). */
export const WATCHDOG_LOG = 'harness-watchdog.log';

const PROGRAM = fileURLToPath(new URL('./watchdog-process.ts', import.meta.url));

/**
 * Starts the watchdog of the devnet folder `dir` (absolute), whose lock this process holds
 * already: it exits by itself once the lock is released (the devnet stopped), and stops the
 * devnet's processes should this process end while holding it. Returns its pid.
 */
export function startWatchdog(dir: string): number | undefined {
  const child = spawn(process.execPath, [PROGRAM, String(process.pid), dir], {
    // Its own session: vitest's SIGTERM to the worker and a Ctrl-C in the terminal (the
    // foreground group) do not reach it.
    detached: true,
    stdio: 'ignore',
    cwd: '/',
    env: {
      PATH: process.env.PATH ?? '',
      ...(process.env.NODE_COMPILE_CACHE === undefined
        ? {}
        : { NODE_COMPILE_CACHE: process.env.NODE_COMPILE_CACHE }),
    },
  });
  // It never keeps the test process alive.
  child.unref();
  return child.pid;
}
