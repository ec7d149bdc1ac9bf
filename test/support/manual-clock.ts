// A clock that only moves when a test says so; timers fire in order as time advances.
import type { Clock } from '../../src/manager/clock.ts';

export class ManualClock implements Clock {
  #now: number;
  /** Moves with `advance` only; `stepWall` leaves it (a monotonic clock is never stepped). */
  #monotonic = 0;
  #timers: { at: number; fn: () => void; id: number }[] = [];
  #nextId = 0;

  constructor(start = Date.parse('2026-11-29T12:00:00Z')) {
    this.#now = start;
  }

  now(): number {
    return this.#now;
  }

  monotonic(): number {
    return this.#monotonic;
  }

  /** Steps the wall clock by `ms` (negative: back), as an NTP step or an operator would. */
  stepWall(ms: number): void {
    this.#now += ms;
    for (const timer of this.#timers) timer.at += ms;
  }

  setTimer(fn: () => void, ms: number): () => void {
    const id = this.#nextId++;
    this.#timers.push({ at: this.#now + ms, fn, id });
    return () => {
      this.#timers = this.#timers.filter((t) => t.id !== id);
    };
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve, reject) => {
      const cancel = this.setTimer(resolve, ms);
      signal?.addEventListener('abort', () => {
        cancel();
        reject(signal.reason as Error);
      });
    });
  }

  /** Moves time forward, firing due timers in order (and letting promises settle between them). */
  async advance(ms: number): Promise<void> {
    const target = this.#now + ms;
    for (;;) {
      this.#timers.sort((a, b) => a.at - b.at || a.id - b.id);
      const next = this.#timers[0];
      if (next === undefined || next.at > target) break;
      this.#timers.shift();
      this.#monotonic += next.at - this.#now;
      this.#now = next.at;
      next.fn();
      await flush();
    }
    this.#monotonic += target - this.#now;
    this.#now = target;
    await flush();
  }

  get pendingTimers(): number {
    return this.#timers.length;
  }
}

/** Lets queued promise callbacks run. */
export async function flush(): Promise<void> {
  for (let i = 0; i < 10; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}
