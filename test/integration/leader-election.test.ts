// Issue A, two replicas with leader election on a Lease in the emulator: only the leader acts;
// kill it (SIGKILL) and the other takes over within the lease's timing, with its own journal,
// and nothing is sent twice — not even the stake the old leader left in the mempool (the
// planner's mempool check). Also issue B's "leader change during scaling".
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { pending, waitFor, type Harness, type ManagerReplica } from '../../src/harness/index.ts';
import { useDevnet } from './support.ts';

const LEASE_MS = 2_000;
const RETRY_MS = 300;
const LEASE_ENV = {
  CM_LEADER_ELECTION: 'true',
  CM_LEASE_NAME: 'cluster-manager',
  CM_LEASE_DURATION: `${LEASE_MS}ms`,
  CM_RENEW_DEADLINE: '1500ms',
  CM_RETRY_PERIOD: `${RETRY_MS}ms`,
};

const devnet = useDevnet('leader', { managerEnv: { ...LEASE_ENV, CM_IDENTITY: 'manager-a' } });

interface Readiness {
  leader: boolean;
  leaderIdentity: string | null;
}

async function stakeCounts(h: Harness): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const [id, c] of await h.ledger.counts()) out[id] = c.stakes;
  return out;
}

describe('two manager replicas with leader election', { timeout: 120_000 }, () => {
  let replica: ManagerReplica;
  const a = (): string => devnet.h.info.managerUrl ?? '';

  it('elects one leader; only the leader acts, the follower sends nothing', async () => {
    const { h } = devnet;
    replica = await h.startReplica(
      {
        CM_RPC_PORT: '0',
        CM_IDENTITY: 'manager-b',
        CM_JOURNAL_PATH: join(h.info.dir, 'journal-b.sqlite'),
      },
      'manager-b',
    );
    await waitFor(
      async () => {
        const [ra, rb] = await Promise.all([
          h.manager<Readiness>('/readyz', a()),
          h.manager<Readiness>('/readyz', replica.url),
        ]);
        return (
          (ra.leader && !rb.leader && rb.leaderIdentity === 'manager-a') ||
          pending(`a: ${JSON.stringify(ra)}; b: ${JSON.stringify(rb)}`)
        );
      },
      { what: 'manager-a to lead and manager-b to follow it', timeoutMs: 20_000 },
    );
    await h.kubectlScale(6);
    await h.expectStakedSet(['001', '002', '003', '004', '005', '006']);
    expect(await h.actions(a())).toHaveLength(2);
    expect(await h.actions(replica.url)).toEqual([]);
    expect(await stakeCounts(h)).toEqual({ '005': 1, '006': 1 });
  });

  it('the leader killed with a stake in the mempool: the follower takes over in time and sends nothing twice', async () => {
    const { h } = devnet;
    // The leader's pacing stakes 007 only once it has seen all six sign (the test commits no
    // block while it waits for the mempool).
    await h.waitForVoting(['001', '002', '003', '004', '005', '006']);
    await h.kubectlScale(7);
    await waitFor(
      async () => {
        const pool = await h.mempool();
        return pool.some((t) => t.id === '007') || pending(`mempool ${JSON.stringify(pool)}`);
      },
      { what: 'the stake of 007 in the mempool', timeoutMs: 30_000 },
    );
    const killedAt = Date.now();
    await h.killManager('SIGKILL');
    await waitFor(
      async () =>
        (await h.manager<Readiness>('/readyz', replica.url)).leader || pending('still a follower'),
      { what: 'manager-b to take over', timeoutMs: 10_000, intervalMs: 20 },
    );
    const takeover = Date.now() - killedAt;
    // The lease is valid for LEASE_MS after its last renewal; then one retry period at most.
    expect(takeover).toBeLessThanOrEqual(LEASE_MS + 3 * RETRY_MS);
    // The new leader's own journal has no record of 007's stake: the mempool tells it.
    await h.waitForValidator('007', (row) => row.phase === 'staking', 'staking', {
      url: replica.url,
    });
    expect(await h.actions(replica.url)).toEqual([]);
    await h.expectStakedSet(['001', '002', '003', '004', '005', '006', '007']);

    // Leader change during scaling: the new leader finishes the scale-up.
    await h.kubectlScale(8);
    await h.expectStakedSet(['001', '002', '003', '004', '005', '006', '007', '008']);
    await h.expectChainProgress(2, 20_000);
    expect(await stakeCounts(h)).toEqual({ '005': 1, '006': 1, '007': 1, '008': 1 });
    const journal = await h.actions(replica.url);
    expect(journal.map((x) => `${x.validatorId} ${x.kind} ${x.state}`)).toEqual([
      '008 stake committed',
    ]);
  });
});
