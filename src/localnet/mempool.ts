// The mempool: admitted transactions in arrival order (FIFO), keyed by the hash of the bytes as
// received, until a block includes or drops them. Bounded as V1's is (count and total bytes; the
// oldest goes first when a new one overflows it: tx_fifo_mempool.go:96-105,
// generic_fifo_set.go:59-64, LocalNet's 9000 transactions / 1 GiB in charts/pocket/values.yaml:84-85).
import type { AdmittedTransaction } from '../pocket/index.ts';

export interface PendingTx {
  raw: string;
  tx: AdmittedTransaction;
}

export interface MempoolLimits {
  maxTxs: number;
  maxBytes: number;
}

/** V1 LocalNet's `utility.max_mempool_transactions` and `max_mempool_transaction_bytes`. */
export const V1_MEMPOOL_LIMITS: MempoolLimits = { maxTxs: 9000, maxBytes: 1_073_741_824 };

export class Mempool {
  readonly #txs = new Map<string, PendingTx>();
  readonly #limits: MempoolLimits;
  #bytes = 0;

  constructor(limits: MempoolLimits = V1_MEMPOOL_LIMITS) {
    this.#limits = limits;
  }

  get size(): number {
    return this.#txs.size;
  }

  /** Total size of the pooled transactions' bytes. */
  get bytes(): number {
    return this.#bytes;
  }

  has(hash: string): boolean {
    return this.#txs.has(hash);
  }

  get(hash: string): PendingTx | undefined {
    return this.#txs.get(hash);
  }

  /** Adds a transaction; returns the hashes of the oldest ones evicted to stay within bounds. */
  add(pending: PendingTx): string[] {
    if (this.#txs.has(pending.tx.hash)) return [];
    this.#txs.set(pending.tx.hash, pending);
    this.#bytes += sizeOf(pending);
    const evicted: string[] = [];
    while (
      this.#txs.size > 1 &&
      (this.#txs.size > this.#limits.maxTxs || this.#bytes > this.#limits.maxBytes)
    ) {
      const [oldest] = this.#txs.keys();
      if (oldest === undefined || oldest === pending.tx.hash) break;
      this.#delete(oldest);
      evicted.push(oldest);
    }
    return evicted;
  }

  /** Removes included and dropped transactions after a block. */
  remove(hashes: Iterable<string>): void {
    for (const hash of hashes) this.#delete(hash);
  }

  /** Transactions in arrival order. */
  list(): PendingTx[] {
    return [...this.#txs.values()];
  }

  /** The position of a transaction in arrival order, or −1. */
  indexOf(hash: string): number {
    let index = 0;
    for (const key of this.#txs.keys()) {
      if (key === hash) return index;
      index++;
    }
    return -1;
  }

  clear(): void {
    this.#txs.clear();
    this.#bytes = 0;
  }

  #delete(hash: string): void {
    const pending = this.#txs.get(hash);
    if (pending === undefined) return;
    this.#txs.delete(hash);
    this.#bytes -= sizeOf(pending);
  }
}

function sizeOf(pending: PendingTx): number {
  return pending.raw.length / 2;
}
