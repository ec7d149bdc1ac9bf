// How a devnet restarts its manager after the manager exited on its own (crashed, or was killed
// by someone else), as a Deployment's pod would be: after a back-off that doubles with each exit
// in a row (1 s, 2 s, 4 s… up to 30 s), and not at all after MAX_RESTARTS exits in a row — a
// manager that keeps failing needs its log read, not more restarts. A manager that ran for
// STABLE_MS before it exited starts the count again. The restarted manager resumes from its
// journal (the same CM_JOURNAL_PATH, port and token).

export const FIRST_DELAY_MS = 1_000;
export const MAX_DELAY_MS = 30_000;
export const MAX_RESTARTS = 5;
export const STABLE_MS = 60_000;

/** What to do about one exit: restart after `delayMs` (the `attempt`th in a row), or give up. */
export type RestartDecision =
  { restart: true; delayMs: number; attempt: number } | { restart: false; attempts: number };

export class ManagerRestarts {
  #inARow = 0;

  /** The decision for a manager that exited after running `ranMs`. */
  onExit(ranMs: number): RestartDecision {
    if (ranMs >= STABLE_MS) this.#inARow = 0;
    if (this.#inARow >= MAX_RESTARTS) return { restart: false, attempts: this.#inARow };
    this.#inARow += 1;
    const delayMs = Math.min(MAX_DELAY_MS, FIRST_DELAY_MS * 2 ** (this.#inARow - 1));
    return { restart: true, delayMs, attempt: this.#inARow };
  }
}

/** "exit code 1" / "signal SIGKILL": how a child process ended. */
export function exitText(code: number | null, signal: NodeJS.Signals | null): string {
  return signal !== null ? `signal ${signal}` : `exit code ${code ?? '?'}`;
}
