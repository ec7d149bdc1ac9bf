// The participation record as the manager feeds it: a real ChainView reading a model chain (whose
// staked set at every height is known), the record on the view's onBlock/onRows. Checked against
// the model: a staked set the record gives is the true one, it is known whenever the rows at the
// height before were read, signers and proposers are the block's; and the read's rules (window,
// ids, absent) on top of it.
import fc from 'fast-check';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { ChainView, type ChainReader } from '../../src/manager/chain/chain-view.ts';
import type { ChainBlock, CommittedTx } from '../../src/manager/chain/port.ts';
import { ManagerError } from '../../src/manager/errors.ts';
import { ActionKind, ChainStatus, type ChainValidator } from '../../src/manager/model.ts';
import {
  MAX_HEIGHTS,
  participationSource,
  windowOf,
  type ParticipationHeight,
} from '../../src/manager/participation/participation.ts';
import { ParticipationRecord } from '../../src/manager/participation/record.ts';
import { ManualClock } from '../support/manual-clock.ts';

const ADDRESSES = 'abcdefgh'.split('').map((c) => c.repeat(40));
const GENESIS = ADDRESSES.slice(0, 4);

type Step =
  { kind: 'stake' | 'unstake' | 'other'; who: number; applied: boolean } | { kind: 'none' };

/** A chain whose every block and every height's staked set is known. */
class ModelChain implements ChainReader {
  readonly blocks: ChainBlock[] = [];
  /** stakedAfter[h]: the set in the state after block h (0: genesis). */
  readonly stakedAfter: Set<string>[] = [new Set(GENESIS)];

  /** Commits a block: some of the set sign, `steps` are its transactions. */
  grow(signing: (staked: string[]) => string[], steps: Step[]): void {
    const h = this.blocks.length + 1;
    const before = this.stakedAfter[h - 1]!;
    const after = new Set(before);
    const txs: CommittedTx[] = [];
    steps.forEach((step, i) => {
      if (step.kind === 'none') return;
      const signer = ADDRESSES[step.who % ADDRESSES.length]!;
      const kind = step.kind === 'other' ? undefined : step.kind;
      txs.push({ hash: `tx-${h}-${i}`, height: h, resultCode: step.applied ? 0 : 2, signer, kind });
      if (!step.applied) return;
      // Another message that changes a row (as an unpause or a pause would): the record cannot
      // follow it and must not guess.
      if (kind === undefined) {
        if (after.has(signer)) after.delete(signer);
        else after.add(signer);
      } else if (kind === ActionKind.stake) after.add(signer);
      else after.delete(signer);
    });
    const signers = signing([...before]);
    this.blocks.push({
      height: h,
      hash: `hash-${h}`,
      parentHash: `hash-${h - 1}`,
      time: 1_700_000_000_000 + h * 1_000,
      signers,
      txs,
      proposer: signers[0],
    });
    this.stakedAfter.push(after);
  }

  height(): Promise<number> {
    return Promise.resolve(this.blocks.length);
  }
  validators(height: number): Promise<ChainValidator[]> {
    const staked = this.stakedAfter[height]!;
    return Promise.resolve(
      ADDRESSES.map((address) => ({
        address,
        status: staked.has(address) ? ChainStatus.staked : ChainStatus.unstaked,
        stakedAmount: '1',
        unstakingHeight: staked.has(address) ? -1 : 1,
        serviceUrl: `${address.slice(0, 4)}:1`,
      })),
    );
  }
  block(height: number): Promise<ChainBlock> {
    const block = this.blocks[height - 1];
    return block === undefined ? Promise.reject(new Error(`no ${height}`)) : Promise.resolve(block);
  }
  mempool() {
    return Promise.resolve({ readable: true, txs: [] });
  }
  mempoolEntry() {
    return Promise.resolve({ inMempool: false, kind: undefined });
  }
  genesisValidators() {
    return Promise.resolve([...GENESIS]);
  }
}

function setup(chain: ModelChain, capacity?: number) {
  const record = new ParticipationRecord(capacity === undefined ? {} : { capacity });
  const view = new ChainView({
    reads: chain,
    clock: new ManualClock(),
    logger: pino({ level: 'silent' }),
    pollIntervalMs: 1_000,
    listener: {
      onBlocks: () => undefined,
      onHeight: () => undefined,
      onBlock: (block) => record.addBlock(block),
      onRows: (height, rows) => record.addRows(height, rows),
    },
  });
  return { record, view };
}

const all = (staked: string[]): string[] => staked;

describe('the participation record, fed by the chain view', () => {
  it('knows the staked set of each height read one at a time, and who missed', async () => {
    const chain = new ModelChain();
    chain.grow(all, []);
    const { record, view } = setup(chain);
    await view.tick(); // the first look: block 1 (read back), rows at 1
    chain.grow((s) => s.slice(0, 3), [{ kind: 'stake', who: 4, applied: true }]); // 2: d silent
    await view.tick();
    chain.grow(all, []); // 3: e staked after 2 and signing
    await view.tick();
    const [one, two, three] = record.heights(1, 3);
    expect(one).toMatchObject({ height: 1, staked: undefined, signers: GENESIS });
    expect(two).toMatchObject({ height: 2, staked: GENESIS, proposer: ADDRESSES[0] });
    expect(two?.txs).toEqual([
      { kind: 'stake', signer: ADDRESSES[4], hash: 'tx-2-0', resultCode: 0 },
    ]);
    expect(three?.staked).toEqual([...GENESIS, ADDRESSES[4]]);
  });

  it('derives the sets between two reads from the blocks, and forgets them when the rows disagree', async () => {
    const chain = new ModelChain();
    chain.grow(all, []);
    const { record, view } = setup(chain);
    await view.tick();
    chain.grow(all, [{ kind: 'unstake', who: 3, applied: true }]); // 2
    chain.grow(all, [{ kind: 'stake', who: 5, applied: false }]); // 3 (failed: no effect)
    chain.grow(all, []); // 4
    await view.tick(); // reads 2..4 at once, rows at 4
    expect(record.heights(2, 4).map((h) => h.staked)).toEqual([
      GENESIS,
      GENESIS.slice(0, 3),
      GENESIS.slice(0, 3),
    ]);
    // A block with a transaction the record cannot follow: the sets after it are not guessed.
    chain.grow(all, [{ kind: 'other', who: 6, applied: true }]); // 5
    chain.grow(all, []); // 6
    await view.tick();
    expect(record.heights(5, 6).map((h) => h.staked)).toEqual([GENESIS.slice(0, 3), undefined]);
    // A change the blocks do not explain (the model's rows are the truth): derived sets forgotten.
    chain.grow(all, []); // 7
    chain.grow(all, []); // 8
    const seven = [...GENESIS.slice(0, 3), ADDRESSES[6]!]; // g: the other message staked it
    chain.stakedAfter[8] = new Set([...seven, ADDRESSES[7]!]);
    await view.tick();
    expect(record.heights(7, 8).map((h) => h.staked)).toEqual([seven, undefined]);
  });

  it('keeps only the last `capacity` heights, and drops a replaced chain from where it differs', async () => {
    const chain = new ModelChain();
    for (let i = 0; i < 12; i++) chain.grow(all, []);
    const { record, view } = setup(chain, 5);
    await view.tick();
    expect(record.range).toEqual({ from: 8, to: 12 });
    record.addBlock({ ...chain.blocks[9]!, hash: 'other' });
    expect(record.range).toEqual({ from: 8, to: 10 });
    expect(record.heights(10, 10)[0]?.hash).toBe('other');
  });

  it('hands each height to the listeners once, after the rows of its poll were read', async () => {
    const chain = new ModelChain();
    chain.grow(all, []);
    const { record, view } = setup(chain);
    const settled: number[][] = [];
    record.onSettled((heights) => settled.push(heights.map((h) => h.height)));
    await view.tick();
    chain.grow(all, []);
    chain.grow(all, []);
    await view.tick();
    await view.tick(); // nothing new
    expect(settled).toEqual([[1], [2, 3]]);
  });

  it('property: a staked set given is the true one, and known when the rows before were read', async () => {
    const step = fc.oneof(
      { weight: 6, arbitrary: fc.constant<Step>({ kind: 'none' }) },
      {
        weight: 3,
        arbitrary: fc.record({
          kind: fc.constantFrom('stake' as const, 'unstake' as const),
          who: fc.nat(7),
          applied: fc.boolean(),
        }),
      },
      {
        weight: 1,
        arbitrary: fc.record({
          kind: fc.constant('other' as const),
          who: fc.nat(7),
          applied: fc.boolean(),
        }),
      },
    );
    const block = fc.record({ silent: fc.nat(3), steps: fc.array(step, { maxLength: 3 }) });
    // Polls: how many blocks the chain makes before each look of the view.
    const polls = fc.array(fc.array(block, { minLength: 0, maxLength: 4 }), {
      minLength: 1,
      maxLength: 12,
    });
    await fc.assert(
      fc.asyncProperty(polls, async (plan) => {
        const chain = new ModelChain();
        chain.grow(all, []);
        const { record, view } = setup(chain);
        const readAt = new Set<number>();
        await view.tick();
        readAt.add(chain.blocks.length);
        for (const blocks of plan) {
          for (const b of blocks) chain.grow((s) => s.filter((_, i) => i !== b.silent), b.steps);
          await view.tick();
          readAt.add(chain.blocks.length);
        }
        for (const h of record.heights(1, chain.blocks.length)) {
          const truth = [...chain.stakedAfter[h.height - 1]!].sort();
          if (h.staked !== undefined)
            expect([...h.staked].sort(), `height ${h.height}`).toEqual(truth);
          if (readAt.has(h.height - 1)) expect(h.staked, `height ${h.height}`).toBeDefined();
          expect([...h.signers].sort()).toEqual([...chain.blocks[h.height - 1]!.signers].sort());
        }
      }),
      { numRuns: 200 },
    );
  });
});

describe('the participation read', () => {
  const keys = new Map(GENESIS.map((address, i) => [address, `00${i + 1}`]));
  const ids = {
    idOfAddress: (address: string) => keys.get(address),
    addressOf: (id: string) => [...keys].find(([, v]) => v === id)?.[0],
  };

  async function read(window: { from?: number; to?: number } = {}) {
    const chain = new ModelChain();
    chain.grow(all, []);
    const { record, view } = setup(chain);
    await view.tick();
    chain.grow(
      (s) => s.filter((a) => a !== GENESIS[3]),
      [{ kind: 'stake', who: 5, applied: true }],
    );
    await view.tick();
    chain.grow(all, []);
    await view.tick();
    const source = participationSource({
      record,
      keys: ids,
      desired: () => ({
        validators: new Map([['007', { id: '007', wanted: true } as never]]),
        unresolvedWanted: [],
        problems: [],
      }),
      chain: view,
    });
    return { source, answer: source.read(window), record };
  }

  it('names addresses by id, lists absent validators, and rows for the wanted ones', async () => {
    const { answer } = await read();
    const f = ADDRESSES[5]!;
    expect(answer.validators).toEqual(['001', '002', '003', '004', '007', f]);
    expect(answer).toMatchObject({ from: 1, to: 3, height: 3, recorded: { from: 1, to: 3 } });
    const [one, two, three] = answer.heights as [
      ParticipationHeight,
      ParticipationHeight,
      ParticipationHeight,
    ];
    expect(one.absent).toBeNull();
    expect(two).toMatchObject({
      proposer: '001',
      signers: ['001', '002', '003'],
      absent: ['004'],
      transactions: [{ kind: 'stake', validator: f, hash: 'tx-2-0', resultCode: 0 }],
      time: new Date(1_700_000_002_000).toISOString(),
    });
    expect(three).toMatchObject({ signers: ['001', '002', '003', '004', f], absent: [] });
    expect(answer.details['001']).toEqual({ address: GENESIS[0], serviceUrl: 'aaaa:1' });
    expect(answer.details['007']).toEqual({ address: null, serviceUrl: null });
  });

  it('answers the window asked for, and no height it did not read', async () => {
    const { answer } = await read({ from: 2, to: 10 });
    expect(answer.heights.map((h) => h.height)).toEqual([2, 3]);
    expect((await read({ from: 3 })).answer).toMatchObject({ from: 3, to: 52 });
    expect((await read({ to: 60 })).answer).toMatchObject({ from: 11, to: 60, heights: [] });
  });

  it.each([
    [{ from: 5, to: 4 }, /above/],
    [{ from: 0, to: 4 }, /start at 1/],
    [{ from: -3 }, /start at 1/],
    [{ from: 1, to: MAX_HEIGHTS + 1 }, /at most 1000 heights per call \(asked for 1001\)/],
    [{ from: 1, to: Number.MAX_SAFE_INTEGER }, /at most 1000/],
  ])('refuses the window %o with BAD_REQUEST', (window, message) => {
    let error: unknown;
    try {
      windowOf(window, 100);
    } catch (e: unknown) {
      error = e;
    }
    expect(error).toBeInstanceOf(ManagerError);
    expect((error as ManagerError).code).toBe('BAD_REQUEST');
    expect((error as ManagerError).message).toMatch(message);
  });

  it('feeds block events with the same objects as the read, newest ten per poll', async () => {
    const { source, record } = await read();
    const events: ParticipationHeight[] = [];
    const off = source.onBlock((h) => events.push(h));
    const chain = new ModelChain();
    for (let i = 0; i < 15; i++) chain.grow(all, []);
    for (const block of chain.blocks.slice(3)) record.addBlock(block);
    record.addRows(15, new Map());
    expect(events.map((e) => e.height)).toEqual([6, 7, 8, 9, 10, 11, 12, 13, 14, 15]);
    expect(events.at(-1)).toEqual(source.read({ from: 15, to: 15 }).heights[0]);
    off();
    record.addBlock({ ...chain.blocks[14]!, height: 16, hash: 'x', parentHash: 'hash-15' });
    record.addRows(16, new Map());
    expect(events).toHaveLength(10);
  });
});
