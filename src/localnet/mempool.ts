// The mempool: admitted transactions in arrival order (FIFO), keyed by the hash of the bytes as
// received, until a block includes or drops them.
import type { AdmittedTransaction } from '../pocket/index.ts';

export interface PendingTx {
  raw: string;
  tx: AdmittedTransaction;
}

export class Mempool {
  readonly #txs = new Map<string, PendingTx>();

  get size(): number {
    return this.#txs.size;
  }

  has(hash: string): boolean {
    return this.#txs.has(hash);
  }

  get(hash: string): PendingTx | undefined {
    return this.#txs.get(hash);
  }

  add(pending: PendingTx): void {
    this.#txs.set(pending.tx.hash, pending);
  }

  /** Removes included and dropped transactions after a block. */
  remove(hashes: Iterable<string>): void {
    for (const hash of hashes) this.#txs.delete(hash);
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
  }
}
