// The scenario against `devnet --fidelity v1`, for either transaction mode (v1-devnet.test.ts:
// rpc, v1-devnet-cli.test.ts: cli). The nodes behave as V1's Go code does: the leader of a round
// never counts its own vote (consensus/hotstuff_leader.go:96-102 → p2p/raintree/router.go:172-179),
// late joiners never sync or vote, every row ever staked counts toward `num > 2/3 × rows`
// (consensus/helpers.go:119-134), no debug RPC routes, the mempool query's 135 while anything is
// pending. So a chain of 7 genesis validators survives one late joiner (6 others > 16/3) and no
// second (6 > 6 fails); 4 survive none (issue 29) — the manager's refusals of what V1 cannot
// survive are asserted here too (below). Views are driven V1's way (a DebugMessage to each
// validator; in CLI mode `p1 Debug TriggerView` on the config V1's chart renders, whose
// `p2p.hostname` is "": the manager sets POCKET_P2P_HOSTNAME as V1's cli-client does).
// Everything is asserted on the chain (heights, committed transactions, signers) and on the CLI's
// exit code and words.
//
// What V1 cannot survive is refused by the manager (issue 29; its rule: src/manager/planner/
// quorum.ts, "other live voters > 2/3 of all rows"). On 4 genesis validators (`fourGenesisSuite`):
// `scale 5`, `scale 5 --drive`, `scale 5 --wait staked --drive` and `scale 3` exit non-zero within
// 10 s with the arithmetic, nothing reaches a block, the chain goes on; `kubectl scale 5` behind the
// manager's back is not acted on and is reported with the same arithmetic. On 7
// (`v1DevnetSuite`): `scale 9` is refused within 10 s and `kubectl scale 9` is reported, not
// acted on.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { pending, waitFor, type Harness } from '../../../src/harness/index.ts';
import { PocketRpcClient } from '../../../src/pocket/index.ts';
import { useDevnet } from '../../integration/support.ts';
import { runCli } from '../../rpc/support/cli.ts';

const ids = (n: number) => Array.from({ length: n }, (_, i) => String(i + 1).padStart(3, '0'));
const GENESIS = ids(7);

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
 * more blocks committed, within `withinMs`; a halted chain fails it. Every voter but the leader
 * is needed in one round, and a view that reaches a validator after a peer's NewRound moved it
 * into the round takes it one round further (in V1 as here): views until the blocks come.
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
 * Who signed blocks `from + 1`…`to`: each certificate a quorum of the rows (5 of 7, 5 of 8) from
 * the genesis validators but its round's leader (whose vote V1 never counts), so at most six;
 * over a few blocks every genesis validator.
 */
async function expectGenesisSigning(h: Harness, from: number, to: number): Promise<void> {
  const seen = new Set<string>();
  for (let height = from + 1; height <= to; height++) {
    const signers = await h.activeValidators(height);
    expect(signers.length, `signers of ${height}: ${signers.join(',')}`).toBeGreaterThanOrEqual(5);
    expect(signers.length, `signers of ${height}: ${signers.join(',')}`).toBeLessThanOrEqual(
      GENESIS.length - 1,
    );
    for (const id of signers) {
      expect(GENESIS, `signer ${id} of ${height}`).toContain(id);
      seen.add(id);
    }
  }
  if (to - from >= 3) expect(seen.size).toBeGreaterThanOrEqual(GENESIS.length - 1);
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
    const FOUR = ids(4);

    it('is healthy, reads validator-001 and commits blocks through V1 debug messages', async () => {
      const { h } = devnet;
      expect(h.info.fidelity).toBe('v1');
      const { from, to } = await committing(h, 3);
      expect(await signedOver(h, from, to)).toEqual(FOUR);
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
      expect(await h.stakedValidators()).toEqual(FOUR);
      expect(await signedOver(h, from, to)).toEqual(FOUR);
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
      expect(await h.stakedValidators()).toEqual(FOUR);
      const events = await cannotVoteEvents(h, 1);
      expect(events.find((e) => e.message.startsWith('validator 005:'))?.type).toBe('Warning');
      await h.kubectlScale(4);
      await committing(h, 2);
      expect(delta(before, await h.ledger.counts())).toEqual({});
    });
  });
}

/** The whole suite against a `devnet --fidelity v1 --validators 7` whose manager sends in `txMode`. */
export function v1DevnetSuite(txMode: 'rpc' | 'cli'): void {
  const devnet = useDevnet(`v1-${txMode}`, {
    fidelity: 'v1',
    pacemaker: 'manual',
    txMode,
    validators: GENESIS.length,
  });
  describe(`the manager on devnet --fidelity v1 (${txMode} mode)`, { timeout: 180_000 }, () => {
    it('is healthy, reads validator-001 and commits blocks through V1 debug messages', async () => {
      const { h } = devnet;
      expect(h.info.fidelity).toBe('v1');
      if (txMode === 'cli') {
        // p1 loads the config V1's chart renders: its `p2p.hostname` is "" (values.yaml:98), and
        // without POCKET_P2P_HOSTNAME p1 dies creating its P2P module; the manager sets it.
        const env = await readFile(join(h.info.dir, 'manager.env'), 'utf8');
        const configPath = /^CM_POCKET_V1_CLI_CONFIG_PATH=(.*)$/m.exec(env)?.[1] ?? '';
        const config = JSON.parse(await readFile(configPath, 'utf8')) as {
          p2p: { hostname: string };
        };
        expect(config.p2p.hostname).toBe('');
      }
      const { from, to } = await committing(h, 3);
      await expectGenesisSigning(h, from, to);
    });

    it('scale 8: 008 staked once, the chain keeps committing, status says 008 cannot vote', async () => {
      const { h } = devnet;
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
      const answer = await h.scaleTo(8, { wait: 'staked', timeoutSeconds: 90, drive: true });
      expect(answer.status, JSON.stringify(answer.body)).toBe(200);
      expect(answer.body).toMatchObject({ done: true });
      const { from, to } = await committing(h, 3);
      expect(delta(before, await h.ledger.counts())).toEqual({ '008': [1, 0] });
      expect(await h.stakedValidators()).toEqual([...GENESIS, '008']);
      // 008 counts among V1's rows but never signs: the genesis validators carry every block.
      await expectGenesisSigning(h, from, to);
      const row = await h.validator('008');
      expect(row).toMatchObject({ phase: 'staked' });
      expect(row?.reason).toMatch(/^NO_STATE_SYNC: cannot vote: chain has no state sync/);
      const metrics = await (await fetch(`${h.info.managerUrl ?? ''}/metrics`)).text();
      expect(metrics).toMatch(/cluster_manager_validators_cannot_vote\{state="staked"\} 1/);
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

    it('scale 7: 008 unstaked once; its row still counts, and the chain keeps committing', async () => {
      const { h } = devnet;
      const before = await h.ledger.counts();
      const answer = await h.scaleTo(7, { wait: 'staked', timeoutSeconds: 90, drive: true });
      expect(answer.status, JSON.stringify(answer.body)).toBe(200);
      const { from, to } = await committing(h, 3);
      expect(delta(before, await h.ledger.counts())).toEqual({ '008': [0, 1] });
      expect(await h.stakedValidators()).toEqual(GENESIS);
      await expectGenesisSigning(h, from, to);
    });
  });
}
