// Which process a pid is, read from /proc (Linux): its start time and command line. A recorded
// pid is signalled only while both still match — a pid the kernel has since given to another
// process (pid reuse) is left alone.
import { readFileSync } from 'node:fs';

/** Enough to recognise a process again later. */
export interface ProcessStamp {
  pid: number;
  /** Start time in clock ticks since boot (/proc/<pid>/stat, field 22). */
  startTime: string;
  /** argv joined by spaces. */
  command: string;
}

/** Field 22 of /proc/<pid>/stat (undefined when the process is gone or a zombie). */
export function startTimeOf(pid: number): string | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name is in parentheses and may hold spaces: fields start after the last ')'.
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    // fields[0] is field 3 (state); starttime is field 22.
    if (fields[0] === 'Z') return undefined;
    return fields[19];
  } catch {
    return undefined;
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
