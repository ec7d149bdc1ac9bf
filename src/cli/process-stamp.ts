// Which process a pid is, read from /proc (Linux): its start time and command line. A recorded
// pid is signalled only while both still match — a pid the kernel has since given to another
// process (pid reuse) is left alone.
import { readdirSync, readFileSync } from 'node:fs';

/** Enough to recognise a process again later. */
export interface ProcessStamp {
  pid: number;
  /** Start time in clock ticks since boot (/proc/<pid>/stat, field 22). */
  startTime: string;
  /** argv joined by spaces. */
  command: string;
}

/** The fields of a /proc stat file from field 3 (state) on; starttime (22) is [19]. */
function statFields(path: string): string[] | undefined {
  try {
    const text = readFileSync(path, 'utf8');
    // The command name is in parentheses and may hold spaces: fields start after the last ')'.
    return text.slice(text.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

/** Field 22 of /proc/<pid>/stat (undefined when the process is gone or a zombie). */
export function startTimeOf(pid: number): string | undefined {
  const fields = statFields(`/proc/${pid}/stat`);
  if (fields === undefined || fields[0] === 'Z') return undefined;
  return fields[19];
}

/**
 * True while some thread of the process of `stamp` has not exited yet. A killed process loses its
 * command line first (`isSameProcess` is false at once) and its leader turns zombie while its
 * other threads still exit; its files and listening sockets are closed only once the last thread
 * has (a port checked before that is still taken: 85–155 ms for a Node process with workers).
 */
export function isStillExiting(stamp: ProcessStamp): boolean {
  const leader = statFields(`/proc/${stamp.pid}/stat`);
  // Gone and reaped, or the pid is another process's now.
  if (leader === undefined || leader[19] !== stamp.startTime) return false;
  try {
    return readdirSync(`/proc/${stamp.pid}/task`).some((task) => {
      const state = statFields(`/proc/${stamp.pid}/task/${task}/stat`)?.[0];
      return state !== undefined && state !== 'Z' && state !== 'X';
    });
  } catch {
    return false;
  }
}

function commandOf(pid: number): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim();
  } catch {
    return undefined;
  }
}

/** The stamp of a live process, or undefined when it is gone. */
export function stampOf(pid: number): ProcessStamp | undefined {
  const startTime = startTimeOf(pid);
  const command = commandOf(pid);
  if (startTime === undefined || command === undefined) return undefined;
  return { pid, startTime, command };
}

/** True while the process of `stamp` still runs: same pid, same start time, same command. */
export function isSameProcess(stamp: ProcessStamp): boolean {
  const now = stampOf(stamp.pid);
  return now !== undefined && now.startTime === stamp.startTime && now.command === stamp.command;
}

/** Parses a stamp read back from a file; undefined when it is not one. */
export function asStamp(value: unknown): ProcessStamp | undefined {
  const v = value as Partial<ProcessStamp> | null;
  if (
    typeof v !== 'object' ||
    v === null ||
    !Number.isSafeInteger(v.pid) ||
    (v.pid ?? 0) <= 1 ||
    typeof v.startTime !== 'string' ||
    typeof v.command !== 'string'
  )
    return undefined;
  return { pid: v.pid as number, startTime: v.startTime, command: v.command };
}
