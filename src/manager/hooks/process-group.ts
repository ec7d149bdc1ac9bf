// A command hook run in its own process group (issue 30, item 7): a hook that leaves children
// behind (`sh -c 'x & …'`) is stopped with all of them, at its timeout, on cancel, when its output
// is too large and when it exits. Before, only the direct child was killed; a background child kept
// the output pipe open, so a 3 s hook held its stake for 93 s, and every retry started another
// child. The group gets SIGTERM, then SIGKILL `killAfterMs` later; the run ends once no member of
// the group is alive (zombies do not count) or `settleMs` after the SIGKILL. A group that outlives
// that is remembered by the hook's key, and the hook is not started again while any of it lives.
// Absolute path, args as given, no shell, only the given environment, bounded output.
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import type { CommandOutcome, CommandPort, CommandRequest, GroupEnd } from './hook-ports.ts';

export interface ProcessGroupOptions {
  /** Output kept (stdout and stderr together); more kills the group. */
  maxOutputBytes: number;
  /** SIGKILL this long after SIGTERM. */
  killAfterMs: number;
  /** How long after the SIGKILL to wait for the group to be gone. */
  settleMs: number;
  /** Members of a process group that are alive (not zombies); the default reads /proc. */
  liveMembers?: (pgid: number) => number;
}

const POLL_MS = 25;

/** The processes of group `pgid` that are not zombies: /proc on Linux, else kill(-pgid, 0). */
export function liveGroupMembers(pgid: number): number {
  try {
    process.kill(-pgid, 0);
  } catch {
    return 0; // ESRCH: no process has that group
  }
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return 1; // no /proc: alive, count unknown
  }
  let alive = 0;
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // pid (comm) state ppid pgrp …: comm may hold spaces and parentheses.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[2]) === pgid && fields[0] !== 'Z' && fields[0] !== 'X') alive++;
    } catch {
      // gone meanwhile
    }
  }
  return alive;
}

export function processGroupCommandPort(options: ProcessGroupOptions): CommandPort {
  const members = options.liveMembers ?? liveGroupMembers;
  /** Groups that outlived their kill, by the hook's key. */
  const lingering = new Map<string, number>();
  return {
    async run(request: CommandRequest): Promise<CommandOutcome> {
      const key = request.key;
      const previous = key === undefined ? undefined : lingering.get(key);
      if (previous !== undefined) {
        const alive = members(previous);
        if (alive > 0) return { kind: 'still-running', pgid: previous, processes: alive };
        lingering.delete(key ?? '');
      }
      const outcome = await runOnce(request, options, members);
      const group = 'group' in outcome ? outcome.group : undefined;
      if (key !== undefined && group !== undefined && group.survivors > 0)
        lingering.set(key, group.pgid);
      return outcome;
    },
  };
}

type Ending = 'exited' | 'timeout' | 'cancelled' | 'output-too-large';

function runOnce(
  request: CommandRequest,
  options: ProcessGroupOptions,
  members: (pgid: number) => number,
): Promise<CommandOutcome> {
  return new Promise((resolve) => {
    if (request.signal.aborted) {
      resolve({ kind: 'cancelled' });
      return;
    }
    // detached: the child calls setsid(), so it leads a new process group (pgid = its pid).
    const child = spawn(request.file, [...request.args], {
      env: { ...request.env },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
      shell: false,
    });
    const chunks: Buffer[] = [];
    let bytes = 0;
    let ending: Ending | undefined;
    let exitCode: number | null = null;
    let signalName: NodeJS.Signals | null = null;
    let killing: Promise<GroupEnd> | undefined;
    let spawnError: Error | undefined;
    let settled = false;
    const pgid = child.pid;

    const kill = (): Promise<GroupEnd> => {
      killing ??= killGroup(pgid ?? -1, options, members);
      return killing;
    };
    const end = (why: Ending): void => {
      ending ??= why;
      void kill();
    };
    const onOutput = (chunk: Buffer): void => {
      bytes += chunk.length;
      if (bytes > options.maxOutputBytes) {
        end('output-too-large');
        return;
      }
      chunks.push(chunk);
    };
    child.stdout.on('data', onOutput);
    child.stderr.on('data', onOutput);
    const timer = setTimeout(() => end('timeout'), request.timeoutMs);
    const onAbort = (): void => end('cancelled');
    request.signal.addEventListener('abort', onAbort, { once: true });

    const finish = async (): Promise<void> => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      request.signal.removeEventListener('abort', onAbort);
      if (spawnError !== undefined) {
        resolve({
          kind: 'not-run',
          reason: (spawnError as { code?: string }).code ?? spawnError.message,
        });
        return;
      }
      // The leader is gone; whatever of its group lives on is stopped too (it may hold our pipes).
      const leftover = pgid === undefined ? 0 : members(pgid);
      const group = killing !== undefined || leftover > 0 ? await kill() : undefined;
      const withGroup = group === undefined ? {} : { group };
      const why = ending ?? 'exited';
      if (why !== 'exited') {
        resolve({ kind: why, ...withGroup });
        return;
      }
      if (exitCode === null) {
        resolve({ kind: 'not-run', reason: signalName ?? 'no exit code' });
        return;
      }
      const output = Buffer.concat(chunks).toString('utf8').replace(/\n$/, '');
      resolve({ kind: 'exited', exitCode, output, ...withGroup });
    };
    child.once('error', (error) => {
      spawnError = error;
      if (pgid === undefined) void finish();
    });
    // 'close': the leader exited and every holder of its pipes closed them (or was killed).
    child.once('exit', (code, signal) => {
      exitCode = code;
      signalName = signal;
      // Children that keep the pipes open would hold 'close' back: stop them now.
      if (pgid !== undefined && members(pgid) > 0) void kill();
    });
    child.once('close', () => void finish());
  });
}

/** SIGTERM to the group, SIGKILL `killAfterMs` later if any of it lives, then wait for it to go. */
async function killGroup(
  pgid: number,
  options: ProcessGroupOptions,
  members: (pgid: number) => number,
): Promise<GroupEnd> {
  const processes = members(pgid);
  signalGroup(pgid, 'SIGTERM');
  if (await goneWithin(pgid, options.killAfterMs, members))
    return { pgid, processes, survivors: 0, sigkill: false };
  signalGroup(pgid, 'SIGKILL');
  await goneWithin(pgid, options.settleMs, members);
  return { pgid, processes, survivors: members(pgid), sigkill: true };
}

function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    // already gone
  }
}

async function goneWithin(
  pgid: number,
  ms: number,
  members: (pgid: number) => number,
): Promise<boolean> {
  const until = performance.now() + ms;
  for (;;) {
    if (members(pgid) === 0) return true;
    if (performance.now() >= until) return false;
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}
