// The mempool's bound: V1's rule, oldest out first when a new transaction overflows the count or
// the bytes (utility/types/tx_fifo_mempool.go:96-105, shared/mempool/generic_fifo_set.go:59-64).
import { describe, expect, it } from 'vitest';
import { Mempool, V1_MEMPOOL_LIMITS, type PendingTx } from '../../src/localnet/mempool.ts';
import type { AdmittedTransaction } from '../../src/pocket/index.ts';

const pending = (hash: string, bytes: number): PendingTx => ({
  raw: 'ab'.repeat(bytes),
  tx: { hash } as AdmittedTransaction,
});

describe('Mempool bounds', () => {
  it('evicts the oldest transactions beyond the count, keeping arrival order', () => {
    const pool = new Mempool({ maxTxs: 2, maxBytes: 1_000 });
    expect(pool.add(pending('a', 10))).toEqual([]);
    expect(pool.add(pending('b', 10))).toEqual([]);
    expect(pool.add(pending('c', 10))).toEqual(['a']);
    expect(pool.list().map((p) => p.tx.hash)).toEqual(['b', 'c']);
    expect(pool.bytes).toBe(20);
  });

  it('evicts the oldest transactions beyond the bytes, never the one just added', () => {
    const pool = new Mempool({ maxTxs: 100, maxBytes: 100 });
    pool.add(pending('a', 40));
    pool.add(pending('b', 40));
    expect(pool.add(pending('c', 50))).toEqual(['a']);
    expect(pool.add(pending('huge', 500))).toEqual(['b', 'c']);
    expect(pool.list().map((p) => p.tx.hash)).toEqual(['huge']);
    pool.remove(['huge']);
    expect([pool.size, pool.bytes]).toEqual([0, 0]);
  });

  it('ignores a second add of the same hash and defaults to V1 LocalNet’s limits', () => {
    const pool = new Mempool();
    pool.add(pending('a', 10));
    expect(pool.add(pending('a', 10))).toEqual([]);
    expect([pool.size, pool.bytes]).toEqual([1, 10]);
    expect(V1_MEMPOOL_LIMITS).toEqual({ maxTxs: 9000, maxBytes: 1_073_741_824 });
  });
});
