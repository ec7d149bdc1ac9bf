// The scenario of issue 13's "Done when" against `devnet --fidelity v1`, for either transaction
// mode (v1-devnet.test.ts: rpc, v1-devnet-cli.test.ts: cli). See v1-devnet.test.ts for the story.
import { describe, expect, it } from 'vitest';
import { pending, waitFor, type Harness } from '../../../src/harness/index.ts';
import { PocketRpcClient } from '../../../src/pocket/index.ts';
import { useDevnet } from '../../integration/support.ts';

const GENESIS = ['001', '002', '003', '004'];

interface KubeEvent {
  reason: string;
  type: string;
  message: string;
  involvedObject: { name: string };
}

type Counts = Map<string, { stakes: number; unstakes: number }>;
function delta(before: Counts, after: Counts): Record<string, [number, number]> {
  const out: Record<string, [number, number]> = {};
  for (const [id, now] of after) {
    const then = before.get(id) ?? { stakes: 0, unstakes: 0 };
    if (now.stakes !== then.stakes || now.unstakes !== then.unstakes)
      out[id] = [now.stakes - then.stakes, now.unstakes - then.unstakes];
  }
  return out;
}

/**
 * Drives views through the manager (`trigger-view`: its adapter's V1 TriggerView) until `blocks`
 * more blocks committed, within `withinMs`; a halted chain fails it. The stand-in's V1 profile
 * with one silent member needs every live voter in the same round, and a round led by it (or cut
 * short by a view that reached one validator late) takes a few round timeouts: hence views until
 * the blocks come, not exactly one per block.
 */
async function committing(
  h: Harness,
  blocks: number,
  withinMs = 60_000,
): Promise<{ from: number; to: number }> {
  const from = await h.height();
  const deadline = Date.now() + withinMs;
  let to = from;
  while (to < from + blocks && Date.now() < deadline) {
    const answer = await h.post('/v1/trigger-view', {}, 30_000);
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    to = await h.height();
  }
  expect(to, `heights ${from} → ${to} within ${withinMs} ms`).toBeGreaterThanOrEqual(from + blocks);
  return { from, to };
}

/** The whole suite against a `devnet --fidelity v1` whose manager sends in `txMode`. */
export function v1DevnetSuite(txMode: 'rpc' | 'cli'): void {
  const devnet = useDevnet(`v1-${txMode}`, { fidelity: 'v1', pacemaker: 'manual', txMode });
  describe(`the manager on devnet --fidelity v1 (${txMode} mode)`, { timeout: 180_000 }, () => {
    it('is healthy, reads validator-001 and commits blocks through V1 debug messages', async () => {
      const { h } = devnet;
      expect(h.info.fidelity).toBe('v1');
      const { to } = await committing(h, 3);
      expect(await h.activeValidators(to)).toEqual(GENESIS);
    });

    it('scale 5: 005 staked once, the chain keeps committing, status says 005 cannot vote', async () => {
      const { h } = devnet;
      const before = await h.ledger.counts();
      // No view yet: the stake waits in the mempool, which V1 will not list (135). The manager stays
      // healthy and follows its own transaction by hash.
      expect((await h.scaleTo(5, { wait: 'none' })).status).toBe(200);
      const sent = await waitFor(
        async () =>
          (await h.actions()).find((a) => a.validatorId === '005' && a.state === 'sent') ??
          pending('no stake of 005 sent yet'),
        { what: 'the stake of 005 sent', timeoutMs: 30_000 },
      );
      const chain = new PocketRpcClient({ baseUrl: h.info.chainRpcUrl });
      expect(await chain.mempool()).toMatchObject({ readable: false });
      // The harness copes as the manager does: it looks up the manager's own transactions by
      // hash (CLI mode: the hash is known only once a block shows it, so nothing is listed).
      expect(await h.mempool()).toEqual(
        sent.txHash === null ? [] : [{ id: '005', type: 'MessageStake', hash: sent.txHash }],
      );
      const readiness = await waitFor(
        async () => {
          const r = await h.manager<{ chain: { healthy: boolean; lastError: string | null } }>(
            '/readyz',
          );
          const row = await h.validator('005');
          return row?.phase === 'staking' ? { r, row } : pending(`005 is ${row?.phase}`);
        },
        { what: '005 staking', timeoutMs: 10_000 },
      );
      expect(readiness.r.chain).toMatchObject({ healthy: true, lastError: null });
      // RPC mode knows the hash before sending; CLI mode learns it only from a block, since V1
      // will not list its mempool.
      if (txMode === 'rpc')
        expect(readiness.row.reason).toContain(String(sent.txHash).slice(0, 12));
      else expect(readiness.row.reason).toMatch(/waiting for a transaction to commit/);
      const answer = await h.scaleTo(5, { wait: 'staked', timeoutSeconds: 90 });
      expect(answer.status, JSON.stringify(answer.body)).toBe(200);
      expect(answer.body).toMatchObject({ done: true });
      const { to } = await committing(h, 3);
      expect(delta(before, await h.ledger.counts())).toEqual({ '005': [1, 0] });
      expect(await h.stakedValidators()).toEqual([...GENESIS, '005']);
      // 005 is counted in V1's quorum but never signs: four of five carry every block.
      expect(await h.activeValidators(to)).toEqual(GENESIS);
      const row = await h.validator('005');
      expect(row).toMatchObject({ phase: 'staked' });
      expect(row?.reason).toMatch(/^NO_STATE_SYNC: cannot vote: chain has no state sync/);
    });

    it('scale 7: nothing that would halt the chain is staked; the answer comes at once', async () => {
      const { h } = devnet;
      const before = await h.ledger.counts();
      const started = Date.now();
      const answer = await h.scaleTo(7, { wait: 'staked', timeoutSeconds: 90 });
      const tookMs = Date.now() - started;
      expect(answer.status, JSON.stringify(answer.body)).toBe(409);
      const error = answer.body.error as { code: string; message: string; details: unknown };
      expect(error).toMatchObject({ code: 'SCALE_BLOCKED', details: { reason: 'NO_STATE_SYNC' } });
      expect(error.message).toMatch(/006 is pending: NO_STATE_SYNC: cannot vote/);
      expect(tookMs).toBeLessThan(30_000);
      await committing(h, 3);
      expect(delta(before, await h.ledger.counts())).toEqual({});
      expect(await h.stakedValidators()).toEqual([...GENESIS, '005']);
      const chain = new PocketRpcClient({ baseUrl: h.info.chainRpcUrl });
      expect(await chain.mempool()).toEqual({ readable: true, transactions: [] });
      for (const id of ['006', '007'])
        expect((await h.validator(id))?.reason).toMatch(/^NO_STATE_SYNC/);
      // Said as a metric and as Warning Events on the pods.
      const metrics = await (await fetch(`${h.info.managerUrl ?? ''}/metrics`)).text();
      expect(metrics).toMatch(/cluster_manager_validators_cannot_vote\{state="refused"\} 2/);
      expect(metrics).toMatch(/cluster_manager_validators_cannot_vote\{state="staked"\} 1/);
      const events = await waitFor(
        async () => {
          const out = await h.kubectl(['get', 'events', '-o', 'json']);
          const items = (JSON.parse(out.stdout) as { items: KubeEvent[] }).items.filter(
            (e) => e.reason === 'CannotVote',
          );
          return items.length >= 3 ? items : pending(`${items.length} CannotVote events`);
        },
        { what: 'CannotVote events for 005, 006 and 007', timeoutMs: 10_000 },
      );
      expect(new Set(events.map((e) => e.type))).toEqual(new Set(['Warning']));
      // On the validator's pod (or its StatefulSet while the pod is not there yet).
      expect(new Set(events.map((e) => /validator (\d{3}):/.exec(e.message)?.[1]))).toEqual(
        new Set(['005', '006', '007']),
      );
      expect(events.find((e) => e.message.startsWith('validator 005:'))?.involvedObject.name).toBe(
        'validator-4',
      );
    });

    it('scale 4: 005 unstaked once, the chain keeps committing', async () => {
      const { h } = devnet;
      const before = await h.ledger.counts();
      const answer = await h.scaleTo(4, { wait: 'staked', timeoutSeconds: 90 });
      expect(answer.status, JSON.stringify(answer.body)).toBe(200);
      const { to } = await committing(h, 3);
      expect(delta(before, await h.ledger.counts())).toEqual({ '005': [0, 1] });
      expect(await h.stakedValidators()).toEqual(GENESIS);
      expect(await h.activeValidators(to)).toEqual(GENESIS);
    });
  });
}
