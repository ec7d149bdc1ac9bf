// The processes a test started, read from /proc (Linux): descendants of a process, whether one
// is still alive, and their command lines — so a test can prove it left nothing running and that
// no argv ever carried a key.
import { readdirSync, readFileSync } from 'node:fs';

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

/** Every live process below `root` (children, grandchildren…), by pid. */
export function descendants(root: number = process.pid): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = Number(entry);
    const info = stat(pid);
    if (info === undefined || info.state === 'Z') continue;
    const list = children.get(info.ppid) ?? [];
    list.push(pid);
    children.set(info.ppid, list);
  }
  const out: number[] = [];
  const stack = [...(children.get(root) ?? [])];
  while (stack.length > 0) {
    const pid = stack.pop() as number;
    out.push(pid);
    stack.push(...(children.get(pid) ?? []));
  }
  return out.sort((a, b) => a - b);
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
 * 50 ms, 10 in 50 at 20 ms). Every 50 ms by default: a sample reads the stat file of every
 * process on the machine (1.6–2 ms of CPU with ~100 of them), every Node process lives longer
 * (a bare `node -e 0` takes 90 ms), and at 20 ms it cost a devnet test file a tenth of a core.
 */
export class CommandLineSampler {
  /**
   * Every command line seen per pid, one per line: a process that `exec`s another program keeps
   * its pid, and both command lines are kept.
   */
  readonly seen = new Map<number, string>();
  readonly #timer: NodeJS.Timeout;

  constructor(intervalMs = 50) {
    this.sample();
    this.#timer = setInterval(() => this.sample(), intervalMs);
    this.#timer.unref();
  }

  sample(): void {
    for (const pid of descendants()) {
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
