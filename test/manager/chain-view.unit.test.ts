// ChainView over a fake chain port (test/support/fake-chain.ts) on a manual clock: what one poll
// reads (the last 50 blocks at first, then only new ones, at most 200), who signed, which rows
// changed, the mempool (and V1's unreadable one), reachability, and the poll loop's timing.
// Trust (heights going back, forks) is in chain-trust.unit.test.ts.
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import {
  ChainView,
  type HighWater,
  type OwnTransaction,
} from '../../src/manager/chain/chain-view.ts';
import { pocketReads, statusOf } from '../../src/manager/chain/pocket/pocket-reads.ts';
import type { CommittedTx } from '../../src/manager/chain/port.ts';
import { ChainStatus } from '../../src/manager/model.ts';
import type { IndexedTransaction, ProtocolActor } from '../../src/pocket/index.ts';
import { actor, FakeChain } from '../support/fake-chain.ts';
import { flush, ManualClock } from '../support/manual-clock.ts';

function tx(signer: string, type: string, hash: string, resultCode = 0): IndexedTransaction {
  return {
    height: 0,
    index: 0,
    result_code: resultCode,
    signer_addr: signer,
    recipient_addr: '',
    message_type: type,
    tx: { hash, height: 0, index: 0, txMsg: {} as never },
  };
}

function setup(chain: FakeChain, own: OwnTransaction[] = []) {
  const clock = new ManualClock();
  const seen = {
    blocks: [] as { txs: readonly CommittedTx[]; height: number }[],
    heights: [] as { height: number; changed: string[] }[],
    health: [] as { healthy: boolean; error: string | undefined }[],
    marks: [] as HighWater[],
  };
  const view = new ChainView({
    reads: pocketReads(chain),
    clock,
    logger: pino({ level: 'silent' }),
    pollIntervalMs: 1_000,
    // No watchful window: these tests pin the idle cadence (chain-view-watchful.unit.test.ts
    // pins the fast polls after a change).
    watchfulWindowMs: 0,
    ownTransactions: () => own,
    listener: {
      onBlocks: (txs, height) => seen.blocks.push({ txs, height }),
      onHeight: (height, changed) => seen.heights.push({ height, changed: [...changed].sort() }),
      onHealth: (healthy, error) => seen.health.push({ healthy, error }),
      onHighWater: (mark) => seen.marks.push(mark),
    },
  });
  return { view, seen, clock };
}

const range = (from: number, to: number): number[] =>
  Array.from({ length: to - from + 1 }, (_, i) => from + i);

describe('ChainView', () => {
  it('first poll: rows at the height, the last 50 blocks for signers and transactions', async () => {
    const signers = ['a1', 'a2', 'a3', 'a4', 'a5', 'a6'];
    const chain = new FakeChain(signers).grow(20); // a6 signs up to 20 only
    signers.pop();
    chain.grow(20, (h) => (h === 35 ? [tx('a7', 'MessageStake', 'stake-a7')] : [])); // a5 to 40
    signers.pop();
    chain.grow(40, (h) => (h === 70 ? [tx('a1', 'MessageSend', 'send', 3)] : []));
    chain.rows = ['a1', 'a2', 'a3', 'a4', 'a5', 'a7'].map(actor);
    const { view, seen } = setup(chain);
    await view.tick();

    expect(chain.blockReads).toEqual(range(31, 80));
    expect(view.height).toBe(80);
    expect(Object.fromEntries(view.signers)).toEqual({ a1: 80, a2: 80, a3: 80, a4: 80, a5: 40 });
    expect([...view.validators.keys()]).toEqual(['a1', 'a2', 'a3', 'a4', 'a5', 'a7']);
    expect(seen.blocks).toEqual([
      {
        height: 80,
        txs: [
          {
            hash: 'stake-a7',
            height: 35,
            resultCode: 0,
            signer: 'a7',
            kind: 'stake',
          },
          { hash: 'send', height: 70, resultCode: 3, signer: 'a1', kind: undefined },
        ],
      },
    ]);
    expect(seen.heights).toEqual([{ height: 80, changed: ['a1', 'a2', 'a3', 'a4', 'a5', 'a7'] }]);
    expect(seen.marks).toEqual([{ height: 80, stateHash: 'main-80' }]);
    expect(view).toMatchObject({ synced: true, healthy: true, highest: 80 });
  });

  it('a poll at the same height costs two requests (height, mempool) and tells nobody', async () => {
    const chain = new FakeChain(['a1']).grow(10);
    chain.rows = [actor('a1')];
    const { view, seen } = setup(chain);
    await view.tick();
    const calls = chain.calls;
    const requests = view.requests;
    await view.tick();
    await view.tick();
    expect(chain.calls - calls).toBe(4);
    expect(view.requests - requests).toBe(4);
    expect(seen.blocks).toHaveLength(1);
    expect(seen.heights).toHaveLength(1);
  });

  it('a later poll reads each new block once, and names only the rows that changed', async () => {
    const chain = new FakeChain(['a1', 'a2', 'a3']).grow(60);
    chain.rows = ['a1', 'a2', 'a3', 'a4'].map(actor);
    const { view, seen } = setup(chain);
    await view.tick();
    chain.blockReads.length = 0;

    chain.grow(3, (h) => (h === 62 ? [tx('a2', 'MessageUnstake', 'unstake-a2')] : []));
    const a2: ProtocolActor = { ...actor('a2'), unstaking_height: 90 };
    const a3: ProtocolActor = { ...actor('a3'), staked_amount: '2' }; // not a change the view tracks
    chain.rows = [actor('a1'), a2, a3]; // a4 is gone
    await view.tick();
    expect(chain.blockReads).toEqual([61, 62, 63]);
    expect(seen.heights.at(-1)).toEqual({ height: 63, changed: ['a2', 'a4'] });
    expect(seen.blocks.at(-1)?.txs.map((t) => `${t.hash}@${t.height}`)).toEqual(['unstake-a2@62']);
    expect(view.validators.get('a2')).toMatchObject({
      status: ChainStatus.unstaking,
      unstakingHeight: 90,
    });
    expect(view.validators.has('a4')).toBe(false);
    expect(view.signers.get('a1')).toBe(63);
  });

  it('a jump of 500 blocks reads only the newest 200', async () => {
    const chain = new FakeChain(['a1']).grow(10);
    const { view } = setup(chain);
    await view.tick();
    chain.blockReads.length = 0;
    chain.grow(500);
    await view.tick();
    expect(chain.blockReads).toEqual(range(311, 510));
    expect(view.height).toBe(510);
  });

  it('an unreachable chain: the view is kept, health reported once per change, and back', async () => {
    const chain = new FakeChain(['a1']).grow(10);
    chain.rows = [actor('a1')];
    const { view, seen } = setup(chain);
    await view.tick();
    expect(seen.health).toEqual([{ healthy: true, error: undefined }]);

    chain.down = new Error('connect ECONNREFUSED 127.0.0.1:8081');
    await expect(view.tick()).resolves.toBeUndefined();
    await view.tick();
    expect(view).toMatchObject({
      healthy: false,
      synced: true,
      height: 10,
      lastError: 'connect ECONNREFUSED 127.0.0.1:8081',
    });
    expect(view.validators.has('a1')).toBe(true);
    expect(seen.health.slice(1)).toEqual([
      { healthy: false, error: 'connect ECONNREFUSED 127.0.0.1:8081' },
    ]);

    chain.down = undefined;
    chain.grow(1);
    await view.tick();
    expect(view).toMatchObject({ healthy: true, lastError: undefined, height: 11 });
    expect(seen.health.at(-1)).toEqual({ healthy: true, error: undefined });
  });

  it('a height that is negative or not an integer is no answer: not synced, the error names it', async () => {
    // Issue 30 item 9: a node answering −5 left the view synced (ready) at −1.
    const chain = new FakeChain(['a1']).grow(3);
    chain.servedHeight = -5;
    const { view, seen } = setup(chain);
    await view.tick();
    expect(view).toMatchObject({ synced: false, healthy: false, trusted: true, height: -1 });
    expect(view.lastError).toContain('the chain answered height -5, which is not a block height');
    expect(seen.health).toEqual([{ healthy: false, error: view.lastError }]);

    chain.servedHeight = undefined;
    await view.tick();
    expect(view).toMatchObject({ synced: true, healthy: true, height: 3 });

    chain.servedHeight = 2.5;
    await view.tick();
    expect(view).toMatchObject({ healthy: false, height: 3, trusted: true });
    expect(view.lastError).toContain('answered height 2.5');
    expect(seen.heights.map((h) => h.height)).toEqual([3]);
  });

  it('never synced while the chain has not answered once', async () => {
    const chain = new FakeChain(['a1']).grow(3);
    chain.down = new Error('timeout');
    const { view, seen } = setup(chain);
    await view.tick();
    expect(view).toMatchObject({ synced: false, healthy: false, height: -1 });
    expect(seen.health).toEqual([{ healthy: false, error: 'timeout' }]);
  });

  it('the mempool by signer; when V1 cannot list it (135), our own transactions by hash', async () => {
    const chain = new FakeChain(['a1']).grow(5);
    chain.pending = [tx('a5', 'MessageStake', 'p5'), tx('a6', 'MessageUnstake', 'p6')];
    const own: OwnTransaction[] = [
      { hash: 'p5', signer: 'a5', kind: 'stake' },
      { hash: 'gone', signer: 'a8', kind: 'stake' },
    ];
    const { view } = setup(chain, own);
    await view.tick();
    expect(Object.fromEntries(view.mempool)).toEqual({
      a5: { hash: 'p5', signer: 'a5', kind: 'stake' },
      a6: { hash: 'p6', signer: 'a6', kind: 'unstake' },
    });

    chain.mempoolUnreadable = true;
    const calls = chain.calls;
    await view.tick();
    expect(chain.calls - calls).toBe(4); // height, mempool, one lookup per own transaction
    // As V1 answers, every hash reads as pending while anything is: ours count as pending (never
    // dropped too early); a6's, not ours, cannot be known.
    expect([...view.mempool.keys()].sort()).toEqual(['a5', 'a8']);

    chain.pending = [];
    await view.tick();
    expect(view.mempool.size).toBe(0);
  });

  it('a node that cannot list its mempool but answers by hash: only ours still pending count', async () => {
    const chain = new FakeChain(['a1']).grow(5);
    chain.pending = [tx('a5', 'MessageStake', 'p5')];
    chain.mempool = () => Promise.resolve({ readable: false, reason: 'not listed' });
    chain.mempoolEntry = (hash) =>
      Promise.resolve(
        hash === 'p5' ? { inMempool: true, transaction: chain.pending[0] } : { inMempool: false },
      );
    const { view } = setup(chain, [
      { hash: 'p5', signer: 'a5', kind: 'stake' },
      { hash: 'committed-meanwhile', signer: 'a8', kind: 'unstake' },
    ]);
    await view.tick();
    expect(Object.fromEntries(view.mempool)).toEqual({
      a5: { hash: 'p5', signer: 'a5', kind: 'stake' },
    });
  });

  it('polls at once on start, then every interval on the clock; poke() polls now; stop() ends it', async () => {
    const chain = new FakeChain(['a1']).grow(5);
    const { view, clock } = setup(chain);
    view.start();
    await flush();
    expect(chain.calls).toBeGreaterThan(0);
    const afterFirst = chain.calls;
    await clock.advance(999);
    expect(chain.calls).toBe(afterFirst);
    await clock.advance(1);
    expect(chain.calls).toBe(afterFirst + 2); // height, mempool
    view.poke();
    await flush();
    expect(chain.calls).toBe(afterFirst + 4);
    await view.stop();
    await clock.advance(10_000);
    expect(chain.calls).toBe(afterFirst + 4);
    expect(clock.pendingTimers).toBe(0);
  });
});

describe('statusOf (V1 fields, −1 = not set)', () => {
  const row = (fields: Partial<ProtocolActor>): ProtocolActor => ({ ...actor('a1'), ...fields });
  it.each([
    [{}, 100, ChainStatus.staked],
    [{ paused_height: 90 }, 100, ChainStatus.paused],
    [{ unstaking_height: 101 }, 100, ChainStatus.unstaking],
    [{ unstaking_height: 100 }, 100, ChainStatus.unstaked],
    [{ unstaking_height: 101, paused_height: 90 }, 100, ChainStatus.unstaking],
  ])('%o at height %i is %s', (fields, height, status) => {
    expect(statusOf(row(fields), height)).toBe(status);
  });
});
