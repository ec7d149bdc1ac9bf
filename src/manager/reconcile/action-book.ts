// The journal plus the in-memory indexes the planner reads on every decision: open actions,
// the newest action and the last applied stake height of each validator, and who staked each
// address last. Every write goes
// through here, so the indexes never drift from the file.
import type { OwnTransaction } from '../chain/chain-view.ts';
import type { Journal, PrepareInput } from '../journal/journal.ts';
import {
  ActionKind,
  ActionState,
  isOpenState,
  type ActionRecord,
  type LastStake,
  type ValidatorId,
} from '../model.ts';

export class ActionBook {
  readonly journal: Journal;
  readonly #open = new Map<ValidatorId, ActionRecord>();
  readonly #latest = new Map<ValidatorId, ActionRecord>();
  readonly #stakeHeights = new Map<ValidatorId, number>();
  readonly #lastStakes = new Map<string, LastStake>();
  readonly #listeners: ((record: ActionRecord) => void)[] = [];

  constructor(journal: Journal) {
    this.journal = journal;
    this.#load();
    // A group that failed to commit is gone from the file: forget what it added here too.
    journal.onGroupFailure(() => this.#load());
  }

  #load(): void {
    this.#open.clear();
    this.#latest.clear();
    this.#stakeHeights.clear();
    this.#lastStakes.clear();
    const { journal } = this;
    for (const record of journal.lastStakePerAddress().values()) this.#indexLastStake(record);
    for (const record of journal.latestPerValidator().values()) this.#index(record);
    for (const record of journal.open()) this.#open.set(record.validatorId, record);
    for (const id of this.#latest.keys()) {
      const applied = journal.lastApplied(id, ActionKind.stake);
      if (applied?.committedHeight !== undefined)
        this.#stakeHeights.set(id, applied.committedHeight);
    }
  }

  /** Reads the indexes from the journal again (after the journal was replaced by a new file). */
  reload(): void {
    this.#load();
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
  /** Per address, the validator id whose stake of it committed last, and when (manager clock). */
  get lastStakes(): ReadonlyMap<string, LastStake> {
    return this.#lastStakes;
  }

  /** Open actions whose hash is known: what the chain view asks for when V1 hides its mempool. */
  *ownTransactions(): Iterable<OwnTransaction> {
    for (const open of this.#open.values())
      if (open.txHash !== undefined)
        yield { hash: open.txHash, signer: open.address, kind: open.kind };
  }

  /** Subscribes to every change (status stream, metrics). */
  onChange(listener: (record: ActionRecord) => void): void {
    this.#listeners.push(listener);
  }

  prepare(input: PrepareInput): ActionRecord {
    return this.#apply(this.journal.prepare(input));
  }
  /**
   * Writes a new open action and resolves once it is on disk: group commit, so that the actions
   * prepared in the same turn of the event loop share one transaction (one fsync). The indexes
   * see the action at once (a concurrent decision, e.g. pacing, counts it); the caller sends only
   * after this resolves. Rejects, and the indexes are reloaded from the file, if the commit fails.
   */
  async prepareDurably(input: PrepareInput): Promise<ActionRecord> {
    const record = this.#apply(this.journal.prepare(input, { grouped: true }));
    await this.journal.committed();
    return record;
  }
  /** The node admitted it. Committed with the tick's group: if lost in a crash, the action stays prepared and its same bytes are sent again (idempotent). */
  markSent(seq: number, details: Parameters<Journal['markSent']>[1]): ActionRecord {
    return this.#apply(this.journal.markSent(seq, details, { grouped: true }));
  }
  markResent(seq: number, height: number): ActionRecord {
    return this.#apply(this.journal.markResent(seq, height));
  }
  recordHash(seq: number, txHash: string): ActionRecord {
    return this.#apply(this.journal.recordHash(seq, txHash));
  }
  /**
   * The action's block outcome, read from the chain: committed with the tick's group (one fsync
   * for a block's worth). Lost in a crash, the action stays open and the restarted manager reads
   * the same outcome from the chain again; a later action's durable prepare commits it first.
   */
  recordOutcome(
    seq: number,
    outcome:
      | { committed: Parameters<Journal['markCommitted']>[1] }
      | { failed: Parameters<Journal['markFailed']>[1] },
  ): ActionRecord {
    return this.#apply(
      'committed' in outcome
        ? this.journal.markCommitted(seq, outcome.committed, { grouped: true })
        : this.journal.markFailed(seq, outcome.failed, { grouped: true }),
    );
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
      this.#indexLastStake(record);
    }
  }

  /** A committed, applied stake: who staked its address last (the newest by seq). */
  #indexLastStake(record: ActionRecord): void {
    const before = this.#lastStakes.get(record.address);
    if (record.resultCode === 0 && (before === undefined || before.seq <= record.seq))
      this.#lastStakes.set(record.address, {
        id: record.validatorId,
        at: Date.parse(record.updatedAt),
        seq: record.seq,
      });
  }
}
