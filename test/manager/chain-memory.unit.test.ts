// The chain view reads only blocks it has not read (issue 29): what it learned — the last height
// scanned and its state hash, who signed when, the genesis set — goes to the journal, and a view
// started from it reads the blocks after that one, not the last 50 again (V1's RPC leaks a read
// context per rendered transaction, rpc/utils.go:172-360). A remembered block the chain no longer
// has (another branch) is a fork; unreadable memory is no memory. The per-block data stays
// available to readers (height, hash, time, proposer, signers, transactions).
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import {
  ChainMemoryWriter,
  parseChainMemory,
  serializeChainMemory,
  type ChainMemory,
} from '../../src/manager/chain/chain-memory.ts';
import { ChainView } from '../../src/manager/chain/chain-view.ts';
import { pocketReads } from '../../src/manager/chain/pocket/pocket-reads.ts';
import type { ChainBlock } from '../../src/manager/chain/port.ts';
import { actor, FakeChain } from '../support/fake-chain.ts';
import { ManualClock } from '../support/manual-clock.ts';

function viewOver(chain: FakeChain, memory?: ChainMemory) {
  const remembered: ChainMemory[] = [];
  const blocks: ChainBlock[] = [];
  const trust: (string | undefined)[] = [];
  const view = new ChainView({
    reads: pocketReads(chain),
    clock: new ManualClock(),
    logger: pino({ level: 'silent' }),
    pollIntervalMs: 1_000,
    watchfulWindowMs: 0,
    readGenesisSet: true,
    memory,
    listener: {
      onBlocks: () => undefined,
      onHeight: () => undefined,
      onMemory: (m) => remembered.push(m),
      onBlock: (b) => blocks.push(b),
      onTrust: (trusted, reason) => trust.push(trusted ? undefined : reason),
    },
  });
  return { view, remembered, blocks, trust };
}

const range = (from: number, to: number): number[] =>
  Array.from({ length: to - from + 1 }, (_, i) => from + i);

describe('the chain view remembers what it read', () => {
  it('a view started from the memory of an earlier run reads only the blocks after it', async () => {
    const chain = new FakeChain(['a1', 'a2', 'a3', 'a4']).grow(80);
    chain.rows = ['a1', 'a2', 'a3', 'a4'].map(actor);
    const first = viewOver(chain);
    await first.view.tick();
    expect(chain.blockReads).toEqual([...range(31, 80), 1]);
    const memory = first.remembered.at(-1);
    expect(memory).toMatchObject({ scanned: 80, stateHash: 'main-80' });
    expect(memory?.genesis).toEqual(['a1', 'a2', 'a3', 'a4']);

    // The manager restarts (the memory went through the journal as text); three blocks later:
    chain.grow(3);
    chain.blockReads.length = 0;
    const again = viewOver(chain, parseChainMemory(serializeChainMemory(memory!)));
    await again.view.tick();
    // Only 81–83: not the last 50 again, not block 1 for the genesis set.
    expect(chain.blockReads).toEqual([81, 82, 83]);
    expect(again.view.genesisCount).toBe(4);
    expect(Object.fromEntries(again.view.signers)).toEqual({ a1: 83, a2: 83, a3: 83, a4: 83 });
    expect(again.view.trusted).toBe(true);
  });

  it('a remembered block the chain no longer has makes the chain untrusted (a fork)', async () => {
    const chain = new FakeChain(['a1', 'a2', 'a3']).grow(20);
    chain.rows = ['a1', 'a2', 'a3'].map(actor);
    const first = viewOver(chain);
    await first.view.tick();
    const memory = first.remembered.at(-1)!;
    chain.fork(15, 25);
    const again = viewOver(chain, memory);
    await again.view.tick();
    expect(again.view.trusted).toBe(false);
    expect(again.trust.at(-1)).toMatch(/differs from the one seen before/);
  });

  it('keeps the last blocks it read, with proposer, signers and transactions, for other readers', async () => {
    const chain = new FakeChain(['a1', 'a2']).grow(70);
    chain.rows = ['a1', 'a2'].map(actor);
    const { view, blocks } = viewOver(chain);
    await view.tick();
    expect(blocks.map((b) => b.height)).toEqual(range(21, 70));
    expect(view.recentBlocks.map((b) => b.height)).toEqual(range(21, 70));
    expect(view.recentBlocks.at(-1)).toMatchObject({
      height: 70,
      hash: 'main-70',
      parentHash: 'main-69',
      signers: ['a1', 'a2'],
      txs: [],
    });
    chain.grow(30);
    await view.tick();
    // At most 64 kept, the newest last.
    expect(view.recentBlocks.map((b) => b.height)).toEqual(range(37, 100));
  });

  it('unreadable memory is no memory; the writer writes at most every interval, and the last on flush', () => {
    for (const raw of ['', '{', '{"v":2}', '{"v":1,"scanned":"x","stateHash":"h","signers":[]}'])
      expect(parseChainMemory(raw)).toBeUndefined();
    const written: string[] = [];
    let now = 0;
    const writer = new ChainMemoryWriter({
      write: (raw) => written.push(raw),
      now: () => now,
      intervalMs: 2_000,
      onError: () => undefined,
    });
    const at = (scanned: number): ChainMemory => ({
      scanned,
      stateHash: `h${scanned}`,
      signers: new Map([['a1', scanned]]),
      genesis: undefined,
      lastBlockTime: undefined,
    });
    writer.offer(at(1));
    now = 500;
    writer.offer(at(2));
    now = 2_100;
    writer.offer(at(3));
    writer.offer(at(4));
    writer.flush();
    expect(written.map((raw) => parseChainMemory(raw)?.scanned)).toEqual([1, 3, 4]);
    // A failed write is reported, not thrown into the chain view's poll.
    const errors: unknown[] = [];
    const failing = new ChainMemoryWriter({
      write: () => {
        throw new Error('disk full');
      },
      now: () => 0,
      intervalMs: 0,
      onError: (e) => errors.push(e),
    });
    failing.offer(at(5));
    expect(errors).toHaveLength(1);
  });
});
