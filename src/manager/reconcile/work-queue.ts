// A keyed work queue with controller-runtime's guarantees: a key queued twice is processed once,
// one worker per key at a time (a key added while it is processed runs again afterwards), a
// bounded number of workers, per-key capped exponential backoff with jitter on failure (reset on
// success), and delayed re-adds that do not grow the backoff.
import { backoffDelay, type JitterRange } from '../backoff.ts';
import type { Clock } from '../clock.ts';

/** What a handler returns: done, or "look again after this long". */
export type Outcome = { requeueAfterMs?: number | undefined } | undefined;

export interface WorkQueueOptions {
  concurrency: number;
  clock: Clock;
  handler: (key: string, signal: AbortSignal) => Promise<Outcome>;
  /** Called once per failure, with the delay before the retry (the queue logs nothing itself). */
  onError: (key: string, error: unknown, retryInMs: number) => void;
  backoff?: { baseMs: number; maxMs: number };
}

/** From 500 ms, doubling per failure of a key, at most a minute (controller-runtime's shape). */
const QUEUE_BACKOFF = { baseMs: 500, maxMs: 60_000 };
/** Up to half of each delay is shaved off at random, so failing keys spread out. */
const QUEUE_JITTER: JitterRange = { min: 0.5, max: 1 };

export class WorkQueue {
  readonly #options: WorkQueueOptions;
  readonly #queue: string[] = [];
  readonly #queued = new Set<string>();
  readonly #processing = new Set<string>();
  readonly #dirty = new Set<string>();
  readonly #failures = new Map<string, number>();
  readonly #timers = new Map<string, { at: number; cancel: () => void }>();
  readonly #idleWaiters: (() => void)[] = [];
  #controller = new AbortController();
  #running = false;
  #active = 0;

  constructor(options: WorkQueueOptions) {
    this.#options = options;
  }

  /** Queues a key now (merging with a pending one). */
  add(key: string): void {
    this.#cancelTimer(key);
    if (this.#processing.has(key)) {
      this.#dirty.add(key);
      return;
    }
    if (this.#queued.has(key)) return;
    this.#queued.add(key);
    this.#queue.push(key);
    this.#pump();
  }

  /** Queues a key after `ms`, unless it is queued sooner by another add. */
  addAfter(key: string, ms: number): void {
    if (ms <= 0) {
      this.add(key);
      return;
    }
    const at = this.#options.clock.now() + ms;
    const existing = this.#timers.get(key);
    if (existing !== undefined && existing.at <= at) return;
    existing?.cancel();
    const cancel = this.#options.clock.setTimer(() => {
      this.#timers.delete(key);
      this.add(key);
    }, ms);
    this.#timers.set(key, { at, cancel });
  }

  /** Starts the workers. Keys added before start wait until then. */
  start(): void {
    if (this.#running) return;
    this.#running = true;
    this.#controller = new AbortController();
    this.#pump();
  }

  /**
   * Stops taking work. In-flight handlers get `graceMs` to finish, then their signal aborts; resolves
   * once they have all returned. Queued keys and timers are kept for a later `start()`.
   */
  async stop(graceMs: number): Promise<void> {
    this.#running = false;
    if (this.#active > 0) {
      const idle = this.#waitIdle();
      const cancel = this.#options.clock.setTimer(
        () => this.#controller.abort(new Error('work queue stopped')),
        graceMs,
      );
      await idle;
      cancel();
    }
  }

  /** Aborts every in-flight handler at once (lost leadership) and stops. */
  async cancelAll(): Promise<void> {
    this.#running = false;
    this.#controller.abort(new Error('work cancelled'));
    await this.#waitIdle();
  }

  /** Forgets timers (shutdown). */
  clearTimers(): void {
    for (const timer of this.#timers.values()) timer.cancel();
    this.#timers.clear();
  }

  get depth(): number {
    return this.#queue.length;
  }

  get inFlight(): number {
    return this.#active;
  }

  get running(): boolean {
    return this.#running;
  }

  /** Failures in a row of a key (0 after a success). */
  failures(key: string): number {
    return this.#failures.get(key) ?? 0;
  }

  /** Resolves when nothing is queued or in flight (tests, benchmarks). */
  async drained(): Promise<void> {
    while (this.#queue.length > 0 || this.#active > 0) await this.#waitIdle();
  }

  #waitIdle(): Promise<void> {
    if (this.#active === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }

  #cancelTimer(key: string): void {
    const timer = this.#timers.get(key);
    if (timer !== undefined) {
      timer.cancel();
      this.#timers.delete(key);
    }
  }

  #pump(): void {
    while (this.#running && this.#active < this.#options.concurrency) {
      const index = this.#queue.findIndex((key) => !this.#processing.has(key));
      if (index < 0) return;
      const [key] = this.#queue.splice(index, 1);
      if (key === undefined) return;
      this.#queued.delete(key);
      this.#processing.add(key);
      this.#active++;
      void this.#process(key);
    }
  }

  async #process(key: string): Promise<void> {
    let retryAfter: number | undefined;
    try {
      const outcome = await this.#options.handler(key, this.#controller.signal);
      this.#failures.delete(key);
      retryAfter = outcome?.requeueAfterMs;
    } catch (error: unknown) {
      const failures = (this.#failures.get(key) ?? 0) + 1;
      this.#failures.set(key, failures);
      retryAfter = this.#backoff(failures);
      this.#options.onError(key, error, retryAfter);
    } finally {
      this.#processing.delete(key);
      this.#active--;
    }
    if (this.#dirty.delete(key)) this.add(key);
    else if (retryAfter !== undefined) this.addAfter(key, retryAfter);
    if (this.#active === 0) for (const resolve of this.#idleWaiters.splice(0)) resolve();
    this.#pump();
  }

  #backoff(failures: number): number {
    const { baseMs, maxMs } = this.#options.backoff ?? QUEUE_BACKOFF;
    return backoffDelay({ initialMs: baseMs, maxMs, jitter: QUEUE_JITTER }, failures);
  }
}
