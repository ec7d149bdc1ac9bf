// Issue A with the pacemaker in automatic mode: a 4 → 10 scale-up in one step never stalls the
// chain and adds the six in consensus-safe steps; a `kubectl scale` 10 → 4 (no drain) lands all
// six unstakes in one block while blocks keep committing.
import { describe, expect, it } from 'vitest';
import { pending, waitFor } from '../harness/index.ts';
import { useDevnet } from './support.ts';

const INTERVAL_MS = 400;
/** "A few block intervals": the longest a height may take while validators come and go. */
const MAX_GAP_MS = 6 * INTERVAL_MS;
const GENESIS = ['001', '002', '003', '004'];
const JOINERS = ['005', '006', '007', '008', '009', '010'];

const devnet = useDevnet('auto', { pacemaker: 'auto', blockIntervalMs: INTERVAL_MS });

describe('the manager with an automatic pacemaker', { timeout: 120_000 }, () => {
  it('scale 4 → 10 in one step: all six join in safe steps and no height stalls', async () => {
    const { h } = devnet;
    await h.waitForHeight(3);
    const from = await h.height();
    const answer = await h.scaleTo(10, { wait: 'active', timeoutSeconds: 90 });
    expect(answer.body).toMatchObject({ done: true, replicas: 10, missing: [] });
    const to = await h.expectChainProgress(2, 10 * INTERVAL_MS);

    const gap = await h.ledger.longestGap(from, to);
    expect(gap.ms, `height ${gap.height} took ${gap.ms} ms`).toBeLessThanOrEqual(MAX_GAP_MS);
    expect(await h.ledger.pacingViolations(GENESIS, to)).toEqual([]);
    const stakes = (await h.committedTransactions()).filter((t) => t.type === 'MessageStake');
    // Safe steps: not all at once (BFT allows fewer than half of the proven set to join).
    expect(new Set(stakes.map((t) => t.height)).size).toBeGreaterThan(1);
    for (const id of JOINERS) {
      expect(
        stakes.filter((t) => t.id === id),
        `stakes of ${id}`,
      ).toHaveLength(1);
      await h.expectActive(id, { since: from });
    }
    expect(await h.stakedValidators()).toEqual([...GENESIS, ...JOINERS]);
  });

  it('kubectl scale 10 → 4 (no drain): the six unstakes land in one block and blocks keep committing', async () => {
    const { h } = devnet;
    const from = await h.height();
    await h.kubectlScale(4);
    const unstakes = await waitFor(
      async () => {
        const found = (await h.committedTransactions()).filter((t) => t.type === 'MessageUnstake');
        return (
          found.length >= JOINERS.length ||
          pending(`${found.length} unstakes committed by height ${await h.height()}`)
        );
      },
      { what: 'six unstakes to commit', timeoutMs: 30_000, intervalMs: 100 },
    ).then(async () =>
      (await h.committedTransactions()).filter((t) => t.type === 'MessageUnstake'),
    );
    expect(unstakes.map((t) => t.id).sort()).toEqual(JOINERS);
    expect(new Set(unstakes.map((t) => t.height)).size, JSON.stringify(unstakes)).toBe(1);
    const to = await h.expectChainProgress(5, 20 * INTERVAL_MS);
    const gap = await h.ledger.longestGap(from, to);
    expect(gap.ms, `height ${gap.height} took ${gap.ms} ms`).toBeLessThanOrEqual(MAX_GAP_MS);
    expect(await h.stakedValidators()).toEqual(GENESIS);
    for (const id of GENESIS) await h.expectActive(id, { since: to });
  });
});
