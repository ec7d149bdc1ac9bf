// Issue A under faults, manual pacemaker: the manager SIGKILLed between broadcast and commit and
// during a 4 → 8 scale-up, the API server resetting watches, answering 500s and 410s and
// restarting with a resourceVersion jump, the chain RPC frozen for a while, and validator nodes
// killed. After each: the staked set is what the cluster wants, and every validator got exactly
// one stake or unstake for the step that asked for it (counted in the committed blocks).
import { describe, expect, it } from 'vitest';
import { pending, waitFor, type Harness } from '../../src/harness/index.ts';
import { useDevnet } from './support.ts';

const devnet = useDevnet('faults');
const ids = (n: number): string[] =>
  Array.from({ length: n }, (_, i) => String(i + 1).padStart(3, '0'));

type Counts = Map<string, { stakes: number; unstakes: number }>;

/** Stakes and unstakes per id that committed between two count snapshots. */
function delta(before: Counts, after: Counts): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [id, now] of after) {
    const then = before.get(id) ?? { stakes: 0, unstakes: 0 };
    const stakes = now.stakes - then.stakes;
    const unstakes = now.unstakes - then.unstakes;
    if (stakes !== 0 || unstakes !== 0) out[id] = `+${stakes} stake, +${unstakes} unstake`;
  }
  return out;
}

const once = (list: string[], kind: 'stake' | 'unstake'): Record<string, string> =>
  Object.fromEntries(
    list.map((id) => [id, kind === 'stake' ? '+1 stake, +0 unstake' : '+0 stake, +1 unstake']),
  );

async function stakeInMempool(h: Harness, id: string): Promise<void> {
  await waitFor(
    async () => {
      const pool = await h.mempool();
      if (pool.some((t) => t.id === id && t.type === 'MessageStake')) return true;
      // The manager's own words for why it holds the stake, should it never come.
      const row = await h.validator(id).catch(() => undefined);
      return pending(
        `mempool at height ${await h.height()}: ${JSON.stringify(pool)}; ${id} is ` +
          (row === undefined
            ? 'not listed'
            : `${row.phase} (${row.reason}; waiting for ${row.waitingFor ?? '-'}, ready ${row.ready})`),
      );
    },
    { what: `the stake of ${id} to reach the mempool`, timeoutMs: 30_000 },
  );
}

async function informerRestarts(h: Harness): Promise<number> {
  const readiness = await h.manager<{ informers: { restarts: number }[] }>('/readyz');
  return readiness.informers.reduce((sum, i) => sum + i.restarts, 0);
}

describe('the manager under faults, manual pacemaker', { timeout: 120_000 }, () => {
  it('killed (SIGKILL) after broadcasting a stake and restarted before it commits: the stake is not sent again', async () => {
    const { h } = devnet;
    // Before: one block, whose certificate may hold only three of the four genesis signatures
    // (seen on a loaded machine): the manager then rightly held 005, and the test waited 30 s.
    await h.waitForVoting(ids(4));
    await h.kubectlScale(5);
    await stakeInMempool(h, '005');
    await h.killManager('SIGKILL');
    await h.restartManager();
    await h.expectStakedSet(ids(5));
    await h.expectChainProgress(3, 20_000);
    expect((await h.ledger.counts()).get('005')).toEqual({ stakes: 1, unstakes: 0 });
    const journal = (await h.actions()).filter((a) => a.validatorId === '005');
    expect(journal).toHaveLength(1);
    expect(journal[0]).toMatchObject({ kind: 'stake', state: 'committed' });
  });

  it('killed after broadcasting, the stake commits while it is down: the restarted manager records it and sends nothing', async () => {
    const { h } = devnet;
    await h.waitForVoting(ids(5));
    await h.kubectlScale(6);
    await stakeInMempool(h, '006');
    await h.killManager('SIGKILL');
    await h.triggerView();
    await h.triggerView();
    expect((await h.ledger.counts()).get('006')).toEqual({ stakes: 1, unstakes: 0 });
    await h.restartManager();
    await h.waitForValidator('006', (row) => row.phase === 'active', 'active', {
      timeoutMs: 20_000,
      drive: true,
    });
    await h.expectChainProgress(3, 20_000);
    expect((await h.ledger.counts()).get('006')).toEqual({ stakes: 1, unstakes: 0 });
    const journal = (await h.actions()).filter((a) => a.validatorId === '006');
    expect(journal).toHaveLength(1);
    expect(journal[0]).toMatchObject({ kind: 'stake', state: 'committed' });
  });

  it('killed during a 4 → 8 scale-up: after the restart every validator is staked exactly once', async () => {
    const { h } = devnet;
    expect((await h.scaleTo(4, { wait: 'active', timeoutSeconds: 60 })).body.done).toBe(true);
    const before = await h.ledger.counts();
    await h.kubectlScale(8);
    // Commit blocks until the first of the four has joined, then kill the manager mid-way.
    await waitFor(
      async () => {
        const joined = Object.keys(delta(before, await h.ledger.counts())).length;
        if (joined >= 1) return true;
        await h.triggerView();
        return pending(`${joined} joined by height ${await h.height()}`);
      },
      { what: 'the first stake of the scale-up', timeoutMs: 30_000 },
    );
    await h.killManager('SIGKILL');
    await h.triggerView();
    await h.restartManager();
    await h.expectStakedSet(ids(8), { timeoutMs: 60_000 });
    await h.expectChainProgress(3, 20_000);
    expect(delta(before, await h.ledger.counts())).toEqual(
      once(['005', '006', '007', '008'], 'stake'),
    );
  });

  it('API server faults during a scale-down (watch resets, 500s, expired watches): converges with one unstake each', async () => {
    const { h } = devnet;
    const before = await h.ledger.counts();
    const restarts = await informerRestarts(h);
    // The change reaches the manager only through a relist that first meets 500s and 410s.
    h.faults.pauseEvents();
    await h.kubectlScale(6);
    h.faults.failNext(6, 500);
    h.faults.expireNextWatch(3);
    h.faults.resetWatches();
    h.faults.resumeEvents();
    await h.expectStakedSet(ids(6), { timeoutMs: 60_000 });
    await h.expectChainProgress(3, 20_000);
    expect(delta(before, await h.ledger.counts())).toEqual(once(['007', '008'], 'unstake'));
    expect(await informerRestarts(h)).toBeGreaterThan(restarts);
  });

  it('the chain RPC frozen during a scale-up: converges once it answers again, one stake each', async () => {
    const { h } = devnet;
    const before = await h.ledger.counts();
    const via = await h.nodeRpcUrl('001');
    h.setChainRpcFrozen(true);
    try {
      await h.kubectlScale(8);
      // The manager decides and tries to send while the chain RPC does not answer.
      for (const id of ['007', '008'])
        await h.waitForValidator(
          id,
          (row) => row.ready && (row.pendingAction === 'stake' || row.phase === 'staking'),
          'Ready and being staked',
          { timeoutMs: 30_000 },
        );
      await waitFor(
        async () => {
          const readiness = await h.manager<{ chain: { healthy: boolean } }>('/readyz');
          return !readiness.chain.healthy || pending('the chain still looks healthy');
        },
        { what: 'the manager to see the chain RPC down', timeoutMs: 20_000 },
      );
      // Blocks keep committing meanwhile (driven through a validator's own RPC).
      await h.triggerView(via);
      await h.triggerView(via);
    } finally {
      h.setChainRpcFrozen(false);
    }
    await h.expectStakedSet(ids(8), { timeoutMs: 60_000 });
    await h.expectChainProgress(3, 20_000);
    expect(delta(before, await h.ledger.counts())).toEqual(once(['007', '008'], 'stake'));
  });

  it('the API server restarting with a resourceVersion jump, plus 500s, during a scale-down: converges', async () => {
    const { h } = devnet;
    const before = await h.ledger.counts();
    const restarts = await informerRestarts(h);
    h.faults.pauseEvents();
    await h.kubectlScale(6);
    h.faults.restart({ rvJump: 5_000_000 });
    h.faults.failNext(4, 500);
    h.faults.resumeEvents();
    await h.expectStakedSet(ids(6), { timeoutMs: 60_000 });
    await h.expectChainProgress(3, 20_000);
    expect(delta(before, await h.ledger.counts())).toEqual(once(['007', '008'], 'unstake'));
    expect(await informerRestarts(h)).toBeGreaterThan(restarts);
    // The caches follow the cluster again.
    await h.waitForValidator('007', (row) => !row.wanted && row.phase === 'unstaked', 'unstaked');
  });

  it('validator nodes killed during a scale-up (one in the set, one joining): converges, nobody unstaked', async () => {
    const { h } = devnet;
    const before = await h.ledger.counts();
    await h.kubectlScale(8);
    await h.killNode('001');
    await h.waitForValidator('007', (row) => row.ready, 'Ready', { timeoutMs: 30_000 });
    await h.killNode('007');
    await h.expectStakedSet(ids(8), { timeoutMs: 60_000 });
    const height = await h.expectChainProgress(3, 20_000);
    expect(delta(before, await h.ledger.counts())).toEqual(once(['007', '008'], 'stake'));
    await h.expectActive('001', { since: height });
    await h.expectActive('007', { since: height });
  });
});
