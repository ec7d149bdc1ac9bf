// The chain view is monotonic: a height lower than one already seen, or a block that differs from
// the one seen at its height, makes the chain "not trusted" until it is back at or past the
// highest height seen with the same block there. Pure: a fake chain port and a manual clock.
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { ChainView, type HighWater } from '../../src/manager/chain/chain-view.ts';
import { pocketReads } from '../../src/manager/chain/pocket/pocket-reads.ts';
import { ChainStatus } from '../../src/manager/model.ts';
import { actor, FakeChain } from '../support/fake-chain.ts';
import { ManualClock } from '../support/manual-clock.ts';

const SIGNERS = ['a1', 'a2', 'a3', 'a4'];

function viewOf(chain: FakeChain, options: { highWater?: HighWater; genesis?: boolean } = {}) {
  const seen = {
    trust: [] as { trusted: boolean; reason: string | undefined }[],
    blocks: [] as number[],
    heights: [] as number[],
    marks: [] as HighWater[],
  };
  const view = new ChainView({
    reads: pocketReads(chain),
    clock: new ManualClock(),
    logger: pino({ level: 'silent' }),
    pollIntervalMs: 100,
    highWater: options.highWater,
    readGenesisSet: options.genesis ?? false,
    listener: {
      onBlocks: (_txs, height) => seen.blocks.push(height),
      onHeight: (height) => seen.heights.push(height),
      onTrust: (trusted, reason) => seen.trust.push({ trusted, reason }),
      onHighWater: (mark) => seen.marks.push(mark),
    },
  });
  return { view, seen };
}

describe('a monotonic chain view', () => {
  it('a height that went back: not trusted, the old view kept, trusted again at the mark', async () => {
    const chain = new FakeChain(SIGNERS).grow(20);
    chain.rows = SIGNERS.map(actor);
    const { view, seen } = viewOf(chain);
    await view.tick();
    expect(view).toMatchObject({ height: 20, highest: 20, trusted: true });

    // The node restarts from an old snapshot: height 12, rows of that time (one validator fewer).
    chain.servedHeight = 12;
    chain.rows = SIGNERS.slice(0, 3).map(actor);
    await view.tick();
    expect(view.trusted).toBe(false);
    expect(view.untrustedReason).toMatch(/height went back to 12 after 20 had been seen/);
    expect(view.height).toBe(20);
    expect(view.validators.get('a4')?.status).toBe(ChainStatus.staked); // the view of height 20
    expect(seen.blocks).toEqual([20]); // nothing of the old state reached the listener
    expect(view.synced).toBe(true);

    chain.servedHeight = 19;
    await view.tick();
    expect(view.trusted).toBe(false);
    expect(seen.trust).toEqual([
      { trusted: false, reason: expect.stringMatching(/went back to 12/) },
      { trusted: false, reason: expect.stringMatching(/went back to 19/) },
    ]);

    // Back at the mark with the block seen there: trusted, and the rows read again.
    chain.servedHeight = undefined;
    chain.rows = SIGNERS.map(actor);
    await view.tick();
    expect(view.trusted).toBe(true);
    expect(seen.trust.at(-1)).toEqual({ trusted: true, reason: undefined });
  });

  it('a fork (another block at a height seen): not trusted, even past the highest height', async () => {
    const chain = new FakeChain(SIGNERS).grow(10);
    const { view } = viewOf(chain);
    await view.tick();
    chain.fork(7, 15);
    await view.tick();
    expect(view.trusted).toBe(false);
    expect(view.untrustedReason).toMatch(/block at height 10 differs from the one seen before/);
    expect(view.height).toBe(10);
    chain.grow(10);
    await view.tick();
    expect(view.trusted).toBe(false);
  });

  it('back at exactly the mark with another block there: still not trusted', async () => {
    const chain = new FakeChain(SIGNERS).grow(10);
    const { view } = viewOf(chain);
    await view.tick();
    chain.servedHeight = 4;
    await view.tick();
    chain.servedHeight = undefined;
    chain.fork(9, 10);
    await view.tick();
    expect(view.trusted).toBe(false);
    expect(view.untrustedReason).toMatch(/block at height 10 differs/);
  });

  it('a restarted manager keeps the mark: a chain below it is not trusted from the first look', async () => {
    const chain = new FakeChain(SIGNERS).grow(30);
    const { view: first, seen } = viewOf(chain);
    await first.tick();
    expect(seen.marks.at(-1)).toEqual({ height: 30, stateHash: 'main-30' });
    chain.servedHeight = 5;
    const { view: restarted } = viewOf(chain, { highWater: { height: 30, stateHash: 'main-30' } });
    await restarted.tick();
    expect(restarted).toMatchObject({ trusted: false, synced: true });
    chain.servedHeight = undefined;
    await restarted.tick();
    expect(restarted.trusted).toBe(true);
    // A mark of another chain's block at that height: a fork, never trusted.
    const { view: other } = viewOf(chain, { highWater: { height: 30, stateHash: 'elsewhere' } });
    await other.tick();
    expect(other.trusted).toBe(false);
  });

  it('costs no request while heights move forward (blocks link by prev_state_hash)', async () => {
    const chain = new FakeChain(SIGNERS).grow(60);
    const { view } = viewOf(chain);
    await view.tick();
    chain.grow(1);
    const before = chain.calls;
    await view.tick();
    // height, rows, one block, mempool: as before the rule.
    expect(chain.calls - before).toBe(4);
  });

  it('reads the genesis set once: rows at height 1 minus stakes committed in block 1', async () => {
    const chain = new FakeChain(SIGNERS).grow(3, (h) =>
      h === 1
        ? [
            {
              height: 1,
              index: 0,
              result_code: 0,
              signer_addr: 'a5',
              recipient_addr: '',
              message_type: 'MessageStake',
              tx: { hash: 'x', height: 1, index: 0, txMsg: {} as never },
            },
          ]
        : [],
    );
    chain.rows = [...SIGNERS, 'a5'].map(actor);
    const { view } = viewOf(chain, { genesis: true });
    await view.tick();
    expect(view.genesisCount).toBe(4);
  });
});
