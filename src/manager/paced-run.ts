// A piece of work whose cost grows with the number of validators, asked for by many events:
// requests are coalesced into one run, and a run starts no sooner than `spacing` times the last
// run's cost after that run ended (and no sooner than `minDelayMs` after the request), so that a
// burst of events at a thousand validators spends a bounded share of the CPU on it. A request made while
// a run is scheduled is served by that run (level-triggered: the run reads the state it needs).
import type { Clock } from './clock.ts';

export interface PacedRunOptions {
  clock: Clock;
  /** The work; its wall time is its cost. */
  run: () => void;
  /** The next run waits this many times the last run's cost after it ended. */
  spacing: number;
  /** The least wait after a request (0: the end of this turn of the event loop). */
  minDelayMs?: number;
}

export class PacedRun {
  readonly #o: PacedRunOptions;
  #scheduled = false;
  #endedAt = Number.NEGATIVE_INFINITY;
  #costMs = 0;

  constructor(options: PacedRunOptions) {
    this.#o = options;
  }

  /** Asks for a run; one already scheduled serves this request too. */
  request(): void {
    if (this.#scheduled) return;
    this.#scheduled = true;
    const run = (): void => {
      this.#scheduled = false;
      this.runNow();
    };
    const wait = Math.max(
      this.#o.minDelayMs ?? 0,
      this.#endedAt + this.#costMs * this.#o.spacing - performance.now(),
    );
    if (wait <= 1) setImmediate(run);
    else this.#o.clock.setTimer(run, wait);
  }

  /** Runs now (measuring the cost the next request is paced by). */
  runNow(): void {
    const started = performance.now();
    try {
      this.#o.run();
    } finally {
      this.#endedAt = performance.now();
      this.#costMs = this.#endedAt - started;
    }
  }
}
