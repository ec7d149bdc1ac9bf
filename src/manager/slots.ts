// A counting limit on concurrent work: at most `size` holders at once, the others wait in order.
// A waiter whose signal aborts leaves the line and rejects with the signal's reason (an Error); a slot is
// handed straight to the next waiter when released, so none is lost or given twice.

export class Slots {
  readonly size: number;
  #held = 0;
  readonly #waiting: { grant: () => void }[] = [];

  constructor(size: number) {
    if (!Number.isInteger(size) || size < 1)
      throw new RangeError(`a limit of concurrent work is a whole number ≥ 1, not ${size}`);
    this.size = size;
  }

  /** Holders right now (tests, metrics). */
  get held(): number {
    return this.#held;
  }

  /** Runs `work` once a slot is free; the slot is released when `work` settles. */
  async run<T>(work: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    await this.#acquire(signal);
    try {
      return await work();
    } finally {
      this.#release();
    }
  }

  #acquire(signal: AbortSignal | undefined): Promise<void> {
    signal?.throwIfAborted();
    if (this.#held < this.size) {
      this.#held++;
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => {
      const waiter = {
        grant: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        },
      };
      const onAbort = (): void => {
        const at = this.#waiting.indexOf(waiter);
        if (at >= 0) this.#waiting.splice(at, 1);
        const reason: unknown = signal?.reason;
        reject(reason instanceof Error ? reason : new Error('aborted', { cause: reason }));
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#waiting.push(waiter);
    });
  }

  #release(): void {
    const next = this.#waiting.shift();
    if (next === undefined) this.#held--;
    else next.grant(); // the slot passes on: #held stays
  }
}
