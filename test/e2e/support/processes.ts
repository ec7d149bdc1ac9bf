// Which processes a test started, found through /proc (Linux): every descendant of a PID, and
// whether a PID still runs — so a test can prove it left nothing behind.
import { readdirSync, readFileSync } from 'node:fs';
import { createConnection } from 'node:net';
import { startTimeOf } from '../../../src/cli/process-stamp.ts';

/** PID → parent PID of every process we can see. */
function parents(): Map<number, number> {
  const map = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // pid (comm) state ppid …; comm may hold spaces and parentheses.
      const after = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      map.set(Number(entry), Number(after[1]));
    } catch {
      // gone meanwhile
    }
  }
  return map;
}

/** Every live descendant of `pid` (children, grandchildren, …). */
export function descendants(pid: number): number[] {
  const map = parents();
  const found: number[] = [];
  const queue = [pid];
  while (queue.length > 0) {
    const current = queue.shift()!;
    for (const [child, parent] of map)
      if (parent === current && !found.includes(child)) {
        found.push(child);
        queue.push(child);
      }
  }
  return found;
}

/**
 * The start time (/proc/<pid>/stat field 22, clock ticks after boot) each pid had when a recorder
 * saw it: a pid the kernel gave to another process since is not ours. pid_max is 32768 on the
 * test machines and a whole run wraps it: a recorded pid reused by another file's process read
 * as a leftover of a devnet (devnet-lifecycle's reset test, seen in CI).
 */
const startTimes = new Map<number, string>();

/** True while `pid` runs (a zombie counts as gone), and is still the process recorded under it. */
export function isAlive(pid: number): boolean {
  const started = startTimeOf(pid); // undefined: gone, or a zombie
  if (started === undefined) return false;
  const recorded = startTimes.get(pid);
  return recorded === undefined || started === recorded;
}

/** True when something accepts connections on 127.0.0.1:`port`. */
export function isListening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** Keeps recording the descendants of `pid` until stopped (they come and go while it starts). */
export function recordDescendants(
  pid: number,
  intervalMs = 50,
): { pids: Set<number>; stop(): void } {
  const pids = new Set<number>();
  const take = (): void => {
    for (const child of descendants(pid)) {
      pids.add(child);
      // The latest process under that pid that descends from `pid` is the one that counts.
      const started = startTimeOf(child);
      if (started !== undefined) startTimes.set(child, started);
    }
  };
  take();
  const timer = setInterval(take, intervalMs);
  return { pids, stop: () => clearInterval(timer) };
}
