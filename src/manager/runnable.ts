// The parts of a running manager and the one contract they share (after controller-runtime's
// manager: every part is a Runnable, a manager only orders them). A part's start() resolves once
// it is started (not when it ends); stop() undoes it and is safe to call once start resolved or
// failed. A `Runnables` group starts its parts in order and stops them in reverse; when a start
// fails it stops the parts already started, in reverse, and rejects naming the part that failed.
import { ManagerError } from './errors.ts';

/** A part of the manager with a lifecycle. */
export interface Runnable {
  /** Named in logs and in a start failure ("discovery", "chain view", …). */
  readonly name: string;
  /** Resolves once started; `signal` aborts when the whole group stops before this start ended. */
  start(signal: AbortSignal): Promise<void>;
  /**
   * Stops what start() started; called at most once: after start() resolved, or while start()
   * is under way (the signal aborted first), and then it must make that start settle.
   */
  stop(): Promise<void>;
}

/** A part's start failed: carries the part's name, the cause's code, and the cause. */
export class RunnableStartError extends ManagerError {
  readonly part: string;

  constructor(part: string, cause: unknown) {
    const message = cause instanceof Error ? cause.message : String(cause);
    // The cause's code, status and retry class (a chain's declared code too); INTERNAL otherwise.
    const code =
      cause instanceof ManagerError
        ? { code: cause.code, status: cause.status, retryable: cause.retryable, meaning: '' }
        : 'INTERNAL';
    super(code, `${part} did not start: ${message}`, {
      cause,
      details: { part },
    });
    this.name = 'RunnableStartError';
    this.part = part;
  }
}

/** A runnable from two functions (for parts that are a few lines of the composition). */
export function runnable(
  name: string,
  start: (signal: AbortSignal) => Promise<void> | void,
  stop: () => Promise<void> | void = () => undefined,
): Runnable {
  return {
    name,
    start: async (signal) => {
      await start(signal);
    },
    stop: async () => {
      await stop();
    },
  };
}

/**
 * Parts started in order, stopped in reverse. start() and stop() are each effective once; a
 * stop() during start() aborts the signal, stops the part being started (a start may wait for
 * long: discovery's, for its caches), lets that start settle, then stops the parts that started.
 */
export class Runnables {
  readonly #parts: readonly Runnable[];
  readonly #started: Runnable[] = [];
  readonly #abort = new AbortController();
  #starting: Promise<void> | undefined;
  /** The part whose start() is under way. */
  #current: Runnable | undefined;
  #stopping: Promise<void> | undefined;

  constructor(parts: readonly Runnable[]) {
    const names = new Set<string>();
    for (const part of parts) {
      if (names.has(part.name)) throw new Error(`two runnables are named "${part.name}"`);
      names.add(part.name);
    }
    this.#parts = parts;
  }

  /** The parts' names, in start order. */
  get names(): string[] {
    return this.#parts.map((p) => p.name);
  }

  /** The names of the parts started and not stopped, in start order. */
  get started(): string[] {
    return this.#started.map((p) => p.name);
  }

  /**
   * Starts every part in order; on a failure, stops those started and rejects naming the part.
   * Resolves early, without error, when stop() ends the start.
   */
  start(): Promise<void> {
    this.#starting ??= this.#startAll();
    return this.#starting;
  }

  /** Stops the started parts in reverse order (each even if another's stop fails); idempotent. */
  stop(): Promise<void> {
    this.#stopping ??= this.#stopAll();
    return this.#stopping;
  }

  async #startAll(): Promise<void> {
    const signal = this.#abort.signal;
    for (const part of this.#parts) {
      if (signal.aborted) return;
      this.#current = part;
      try {
        await part.start(signal);
      } catch (error: unknown) {
        this.#current = undefined;
        // Ended by stop(), which stops the parts started: not a failure.
        if (this.#stopRequested()) return;
        // The start failure is what the caller needs; a stop failure now would hide it.
        await this.#stopStarted().catch(() => undefined);
        throw new RunnableStartError(part.name, error);
      }
      this.#current = undefined;
      // Stopped while it started: stop() has stopped it already.
      if (this.#stopRequested()) return;
      this.#started.push(part);
    }
  }

  /** Read afresh after each await (stop() may have come meanwhile). */
  #stopRequested(): boolean {
    return this.#abort.signal.aborted;
  }

  async #stopAll(): Promise<void> {
    this.#abort.abort();
    const errors: unknown[] = [];
    const current = this.#current;
    if (current !== undefined) await current.stop().catch((error: unknown) => errors.push(error));
    await this.#starting?.catch(() => undefined);
    await this.#stopStarted(errors);
  }

  /** Stops the started parts, last first; the first stop error is thrown once all were tried. */
  async #stopStarted(errors: unknown[] = []): Promise<void> {
    for (let part = this.#started.pop(); part !== undefined; part = this.#started.pop()) {
      try {
        await part.stop();
      } catch (error: unknown) {
        errors.push(error);
      }
    }
    if (errors.length > 0) throw errors[0];
  }
}
