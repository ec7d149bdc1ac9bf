// The seed issue's testing methodology with the manual pacemaker, in both transaction modes:
// add a validator, trigger the next round, it has joined consensus; remove one, trigger, it has
// left and the chain goes on. Then the control RPC's scale 4 → 6 → 4 (issue A's acceptance in CLI
// mode: the manager runs `localnet-cli` for every action, and no argv ever holds a key).
import { describe, expect, it } from 'vitest';
import { readdir, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  commandLine,
  descendants,
  keyNeedles,
  pending,
  scanFilesForKeys,
  waitFor,
} from '../../src/harness/index.ts';
import { useDevnet } from '../integration/support.ts';

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
        // The manual pacemaker commits only on TriggerView: trigger once the stake is pending,
        // or while pacing holds it (a genesis validator missing from the first certificates is
        // not known to vote yet: it proves itself in the next blocks).
        const row = await h.validator('005');
        if (row?.waitingFor === 'pacing' || (await h.mempool()).some((t) => t.id === '005'))
          await h.triggerView();
        return pending(
          `no stake of 005 committed by height ${await h.height()}; manager: ${row?.phase} (${row?.reason})`,
        );
      },
      { what: 'the stake of 005 to commit', timeoutMs: 60_000, intervalMs: 100 },
    );
    const next = await h.triggerView();
    expect(next).toBe(stakedAt + 1);
    // 005's vote counts from the height after its stake; a certificate holds only a quorum of
    // the set, so its signature may land a view later when it is the slowest voter.
    expect(await h.activeSet(next)).toContain('005');
    await h.expectActive('005', { since: next, timeoutMs: 30_000 });
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
        if ((await h.mempool()).some((t) => t.id === '005')) await h.triggerView();
        const row = await h.validator('005');
        return pending(
          `no unstake of 005 committed by height ${await h.height()}; manager: ${row?.phase} (${row?.reason})`,
        );
      },
      { what: 'the unstake of 005 to commit', timeoutMs: 60_000, intervalMs: 100 },
    );
    const next = await h.triggerView();
    expect(next).toBe(unstakedAt + 1);
    expect(await h.activeSet(next)).not.toContain('005');
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

  it.runIf(txMode === 'cli')(
    'killed (SIGKILL) while the CLI sends a stake, restarted: not sent again, and no key left on disk',
    async () => {
      const { h } = devnet;
      const since = Date.now();
      const before = (await h.ledger.counts()).get('005') ?? { stakes: 0, unstakes: 0 };
      await h.kubectlScale(5);
      // Kill the manager while its `Validator Stake` call runs: its temporary keybase exists.
      const managerPid = h.devnet?.manager?.pid ?? -1;
      await waitFor(
        () => descendants(managerPid).some((pid) => /Validator Stake/.test(commandLine(pid))),
        { what: "the manager's Validator Stake call", timeoutMs: 30_000, intervalMs: 5 },
      );
      await h.killManager('SIGKILL');
      await h.restartManager();
      await h.expectStakedSet(['001', '002', '003', '004', '005']);
      await h.expectChainProgress(3, 20_000);
      expect((await h.ledger.counts()).get('005')).toEqual({
        stakes: before.stakes + 1,
        unstakes: before.unstakes,
      });
      // Whatever the killed call left in the temp folder is gone once the manager is back.
      const leftovers = await scanFilesForKeys(
        [],
        await tempFolders(since),
        keyNeedles(await h.privateKeys()),
        { recursive: true },
      );
      expect(leftovers.leaks).toEqual([]);
    },
  );

  it.runIf(txMode === 'cli')(
    'runs localnet-cli for its actions (argv is scanned for keys after the file)',
    () => {
      const cliCalls = [...devnet.argv.seen.values()].filter((line) =>
        /localnet-cli\.(ts|mjs) .*Validator (Stake|Unstake)/.test(line),
      );
      expect(cliCalls.length).toBeGreaterThan(0);
    },
  );
});

/** The manager's temporary folders (CLI keybases) changed since `since`. */
async function tempFolders(since: number): Promise<string[]> {
  const out: string[] = [];
  for (const name of await readdir(tmpdir())) {
    if (!/^(cm-keybase-|cm-cli-|cluster-manager-)/.test(name)) continue;
    const path = join(tmpdir(), name);
    const info = await stat(path).catch(() => undefined);
    if (info?.isDirectory() === true && info.mtimeMs >= since - 1_000) out.push(path);
  }
  return out;
}
