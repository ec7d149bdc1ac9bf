// The processes a test started, read from /proc (Linux): descendants of a process, whether one
// is still alive, and their command lines — so a test can prove it left nothing running and that
// no argv ever carried a key.
import { readdirSync, readFileSync } from 'node:fs';
import { descendantsOf } from '../devnet/process-record.ts';

/** Parent pid and state of a process, or undefined when it is gone. */
function stat(pid: number): { ppid: number; state: string } | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name is in parentheses and may contain spaces: fields start after the last ')'.
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return { state: fields[0] ?? '?', ppid: Number(fields[1]) };
  } catch {
    return undefined;
  }
}

/** Every live process below `root` (children, grandchildren…), by pid (the devnet's own scan). */
export function descendants(root: number = process.pid): number[] {
  return descendantsOf(root);
}

/** True while `pid` runs (a zombie counts as gone). */
export function isAlive(pid: number): boolean {
  const info = stat(pid);
  return info !== undefined && info.state !== 'Z';
}

/** The argv of a process joined by spaces ('' when it is gone). */
export function commandLine(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim();
  } catch {
    return '';
  }
}

/**
 * Samples the command lines of every descendant of this process until stopped, so that
 * short-lived ones (a CLI call of the manager) are seen too. Best effort, not a proof: a process
 * that lives less than one interval may be missed (a 30 ms `sleep` was seen 1 time in 50 at
 * 50 ms, 10 in 50 at 20 ms). Every 50 ms by default: every Node process lives longer (a bare
 * `node -e 0` takes 90 ms).
 *
 * A sample lists /proc and reads the stat file of the pids that are new since the last sample
 * only: a pid present in two listings 50 ms apart is the same process (reusing it would take the
 * kernel's whole pid range in between), so whether it descends from us is already known. Reading
 * every stat file each time cost 1.3–2 ms of CPU per sample with ~100 processes, a devnet test
 * file about 0.03 cores.
 */
export class CommandLineSampler {
  /**
   * Every command line seen per pid, one per line: a process that `exec`s another program keeps
   * its pid, and both command lines are kept.
   */
  readonly seen = new Map<number, string>();
  readonly #timer: NodeJS.Timeout;
  readonly #root = process.pid;
  /** The pids of the last listing: true when the process descends from #root. */
  #known = new Map<number, boolean>();

  constructor(intervalMs = 50) {
    this.sample();
    this.#timer = setInterval(() => this.sample(), intervalMs);
    this.#timer.unref();
  }

  sample(): void {
    const known = new Map<number, boolean>();
    const fresh = new Map<number, number>();
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      const pid = Number(entry);
      const before = this.#known.get(pid);
      if (before !== undefined) known.set(pid, before);
      else {
        const info = stat(pid);
        if (info !== undefined && info.state !== 'Z') fresh.set(pid, info.ppid);
      }
    }
    // A new pid descends from us when its parent does; its parent may be new too, so repeat
    // until nothing changes (pids wrap, so a child may have a lower pid than its parent).
    for (let changed = true; changed;) {
      changed = false;
      for (const [pid, ppid] of fresh) {
        if (ppid === this.#root || known.get(ppid) === true) {
          known.set(pid, true);
          fresh.delete(pid);
          changed = true;
        }
      }
    }
    for (const pid of fresh.keys()) known.set(pid, false);
    this.#known = known;
    for (const [pid, ours] of known) {
      if (!ours) continue;
      const line = commandLine(pid);
      if (line === '') continue;
      const before = this.seen.get(pid);
      if (before === undefined) this.seen.set(pid, line);
      else if (!before.split('\n').includes(line)) this.seen.set(pid, `${before}\n${line}`);
    }
  }

  stop(): void {
    clearInterval(this.#timer);
    this.sample();
  }
}
