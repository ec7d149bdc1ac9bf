// Child process groups started by the process kubelet, and the guarantee that none outlives
// the emulator's own process.
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';

const live = new Set<number>();
let guarded = false;

function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    try {
      process.kill(pid, signal);
    } catch {
      // already gone
    }
  }
}

/** Kills every live process group synchronously when this process exits, however it exits. */
function guard(): void {
  if (guarded) return;
  guarded = true;
  process.once('exit', () => {
    for (const pid of live) killGroup(pid, 'SIGKILL');
  });
}

/** A running child (a process group of its own) and the promise of its exit. */
export interface Child {
  readonly process: ChildProcess;
  /** Resolves with the exit code (or 128 + signal number style code) once the process is gone. */
  readonly exited: Promise<{ code: number; signal: NodeJS.Signals | null }>;
  signal(signal: NodeJS.Signals): void;
}

/**
 * Starts `command` with an explicit environment, in its own process group, with stdout and
 * stderr appended to `logPath` (never inherited). A command that cannot start exits with 127.
 */
export function startChild(options: {
  command: string;
  args: readonly string[];
  env: Readonly<Record<string, string>>;
  cwd: string;
  logPath: string;
}): Child {
  guard();
  const log = openSync(options.logPath, 'a', 0o600);
  let child: ChildProcess;
  try {
    child = spawn(options.command, [...options.args], {
      cwd: options.cwd,
      env: options.env,
      stdio: ['ignore', log, log],
      detached: true,
    });
  } finally {
    closeSync(log);
  }
  const pid = child.pid;
  if (pid !== undefined) live.add(pid);
  const exited = new Promise<{ code: number; signal: NodeJS.Signals | null }>((resolve) => {
    let done = false;
    const finish = (code: number, signal: NodeJS.Signals | null): void => {
      if (done) return;
      done = true;
      if (pid !== undefined) {
        live.delete(pid);
        killGroup(pid, 'SIGKILL'); // grandchildren left in the group go too
      }
      resolve({ code, signal });
    };
    child.once('exit', (code, signal) => finish(code ?? 128, signal));
    child.once('error', () => finish(127, null));
  });
  return {
    process: child,
    exited,
    signal(signal) {
      if (pid !== undefined && live.has(pid)) killGroup(pid, signal);
    },
  };
}
