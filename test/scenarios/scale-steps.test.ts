// Scaling in steps with the pacemaker in automatic mode, the chain committing throughout:
// 4 → 7 → 4 through the control RPC, 4 → 10 in one step (issue A: safe steps, no stall),
// 10 → 4 with `kubectl scale` (issue A: the six unstakes in one block), and 4 → 2 (with a minimum
// set of 2), below what a chain that does not unstake would survive. Every validator is staked and unstaked exactly once
// per step that asked for it (counted in the committed blocks).
import { describe, expect, it } from 'vitest';
import { pending, waitFor, type Harness } from '../../src/harness/index.ts';
import { useDevnet } from '../integration/support.ts';

const INTERVAL_MS = 400;
/** "A few block intervals": the longest a height may take while validators come and go. */
const MAX_GAP_MS = 6 * INTERVAL_MS;
const GENESIS = ['001', '002', '003', '004'];
const ids = (from: number, to: number): string[] =>
  Array.from({ length: to - from + 1 }, (_, i) => String(from + i).padStart(3, '0'));

// A minimum set of 2 (the default, a quorum of the 4 genesis validators, is 3): the last step
// goes to 2 on purpose.
const devnet = useDevnet('steps', {
  pacemaker: 'auto',
  blockIntervalMs: INTERVAL_MS,
  managerEnv: { CM_MIN_VALIDATORS: '2' },
});

type Counts = Map<string, { stakes: number; unstakes: number }>;

/**
 * The heights the 10 → 4 step disturbs on purpose, which the whole-run check leaves out (every
 * other height counts): from the one in progress when it switches the pacemaker to manual, to the
 * one it holds until the six unstakes are in every mempool. The switch reaches each node as a
 * message (V1 too sends its debug messages to each validator): a node that has it does not start
 * the next height, one that has it a moment later already has, and when that height's leader is
 * among the first, the others wait out a round. Seen in a fresh-clone CI run (height 34 took 4535
 * ms) and reproduced by switching at random moments on a loaded machine: 3 of 25 switches made the
 * height in progress commit in round 1, 4.2–4.3 s after the one before.
 */
let held: { from: number; to: number } | undefined;

/** What changed per id between two snapshots of the committed stake/unstake counts. */
function delta(before: Counts, after: Counts): Record<string, [number, number]> {
  const out: Record<string, [number, number]> = {};
  for (const [id, now] of after) {
    const then = before.get(id) ?? { stakes: 0, unstakes: 0 };
    if (now.stakes !== then.stakes || now.unstakes !== then.unstakes)
      out[id] = [now.stakes - then.stakes, now.unstakes - then.unstakes];
  }
  return out;
}

const each = (list: string[], change: [number, number]): Record<string, [number, number]> =>
  Object.fromEntries(list.map((id) => [id, change]));

async function expectNoStall(h: Harness, from: number): Promise<number> {
  const to = await h.expectChainProgress(2, 10 * INTERVAL_MS);
  const gap = await h.ledger.longestGap(from, to);
  expect(gap.ms, `height ${gap.height} took ${gap.ms} ms`).toBeLessThanOrEqual(MAX_GAP_MS);
  return to;
}

describe('scaling in steps, automatic pacemaker', { timeout: 120_000 }, () => {
  let start = 0;

  it('4 → 7: three join, each staked once, without a stall', async () => {
    const { h } = devnet;
    await h.waitForHeight(3);
    start = await h.height();
    const before = await h.ledger.counts();
    expect((await h.scaleTo(7, { wait: 'active', timeoutSeconds: 90 })).body).toMatchObject({
      done: true,
      missing: [],
    });
    await expectNoStall(h, start);
    expect(delta(before, await h.ledger.counts())).toEqual(each(ids(5, 7), [1, 0]));
    expect(await h.stakedValidators()).toEqual(ids(1, 7));
  });

  it('7 → 4: three drained, each unstaked once, without a stall', async () => {
    const { h } = devnet;
    const from = await h.height();
    const before = await h.ledger.counts();
    const answer = await h.scaleTo(4, { wait: 'active', timeoutSeconds: 90 });
    expect(answer.body).toMatchObject({ done: true, drained: ids(5, 7) });
    await expectNoStall(h, from);
    expect(delta(before, await h.ledger.counts())).toEqual(each(ids(5, 7), [0, 1]));
    expect(await h.stakedValidators()).toEqual(GENESIS);
  });

  it('4 → 10 in one step: all six join in safe steps and no height stalls', async () => {
    const { h } = devnet;
    const from = await h.height();
    const before = await h.ledger.counts();
    const answer = await h.scaleTo(10, { wait: 'active', timeoutSeconds: 90 });
    expect(answer.body).toMatchObject({ done: true, replicas: 10, missing: [] });
    const to = await expectNoStall(h, from);
    expect(await h.ledger.pacingViolations(GENESIS, to)).toEqual([]);
    const stakes = (await h.committedTransactions()).filter(
      (t) => t.type === 'MessageStake' && t.height > from,
    );
    // Safe steps: not all at once (fewer than half of the proven set may join at a time).
    expect(new Set(stakes.map((t) => t.height)).size).toBeGreaterThan(1);
    expect(delta(before, await h.ledger.counts())).toEqual(each(ids(5, 10), [1, 0]));
    for (const id of ids(5, 10)) await h.expectActive(id, { since: from });
    expect(await h.stakedValidators()).toEqual(ids(1, 10));
  });

  it('kubectl scale 10 → 4 (no drain): the six unstakes go out at once, land in one block, and blocks keep committing', async () => {
    const { h } = devnet;
    const before = await h.ledger.counts();
    // The manager sends the six in one burst (tens of ms). Blocks are held while it reacts, so
    // the block that takes them is not cut in the middle of that burst: with a block every
    // 500 ms, it sometimes is, and the six land in two consecutive blocks.
    const switched = await h.height();
    await h.setPacemaker('manual');
    let at: number;
    try {
      await h.kubectlScale(4);
      // Every member of the set (the leaving ones still vote) may propose the next block.
      const urls = await Promise.all(ids(1, 10).map((id) => h.nodeRpcUrl(id)));
      await waitFor(
        async () => {
          const lacking: string[] = [];
          for (const [i, url] of urls.entries()) {
            const pool = await h.mempool(url);
            const leaving = new Set(
              pool.filter((t) => t.type === 'MessageUnstake').map((t) => t.id),
            );
            if (leaving.size < 6) lacking.push(`${ids(1, 10)[i]}: ${leaving.size}`);
          }
          return lacking.length === 0 || pending(`unstakes per mempool: ${lacking.join(', ')}`);
        },
        { what: 'the six unstakes in every mempool', timeoutMs: 30_000, intervalMs: 100 },
      );
      at = await h.triggerView();
      held = { from: switched + 1, to: at };
    } finally {
      await h.setPacemaker('auto');
    }
    const unstakes = (await h.committedTransactions()).filter(
      (t) => t.type === 'MessageUnstake' && t.height === at,
    );
    expect(unstakes.map((t) => t.id).sort(), JSON.stringify(unstakes)).toEqual(ids(5, 10));
    const to = await h.expectChainProgress(5, 20 * INTERVAL_MS);
    const gap = await h.ledger.longestGap(at + 1, to);
    expect(gap.ms, `height ${gap.height} took ${gap.ms} ms`).toBeLessThanOrEqual(MAX_GAP_MS);
    expect(delta(before, await h.ledger.counts())).toEqual(each(ids(5, 10), [0, 1]));
    expect(await h.stakedValidators()).toEqual(GENESIS);
  });

  it('kubectl scale 4 → 2: below what the old set could commit with, blocks keep committing', async () => {
    const { h } = devnet;
    const from = await h.height();
    const before = await h.ledger.counts();
    await h.kubectlScale(2);
    await waitFor(
      async () => {
        const staked = await h.stakedValidators();
        return (
          staked.join() === '001,002' || pending(`staked ${staked.join()} at ${await h.height()}`)
        );
      },
      { what: '003 and 004 to be unstaked', timeoutMs: 30_000, intervalMs: 100 },
    );
    const to = await h.expectChainProgress(5, 20 * INTERVAL_MS);
    // Two signatures commit these blocks: a quorum of the new set of 2, never of the old 4 (3).
    expect(await h.activeValidators(to)).toEqual(['001', '002']);
    const gap = await h.ledger.longestGap(from, to);
    expect(gap.ms, `height ${gap.height} took ${gap.ms} ms`).toBeLessThanOrEqual(MAX_GAP_MS);
    expect(delta(before, await h.ledger.counts())).toEqual(each(['003', '004'], [0, 1]));
    // The whole run: no height took more than a few intervals (but those disturbed on purpose).
    const { from: heldFrom, to: heldTo } = held ?? { from: to + 1, to: to + 1 };
    const [earlier, later] = [
      await h.ledger.longestGap(start, heldFrom - 1),
      await h.ledger.longestGap(heldTo + 1, to),
    ];
    const whole = earlier.ms >= later.ms ? earlier : later;
    expect(whole.ms, `height ${whole.height} took ${whole.ms} ms`).toBeLessThanOrEqual(MAX_GAP_MS);
  });
});
