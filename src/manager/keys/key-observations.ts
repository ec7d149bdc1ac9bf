// When the manager first saw each validator id's current key (named by its address, never by the
// key): a validator node that started before then may hold an older key, so its pod is not staked
// but restarted (planner/plan.ts, docs/adr/0022). Kept in memory and in the journal, so a
// restarted manager keeps the time of every key that did not change while it was down; a key it
// finds changed, or has no record of, counts as seen at the keys source's last write when the
// source tells it (the Secret's managedFields, discovery/secret-written.ts), else now (the
// conservative answer).
import type { Clock } from '../clock.ts';
import type { KeyEntry, KeyObservation, ValidatorId } from '../model.ts';

export type { KeyObservation } from '../model.ts';

/** Where observations outlive the process (the journal satisfies it). */
export interface KeyObservationStore {
  keyObservations(): Map<ValidatorId, KeyObservation>;
  recordKeyObservations(observations: ReadonlyMap<ValidatorId, KeyObservation>): void;
}

export class KeyObservations {
  readonly #store: KeyObservationStore;
  readonly #clock: Clock;
  /** One map for the process's life: readers keep a reference to it (`observed`). */
  readonly #observed = new Map<ValidatorId, KeyObservation>();
  #loaded = false;

  constructor(options: { store: KeyObservationStore; clock: Clock }) {
    this.#store = options.store;
    this.#clock = options.clock;
  }

  /** Each id's current key (its address) and when it was first seen (a live view). */
  get observed(): ReadonlyMap<ValidatorId, KeyObservation> {
    return this.#observed;
  }

  /**
   * Takes in the keys as the keys source holds them now; returns the ids whose key is newly seen.
   * An id's key is named by its address — a duplicate's too (its node would load that key) — so a
   * key that goes A → B → A is seen anew at each step. A malformed or missing key names no key a
   * node could load: the id's last observation stands. The first call reads the store: a key
   * recorded with the same address keeps its recorded time. `writtenBy` (epoch ms): no key in
   * the source changed after it (the end of the Secret's last write second); a newly seen key
   * counts as seen then, if that is before now.
   */
  observe(entries: Iterable<KeyEntry>, writtenBy?: number): ValidatorId[] {
    if (!this.#loaded) {
      for (const [id, recorded] of this.#store.keyObservations()) this.#observed.set(id, recorded);
      this.#loaded = true;
    }
    const now = this.#clock.now();
    const seenAt = writtenBy === undefined ? now : Math.min(now, writtenBy);
    const fresh = new Map<ValidatorId, KeyObservation>();
    for (const entry of entries) {
      const address = entry.ok ? entry.key.address : entry.address;
      if (address === undefined || this.#observed.get(entry.id)?.address === address) continue;
      const observation = { address, observedAt: seenAt };
      this.#observed.set(entry.id, observation);
      fresh.set(entry.id, observation);
    }
    // Written before anything acts on it; a write lost to a crash only makes the next start
    // count the key as seen then (later, hence more conservative).
    this.#store.recordKeyObservations(fresh);
    return [...fresh.keys()].sort();
  }

  /** Writes every observation again (the journal was set aside and a new file started). */
  rewrite(): void {
    this.#store.recordKeyObservations(this.#observed);
  }
}
