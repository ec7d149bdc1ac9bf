// The chain as the manager sees it: the committed height, every validator row at that height,
// who signed recent blocks' certificates, the transactions in new blocks, and the mempool. One
// poll loop; its cost grows with blocks, not with the number of validators.
//
// The view is monotonic: a height lower than one already seen (a node restarted from an old
// snapshot, or syncing from scratch) or a block that differs from the one seen at its height (a
// fork) makes the chain *not trusted*. The view then keeps what it had, and stays untrusted until
// the chain is back at or past the highest height seen with the block seen there; the planner acts
// on nothing meanwhile. Blocks are linked by V1's `prev_state_hash` (the `state_hash` of the block
// before), so the check costs no request while heights move forward.
import type { Clock } from '../clock.ts';
import { ManagerError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import type { ActionKind, ChainValidator } from '../model.ts';
import type { ChainMemory } from './chain-memory.ts';
import type { ChainBlock, ChainReads, CommittedTx, MempoolTx } from './port.ts';

export type { CommittedTx, MempoolTx } from './port.ts';

export interface ChainViewListener {
  /** New blocks were scanned (in height order) and the rows below reflect their effects. */
  onBlocks(txs: readonly CommittedTx[], height: number): void;
  /** The height moved or rows changed: `changed` lists addresses whose row changed. */
  onHeight(height: number, changed: ReadonlySet<string>): void;
  /** The chain became reachable again or stopped being reachable. */
  onHealth?(healthy: boolean, error: string | undefined): void;
  /** The chain stopped (or started again) being trusted: it went back or forked. */
  onTrust?(trusted: boolean, reason: string | undefined): void;
  /** A new highest height was accepted (to persist it: a restarted manager keeps the mark). */
  onHighWater?(mark: HighWater): void;
  /** What the view learned changed (to persist it: a restarted manager reads only new blocks). */
  onMemory?(memory: ChainMemory): void;
  /** A block was read and found linked to the ones before it (in height order; the record's feed). */
  onBlock?(block: ChainBlock): void;
  /** Every row at `height` was read; the blocks up to `height` went to onBlock before. */
  onRows?(height: number, rows: ReadonlyMap<string, ChainValidator>): void;
}

/** The highest height accepted, and the identity (state hash) of its block. */
export interface HighWater {
  readonly height: number;
  readonly stateHash: string;
}

/** Blocks whose identity is remembered, below the highest height seen. */
const IDENTITIES_KEPT = 256;
/** Blocks kept as read (height, hash, time, proposer, signers, transactions), newest last. */
const RECENT_BLOCKS_KEPT = 64;

/** Thrown inside a tick when the chain is found to have gone back or forked. */
class Distrust extends Error {}

/** The queries the view makes (the chain port's reads; tests pass a fake). */
export type ChainReader = Pick<
  ChainReads,
  'height' | 'validators' | 'block' | 'mempool' | 'mempoolEntry' | 'genesisValidators'
>;

/** A transaction this manager sent and still follows (hash known), for the mempool fallback. */
export interface OwnTransaction {
  readonly hash: string;
  readonly signer: string;
  readonly kind: ActionKind;
}

export interface ChainViewOptions {
  reads: ChainReader;
  clock: Clock;
  logger: Logger;
  pollIntervalMs: number;
  listener: ChainViewListener;
  /** Blocks read back on start to learn who is signing (50). */
  bootstrapBlocks?: number;
  /** Most blocks read in one tick; older ones are skipped (200). */
  maxBlocksPerTick?: number;
  /** The mark a previous run of the manager reached (from the journal). */
  highWater?: HighWater | undefined;
  /**
   * What a previous run learned from the blocks it read (from the journal): the view goes on from
   * the block after the one it last scanned instead of reading the last `bootstrapBlocks` again.
   */
  memory?: ChainMemory | undefined;
  /** Read the genesis set (the minimum set's `auto`; on a chain without state sync, who votes). */
  readGenesisSet?: boolean;
  /**
   * The manager's open transactions whose hash is known. When the mempool cannot be listed (V1's
   * 135 while anything is pending) each is looked up by hash instead, and the view's mempool
   * holds those found.
   */
  ownTransactions?: () => Iterable<OwnTransaction>;
  /**
   * While something waits on the next block (a transaction in the mempool, or a poke or a change
   * of rows or signers less than `watchfulWindowMs` ago), the height is read this often instead of
   * every `pollIntervalMs`, so a wave of stakes follows the block that let it go within this
   * time, not within a whole poll interval (100 ms; never above `pollIntervalMs`).
   */
  watchfulPollIntervalMs?: number;
  /** How long a poke or a change keeps the view watchful (5 s). */
  watchfulWindowMs?: number;
}

export class ChainView {
  readonly #options: ChainViewOptions;
  #height = -1;
  #validators = new Map<string, ChainValidator>();
  readonly #signers = new Map<string, number>();
  #mempool = new Map<string, MempoolTx>();
  #scanned = -1;
  #healthy = false;
  #synced = false;
  #lastError: string | undefined;
  #lastSuccessAt: number | undefined;
  #lastBlockTime: number | undefined;
  #stopped = true;
  #wake: AbortController | undefined;
  #loop: Promise<void> | undefined;
  #requests = 0;
  /** Highest height accepted, and the state hash of each recent block seen. */
  #highest = -1;
  readonly #identities = new Map<number, string>();
  #trusted = true;
  #untrustedReason: string | undefined;
  #untrustedSince: number | undefined;
  #genesis: ReadonlySet<string> | undefined;
  readonly #recent: ChainBlock[] = [];
  /** Clock time until which the view polls at the watchful interval. */
  #watchfulUntil = Number.NEGATIVE_INFINITY;
  /** When the mempool was last read, and whether a poke asked for a full look since. */
  #mempoolReadAt = Number.NEGATIVE_INFINITY;
  #poked = false;

  constructor(options: ChainViewOptions) {
    this.#options = options;
    if (options.highWater !== undefined) {
      this.#highest = options.highWater.height;
      this.#identities.set(options.highWater.height, options.highWater.stateHash);
    }
    const memory = options.memory;
    if (memory !== undefined && memory.scanned >= 1) {
      // The next block read must build on the last one scanned (its parent hash is checked).
      this.#scanned = memory.scanned;
      this.#identities.set(memory.scanned, memory.stateHash);
      for (const [address, height] of memory.signers) this.#signers.set(address, height);
      this.#lastBlockTime = memory.lastBlockTime;
    }
    if (memory?.genesis !== undefined) this.#genesis = new Set(memory.genesis);
  }

  /** What the view has learned from the blocks it read (the journal keeps it: chain-memory.ts). */
  get memory(): ChainMemory | undefined {
    const stateHash = this.#identities.get(this.#scanned);
    if (this.#scanned < 1 || stateHash === undefined) return undefined;
    return {
      scanned: this.#scanned,
      stateHash,
      signers: this.#signers,
      genesis: this.#genesis === undefined ? undefined : [...this.#genesis],
      lastBlockTime: this.#lastBlockTime,
    };
  }

  /**
   * The last blocks read, oldest first (at most 64), as the chain port gave them: height, hash,
   * time, proposer when known, signers, transactions. Empty after a restart until new blocks come.
   */
  get recentBlocks(): readonly ChainBlock[] {
    return this.#recent;
  }

  /** False while the chain is below the highest height seen, or forked from what was seen. */
  get trusted(): boolean {
    return this.#trusted;
  }
  get untrustedReason(): string | undefined {
    return this.#untrustedReason;
  }
  /**
   * Forgets the highest height and the blocks seen (they were another chain's: the journal that
   * kept them was set aside), trusts the chain again and polls at once.
   */
  resetHighWater(): void {
    this.#highest = -1;
    this.#identities.clear();
    // What was learned of the blocks was the other chain's too: read this one afresh.
    this.#scanned = -1;
    this.#signers.clear();
    this.#recent.length = 0;
    this.#genesis = undefined;
    if (!this.#trusted) this.#trust(Math.max(this.#height, 0));
    this.poke();
  }
  /** Highest height accepted so far (−1 before the first). */
  get highest(): number {
    return this.#highest;
  }
  /** How many validators the genesis set staked; undefined until read (or when not asked for). */
  get genesisCount(): number | undefined {
    return this.#genesis?.size;
  }

  /** The addresses of the genesis set; undefined until read (or when not asked for). */
  get genesis(): ReadonlySet<string> | undefined {
    return this.#genesis;
  }

  /** Last committed height read (−1 before the first answer). */
  get height(): number {
    return this.#height;
  }
  /** True once the chain has answered at least once. */
  get synced(): boolean {
    return this.#synced;
  }
  get healthy(): boolean {
    return this.#healthy;
  }
  get lastError(): string | undefined {
    return this.#lastError;
  }
  get lastSuccessAt(): number | undefined {
    return this.#lastSuccessAt;
  }
  /** The header timestamp of the newest block read (the chain's clock, V1's text). */
  get lastBlockTime(): number | undefined {
    return this.#lastBlockTime;
  }
  /** RPC requests made so far (idle-cost benchmark). */
  get requests(): number {
    return this.#requests;
  }
  get validators(): ReadonlyMap<string, ChainValidator> {
    return this.#validators;
  }
  get signers(): ReadonlyMap<string, number> {
    return this.#signers;
  }
  /** Mempool transactions by signer address (the newest per signer). */
  get mempool(): ReadonlyMap<string, MempoolTx> {
    return this.#mempool;
  }

  start(): void {
    if (!this.#stopped) return;
    this.#stopped = false;
    this.#loop = this.#run();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    this.#wake?.abort();
    await this.#loop;
  }

  /** Polls now instead of at the next interval. */
  poke(): void {
    this.#watch();
    this.#poked = true;
    // An abort builds its DOMException reason even when the signal has already fired, and a burst
    // of sends pokes once per transaction: skip the ones that cannot wake anything.
    if (this.#wake?.signal.aborted === false) this.#wake.abort();
  }

  async #run(): Promise<void> {
    let light = false;
    while (!this.#stopped) {
      await this.#poll(light);
      this.#wake = new AbortController();
      const ms = this.#nextPollMs();
      light = ms < this.#options.pollIntervalMs;
      await this.#options.clock.sleep(ms, this.#wake.signal).catch(() => undefined);
    }
  }

  #watch(): void {
    this.#watchfulUntil = this.#options.clock.now() + (this.#options.watchfulWindowMs ?? 5_000);
  }

  /** The wait before the next poll: short while something waits on the next block. */
  #nextPollMs(): number {
    const { pollIntervalMs, watchfulPollIntervalMs = 100 } = this.#options;
    const watchful = this.#mempool.size > 0 || this.#options.clock.now() < this.#watchfulUntil;
    return watchful ? Math.min(pollIntervalMs, watchfulPollIntervalMs) : pollIntervalMs;
  }

  /** One poll: height, and when it moved, rows, new blocks and mempool. Never throws. */
  tick(): Promise<void> {
    return this.#poll(false);
  }

  /** `light`: a watchful poll, which reads the mempool only when it has reason to (below). */
  async #poll(light: boolean): Promise<void> {
    const { reads, listener, logger } = this.#options;
    try {
      this.#requests++;
      const height = blockHeight(await reads.height({ timeoutMs: 5_000 }));
      if (height < this.#highest) {
        throw new Distrust(
          `the chain's height went back to ${height} after ${this.#highest} had been seen; nothing is done until it is back at ${this.#highest}`,
        );
      }
      // Back at (or past) the mark after going back, or the first look after a restart: the
      // block seen at the mark must still be there.
      if ((!this.#trusted || this.#scanned < 0) && this.#identities.has(this.#highest))
        await this.#checkIdentity(this.#highest);
      const moved = height !== this.#height;
      const changed = new Set<string>();
      if (moved || !this.#synced || !this.#trusted) {
        const rows = await reads.validators(height, { timeoutMs: 10_000 });
        this.#requests += Math.max(1, Math.ceil(rows.length / 1000));
        const next = new Map<string, ChainValidator>();
        for (const row of rows) {
          const before = this.#validators.get(row.address);
          if (
            before === undefined ||
            before.status !== row.status ||
            before.serviceUrl !== row.serviceUrl
          )
            changed.add(row.address);
          next.set(row.address, row);
        }
        for (const address of this.#validators.keys()) if (!next.has(address)) changed.add(address);
        const scannedBefore = this.#scanned;
        const committed = await this.#scanBlocks(height, changed);
        listener.onRows?.(height, next);
        this.#validators = next;
        this.#height = height;
        this.#raiseMark(height);
        listener.onBlocks(committed, height);
        const memory = this.#scanned !== scannedBefore ? this.memory : undefined;
        if (memory !== undefined) listener.onMemory?.(memory);
      }
      // A watchful poll that finds the same height reads the height alone: the mempool (hundreds of
      // transactions in a burst) is read when the height moved, after a poke, and every interval.
      const now = this.#options.clock.now();
      if (
        !light ||
        moved ||
        this.#poked ||
        !this.#synced ||
        now - this.#mempoolReadAt >= this.#options.pollIntervalMs
      ) {
        this.#poked = false;
        await this.#readMempool();
        this.#mempoolReadAt = now;
      }
      this.#synced = true;
      this.#lastSuccessAt = this.#options.clock.now();
      if (!this.#healthy) {
        this.#healthy = true;
        this.#lastError = undefined;
        logger.info({ height }, 'chain reachable');
        listener.onHealth?.(true, undefined);
      }
      if (!this.#trusted) this.#trust(height);
      if (this.#options.readGenesisSet === true && this.#genesis === undefined)
        await this.#readGenesisSet();
      if (changed.size > 0) this.#watch();
      if (moved || changed.size > 0) listener.onHeight(height, changed);
    } catch (error: unknown) {
      if (error instanceof Distrust) {
        this.#distrust(error.message);
        // The chain answered: it is reachable, only not to be believed.
        this.#synced = true;
        this.#lastSuccessAt = this.#options.clock.now();
        return;
      }
      const message = error instanceof Error ? error.message : String(error);
      if (this.#healthy || this.#lastError === undefined) {
        logger.warn({ err: error }, 'chain unreachable; retrying');
        listener.onHealth?.(false, message);
      }
      this.#healthy = false;
      this.#lastError = message;
    }
  }

  #distrust(reason: string): void {
    if (this.#trusted || this.#untrustedReason !== reason) {
      if (this.#trusted) this.#untrustedSince = this.#options.clock.now();
      this.#trusted = false;
      this.#untrustedReason = reason;
      this.#options.logger.warn({ highest: this.#highest }, `chain not trusted: ${reason}`);
      this.#options.listener.onTrust?.(false, reason);
    }
  }

  #trust(height: number): void {
    this.#trusted = true;
    this.#untrustedReason = undefined;
    const forMs =
      this.#untrustedSince === undefined
        ? undefined
        : this.#options.clock.now() - this.#untrustedSince;
    this.#untrustedSince = undefined;
    this.#options.logger.info({ height, untrustedForMs: forMs }, 'chain trusted again');
    this.#options.listener.onTrust?.(true, undefined);
  }

  /** Reads the block at `height` and compares it with the one seen there before. */
  async #checkIdentity(height: number): Promise<void> {
    const known = this.#identities.get(height);
    if (known === undefined || height < 1) return;
    this.#requests++;
    const block = await this.#options.reads.block(height, { timeoutMs: 10_000 });
    this.#expectIdentity(height, block.hash);
  }

  #expectIdentity(height: number, stateHash: string): void {
    const known = this.#identities.get(height);
    if (known !== undefined && known !== stateHash)
      throw new Distrust(
        `the block at height ${height} differs from the one seen before (state hash ${short(stateHash)} ≠ ${short(known)}): a fork or another chain; nothing is done until the block seen is back`,
      );
  }

  #raiseMark(height: number): void {
    if (height <= this.#highest && this.#highest >= 0) return;
    this.#highest = height;
    for (const h of this.#identities.keys())
      if (h <= height - IDENTITIES_KEPT) this.#identities.delete(h);
    const stateHash = this.#identities.get(height);
    if (stateHash !== undefined) this.#options.listener.onHighWater?.({ height, stateHash });
  }

  async #readGenesisSet(): Promise<void> {
    try {
      this.#requests += 2;
      this.#genesis = new Set(await this.#options.reads.genesisValidators());
      this.#options.logger.info({ genesisValidators: this.#genesis.size }, 'genesis set read');
      const memory = this.memory;
      if (memory !== undefined) this.#options.listener.onMemory?.(memory);
    } catch (error: unknown) {
      this.#options.logger.debug({ err: error }, 'could not read the genesis set yet; retrying');
    }
  }

  async #scanBlocks(height: number, changed: Set<string>): Promise<CommittedTx[]> {
    const bootstrap = this.#options.bootstrapBlocks ?? 50;
    const maxPerTick = this.#options.maxBlocksPerTick ?? 200;
    let from = this.#scanned < 0 ? height - bootstrap + 1 : this.#scanned + 1;
    from = Math.max(from, height - maxPerTick + 1, 1);
    const txs: CommittedTx[] = [];
    for (let h = from; h <= height; h++) {
      this.#requests++;
      const block = await this.#options.reads.block(h, { timeoutMs: 10_000 });
      // Linked to the block seen before it (and the same as the one seen at h, if any).
      this.#expectIdentity(h - 1, block.parentHash);
      this.#expectIdentity(h, block.hash);
      this.#identities.set(h, block.hash);
      this.#options.listener.onBlock?.(block);
      for (const signer of block.signers) {
        if ((this.#signers.get(signer) ?? -1) < h) {
          if (!this.#signers.has(signer)) changed.add(signer);
          this.#signers.set(signer, h);
        }
      }
      txs.push(...block.txs);
      this.#scanned = h;
      this.#lastBlockTime = block.time;
      this.#recent.push(block);
      if (this.#recent.length > RECENT_BLOCKS_KEPT) this.#recent.shift();
    }
    return txs;
  }

  async #readMempool(): Promise<void> {
    this.#requests++;
    const view = await this.#options.reads.mempool({ timeoutMs: 5_000 });
    const next = new Map<string, MempoolTx>();
    if (view.readable) {
      for (const tx of view.txs) next.set(tx.signer, tx);
    } else {
      // V1 lists nothing while anything is pending: only the manager's own transactions can be
      // known, one query each. V1 answers 135 for a hash too while the mempool is not empty, which
      // the client reads as "in the mempool": a transaction of ours counts as pending until a
      // block shows it (the reconciler resolves it from the blocks), never as dropped too early.
      for (const own of this.#options.ownTransactions?.() ?? []) {
        this.#requests++;
        const entry = await this.#options.reads.mempoolEntry(own.hash, { timeoutMs: 5_000 });
        if (entry.inMempool)
          next.set(own.signer, {
            hash: own.hash,
            signer: own.signer,
            kind: entry.kind ?? own.kind,
          });
      }
    }
    this.#mempool = next;
  }
}

/**
 * The chain's answer as a block height, or CHAIN_UNAVAILABLE naming it: a height that is negative
 * or not an integer is no height a node answers (V1's is its consensus height less one, never below 0), so the chain is not believed
 * and the manager not ready while it answers one (issue 30: a node answering −5 left /readyz ready
 * at −1, as if the chain had answered). Not a Distrust, which counts as an answer.
 */
function blockHeight(height: number): number {
  if (Number.isSafeInteger(height) && height >= 0) return height;
  throw new ManagerError(
    'CHAIN_UNAVAILABLE',
    `the chain answered height ${String(height)}, which is not a block height (an integer ≥ 0); nothing is done until it answers one`,
    { details: { height } },
  );
}

function short(hash: string): string {
  return hash.length > 12 ? `${hash.slice(0, 12)}…` : hash || '(none)';
}
