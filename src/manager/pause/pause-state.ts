// Whether the managers are paused, as cluster state (issue 30; docs/adr/0025-pause-on-the-lease.md):
// kept where every manager and every new pod reads it — an annotation on the Lease under
// Kubernetes discovery (kube/lease-pause-record.ts), the journal under static discovery (one
// manager, its own disk) — and changed only through `set`, which answers once it is recorded.
// Followers learn it from the elector's Lease reads (`observe`); a read that began before the
// last write ended says nothing newer than that write, and is ignored.
import type { Clock } from '../clock.ts';
import { ManagerError, isManagerError, describeError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import { Annotations } from '../model.ts';
import { backoffDelay } from '../backoff.ts';

/** Where the pause is recorded. */
export interface PauseRecord {
  /** For messages: `Lease cluster-manager`, `the journal`. */
  readonly where: string;
  /** The recorded pause; undefined when nothing is recorded. Throws when it cannot be read. */
  read(): Promise<boolean | undefined>;
  /** Records it. Throws a ManagerError (NOT_LEADER, KUBE_UNAVAILABLE…) when it could not. */
  write(paused: boolean): Promise<void>;
}

export interface PauseStateOptions {
  record: PauseRecord;
  clock: Clock;
  logger: Logger;
  /** Called when the pause changes (set here, or read from the record). */
  onChange: (paused: boolean) => void;
}

/** Reads at start are retried this often while the record cannot be read. */
const LOAD_RETRY = { initialMs: 250, maxMs: 5_000 };

export class PauseState {
  readonly #o: PauseStateOptions;
  #paused = false;
  #known = false;
  /** Monotonic time the last write ended: reads that began before it are older news. */
  #writtenAt = Number.NEGATIVE_INFINITY;
  /** Writes run one at a time, in order. */
  #writes: Promise<unknown> = Promise.resolve();

  constructor(options: PauseStateOptions) {
    this.#o = options;
  }

  get paused(): boolean {
    return this.#paused;
  }

  /** The record has been read (or written) once: before that, nothing may act. */
  get known(): boolean {
    return this.#known;
  }

  get where(): string {
    return this.#o.record.where;
  }

  /** Reads the record until it answers (or `signal` aborts): at start, and after a journal swap. */
  async load(signal?: AbortSignal): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      const started = this.#o.clock.monotonic();
      try {
        this.observe(await this.#o.record.read(), started);
        return;
      } catch (error: unknown) {
        if (aborted(signal)) return;
        const retryInMs = backoffDelay(LOAD_RETRY, attempt);
        this.#o.logger.warn(
          { err: error, record: this.where, retryInMs },
          'could not read whether the managers are paused; retrying',
        );
        await this.#o.clock.sleep(retryInMs, signal).catch(() => undefined);
        if (aborted(signal)) return;
      }
    }
  }

  /**
   * Records the pause and then applies it. Nothing changes when it cannot be recorded: the error
   * (a ManagerError) says why.
   */
  set(paused: boolean): Promise<void> {
    const write = this.#writes.then(async () => {
      try {
        await this.#o.record.write(paused);
      } catch (error: unknown) {
        if (isManagerError(error)) throw error;
        throw new ManagerError(
          'INTERNAL',
          `could not record the ${paused ? 'pause' : 'resume'} on ${this.where}: ${describeError(error)}; nothing changed`,
          { cause: error },
        );
      }
      this.#writtenAt = this.#o.clock.monotonic();
      this.#known = true;
      this.#apply(paused);
    });
    this.#writes = write.catch(() => undefined);
    return write;
  }

  /** A value read from the record by a read that began at `readStartedAt` (monotonic). */
  observe(value: boolean | undefined, readStartedAt: number): void {
    if (readStartedAt < this.#writtenAt) return;
    this.#known = true;
    this.#apply(value === true);
  }

  /** What a Lease this manager creates (again) starts with. */
  annotations(): Record<string, string> {
    return this.#known ? { [Annotations.paused]: String(this.#paused) } : {};
  }

  #apply(paused: boolean): void {
    if (paused === this.#paused) return;
    this.#paused = paused;
    this.#o.onChange(paused);
  }
}

/** Read through a call, so a check after an `await` is not narrowed away. */
function aborted(signal: AbortSignal | undefined): boolean {
  return signal?.aborted === true;
}
