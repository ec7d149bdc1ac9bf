// The chain view reads the height every poll interval when nothing waits on the chain, and often
// (the watchful interval) for a while after a poke (a transaction sent), a change of rows or
// signers, and while the mempool holds anything: the next wave follows its block at once.
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { ChainView } from '../../src/manager/chain/chain-view.ts';
import { pocketReads } from '../../src/manager/chain/pocket/pocket-reads.ts';
import type { IndexedTransaction } from '../../src/pocket/index.ts';
import { actor, FakeChain } from '../support/fake-chain.ts';
import { ManualClock } from '../support/manual-clock.ts';

const SIGNERS = ['a1', 'a2', 'a3', 'a4'];

function setup() {
  const chain = new FakeChain(SIGNERS).grow(5);
  chain.rows = SIGNERS.map(actor);
  let heightReads = 0;
  const height = chain.height.bind(chain);
  chain.height = () => {
    heightReads++;
    return height();
  };
  const mempoolReads = { count: 0 };
  const mempool = chain.mempool.bind(chain);
  chain.mempool = () => {
    mempoolReads.count++;
    return mempool();
  };
  const clock = new ManualClock();
  const view = new ChainView({
    reads: pocketReads(chain),
    clock,
    logger: pino({ level: 'silent' }),
    pollIntervalMs: 500,
    watchfulPollIntervalMs: 100,
    watchfulWindowMs: 2_000,
    listener: { onBlocks: () => undefined, onHeight: () => undefined },
  });
  /** Height reads during the next `ms` of clock time. */
  const readsOver = async (ms: number): Promise<number> => {
    const before = heightReads;
    await clock.advance(ms);
    return heightReads - before;
  };
  return { chain, view, readsOver, mempoolReads };
}

describe('the chain view while something waits on the next block', () => {
  it('polls every interval when idle, often for the window after a poke, then idles again', async () => {
    const { view, readsOver, mempoolReads } = setup();
    await view.tick(); // the first look (bootstrap) outside the loop's clock
    view.start();
    await readsOver(5_000); // the first look marks every row as changed: watchful at start
    expect(await readsOver(5_000)).toBe(10);
    view.poke();
    await readsOver(0); // the poke's own poll
    const mempoolBefore = mempoolReads.count;
    expect(await readsOver(1_000)).toBeGreaterThanOrEqual(9);
    // The watchful polls read the height alone while it stays put; the mempool every interval.
    expect(mempoolReads.count - mempoolBefore).toBeLessThanOrEqual(2);
    await readsOver(1_500); // the window (2 s from the poke) ends
    expect(await readsOver(5_000)).toBe(10);
    await view.stop();
  });

  it('a change of rows keeps it watchful; so does a non-empty mempool', async () => {
    const { chain, view, readsOver } = setup();
    await view.tick(); // the first look (bootstrap) outside the loop's clock
    view.start();
    await readsOver(5_000);
    expect(await readsOver(1_000)).toBe(2);
    chain.rows = SIGNERS.slice(0, 3).map(actor);
    chain.grow(1);
    await readsOver(1_000); // the tick that sees the new height and the change
    expect(view.height).toBe(6);
    expect(await readsOver(1_000)).toBeGreaterThanOrEqual(9);
    await readsOver(3_000);
    expect(await readsOver(1_000)).toBe(2);
    chain.pending = [
      {
        height: 0,
        index: 0,
        result_code: 0,
        signer_addr: 'a9',
        recipient_addr: '',
        message_type: 'MessageStake',
        tx: { hash: 'ab', bytes: '' },
      } as unknown as IndexedTransaction,
    ];
    await readsOver(1_000);
    expect(await readsOver(1_000)).toBeGreaterThanOrEqual(9);
    chain.pending.length = 0;
    await readsOver(3_000);
    expect(await readsOver(1_000)).toBe(2);
    await view.stop();
  });
});
