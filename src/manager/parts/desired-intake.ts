// The desired-state intake, a part of the manager (runnable.ts): starts the discovery source and
// turns what it reports into work. A change recomputes the desired state (coalesced and paced)
// and enqueues exactly the ids whose entry changed; a change of the keys updates the key store,
// records when each key was first seen, and reports each new key problem once (a log line and a
// Warning Event). Stopping stops the source.
import type { Clock } from '../clock.ts';
import type { DiscoverySource } from '../discovery/port.ts';
import type { KeyObservations } from '../keys/key-observations.ts';
import type { KeyStore } from '../keys/key-store.ts';
import type { Logger } from '../logger.ts';
import type { Metrics } from '../metrics.ts';
import type { DesiredState, ValidatorId } from '../model.ts';
import { PacedRun } from '../paced-run.ts';
import type { Runnable } from '../runnable.ts';

/** A burst's recomputes are spaced by this many times their cost (at most ~1/4 of a core). */
const RECOMPUTE_SPACING = 3;

export interface DesiredIntakeOptions {
  discovery: DiscoverySource;
  keys: KeyStore;
  keyObservations: KeyObservations;
  clock: Clock;
  logger: Logger;
  metrics: Metrics;
  /** Where the work goes: the reconcile loop. */
  work: IntakeWork;
  /** A journal write failed (the journal's health). */
  journalFailed(error: unknown): void;
}

/** What the intake tells the reconcile loop (parts/reconcile-loop.ts). */
export interface IntakeWork {
  /** Queues a validator for a reconcile. */
  enqueue(id: ValidatorId): void;
  /** A new desired state was computed (node keys watch its pods). */
  onDesired(next: DesiredState): void;
  /** The keys or the desired state were taken in: the manager may now be synced. */
  checkSynced(): void;
  /** The desired state changed: the phases are computed again. */
  refreshPhases(): void;
}

export class DesiredIntake implements Runnable {
  readonly name = 'discovery';
  readonly #o: DesiredIntakeOptions;
  #desired: DesiredState | undefined;
  /** Each id's entry at the last recompute, to enqueue only the ids that changed. */
  #fingerprints = new Map<ValidatorId, string>();
  /**
   * Recomputes, coalesced: at the end of this turn of the event loop, or, while a burst of events
   * keeps coming, no sooner than RECOMPUTE_SPACING times the last recompute's cost after it ended
   * (a recompute is O(validators); a burst of pod events at a thousand validators would otherwise
   * recompute after nearly every watch chunk). A lone event is not delayed; every change is
   * still seen, by the next recompute (level-triggered).
   */
  readonly #recomputes: PacedRun;
  #stopped = false;

  constructor(options: DesiredIntakeOptions) {
    this.#o = options;
    this.#recomputes = new PacedRun({
      clock: options.clock,
      spacing: RECOMPUTE_SPACING,
      run: () => {
        if (!this.#stopped) this.#recomputeNow();
      },
    });
  }

  /** Starts discovery; resolves once its caches synced, with the keys and desired state read. */
  async start(): Promise<void> {
    await this.#o.discovery.start({
      desiredChanged: () => this.#recomputes.request(),
      desiredChangedNow: () => this.#recomputes.runNow(),
      keysChanged: () => this.#onKeysChange(),
    });
    this.#onKeysChange();
    this.#recomputes.runNow();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    await this.#o.discovery.stop();
  }

  /** No recompute runs after this (the source itself stops with stop()). */
  halt(): void {
    this.#stopped = true;
  }

  /** The desired state at the last recompute (computed now if none ran yet). */
  desired(): DesiredState {
    this.#desired ??= this.#o.discovery.computeDesired(this.#o.clock.now());
    return this.#desired;
  }

  /** Recomputes the desired state now and enqueues exactly the ids whose entry changed. */
  #recomputeNow(): void {
    const next = this.#o.discovery.computeDesired(this.#o.clock.now());
    this.#desired = next;
    this.#o.work.onDesired(next);
    const fingerprints = new Map<ValidatorId, string>();
    for (const [id, entry] of next.validators) fingerprints.set(id, JSON.stringify(entry));
    for (const [id, fingerprint] of fingerprints)
      if (this.#fingerprints.get(id) !== fingerprint) this.#o.work.enqueue(id);
    for (const id of this.#fingerprints.keys()) if (!fingerprints.has(id)) this.#o.work.enqueue(id);
    this.#fingerprints = fingerprints;
    const wanted = [...next.validators.values()].filter((v) => v.wanted).length;
    this.#o.metrics.validators.set({ view: 'desired' }, wanted);
    this.#o.work.checkSynced();
    this.#o.work.refreshPhases();
  }

  #onKeysChange(): void {
    const { discovery, keys, metrics, logger } = this.#o;
    const { changed, newProblems } = keys.update(discovery.keys());
    // Observed before anything is enqueued: the work queue starts a pass at once, and a pass that
    // saw the new keys with the old observations judged a key just rotated back as no rotation
    // and its pod as holding it, and staked it while the pod's node signed another member (soak
    // seed 324200, actions 123 and 285).
    this.#observeKeys();
    for (const id of changed) this.#o.work.enqueue(id);
    metrics.keyProblems.set([...keys.entries()].filter((e) => !e.ok).length);
    for (const problem of newProblems) {
      const duplicate = problem.code === 'KEY_DUPLICATE';
      const source = discovery.keysLabel;
      const text = duplicate
        ? `key "${problem.id}" in ${source} is ${problem.message}`
        : `key "${problem.id}" in ${source} is malformed: ${problem.message}`;
      logger.warn({ validator: problem.id, code: problem.code }, text);
      const target = discovery.keysTarget();
      if (target !== undefined) {
        void discovery.events.record(
          target,
          'Warning',
          duplicate ? 'KeyDuplicate' : 'KeyInvalid',
          duplicate
            ? `key "${problem.id}" is ${problem.message}`
            : `key "${problem.id}" is malformed (${problem.code}): ${problem.message}`,
        );
      }
    }
    this.#o.work.checkSynced();
  }

  /** Records when each key was first seen; a failed write leaves the memory right (logged). */
  #observeKeys(): void {
    try {
      const writtenBy = this.#o.discovery.keys()?.writtenBy;
      for (const id of this.#o.keyObservations.observe(this.#o.keys.entries(), writtenBy))
        this.#o.work.enqueue(id);
    } catch (error: unknown) {
      this.#o.journalFailed(error);
      this.#o.logger.warn({ err: error }, 'could not record when the keys were seen');
    }
  }
}
