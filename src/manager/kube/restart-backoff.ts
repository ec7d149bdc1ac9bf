// The delay before an informer restarts after an error: exponential from `initialMs`, capped low
// (`maxMs`), and back to `initialMs` on any success, so an informer comes back within a second or
// two once a fault clears. A long cap is what made the manager see a `kubectl scale` 45 s late
// after a burst of API errors (issue 16, item 10): the last delay before the fault cleared was
// 16–30 s. client-go's reflector backs off from 800 ms to 30 s; a sidecar watching three small
// collections can afford to retry faster than a cluster-wide controller.

export interface BackoffOptions {
  initialMs: number;
  maxMs: number;
  /** Returns a factor in [0.8, 1.2) (±20 %, so informers do not retry in lockstep). */
  jitter?: () => number;
}

export const INFORMER_BACKOFF: BackoffOptions = { initialMs: 250, maxMs: 2_000 };

export class RestartBackoff {
  readonly #options: BackoffOptions;
  #nextMs: number;

  constructor(options: BackoffOptions) {
    this.#options = options;
    this.#nextMs = options.initialMs;
  }

  /** The delay to wait now (jittered); the one after it doubles, up to the cap. */
  next(): number {
    const delay = this.#nextMs;
    this.#nextMs = Math.min(this.#nextMs * 2, this.#options.maxMs);
    const factor = this.#options.jitter?.() ?? 0.8 + Math.random() * 0.4;
    return Math.round(delay * factor);
  }

  /** A success: the next failure waits the initial delay again. */
  reset(): void {
    this.#nextMs = this.#options.initialMs;
  }
}
