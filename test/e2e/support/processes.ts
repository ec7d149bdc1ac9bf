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

/**
 * Keeps recording the descendants of `pid` until stopped (they come and go while it starts).
 *
 * A sample lists /proc and reads the stat file of the pids new since the last sample only: a pid
 * present in two listings 50 ms apart is the same process (reusing it would take the kernel's
 * whole pid range in between), so whether it descends from `pid`, and its start time, are already
 * known (the harness's CommandLineSampler does the same). Calling `descendants()` every 50 ms read
 * every stat file of the machine: 3.9 ms of CPU a sample with 140 processes, about 0.08 cores for
 * as long as a devnet of devnet-lifecycle runs.
 */
export function recordDescendants(
  pid: number,
  intervalMs = 50,
): { pids: Set<number>; stop(): void } {
  const pids = new Set<number>();
  /** The pids of the last listing: true when the process descends from `pid`. */
  let known = new Map<number, boolean>();
  const take = (): void => {
    const listed = new Map<number, boolean>();
    const fresh = new Map<number, { ppid: number; started: string | undefined }>();
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      const child = Number(entry);
      const before = known.get(child);
      if (before !== undefined) listed.set(child, before);
      else {
        const fields = statFields(child);
        // A zombie descends from `pid` too; it has no start time (startTimeOf), as before.
        if (fields !== undefined)
          fresh.set(child, {
            ppid: Number(fields[1]),
            started: fields[0] === 'Z' ? undefined : fields[19],
          });
      }
    }
    // A new pid descends from `pid` when its parent does; its parent may be new too, so repeat
    // until nothing changes (pids wrap, so a child may have a lower pid than its parent).
    for (let changed = true; changed;) {
      changed = false;
      for (const [child, { ppid, started }] of fresh) {
        if (ppid !== pid && listed.get(ppid) !== true) continue;
        listed.set(child, true);
        fresh.delete(child);
        changed = true;
        pids.add(child);
        // The latest process under that pid that descends from `pid` is the one that counts.
        if (started !== undefined) startTimes.set(child, started);
      }
    }
    for (const child of fresh.keys()) listed.set(child, false);
    known = listed;
  };
  take();
  const timer = setInterval(take, intervalMs);
  return { pids, stop: () => clearInterval(timer) };
}

/** The fields of /proc/<pid>/stat after the command name (state, ppid, …), or undefined. */
function statFields(pid: number): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined; // gone meanwhile
  }
}
