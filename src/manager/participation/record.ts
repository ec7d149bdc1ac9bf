// The participation record: for each committed height the chain view read, what its block says
// (hash, time, proposer, the signers of its certificate, its stake and unstake transactions) and
// which validators were staked at that height, for the last `capacity` heights. It is fed by the
// chain view's reads (onBlock, onRows: no request of its own) and holds only what was read.
//
// "Staked at height h" is the set whose votes count for block h: the rows staked in the state
// after block h − 1. The view reads the rows at the top height of each poll, so the set of h is
// known exactly when the rows at h − 1 were read. When a poll read several blocks (the chain moved
// more than one height between polls), the sets of the heights between are derived from the last
// known one by applying each block's committed stakes and unstakes, and checked against the rows
// read at the top: when the derivation disagrees, or a block held a committed transaction of
// another kind (which may change a row in ways not followed here), those sets are marked unknown
// rather than guessed. Heights before the first rows read (the blocks a starting manager reads back)
// have no known set either.
import type { ChainBlock } from '../chain/port.ts';
import { ActionKind, ChainStatus, type ChainValidator } from '../model.ts';
import { AddressTable, sameBits, withBit } from './address-bits.ts';

/** Heights kept by default: the read's largest window. */
export const RECORD_HEIGHTS = 1_000;

/** A stake or unstake a block holds (`resultCode` 0: applied). */
export interface RecordedTx {
  readonly kind: ActionKind;
  readonly signer: string;
  readonly hash: string;
  readonly resultCode: number;
}

/** One height as recorded, with addresses. */
export interface RecordedHeight {
  readonly height: number;
  readonly hash: string;
  /** The block's header time (ms), when readable. */
  readonly time: number | undefined;
  readonly proposer: string | undefined;
  /** Addresses whose signatures are in the block's certificate. */
  readonly signers: readonly string[];
  /** Addresses staked at this height; undefined when not known (see the file's comment). */
  readonly staked: readonly string[] | undefined;
  readonly txs: readonly RecordedTx[];
}

/** One height as stored: sets over the record's address numbers (`CompactHeights.addresses`). */
export interface CompactHeight {
  readonly height: number;
  readonly hash: string;
  readonly time: number | undefined;
  readonly proposer: number | undefined;
  readonly signers: Uint8Array;
  readonly staked: Uint8Array | undefined;
  readonly txs: readonly RecordedTx[];
}

export interface CompactHeights {
  /** The address of each number the sets use. */
  readonly addresses: readonly string[];
  readonly heights: readonly CompactHeight[];
}

interface Entry {
  readonly height: number;
  readonly hash: string;
  readonly time: number | undefined;
  readonly proposer: number | undefined;
  readonly signers: Uint8Array;
  staked: Uint8Array | undefined;
  /** Whether `staked` came from rows read (or was derived from the height before). */
  stakedRead: boolean;
  readonly txs: readonly RecordedTx[];
  /** The block holds a committed transaction that is neither a stake nor an unstake. */
  readonly otherTx: boolean;
}

export type SettledListener = (heights: readonly RecordedHeight[]) => void;

export class ParticipationRecord {
  readonly #capacity: number;
  readonly #table = new AddressTable();
  /** Entries by height, oldest first, contiguous or not (a gap is a height not read). */
  readonly #entries: Entry[] = [];
  /** The staked set read for a height whose block is not recorded yet (the rows at height − 1). */
  #next: { height: number; staked: Uint8Array } | undefined;
  /** The newest height already handed to the listeners. */
  #settled = 0;
  readonly #listeners = new Set<SettledListener>();

  constructor(options: { capacity?: number } = {}) {
    this.#capacity = Math.max(1, options.capacity ?? RECORD_HEIGHTS);
  }

  /** The oldest and newest heights held; undefined while empty. */
  get range(): { from: number; to: number } | undefined {
    const first = this.#entries[0];
    const last = this.#entries.at(-1);
    return first === undefined || last === undefined
      ? undefined
      : { from: first.height, to: last.height };
  }

  /**
   * Calls `listener` with the heights recorded since the last call, each time the rows at the
   * top of a poll were read (their staked sets are then final). Returns the unsubscribe.
   */
  onSettled(listener: SettledListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** The chain view read `block` (in height order, linked to the block before). */
  addBlock(block: ChainBlock): void {
    const last = this.#entries.at(-1);
    // A height at or below one held: the chain was replaced (a journal of another chain set
    // aside); what was recorded from there on is another chain's.
    if (last !== undefined && block.height <= last.height) this.#dropFrom(block.height);
    const previous = this.#entries.at(-1);
    const txs: RecordedTx[] = [];
    let otherTx = false;
    for (const tx of block.txs) {
      if (tx.kind === undefined) otherTx ||= tx.resultCode === 0;
      else txs.push({ kind: tx.kind, signer: tx.signer, hash: tx.hash, resultCode: tx.resultCode });
    }
    const entry: Entry = {
      height: block.height,
      hash: block.hash,
      time: block.time,
      proposer: block.proposer === undefined ? undefined : this.#table.numberOf(block.proposer),
      signers: this.#table.bitsOf(block.signers),
      staked: undefined,
      stakedRead: false,
      txs,
      otherTx,
    };
    if (this.#next?.height === block.height) {
      entry.staked = this.#next.staked;
      entry.stakedRead = true;
    } else if (previous?.height === block.height - 1) {
      entry.staked = this.#after(previous);
    }
    this.#entries.push(entry);
    while (this.#entries.length > this.#capacity) this.#entries.shift();
  }

  /** The chain view read every row at `height` (after the blocks up to it). */
  addRows(height: number, rows: ReadonlyMap<string, ChainValidator>): void {
    let staked = this.#table.bitsOf(
      [...rows.values()].filter((r) => r.status === ChainStatus.staked).map((r) => r.address),
    );
    // Heights share one set while it does not change.
    const before = this.#next?.staked ?? this.#entries.at(-1)?.staked;
    if (before !== undefined && sameBits(before, staked)) staked = before;
    const top = this.#entries.at(-1);
    if (top?.height === height) {
      const derived = this.#after(top);
      if (derived === undefined || !sameBits(derived, staked)) this.#forgetDerived();
    }
    this.#next = { height: height + 1, staked };
    this.#settle();
  }

  /** The heights held in [from, to], oldest first. */
  heights(from: number, to: number): RecordedHeight[] {
    const out: RecordedHeight[] = [];
    for (const entry of this.#entries)
      if (entry.height >= from && entry.height <= to) out.push(this.#view(entry));
    return out;
  }

  /**
   * The heights held in [from, to] as stored, for a reader that names each address once rather
   * than once per height (the read of 1,000 validators × 200 heights).
   */
  compact(from: number, to: number): CompactHeights {
    return {
      addresses: this.#table.all,
      heights: this.#entries.filter((e) => e.height >= from && e.height <= to),
    };
  }

  /** The staked set after `entry`'s block: its own with its applied stakes and unstakes. */
  #after(entry: Entry): Uint8Array | undefined {
    if (entry.staked === undefined || entry.otherTx) return undefined;
    let staked = entry.staked;
    for (const tx of entry.txs)
      if (tx.resultCode === 0)
        staked = withBit(staked, this.#table.numberOf(tx.signer), tx.kind === ActionKind.stake);
    return staked;
  }

  /** Marks unknown every derived set back to the last one read (one of them was wrong). */
  #forgetDerived(): void {
    for (let i = this.#entries.length - 1; i >= 0; i--) {
      const entry = this.#entries[i];
      if (entry === undefined || entry.stakedRead) return;
      entry.staked = undefined;
    }
  }

  #dropFrom(height: number): void {
    while ((this.#entries.at(-1)?.height ?? -1) >= height) this.#entries.pop();
    this.#next = undefined;
    this.#settled = Math.min(this.#settled, height - 1);
  }

  #settle(): void {
    const fresh = this.#entries.filter((e) => e.height > this.#settled);
    if (fresh.length === 0) return;
    this.#settled = fresh.at(-1)?.height ?? this.#settled;
    if (this.#listeners.size === 0) return;
    const views = fresh.map((e) => this.#view(e));
    for (const listener of this.#listeners) listener(views);
  }

  #view(entry: Entry): RecordedHeight {
    const table = this.#table;
    return {
      height: entry.height,
      hash: entry.hash,
      time: entry.time,
      proposer: entry.proposer === undefined ? undefined : table.addressOf(entry.proposer),
      signers: table.addressesOf(entry.signers),
      staked: entry.staked === undefined ? undefined : table.addressesOf(entry.staked),
      txs: entry.txs,
    };
  }
}
