// The chain as the manager sees it: the committed height, every validator row at that height,
// who signed recent blocks' certificates, the transactions in new blocks, and the mempool. One
// poll loop; its cost grows with blocks, not with the number of validators.
import type { IndexedTransaction, PocketRpcClient, ProtocolActor } from '../../pocket/index.ts';
import type { Clock } from '../clock.ts';
import type { Logger } from '../logger.ts';
import { ChainStatus, type ChainValidator } from '../model.ts';

/** A transaction found in a committed block. */
export interface CommittedTx {
  readonly hash: string;
  readonly height: number;
  readonly resultCode: number;
  readonly signer: string;
  readonly messageType: string;
}

/** A transaction waiting in the mempool. */
export interface MempoolTx {
  readonly hash: string;
  readonly signer: string;
  readonly messageType: string;
}

export interface ChainViewListener {
  /** New blocks were scanned (in height order) and the rows below reflect their effects. */
  onBlocks(txs: readonly CommittedTx[], height: number): void;
  /** The height moved or rows changed: `changed` lists addresses whose row changed. */
  onHeight(height: number, changed: ReadonlySet<string>): void;
  /** The chain became reachable again or stopped being reachable. */
  onHealth?(healthy: boolean, error: string | undefined): void;
}

export interface ChainViewOptions {
  rpc: PocketRpcClient;
  clock: Clock;
  logger: Logger;
  pollIntervalMs: number;
  listener: ChainViewListener;
  /** Blocks read back on start to learn who is signing (50). */
  bootstrapBlocks?: number;
  /** Most blocks read in one tick; older ones are skipped (200). */
  maxBlocksPerTick?: number;
}

/** Row status at height `height` per V1's fields (−1 = not set). */
export function statusOf(actor: ProtocolActor, height: number): ChainStatus {
  if (actor.unstaking_height >= 0)
    return actor.unstaking_height > height ? ChainStatus.unstaking : ChainStatus.unstaked;
  if (actor.paused_height >= 0) return ChainStatus.paused;
  return ChainStatus.staked;
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
  #lastBlockTime: string | undefined;
  #stopped = true;
  #wake: AbortController | undefined;
  #loop: Promise<void> | undefined;
  #requests = 0;

  constructor(options: ChainViewOptions) {
    this.#options = options;
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
  get lastBlockTime(): string | undefined {
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
    // An abort builds its DOMException reason even when the signal has already fired, and a burst
    // of sends pokes once per transaction: skip the ones that cannot wake anything.
    if (this.#wake?.signal.aborted === false) this.#wake.abort();
  }

  async #run(): Promise<void> {
    while (!this.#stopped) {
      await this.tick();
      this.#wake = new AbortController();
      await this.#options.clock
        .sleep(this.#options.pollIntervalMs, this.#wake.signal)
        .catch(() => undefined);
    }
  }

  /** One poll: height, and when it moved, rows, new blocks and mempool. Never throws. */
  async tick(): Promise<void> {
    const { rpc, listener, logger } = this.#options;
    try {
      this.#requests++;
      const height = await rpc.height({ timeoutMs: 5_000 });
      const moved = height !== this.#height;
      const changed = new Set<string>();
      if (moved || !this.#synced) {
        const rows = await rpc.validators({ height, timeoutMs: 10_000 });
        this.#requests += Math.max(1, Math.ceil(rows.length / 1000));
        const next = new Map<string, ChainValidator>();
        for (const actor of rows) {
          const row: ChainValidator = {
            address: actor.address,
            status: statusOf(actor, height),
            stakedAmount: actor.staked_amount,
            unstakingHeight: actor.unstaking_height,
            serviceUrl: actor.service_url,
          };
          const before = this.#validators.get(actor.address);
          if (
            before === undefined ||
            before.status !== row.status ||
            before.serviceUrl !== row.serviceUrl
          )
            changed.add(actor.address);
          next.set(actor.address, row);
        }
        for (const address of this.#validators.keys()) if (!next.has(address)) changed.add(address);
        const committed = await this.#scanBlocks(height, changed);
        this.#validators = next;
        this.#height = height;
        listener.onBlocks(committed, height);
      }
      await this.#readMempool();
      this.#synced = true;
      this.#lastSuccessAt = this.#options.clock.now();
      if (!this.#healthy) {
        this.#healthy = true;
        this.#lastError = undefined;
        logger.info({ height }, 'chain reachable');
        listener.onHealth?.(true, undefined);
      }
      if (moved || changed.size > 0) listener.onHeight(height, changed);
    } catch (error: unknown) {
      const message = error instanceof Error ? error.message : String(error);
      if (this.#healthy || this.#lastError === undefined) {
        logger.warn({ error: message }, 'chain unreachable; retrying');
        listener.onHealth?.(false, message);
      }
      this.#healthy = false;
      this.#lastError = message;
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
      const block = await this.#options.rpc.block(h, { timeoutMs: 10_000 });
      for (const signature of block.block_header.quorum_cert.threshold_sig.signatures ?? []) {
        if ((this.#signers.get(signature.address) ?? -1) < h) {
          if (!this.#signers.has(signature.address)) changed.add(signature.address);
          this.#signers.set(signature.address, h);
        }
      }
      for (const tx of block.transactions ?? []) txs.push(toCommitted(tx, h));
      this.#scanned = h;
      this.#lastBlockTime = block.block_header.timestamp;
    }
    return txs;
  }

  async #readMempool(): Promise<void> {
    this.#requests++;
    const txs = await this.#options.rpc.unconfirmedTransactions({ timeoutMs: 5_000 });
    const next = new Map<string, MempoolTx>();
    for (const tx of txs)
      next.set(tx.signer_addr, {
        hash: tx.tx.hash,
        signer: tx.signer_addr,
        messageType: tx.message_type,
      });
    this.#mempool = next;
  }
}

function toCommitted(tx: IndexedTransaction, height: number): CommittedTx {
  return {
    hash: tx.tx.hash,
    height: tx.height || height,
    resultCode: tx.result_code,
    signer: tx.signer_addr,
    messageType: tx.message_type,
  };
}
