// When the manager first saw each validator id's current key (named by its address, never by the
// key): a validator node that started before then may hold an older key, so its pod is not staked
// but restarted (planner/stale-key.ts, docs/adr/0022). Kept in memory and in the journal, so a
// restarted manager keeps the time of every key that did not change while it was down; a key it
// finds changed, or has no record of, counts as seen at the keys source's last write when the
// source tells it (the Secret's managedFields, discovery/secret-written.ts), else now (the
// conservative answer).
//
// It also keeps each id's former keys (their addresses, when each was first seen and when it was
// replaced): which key a node that started before a change holds, and whose a staked row with no
// key in the Secret was (an orphan after a rotation the manager did not see). Addresses and times
// only, in the journal's settings (`keys.history`).
import type { Clock } from '../clock.ts';
import type { FormerKey, KeyEntry, KeyObservation, ValidatorId } from '../model.ts';

export type { FormerKey, KeyObservation } from '../model.ts';

/** Where observations outlive the process (the journal satisfies it). */
export interface KeyObservationStore {
  keyObservations(): Map<ValidatorId, KeyObservation>;
  recordKeyObservations(observations: ReadonlyMap<ValidatorId, KeyObservation>): void;
  getSetting?(name: string): string | undefined;
  setSetting?(name: string, value: string): void;
}

/** The journal setting that holds the former keys. */
const HISTORY_SETTING = 'keys.history';
/** Former keys kept per id (the newest). */
const FORMER_KEPT = 4;

export class KeyObservations {
  readonly #store: KeyObservationStore;
  readonly #clock: Clock;
  /** One map for the process's life: readers keep a reference to it (`observed`). */
  readonly #observed = new Map<ValidatorId, KeyObservation>();
  /** One map for the process's life, like `observed`. */
  readonly #former = new Map<ValidatorId, FormerKey[]>();
  #loaded = false;

  constructor(options: { store: KeyObservationStore; clock: Clock }) {
    this.#store = options.store;
    this.#clock = options.clock;
  }

  /** Each id's current key (its address) and when it was first seen (a live view). */
  get observed(): ReadonlyMap<ValidatorId, KeyObservation> {
    return this.#observed;
  }

  /** Each id's former keys, oldest first (a live view). */
  get former(): ReadonlyMap<ValidatorId, readonly FormerKey[]> {
    return this.#former;
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
      for (const [id, list] of readHistory(this.#store.getSetting?.(HISTORY_SETTING)))
        this.#former.set(id, list);
      this.#loaded = true;
    }
    const now = this.#clock.now();
    const seenAt = writtenBy === undefined ? now : Math.min(now, writtenBy);
    const fresh = new Map<ValidatorId, KeyObservation>();
    for (const entry of entries) {
      const address = entry.ok ? entry.key.address : entry.address;
      const before = this.#observed.get(entry.id);
      if (address === undefined || before?.address === address) continue;
      if (before !== undefined) this.#remember(entry.id, before, seenAt);
      const observation = { address, observedAt: seenAt };
      this.#observed.set(entry.id, observation);
      fresh.set(entry.id, observation);
    }
    // Written before anything acts on it; a write lost to a crash only makes the next start
    // count the key as seen then (later, hence more conservative).
    if (fresh.size > 0) this.#writeHistory();
    this.#store.recordKeyObservations(fresh);
    return [...fresh.keys()].sort();
  }

  /** Writes every observation again (the journal was set aside and a new file started). */
  rewrite(): void {
    this.#store.recordKeyObservations(this.#observed);
    this.#writeHistory();
  }

  #remember(id: ValidatorId, before: KeyObservation, replacedAt: number): void {
    const list = (this.#former.get(id) ?? []).filter((f) => f.address !== before.address);
    list.push({ address: before.address, observedAt: before.observedAt, replacedAt });
    this.#former.set(id, list.slice(-FORMER_KEPT));
  }

  #writeHistory(): void {
    this.#store.setSetting?.(
      HISTORY_SETTING,
      JSON.stringify(Object.fromEntries([...this.#former].filter(([, list]) => list.length > 0))),
    );
  }
}

/** The former keys as the journal keeps them; anything unreadable is left out. */
function readHistory(raw: string | undefined): Map<ValidatorId, FormerKey[]> {
  const out = new Map<ValidatorId, FormerKey[]>();
  if (raw === undefined) return out;
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    return out;
  }
  if (typeof parsed !== 'object' || parsed === null) return out;
  for (const [id, list] of Object.entries(parsed as Record<string, unknown>)) {
    if (!Array.isArray(list)) continue;
    const kept = list.filter(
      (f): f is FormerKey =>
        typeof f === 'object' &&
        f !== null &&
        typeof (f as FormerKey).address === 'string' &&
        Number.isFinite((f as FormerKey).observedAt) &&
        Number.isFinite((f as FormerKey).replacedAt),
    );
    if (kept.length > 0) out.set(id, kept.slice(-FORMER_KEPT));
  }
  return out;
}
