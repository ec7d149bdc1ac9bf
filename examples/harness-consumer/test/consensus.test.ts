// A consensus test of our own localnet's scaling, written with cluster-manager's harness: a devnet
// of 4 validators scaled to 5 and back to 4, each step asserted on the chain — who signed which
// block, how many stake and unstake transactions committed — not on exit codes.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import { Harness, pending, waitFor } from 'cluster-manager/harness';

// A devnet takes seconds to start and a scale step several blocks: vitest's 5 s default would end
// the hooks and the test half-way (the harness's own waits time out first, saying what they saw).
const START_MS = 120_000;
const STEP_MS = 180_000;

/** Signatures a certificate of a set of `n` needs: more than two thirds. */
const quorum = (n: number): number => Math.floor((2 * n) / 3) + 1;

describe('scaling the validators 4 → 5 → 4', () => {
  let h: Harness;

  beforeAll(async () => {
    const dir = await mkdtemp(join(tmpdir(), 'consensus-'));
    // 4 validators, the manual pacemaker (the harness commits blocks as it waits), the manager.
    h = await Harness.start({ dir });
    // Run after the tests, failed or not, within this hook's timeout: stops the manager, the nodes
    // and the emulator, and fails if any process is left. (Had this test process died instead,
    // the harness's watchdog would have stopped them.)
    return async () => {
      await h.stop();
      await rm(dir, { recursive: true, force: true });
    };
  }, START_MS);

  /**
   * Who signed `from`…`to`, from the manager's participation read (`h.participation`): each
   * certificate holds a quorum of the validators staked at its height, and whether `id` was staked
   * there (signing or absent) and signed.
   */
  async function participationOf(from: number, to: number, id: string) {
    // The manager reads each block a moment after it commits: wait until it has all of them.
    const read = await waitFor(
      async () => {
        const answer = await h.participation(from, to);
        return answer.heights.length === to - from + 1
          ? answer
          : pending(`the manager has read ${answer.heights.length} of heights ${from}…${to}`);
      },
      { what: `the manager's participation of heights ${from}…${to}`, timeoutMs: 10_000 },
    );
    return read.heights.map((row) => {
      const staked = [...row.signers, ...(row.absent ?? [])];
      expect(row.signers.length).toBeGreaterThanOrEqual(quorum(staked.length));
      return { staked: staked.includes(id), signed: row.signers.includes(id) };
    });
  }

  test(
    '005 joins and signs, then leaves; the chain never stops; one stake and one unstake',
    async () => {
      const before = await h.height();

      // Up: returns once 005 is staked and its signature is in a certificate.
      const up = await h.scaleTo(5, { wait: 'active' });
      expect(up.status).toBe(200);
      const joined = await h.expectActive('005', { since: before });
      const afterJoin = await h.expectChainProgress(3, 30_000);
      expect(await h.stakedValidators()).toEqual(['001', '002', '003', '004', '005']);
      const joinedRows = await participationOf(joined, afterJoin, '005');
      expect(joinedRows.every((row) => row.staked)).toBe(true);
      expect(joinedRows.some((row) => row.signed)).toBe(true);
      expect(await h.stakeTransactions('005')).toBe(1);

      // Down: 005 is drained (unstaked, out of the set) before its pod goes.
      const down = await h.scaleTo(4, { wait: 'active' });
      expect(down.status).toBe(200);
      const left = await h.expectInactive('005');
      const afterLeave = await h.expectChainProgress(3, 30_000);
      expect(await h.stakedValidators()).toEqual(['001', '002', '003', '004']);
      const leftRows = await participationOf(left, afterLeave, '005');
      expect(leftRows.some((row) => row.staked || row.signed)).toBe(false);
      expect(await h.unstakeTransactions('005')).toBe(1);
      expect(await h.stakeTransactions('005')).toBe(1);
    },
    STEP_MS,
  );
});
