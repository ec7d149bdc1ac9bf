// Issues 13 and 29 against `devnet --fidelity v1`, for either transaction mode (v1-devnet.test.ts:
// RPC, v1-devnet-cli.test.ts: CLI). The nodes behave as V1's Go code does (no state sync for late
// joiners, every row ever staked in the quorum, no debug RPC routes, the mempool query's 135 while
// anything is pending); the manager runs with CM_CHAIN_PROFILE=v1, whose quorum rule is V1's
// exactly: the leader's own vote never counts (consensus/hotstuff_leader.go:96-102 sends it
// through RainTree, which drops a send to its own address, p2p/raintree/router.go:172-179), so a
// height commits only when the *other* live voters are more than 2/3 of every row
// (consensus/helpers.go:119-134). Those rules hold on a stand-in that still counts the leader's
// vote and on one that drops it. Everything is asserted on the chain (heights, committed
// transactions, signers) and on the CLI's exit code and words.
//
// Four genesis validators (`fourGenesisSuite`): `scale 5`, `scale 5 --drive`, `scale 5 --wait
// staked --drive` and `scale 3` exit non-zero within 10 s with the arithmetic, nothing reaches a
// block, the chain goes on; `kubectl scale 5` behind the manager's back is not acted on and is
// reported with the same arithmetic. Seven (`sevenGenesisSuite`): `scale 8` stakes 008 exactly
// once and the chain goes on with 008 silent; `scale 9` is refused within 10 s and `kubectl scale
// 9` is reported, not acted on; `scale 7` unstakes 008 once and the chain goes on.
import { describe, expect, it } from 'vitest';
import { pending, waitFor, type Harness } from '../../../src/harness/index.ts';
import { PocketRpcClient } from '../../../src/pocket/index.ts';
import { useDevnet } from '../../integration/support.ts';
import { runCli } from '../../rpc/support/cli.ts';

const ids = (n: number) => Array.from({ length: n }, (_, i) => String(i + 1).padStart(3, '0'));

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
 * with a silent member needs every live voter in the same round, and a round led by it (or cut
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

/**
 * Every validator that signed a certificate of the heights `from + 1`…`to`. One certificate holds
 * a quorum, and on V1 never the leader's signature: a live voter shows over a few heights.
 */
async function signedOver(h: Harness, from: number, to: number): Promise<string[]> {
  const seen = new Set<string>();
  for (let height = from + 1; height <= to; height++)
    for (const id of await h.activeValidators(height)) seen.add(id);
  return [...seen].sort();
}

/** `cluster-manager <args>` against the devnet's manager, as a developer types it. */
async function cli(h: Harness, args: readonly string[]) {
  const started = Date.now();
  const result = await runCli(args, {
    env: {
      CLUSTER_MANAGER_URL: h.info.managerUrl ?? '',
      CLUSTER_MANAGER_TOKEN: h.info.token ?? '',
    },
    timeoutMs: 60_000,
  });
  return { ...result, tookMs: Date.now() - started };
}

async function replicas(h: Harness): Promise<number> {
  const sts = await h.apps.readNamespacedStatefulSet({
    name: h.info.statefulSet,
    namespace: h.info.namespace,
  });
  return sts.spec?.replicas ?? -1;
}

async function cannotVoteEvents(h: Harness, atLeast: number): Promise<KubeEvent[]> {
  return waitFor(
    async () => {
      const out = await h.kubectl(['get', 'events', '-o', 'json']);
      const items = (JSON.parse(out.stdout) as { items: KubeEvent[] }).items.filter(
        (e) => e.reason === 'CannotVote',
      );
      return items.length >= atLeast ? items : pending(`${items.length} CannotVote events`);
    },
    { what: `${atLeast} CannotVote events`, timeoutMs: 10_000 },
  );
}

/** Four genesis validators: every scale V1 cannot survive is refused at once, non-zero. */
export function fourGenesisSuite(txMode: 'rpc' | 'cli'): void {
  describe(`devnet --fidelity v1 --validators 4 (${txMode} mode)`, { timeout: 180_000 }, () => {
    const devnet = useDevnet(`v1-4-${txMode}`, { fidelity: 'v1', pacemaker: 'manual', txMode });
    const GENESIS = ids(4);

    it('is healthy, reads validator-001 and commits blocks through V1 debug messages', async () => {
      const { h } = devnet;
      expect(h.info.fidelity).toBe('v1');
      const { from, to } = await committing(h, 3);
      expect(await signedOver(h, from, to)).toEqual(GENESIS);
    });

    it('scale 5, scale 5 --drive, scale 5 --wait staked --drive and scale 3 exit non-zero within 10 s with the arithmetic; nothing reaches a block; the chain goes on', async () => {
      const { h } = devnet;
      const before = await h.ledger.counts();
      const attempts: [string[], string][] = [
        [['scale', '5'], "5 rows need 4 votes besides the leader's; 4 voters give 3"],
        [['scale', '5', '--drive'], "5 rows need 4 votes besides the leader's; 4 voters give 3"],
        [
          ['scale', '5', '--wait', 'staked', '--drive'],
          "5 rows need 4 votes besides the leader's; 4 voters give 3",
        ],
        [['scale', '3'], "4 rows need 3 votes besides the leader's; 3 voters give 2"],
      ];
      for (const [args, arithmetic] of attempts) {
        const result = await cli(h, args);
        const what = `${args.join(' ')}: exit ${String(result.code)} in ${result.tookMs} ms\n${result.stderr}`;
        expect(result.code, what).not.toBe(0);
        expect(result.tookMs, what).toBeLessThan(10_000);
        expect(result.stderr, what).toContain('CHAIN_WOULD_HALT');
        expect(result.stderr, what).toContain(arithmetic);
        expect(result.stderr, what).toMatch(/larger genesis set/);
        expect(await replicas(h), what).toBe(4);
      }
      const { from, to } = await committing(h, 3);
      expect(delta(before, await h.ledger.counts())).toEqual({});
      expect(await h.stakedValidators()).toEqual(GENESIS);
      expect(await signedOver(h, from, to)).toEqual(GENESIS);
      const chain = new PocketRpcClient({ baseUrl: h.info.chainRpcUrl });
      expect(await chain.mempool()).toEqual({ readable: true, transactions: [] });
    });

    it('kubectl scale 5 behind its back: 005 is not staked, its status gives the arithmetic, the chain goes on', async () => {
      const { h } = devnet;
      const before = await h.ledger.counts();
      await h.kubectlScale(5);
      const row = await h.waitForValidator(
        '005',
        (r) => r.reason.startsWith('NO_STATE_SYNC'),
        'refused with NO_STATE_SYNC',
        { timeoutMs: 30_000 },
      );
      expect(row.reason).toContain("5 rows need 4 votes besides the leader's; 4 voters give 3");
      expect(row.reason).toMatch(/not staked; the way out is a larger genesis set/);
      await committing(h, 3);
      expect(delta(before, await h.ledger.counts())).toEqual({});
      expect(await h.stakedValidators()).toEqual(GENESIS);
      const events = await cannotVoteEvents(h, 1);
      expect(events.find((e) => e.message.startsWith('validator 005:'))?.type).toBe('Warning');
      await h.kubectlScale(4);
      await committing(h, 2);
      expect(delta(before, await h.ledger.counts())).toEqual({});
    });
  });
}

/** Seven genesis validators: one late joiner fits V1's quorum, a second does not. */
export function sevenGenesisSuite(txMode: 'rpc' | 'cli'): void {
  describe(`devnet --fidelity v1 --validators 7 (${txMode} mode)`, { timeout: 180_000 }, () => {
    const devnet = useDevnet(`v1-7-${txMode}`, {
      fidelity: 'v1',
      pacemaker: 'manual',
      txMode,
      validators: 7,
    });
    const GENESIS = ids(7);

    it('scale 8: 008 staked exactly once, the chain keeps committing, status says 008 cannot vote', async () => {
      const { h } = devnet;
      await committing(h, 2);
      const before = await h.ledger.counts();
      // No view yet: the stake waits in the mempool, which V1 will not list (135). The manager stays
      // healthy and follows its own transaction by hash.
      expect((await h.scaleTo(8, { wait: 'none' })).status).toBe(200);
      const sent = await waitFor(
        async () =>
          (await h.actions()).find((a) => a.validatorId === '008' && a.state === 'sent') ??
          pending('no stake of 008 sent yet'),
        { what: 'the stake of 008 sent', timeoutMs: 30_000 },
      );
      const chain = new PocketRpcClient({ baseUrl: h.info.chainRpcUrl });
      expect(await chain.mempool()).toMatchObject({ readable: false });
      // The harness copes as the manager does: it looks up the manager's own transactions by
      // hash (CLI mode: the hash is known only once a block shows it, so nothing is listed).
      expect(await h.mempool()).toEqual(
        sent.txHash === null ? [] : [{ id: '008', type: 'MessageStake', hash: sent.txHash }],
      );
      const readiness = await waitFor(
        async () => {
          const r = await h.manager<{ chain: { healthy: boolean; lastError: string | null } }>(
            '/readyz',
          );
          const row = await h.validator('008');
          return row?.phase === 'staking' ? { r, row } : pending(`008 is ${row?.phase}`);
        },
        { what: '008 staking', timeoutMs: 10_000 },
      );
      expect(readiness.r.chain).toMatchObject({ healthy: true, lastError: null });
      // RPC mode knows the hash before sending; CLI mode learns it only from a block, since V1
      // will not list its mempool.
      if (txMode === 'rpc')
        expect(readiness.row.reason).toContain(String(sent.txHash).slice(0, 12));
      else expect(readiness.row.reason).toMatch(/waiting for a transaction to commit/);
      const answer = await h.scaleTo(8, { wait: 'staked', timeoutSeconds: 90 });
      expect(answer.status, JSON.stringify(answer.body)).toBe(200);
      expect(answer.body).toMatchObject({ done: true });
      const { from, to } = await committing(h, 4);
      expect(delta(before, await h.ledger.counts())).toEqual({ '008': [1, 0] });
      expect(await h.stakedValidators()).toEqual([...GENESIS, '008']);
      // 008 is counted in V1's quorum but never signs: the seven carry every block.
      expect(await signedOver(h, from, to)).toEqual(GENESIS);
      const row = await h.validator('008');
      expect(row).toMatchObject({ phase: 'staked' });
      expect(row?.reason).toMatch(/^NO_STATE_SYNC: cannot vote: chain has no state sync/);
    });

    it('scale 9 exits non-zero within 10 s with the arithmetic; kubectl scale 9 is reported, not acted on', async () => {
      const { h } = devnet;
      const before = await h.ledger.counts();
      const refused = await cli(h, ['scale', '9', '--wait', 'staked', '--drive']);
      const what = `exit ${String(refused.code)} in ${refused.tookMs} ms\n${refused.stderr}`;
      expect(refused.code, what).not.toBe(0);
      expect(refused.tookMs, what).toBeLessThan(10_000);
      expect(refused.stderr, what).toContain('CHAIN_WOULD_HALT');
      expect(refused.stderr, what).toContain(
        "9 rows need 7 votes besides the leader's; 7 voters give 6",
      );
      expect(await replicas(h)).toBe(8);
      // Behind the manager's back: the pod comes, its stake is refused with the same arithmetic.
      await h.kubectlScale(9);
      const row = await h.waitForValidator(
        '009',
        (r) => r.reason.startsWith('NO_STATE_SYNC'),
        'refused with NO_STATE_SYNC',
        { timeoutMs: 30_000 },
      );
      expect(row.reason).toContain("9 rows need 7 votes besides the leader's; 7 voters give 6");
      await committing(h, 3);
      expect(delta(before, await h.ledger.counts())).toEqual({});
      expect(await h.stakedValidators()).toEqual([...GENESIS, '008']);
      const chain = new PocketRpcClient({ baseUrl: h.info.chainRpcUrl });
      expect(await chain.mempool()).toEqual({ readable: true, transactions: [] });
      // Said as a metric and as Warning Events on the pods.
      expect(await h.metric('cluster_manager_validators_cannot_vote{state="refused"}')).toBe(1);
      expect(await h.metric('cluster_manager_validators_cannot_vote{state="staked"}')).toBe(1);
      const events = await cannotVoteEvents(h, 2);
      expect(new Set(events.map((e) => e.type))).toEqual(new Set(['Warning']));
      expect(new Set(events.map((e) => /validator (\d{3}):/.exec(e.message)?.[1]))).toEqual(
        new Set(['008', '009']),
      );
      expect(events.find((e) => e.message.startsWith('validator 008:'))?.involvedObject.name).toBe(
        'validator-7',
      );
      await h.kubectlScale(8);
    });

    it('scale 7: 008 unstaked once (its row stays counted), the chain keeps committing', async () => {
      const { h } = devnet;
      const before = await h.ledger.counts();
      const answer = await h.scaleTo(7, { wait: 'staked', timeoutSeconds: 90 });
      expect(answer.status, JSON.stringify(answer.body)).toBe(200);
      const { from, to } = await committing(h, 4);
      expect(delta(before, await h.ledger.counts())).toEqual({ '008': [0, 1] });
      expect(await h.stakedValidators()).toEqual(GENESIS);
      expect(await signedOver(h, from, to)).toEqual(GENESIS);
    });
  });
}
