// Child process groups started by the process kubelet, and the guarantee that none outlives
// the emulator's own process.
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, writeSync } from 'node:fs';

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

/** Where a child's output goes besides the pod's log file. */
export interface ChildOutput {
  write(stream: 'stdout' | 'stderr', chunk: Buffer): void;
  end(): void;
}

/**
 * Copies both pipes to the pod's log file (as written) and to `output`; closes both at the end.
 * Resolves once everything the child wrote has been copied.
 */
function teeOutput(child: ChildProcess, log: number, output: ChildOutput): Promise<void> {
  let open = 2;
  let drained = (): void => undefined;
  const copied = new Promise<void>((resolve) => (drained = resolve));
  const done = (): void => {
    if (--open > 0) return;
    closeSync(log);
    output.end();
    drained();
  };
  for (const stream of ['stdout', 'stderr'] as const) {
    const pipe = child[stream];
    if (pipe === null) {
      done();
      continue;
    }
    pipe.on('data', (chunk: Buffer) => {
      writeSync(log, chunk);
      output.write(stream, chunk);
    });
    pipe.once('close', done);
  }
  return copied;
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
  /**
   * Also gets the output, stream by stream (the container's own log); `end()` is called once
   * both streams are closed. Without it the child writes to `logPath` directly.
   */
  output?: ChildOutput;
}): Child {
  guard();
  const log = openSync(options.logPath, 'a', 0o600);
  let child: ChildProcess;
  const { output } = options;
  try {
    child = spawn(options.command, [...options.args], {
      cwd: options.cwd,
      env: options.env,
      stdio: output === undefined ? ['ignore', log, log] : ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
  } catch (error: unknown) {
    closeSync(log);
    throw error;
  }
  // With pipes, the exit is reported once the output is copied, so that a log read after the
  // container shows as terminated holds everything it printed (as a runtime's log does).
  let copied: Promise<void> = Promise.resolve();
  if (output === undefined) closeSync(log);
  else copied = teeOutput(child, log, output);
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
      void copied.then(() => resolve({ code, signal }));
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
