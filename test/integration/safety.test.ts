// Issue 16, the manager's side, on a devnet (real node processes, manual pacemaker): each of the
// issue's reproductions, which broke the chain on the code before, now meets a safety rule —
// the minimum set, key problems, one scale intent at a time, replicas someone else wrote, a chain
// that went back, pacing at two validators. One devnet; each test starts where the last one left.
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { pending, waitFor } from '../../src/harness/index.ts';
import { useDevnet } from './support.ts';
import { noKubectl } from '../support/kubectl-gate.ts';

const devnet = useDevnet('safety');
const ns = () => devnet.h.info.namespace;

/** Commits `n` blocks (manual pacemaker). */
async function blocks(n: number): Promise<void> {
  for (let i = 0; i < n; i++) await devnet.h.triggerView();
}

async function replicas(): Promise<number> {
  const sts = await devnet.h.apps.readNamespacedStatefulSet({
    name: devnet.h.info.statefulSet,
    namespace: ns(),
  });
  return sts.spec?.replicas ?? -1;
}

async function draining(): Promise<string[]> {
  const pods = await devnet.h.core.listNamespacedPod({ namespace: ns() });
  return pods.items
    .filter((p) => p.metadata?.annotations?.['cluster-manager.dev/draining'] === 'true')
    .map((p) => p.metadata?.name ?? '')
    .sort();
}

const metric = (series: string): Promise<number | undefined> => devnet.h.metric(series);

async function events(reason: string): Promise<string[]> {
  const list = await devnet.h.core.listNamespacedEvent({ namespace: ns() });
  return list.items.filter((e) => e.reason === reason).map((e) => e.message ?? '');
}

async function managerLog(): Promise<string> {
  return readFile(devnet.h.info.managerLog ?? '', 'utf8');
}

/** Every stake and unstake committed since height `from`, as "id type". */
async function txsSince(from: number): Promise<string[]> {
  return (await devnet.h.committedTransactions())
    .filter((t) => t.height > from)
    .map((t) => `${t.id} ${t.type}`);
}

interface ErrorAnswer {
  error?: { code: string; message: string };
}

describe('safety under faults and bad input (issue 16)', { timeout: 180_000 }, () => {
  it('refuses a scale below the minimum set (a quorum of the genesis set) unless forced', async () => {
    const { h } = devnet;
    await blocks(2);
    for (const target of [0, 2]) {
      const answer = await h.post('/v1/scale', { replicas: target });
      expect(answer.status).toBe(409);
      expect((answer.body as ErrorAnswer).error?.code).toBe('BELOW_MINIMUM_SET');
      expect((answer.body as ErrorAnswer).error?.message).toMatch(/minimum validator set of 3/);
    }
    expect(await replicas()).toBe(4);
    expect(await draining()).toEqual([]);
    const ready = await h.manager<{ minimumSet: { size: number } | null }>('/readyz');
    expect(ready.minimumSet?.size).toBe(3);
  });

  it('a key under two ids is KEY_DUPLICATE on both: no unstake/re-stake loop, a metric, an Event, a log line', async () => {
    const { h } = devnet;
    const keys = await h.privateKeys();
    const from = await h.height();
    const journal = (await h.actions()).length;
    // Before: 005 (not wanted) with 001's key made the manager unstake 001, then stake it again.
    await h.patchKeys({ '005': keys.get('001') ?? '' });
    await h.waitForValidator('005', (r) => r.reason.startsWith('KEY_DUPLICATE'), 'KEY_DUPLICATE');
    await blocks(12);
    expect(await txsSince(from)).toEqual([]);
    expect((await h.actions()).length).toBe(journal);
    for (const id of ['001', '005']) {
      const row = await h.validator(id);
      expect(row?.phase, id).toBe('failed');
      expect(row?.reason, id).toMatch(/^KEY_DUPLICATE: key "\d{3}" is the same key as/);
    }
    expect(await metric('cluster_manager_key_problems')).toBe(2);
    expect((await events('KeyDuplicate')).length).toBeGreaterThanOrEqual(2);
    expect(await managerLog()).toMatch(/"code":"KEY_DUPLICATE"/);
    await h.patchKeys({ '005': keys.get('005') ?? '' });
    await h.waitForValidator('001', (r) => r.phase === 'active', 'active again', { drive: true });
    expect(await metric('cluster_manager_key_problems')).toBe(0);
  });

  it('never drains a validator whose key is missing or malformed: the scale answers its key code', async () => {
    const { h } = devnet;
    const keys = await h.privateKeys();
    const secret = await h.core.readNamespacedSecret({
      name: 'validators-private-keys',
      namespace: ns(),
    });
    // Before: the drain counted 004 as gone, removed its pod while it was still staked.
    // The whole Secret deleted is an operator's mistake, not a key edit: the manager still holds
    // the keys it read (in memory, for rotations) but drains nothing on them; the scale is refused
    // KEY_MISSING naming the absent Secret, and the chain sees nothing (docs/design.md, S11).
    const from = await h.height();
    await h.core.deleteNamespacedSecret({ name: 'validators-private-keys', namespace: ns() });
    await h.waitForValidator('004', () => true, 'listed', {});
    await waitFor(
      async () => (await metric('cluster_manager_key_problems')) === 0 || pending('?'),
      {
        what: 'the keys to be gone from the manager',
      },
    ).catch(() => undefined);
    const refused = await h.post('/v1/scale', {
      replicas: 3,
      wait: 'active',
      timeoutSeconds: 20,
      drive: true,
    });
    expect(refused.status).toBe(409);
    expect((refused.body as ErrorAnswer).error?.code).toBe('KEY_MISSING');
    expect((refused.body as ErrorAnswer).error?.message).toMatch(/the keys Secret is absent/);
    expect(await replicas()).toBe(4);
    expect(await draining()).toEqual([]);
    await blocks(2);
    expect(await txsSince(from)).toEqual([]);
    await h.core.readNamespacedPod({ name: h.podOf('004'), namespace: ns() });
    expect(await h.stakedValidators()).toEqual(['001', '002', '003', '004']);
    expect(await h.manager('/v1/validators').then(() => true)).toBe(true);
    // The manager logged the missing keys of wanted validators once each.
    expect(await managerLog()).toMatch(/"code":"KEY_MISSING"/);

    // The keys back, but 004's with a trailing newline: before, the drain answered 200 `done`.
    await h.core.createNamespacedSecret({
      namespace: ns(),
      body: {
        metadata: { name: secret.metadata?.name ?? '', namespace: ns() },
        data: secret.data ?? {},
      },
    });
    await h.waitForValidator('004', (r) => r.phase === 'active', 'active', { drive: true });
    await h.patchKeys({ '004': `${keys.get('004') ?? ''}\n` });
    await h.waitForValidator('004', (r) => r.phase === 'failed', 'failed on its key');
    const again = await h.post('/v1/scale', {
      replicas: 3,
      wait: 'active',
      timeoutSeconds: 20,
      drive: true,
    });
    expect(again.status).toBe(409);
    expect((again.body as ErrorAnswer).error?.code).toBe('KEY_INVALID');
    expect(await replicas()).toBe(4);
    expect(await h.stakedValidators()).toEqual(['001', '002', '003', '004']);
    await h.patchKeys({ '004': keys.get('004') ?? '' });
    await h.waitForValidator('004', (r) => r.phase === 'active', 'active', { drive: true });
  });

  it('one intent at a time: a scale during a background drain is refused, or forced to supersede it', async () => {
    const { h } = devnet;
    expect((await h.scaleTo(6, { wait: 'active', timeoutSeconds: 90 })).status).toBe(200);
    // A background drain to 4 (no block is committed meanwhile: it cannot finish).
    const down = await h.post('/v1/scale', { replicas: 4 });
    expect(down.status).toBe(202);
    expect(await draining()).toEqual(['validator-4', 'validator-5']);
    // Before: 202, and validator-4 kept its draining mark for good.
    const refused = await h.post('/v1/scale', { replicas: 5 });
    expect(refused.status).toBe(409);
    expect((refused.body as ErrorAnswer).error?.code).toBe('SCALE_IN_PROGRESS');
    expect(await replicas()).toBe(6);
    const forced = await h.post('/v1/scale', { replicas: 5, force: true, wait: 'none' });
    expect([200, 202]).toContain(forced.status);
    expect(await draining()).toEqual(['validator-5']);
    await waitFor(
      async () => {
        await h.triggerView();
        return (
          ((await replicas()) === 5 && (await draining()).length === 0) ||
          pending(`replicas ${await replicas()}, draining ${(await draining()).join()}`)
        );
      },
      { what: 'the superseding drain to finish', timeoutMs: 60_000 },
    );
    await h.expectStakedSet(['001', '002', '003', '004', '005']);
  });

  it.skipIf(noKubectl)(
    'never overwrites replicas it did not write: a kubectl scale up during a drain stands',
    async () => {
      const { h } = devnet;
      if ((await replicas()) !== 5)
        expect((await h.scaleTo(5, { wait: 'active', timeoutSeconds: 90 })).status).toBe(200);
      const down = await h.post('/v1/scale', { replicas: 4 });
      expect(down.status).toBe(202);
      // Before: the manager "finished an earlier drain" and put the replicas back to 4.
      const scaled = await h.kubectl([
        'scale',
        'statefulset',
        h.info.statefulSet,
        '-n',
        ns(),
        '--replicas=6',
      ]);
      expect(scaled.code, scaled.stderr).toBe(0);
      await h.expectStakedSet(['001', '002', '003', '004', '005', '006'], { timeoutMs: 90_000 });
      await blocks(5);
      expect(await replicas()).toBe(6);
      expect(await draining()).toEqual([]);
      const sts = await h.apps.readNamespacedStatefulSet({
        name: h.info.statefulSet,
        namespace: ns(),
      });
      expect(sts.metadata?.annotations?.['cluster-manager.dev/scale-target']).toBeUndefined();
    },
  );

  it('a chain RPC node restarted from an old snapshot: not trusted, nothing sent, no fee, until it is back', async () => {
    const { h } = devnet;
    // The snapshot: 005 and 006 staked. Then they leave.
    if ((await replicas()) !== 6)
      expect((await h.scaleTo(6, { wait: 'active', timeoutSeconds: 90 })).status).toBe(200);
    await blocks(2);
    const snapshot = await h.snapshotChainRpcNode();
    expect((await h.scaleTo(4, { wait: 'active', timeoutSeconds: 90 })).status).toBe(200);
    await blocks(3);
    const highest = await h.height();
    const journal = (await h.actions()).length;
    const balances = await Promise.all(
      ['005', '006'].map(async (id) => h.chain.balance((await h.addresses()).get(id) ?? '')),
    );
    // The validators stop answering, so the restored node stays at its old height meanwhile.
    for (const id of ['001', '002', '003', '004']) await h.killNode(id, 'SIGSTOP');
    try {
      await h.restartChainRpcNodeFrom(snapshot);
      expect(await h.height()).toBeLessThan(highest);
      // Every validator is reconciled again (a resync) while the chain is untrusted: on the old
      // state 005 and 006 are staked and unwanted — before, the manager sent their unstakes.
      const reconciles = await metric('cluster_manager_reconcile_duration_seconds_count');
      await waitFor(
        async () => {
          const now = await metric('cluster_manager_reconcile_duration_seconds_count');
          return (now ?? 0) >= (reconciles ?? 0) + 6 || pending(`${now} reconciles`);
        },
        { what: 'a resync while the chain is untrusted', timeoutMs: 20_000 },
      );
      expect((await h.actions()).length).toBe(journal);
      expect(await h.mempool()).toEqual([]);
      const untrusted = await waitFor(
        async () => {
          const ready = await h.manager<{
            chain: { trusted: boolean; untrustedReason: string | null };
          }>('/readyz');
          return ready.chain.trusted ? pending('still trusted') : ready.chain;
        },
        { what: 'the manager to distrust the chain', timeoutMs: 15_000 },
      );
      // The mark is the highest height the manager read: the chain's, give or take the block it
      // had not polled yet when the validators stopped.
      const mark = /went back to (\d+) after (\d+)/.exec(untrusted.untrustedReason ?? '');
      expect(mark, untrusted.untrustedReason ?? '').not.toBeNull();
      const [, to, after] = mark!.map(Number);
      expect(to).toBeLessThan(after!);
      expect(after).toBeGreaterThanOrEqual(highest - 2);
      expect(after).toBeLessThanOrEqual(highest + 1);
      expect(await metric('cluster_manager_chain_trusted')).toBe(0);
      expect((await events('ChainUntrusted')).length).toBeGreaterThan(0);
    } finally {
      for (const id of ['001', '002', '003', '004']) await h.killNode(id, 'SIGCONT');
    }
    await waitFor(
      async () => {
        await h.triggerView().catch(() => undefined);
        const ready = await h.manager<{ chain: { trusted: boolean } }>('/readyz');
        return ready.chain.trusted || pending(`height ${await h.height()}`);
      },
      { what: 'the chain to be trusted again', timeoutMs: 60_000 },
    );
    await blocks(3);
    expect((await h.actions()).length).toBe(journal);
    const after = await Promise.all(
      ['005', '006'].map(async (id) => h.chain.balance((await h.addresses()).get(id) ?? '')),
    );
    expect(after).toEqual(balances);
    expect(await h.stakedValidators()).toEqual(['001', '002', '003', '004']);
  });

  it('a set forced down to two grows again, one synced validator at a time', async () => {
    const { h } = devnet;
    const down = await h.post('/v1/scale', {
      replicas: 2,
      wait: 'active',
      drive: true,
      timeoutSeconds: 90,
      force: true,
    });
    expect(down.status).toBe(200);
    await h.expectStakedSet(['001', '002']);
    const from = await h.height();
    // Before: the join budget at two validators was 0, and this answered 504.
    const up = await h.scaleTo(4, { wait: 'active', timeoutSeconds: 90 });
    expect(up.status).toBe(200);
    await h.expectStakedSet(['001', '002', '003', '004']);
    // One at a time: the two stakes in different blocks, the second after the first had signed.
    const stakes = (await h.committedTransactions())
      .filter((t) => t.type === 'MessageStake' && t.height > from && t.resultCode === 0)
      .map((t) => t.height)
      .sort((a, b) => a - b);
    expect(stakes).toHaveLength(2);
    expect(stakes[1]).toBeGreaterThan(stakes[0] ?? 0);
    expect(await h.ledger.pacingViolations(['001', '002', '003', '004'])).toEqual([]);
    // Back above the configured minimum: the forced lowering is lifted.
    const ready = await h.manager<{ minimumSet: { size: number } | null }>('/readyz');
    expect(ready.minimumSet?.size).toBe(3);
  });

  it('informers come back within seconds after API errors stop (a kubectl scale is seen at once)', async () => {
    const { h } = devnet;
    // The scale happens while watch events are held; then every watch breaks and the next
    // requests fail, so the informers must relist through a burst of 500s.
    h.faults.pauseEvents();
    await h.kubectlScale(5);
    h.faults.resetWatches();
    h.faults.failNext(18, 500);
    h.faults.resumeEvents();
    const started = Date.now();
    await waitFor(
      async () => (await h.validator('005'))?.wanted === true || pending('005 not wanted yet'),
      { what: 'the manager to see replicas 5', timeoutMs: 60_000, intervalMs: 100 },
    );
    // Before: the restart backoff had grown to 16–30 s by the time the errors stopped.
    expect(Date.now() - started).toBeLessThan(15_000);
    await h.expectStakedSet(['001', '002', '003', '004', '005'], { timeoutMs: 60_000 });
    // Back to the four the next test starts from: 005 drains and leaves.
    await h.kubectlScale(4);
    await h.expectStakedSet(['001', '002', '003', '004'], { timeoutMs: 60_000 });
  });

  it.skipIf(noKubectl)(
    'kubectl scale 0 keeps a quorum of the genesis set staked, held BELOW_MINIMUM_SET, and back resumes the same chain',
    async () => {
      const { h } = devnet;
      const from = await h.height();
      const lastSeq = Math.max(0, ...(await h.actions()).map((a) => a.seq));
      const scaled = await h.kubectl([
        'scale',
        'statefulset',
        h.info.statefulSet,
        '-n',
        ns(),
        '--replicas=0',
      ]);
      expect(scaled.code, scaled.stderr).toBe(0);
      for (const id of ['001', '002', '003'])
        await h.waitForValidator(
          id,
          (r) => r.phase === 'held' && r.reason.startsWith('BELOW_MINIMUM_SET'),
          'held below the minimum set',
          { drive: false, timeoutMs: 30_000 },
        );
      // Before: every validator was unstaked in one block and the chain stopped for good.
      const unstakes = (await h.actions()).filter((a) => a.kind === 'unstake' && a.seq > lastSeq);
      expect(unstakes.map((a) => a.validatorId).filter((id) => id !== '004')).toEqual([]);
      const mempool = await h.mempool();
      expect(mempool.filter((t) => t.id !== '004')).toEqual([]);
      expect((await txsSince(from)).filter((t) => !t.startsWith('004'))).toEqual([]);
      // Pods back (their data on their claims): the chain resumes at its height, the same chain.
      const back = await h.kubectl([
        'scale',
        'statefulset',
        h.info.statefulSet,
        '-n',
        ns(),
        '--replicas=4',
      ]);
      expect(back.code, back.stderr).toBe(0);
      await h.expectStakedSet(['001', '002', '003', '004'], { timeoutMs: 120_000 });
      await h.expectChainProgress(3, 30_000);
      expect(await h.forks()).toEqual([]);
      expect((await h.committedTransactions()).filter((t) => t.resultCode !== 0)).toEqual([]);
    },
  );
});
