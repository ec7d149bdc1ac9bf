// The devnet's manager process, as its Deployment's pod would be: spawned with its env and log
// file, waited on until ready, restarted when it exits by itself (with the backoff of
// manager-restarts.ts), and stopped on request. No manager is spawned once the start failed or the
// devnet stops.
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { dirname } from 'node:path';
import { exitText, ManagerRestarts, MAX_RESTARTS } from './manager-restarts.ts';

export interface ManagerSupervisorOptions {
  /** The manager's entry point, run as `<entry> run`. */
  entry: string;
  env: Record<string, string>;
  /** HOME when the shell has none. */
  home: string;
  /** manager.log, appended to. */
  logFile: string;
  /** The manager's control RPC, for the log lines. */
  url: string;
  log: (line: string) => void;
  /** Called right after each spawn (the process record takes the new pid in at once). */
  spawned: () => void;
  /** Resolves once `child` answers ready; rejects when it exits first or the start is aborted. */
  waitReady: (child: ChildProcess) => Promise<void>;
}

export class ManagerSupervisor {
  /** Set once the devnet is ready and until it stops: a manager exiting by itself is restarted. */
  supervising = false;
  readonly #options: ManagerSupervisorOptions;
  #child: ChildProcess | undefined;
  /** The start failed: a manager not spawned yet is not spawned any more. */
  #abandoned = false;
  /** Set when the devnet's stop begins: no manager is spawned after it. */
  #stopping = false;
  /** Managers whose exit was asked for (kill, stop): never restarted. */
  readonly #meant = new WeakSet<ChildProcess>();
  readonly #restarts = new ManagerRestarts();
  #restartTimer: NodeJS.Timeout | undefined;

  constructor(options: ManagerSupervisorOptions) {
    this.#options = options;
  }

  /** The manager's process (undefined before the first spawn and after a kill). */
  get child(): ChildProcess | undefined {
    return this.#child;
  }

  /** Spawns the manager and waits until it is ready. */
  async start(): Promise<void> {
    const { entry, env, home, logFile, spawned, waitReady } = this.#options;
    const out = createWriteStream(logFile, { flags: 'a', mode: 0o600 });
    await new Promise((resolveOpen) => out.once('open', resolveOpen));
    // A restart whose timer fired just before the devnet stopped: not spawned (stop() would not
    // see it, and it would outlive the devnet).
    if (this.#abandoned || this.#stopping) {
      out.end();
      return;
    }
    const child = spawn(process.execPath, [entry, 'run'], {
      env: {
        ...env,
        PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ''}`,
        HOME: process.env.HOME ?? home,
      },
      stdio: ['ignore', out, out],
    });
    this.#child = child;
    const spawnedAt = Date.now();
    child.once('exit', (code, exitSignal) => {
      out.end();
      if (this.supervising && child === this.#child && !this.#meant.has(child))
        this.#onExit(child, Date.now() - spawnedAt, exitText(code, exitSignal));
    });
    // In the record at once: a devnet killed (SIGKILL) while it starts leaves no manager that
    // `devnet reset` cannot name.
    spawned();
    await waitReady(child);
  }

  /** Starts the manager again (after a kill); a pending restart is dropped. */
  async restart(): Promise<void> {
    clearTimeout(this.#restartTimer);
    this.#restartTimer = undefined;
    await this.start();
  }

  /** Sends a signal to the manager and waits for it to exit (SIGKILL after 15 s). */
  async kill(signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    const child = this.#child;
    if (child === undefined || !isRunning(child)) return;
    this.#meant.add(child);
    const exited = new Promise((resolveExit) => child.once('exit', resolveExit));
    child.kill(signal);
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    await exited;
    clearTimeout(timer);
    this.#child = undefined;
  }

  /** The devnet stops: no restart, no spawn from now on. */
  stopping(): void {
    this.supervising = false;
    this.#stopping = true;
    clearTimeout(this.#restartTimer);
  }

  /** The devnet's start failed: a manager still opening its log is not started; one running is killed. */
  async abandon(): Promise<void> {
    this.#abandoned = true;
    const child = this.#child;
    if (child !== undefined && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolveExit) => child.once('exit', resolveExit));
      child.kill('SIGKILL');
      await exited;
    }
  }

  /** A manager that exited by itself: a line saying so and where its log is, then a restart. */
  #onExit(child: ChildProcess, ranMs: number, how: string): void {
    const { log, logFile, url } = this.#options;
    const what = `the manager (pid ${child.pid ?? '?'}) exited by itself (${how}); its log: ${logFile}`;
    const decision = this.#restarts.onExit(ranMs);
    if (!decision.restart) {
      log(
        `${what}; it exited ${decision.attempts} times in a row, so it is not restarted again: read its log, then stop the devnet (Ctrl-C) and start it again`,
      );
      return;
    }
    log(
      `${what}; restarting it in ${decision.delayMs / 1000} s (restart ${decision.attempt} of at most ${MAX_RESTARTS} in a row)`,
    );
    this.#restartTimer = setTimeout(() => {
      this.#restartTimer = undefined;
      if (!this.supervising || (this.#child !== undefined && isRunning(this.#child))) return;
      this.start().then(
        () =>
          log(
            `manager ${url} restarted (pid ${this.#child?.pid ?? '?'}), resuming from its journal`,
          ),
        (error: unknown) => {
          // One that exited while starting was reported by its exit; one still starting is not.
          if (this.#child !== undefined && isRunning(this.#child))
            log(`the restarted manager: ${error instanceof Error ? error.message : String(error)}`);
        },
      );
    }, decision.delayMs);
  }
}

export function isRunning(child: ChildProcess): boolean {
  return child.exitCode === null && child.signalCode === null;
}
