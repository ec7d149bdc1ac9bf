// The journal plus the in-memory indexes the planner reads on every decision: open actions,
// the newest action and the last applied stake height of each validator. Every write goes
// through here, so the indexes never drift from the file.
import type { Journal, PrepareInput } from '../journal/journal.ts';
import {
  ActionKind,
  ActionState,
  isOpenState,
  type ActionRecord,
  type ValidatorId,
} from '../model.ts';

export class ActionBook {
  readonly journal: Journal;
  readonly #open = new Map<ValidatorId, ActionRecord>();
  readonly #latest = new Map<ValidatorId, ActionRecord>();
  readonly #stakeHeights = new Map<ValidatorId, number>();
  readonly #listeners: ((record: ActionRecord) => void)[] = [];

  constructor(journal: Journal) {
    this.journal = journal;
    for (const record of journal.latestPerValidator().values()) this.#index(record);
    for (const record of journal.open()) this.#open.set(record.validatorId, record);
    for (const id of this.#latest.keys()) {
      const applied = journal.lastApplied(id, ActionKind.stake);
      if (applied?.committedHeight !== undefined)
        this.#stakeHeights.set(id, applied.committedHeight);
    }
  }

  get open(): ReadonlyMap<ValidatorId, ActionRecord> {
    return this.#open;
  }
  get latest(): ReadonlyMap<ValidatorId, ActionRecord> {
    return this.#latest;
  }
  get stakeHeights(): ReadonlyMap<ValidatorId, number> {
    return this.#stakeHeights;
  }

  /** Subscribes to every change (status stream, metrics). */
  onChange(listener: (record: ActionRecord) => void): void {
    this.#listeners.push(listener);
  }

  prepare(input: PrepareInput): ActionRecord {
    return this.#apply(this.journal.prepare(input));
  }
  markSent(seq: number, details: Parameters<Journal['markSent']>[1]): ActionRecord {
    return this.#apply(this.journal.markSent(seq, details));
  }
  markResent(seq: number, height: number): ActionRecord {
    return this.#apply(this.journal.markResent(seq, height));
  }
  recordHash(seq: number, txHash: string): ActionRecord {
    return this.#apply(this.journal.recordHash(seq, txHash));
  }
  markCommitted(seq: number, details: Parameters<Journal['markCommitted']>[1]): ActionRecord {
    return this.#apply(this.journal.markCommitted(seq, details));
  }
  markFailed(seq: number, details: Parameters<Journal['markFailed']>[1]): ActionRecord {
    return this.#apply(this.journal.markFailed(seq, details));
  }
  markDropped(seq: number, message: string): ActionRecord {
    return this.#apply(this.journal.markDropped(seq, message));
  }

  #apply(record: ActionRecord): ActionRecord {
    this.#index(record);
    if (isOpenState(record.state)) this.#open.set(record.validatorId, record);
    else if (this.#open.get(record.validatorId)?.seq === record.seq)
      this.#open.delete(record.validatorId);
    for (const listener of this.#listeners) listener(record);
    return record;
  }

  #index(record: ActionRecord): void {
    const current = this.#latest.get(record.validatorId);
    if (current === undefined || current.seq <= record.seq)
      this.#latest.set(record.validatorId, record);
    if (
      record.kind === ActionKind.stake &&
      record.state === ActionState.committed &&
      record.committedHeight !== undefined
    ) {
      this.#stakeHeights.set(record.validatorId, record.committedHeight);
    }
  }
}
