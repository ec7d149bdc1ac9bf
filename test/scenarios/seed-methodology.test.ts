// The seed issue's testing methodology with the manual pacemaker, in both transaction modes:
// add a validator, trigger the next round, it has joined consensus; remove one, trigger, it has
// left and the chain goes on. Then the control RPC's scale 4 → 6 → 4 (issue A's acceptance in CLI
// mode: the manager runs `localnet-cli` for every action, and no argv ever holds a key).
import { describe, expect, it } from 'vitest';
import { pending, waitFor } from '../harness/index.ts';
import { expectNoKeyLeaks, useDevnet } from '../integration/support.ts';

describe.each(['rpc', 'cli'] as const)('%s mode', { timeout: 120_000 }, (txMode) => {
  const devnet = useDevnet(`seed-${txMode}`, { txMode });

  it('scale up: add a validator, trigger the next round, it has joined consensus', async () => {
    const { h } = devnet;
    await h.triggerView();
    await h.kubectlScale(5);
    // Trigger rounds until the stake is in a block; the round after it, 005 signs.
    const stakedAt = await waitFor(
      async () => {
        const stake = (await h.committedTransactions()).find(
          (t) => t.id === '005' && t.type === 'MessageStake',
        );
        if (stake !== undefined) return stake.height;
        const pool = await h.mempool();
        console.error('POOL', JSON.stringify(pool));
        if (pool.some((t) => t.id === '005'))
          console.error(
            'VIEW',
            await h.triggerView(),
            await h.height(),
            h.info.chainRpcUrl,
            JSON.stringify(await h.committedTransactions()),
          );
        const row = await h.validator('005');
        return pending(
          `no stake of 005 committed by height ${await h.height()}; manager: ${row?.phase} (${row?.reason})`,
        );
      },
      { what: 'the stake of 005 to commit', timeoutMs: 60_000, intervalMs: 100 },
    );
    const next = await h.triggerView();
    expect(next).toBe(stakedAt + 1);
    expect(await h.activeValidators(next)).toContain('005');
    expect(await h.stakeTransactions('005')).toBe(1);
  });

  it('scale down: remove a validator, trigger the next round, it has left and the chain goes on', async () => {
    const { h } = devnet;
    await h.kubectlScale(4);
    const unstakedAt = await waitFor(
      async () => {
        const unstake = (await h.committedTransactions()).find(
          (t) => t.id === '005' && t.type === 'MessageUnstake',
        );
        if (unstake !== undefined) return unstake.height;
        const pool = await h.mempool();
        console.error('POOL', JSON.stringify(pool));
        if (pool.some((t) => t.id === '005')) await h.triggerView();
        const row = await h.validator('005');
        return pending(
          `no unstake of 005 committed by height ${await h.height()}; manager: ${row?.phase} (${row?.reason})`,
        );
      },
      { what: 'the unstake of 005 to commit', timeoutMs: 60_000, intervalMs: 100 },
    );
    const next = await h.triggerView();
    expect(next).toBe(unstakedAt + 1);
    expect(await h.activeValidators(next)).not.toContain('005');
    expect(await h.stakedValidators()).toEqual(['001', '002', '003', '004']);
    await h.expectChainProgress(3, 20_000);
    expect(await h.unstakeTransactions('005')).toBe(1);
  });

  it('scale 4 → 6 → 4 through the control RPC: each staked once, active, then unstaked once and gone', async () => {
    const { h } = devnet;
    expect((await h.scaleTo(6, { wait: 'active', timeoutSeconds: 90 })).body).toMatchObject({
      done: true,
      missing: [],
    });
    const up = await h.ledger.counts();
    expect(up.get('005')).toEqual({ stakes: 2, unstakes: 1 });
    expect(up.get('006')).toEqual({ stakes: 1, unstakes: 0 });
    expect((await h.scaleTo(4, { wait: 'active', timeoutSeconds: 90 })).body).toMatchObject({
      done: true,
      drained: ['005', '006'],
    });
    for (const id of ['005', '006']) await h.expectInactive(id);
    const down = await h.ledger.counts();
    expect(down.get('005')).toEqual({ stakes: 2, unstakes: 2 });
    expect(down.get('006')).toEqual({ stakes: 1, unstakes: 1 });
    const modes = new Set((await h.actions()).map((a) => (a as { mode?: string }).mode));
    expect([...modes]).toEqual([txMode]);
  });

  it('leaves no key in any log or argv', async () => {
    await expectNoKeyLeaks(devnet);
    if (txMode === 'cli') {
      const cliCalls = [...devnet.argv.seen.values()].filter((line) =>
        /localnet-cli\.ts .*Validator (Stake|Unstake)/.test(line),
      );
      expect(cliCalls.length).toBeGreaterThan(0);
    }
  });
});
