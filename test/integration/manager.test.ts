// Issue A, the manager's acceptance over HTTP against the emulator, with real localnet nodes and
// the manual pacemaker: genesis untouched, 4 → 6 → 4, pod churn, the node sync check, hold, pause,
// unmanaged validators, keys added later or malformed, and no key anywhere in logs or argv.
// One devnet for the whole file; each test starts from where the previous one left the chain.
import { describe, expect, it } from 'vitest';
import { PatchStrategy, setHeaderOptions, type CoreV1Event } from '@kubernetes/client-node';
import { pending, waitFor } from '../../src/harness/index.ts';
import { useDevnet } from './support.ts';
import { noKubectl } from '../support/kubectl-gate.ts';

// A staked validator's node keeps voting for up to its drain (20 s by default) after SIGTERM,
// until it leaves the active set (test/localnet/shutdown-drain.test.ts). Here a deleted pod's
// validator stays staked (a restart, not a departure), so the old pod waited the whole drain
// before the StatefulSet could recreate it: 2 s is enough to prove the restart is not an unstake.
const devnet = useDevnet('manager', { nodeShutdownDrainMs: 2_000 });

/** Pod Ready transition time of validator `id` (from the API server). */
async function readySince(id: string): Promise<number> {
  const pod = await devnet.h.core.readNamespacedPod({
    name: devnet.h.podOf(id),
    namespace: devnet.h.info.namespace,
  });
  const ready = pod.status?.conditions?.find((c) => c.type === 'Ready' && c.status === 'True');
  if (ready?.lastTransitionTime === undefined) throw new Error(`pod of ${id} is not Ready`);
  return new Date(ready.lastTransitionTime).getTime();
}

async function podUid(id: string): Promise<string | undefined> {
  const pod = await devnet.h.core
    .readNamespacedPod({ name: devnet.h.podOf(id), namespace: devnet.h.info.namespace })
    .catch(() => undefined);
  return pod?.metadata?.uid;
}

/** Commits `n` blocks (manual pacemaker). */
async function blocks(n: number): Promise<void> {
  for (let i = 0; i < n; i++) await devnet.h.triggerView();
}

/** Counts of committed stakes and unstakes per id. */
async function counts(): Promise<Map<string, { stakes: number; unstakes: number }>> {
  return devnet.h.ledger.counts();
}

async function keyEvents(): Promise<CoreV1Event[]> {
  const list = await devnet.h.core.listNamespacedEvent({ namespace: devnet.h.info.namespace });
  return list.items.filter((e) => e.involvedObject.kind === 'Secret' && e.reason === 'KeyInvalid');
}

describe('the manager over HTTP, manual pacemaker, RPC mode', { timeout: 90_000 }, () => {
  it('sends no transaction while the 4 genesis validators are Ready', async () => {
    const { h } = devnet;
    await blocks(3);
    for (const id of ['001', '002', '003', '004'])
      await h.waitForValidator(id, (row) => row.phase === 'active', 'active', { drive: true });
    await blocks(2);
    expect(await h.actions()).toEqual([]);
    expect(await h.committedTransactions()).toEqual([]);
    expect((await h.manager<{ actions: unknown[] }>('/v1/plan')).actions).toEqual([]);
  });

  it('scale 4 → 6 stakes 005 and 006 once each, after their pods are Ready, and they sign blocks', async () => {
    const { h } = devnet;
    const answer = await h.scaleTo(6, { wait: 'active', timeoutSeconds: 60 });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ done: true, previous: 4, replicas: 6, missing: [] });
    const actions = await h.actions();
    const committed = await h.committedTransactions();
    for (const id of ['005', '006']) {
      const stakes = committed.filter((t) => t.id === id && t.type === 'MessageStake');
      expect(stakes, `stakes of ${id}`).toHaveLength(1);
      expect(stakes[0]?.resultCode).toBe(0);
      const action = actions.find((a) => a.validatorId === id && a.kind === 'stake');
      // Kubernetes times have whole seconds: the stake was prepared no earlier than that second.
      expect(new Date(action?.createdAt ?? 0).getTime()).toBeGreaterThanOrEqual(
        Math.floor((await readySince(id)) / 1000) * 1000,
      );
      expect(action).toMatchObject({ state: 'committed', attempts: 1 });
      await h.expectActive(id, { since: (stakes[0]?.height ?? 0) + 1 });
    }
    expect(await h.stakedValidators()).toEqual(['001', '002', '003', '004', '005', '006']);
  });

  it('does not unstake a validator whose pod is deleted and recreated, or unready for a while', async () => {
    const { h } = devnet;
    const before = await counts();
    const uid = await podUid('006');
    await h.core.deleteNamespacedPod({ name: h.podOf('006'), namespace: h.info.namespace });
    h.kubelet.setReady(h.info.namespace, h.podOf('005'), false);
    await h.waitForValidator('005', (row) => !row.ready, 'seen unready by the manager');
    await waitFor(
      async () => {
        const now = await podUid('006');
        return (now !== undefined && now !== uid) || pending(`pod uid ${now ?? 'none'}`);
      },
      { what: 'the StatefulSet to recreate the pod of 006', timeoutMs: 30_000 },
    );
    await h.waitForValidator('006', (row) => row.ready, 'Ready again', { timeoutMs: 30_000 });
    // Unready for longer than the debounce, while blocks commit.
    await blocks(3);
    h.kubelet.setReady(h.info.namespace, h.podOf('005'), true);
    await h.waitForValidator('005', (row) => row.ready && row.phase === 'active', 'active again', {
      drive: true,
    });
    const since = await h.height();
    await h.expectActive('006', { since: since + 1 });
    expect(await counts()).toEqual(before);
    expect((await h.actions()).filter((a) => a.kind === 'unstake')).toEqual([]);
    expect(await h.stakedValidators()).toEqual(['001', '002', '003', '004', '005', '006']);
  });

  it('scale 6 → 4 unstakes 005 and 006 once each, and they leave the set', async () => {
    const { h } = devnet;
    const answer = await h.scaleTo(4, { wait: 'active', timeoutSeconds: 60 });
    expect(answer.body).toMatchObject({ done: true, drained: ['005', '006'], missing: [] });
    for (const id of ['005', '006']) await h.expectInactive(id);
    const all = await counts();
    expect(all.get('005')).toEqual({ stakes: 1, unstakes: 1 });
    expect(all.get('006')).toEqual({ stakes: 1, unstakes: 1 });
    await h.expectChainProgress(2, 20_000);
    expect(await h.stakedValidators()).toEqual(['001', '002', '003', '004']);
  });

  it('waits for a Ready pod whose node does not answer, and stakes it once the node is synced', async () => {
    const { h } = devnet;
    await h.kubectlScale(5);
    // Freeze the node process the moment it exists (before it can answer anything), and force the
    // pod Ready: the manager must ask the node itself, not trust readiness.
    const pid = await waitFor(() => h.nodePid('005'), {
      what: 'the node process of 005',
      timeoutMs: 20_000,
      intervalMs: 10,
    });
    process.kill(pid, 'SIGSTOP');
    try {
      h.kubelet.setReady(h.info.namespace, h.podOf('005'), true);
      await h.waitForValidator(
        '005',
        (row) => row.ready && row.waitingFor === 'node-sync',
        'waiting for its node',
      );
      await blocks(3);
      const row = await h.validator('005');
      expect(row).toMatchObject({ phase: 'pending', waitingFor: 'node-sync' });
      expect((await counts()).get('005')).toEqual({ stakes: 1, unstakes: 1 });
    } finally {
      process.kill(pid, 'SIGCONT');
    }
    await waitFor(
      async () => {
        const n = (await counts()).get('005')?.stakes ?? 0;
        if (n === 2) return true;
        await h.triggerView();
        return pending(`${n} stakes of 005 at height ${await h.height()}`);
      },
      { what: '005 to be staked again', timeoutMs: 30_000 },
    );
    const stake = (await h.committedTransactions()).filter(
      (t) => t.id === '005' && t.type === 'MessageStake',
    );
    await h.expectActive('005', { since: (stake.at(-1)?.height ?? 0) + 1 });
  });

  it('does nothing while paused or for a held pod, reports both, and acts once both are lifted', async () => {
    const { h } = devnet;
    expect((await h.post('/v1/pause', {})).status).toBe(200);
    await h.kubectlScale(6);
    await h.waitForValidator(
      '006',
      (row) => row.ready && row.waitingFor === 'paused',
      'Ready but paused',
      { timeoutMs: 30_000 },
    );
    await blocks(2);
    expect((await h.manager<{ paused: boolean }>('/readyz')).paused).toBe(true);
    expect((await h.validator('006'))?.reason).toMatch(/paused/);
    await h.annotatePod('006', { 'cluster-manager.dev/hold': 'true' });
    await h.waitForValidator('006', (row) => row.phase === 'held', 'held');
    expect((await h.post('/v1/resume', {})).status).toBe(200);
    await blocks(2);
    expect(await h.validator('006')).toMatchObject({ phase: 'held', pendingAction: null });
    expect((await counts()).get('006')).toEqual({ stakes: 1, unstakes: 1 });

    await h.annotatePod('006', { 'cluster-manager.dev/hold': null });
    const height = await h.height();
    await h.expectActive('006', { since: height + 1 });
    expect((await counts()).get('006')).toEqual({ stakes: 2, unstakes: 1 });
  });

  it('a key removed under a staked validator: kept staked while wanted, unstaked with the old key held in memory once not wanted (S11); added back, used without a restart', async () => {
    const { h } = devnet;
    const keys = await h.privateKeys();
    await h.patchKeys({ '006': null });
    await blocks(3);
    // Still wanted: its node still votes with the key it started with; nothing is sent.
    expect(await h.stakedValidators()).toContain('006');
    expect((await counts()).get('006')).toEqual({ stakes: 2, unstakes: 1 });
    await h.kubectlScale(5);
    // Not wanted any more: its old address leaves with the key the manager held (decision-rule.md
    // S11), before its pod goes; the Secret never had to give it back.
    await waitFor(
      async () => {
        if (!(await h.stakedValidators()).includes('006')) return true;
        await h.triggerView();
        return pending(`006 still staked at height ${await h.height()}`);
      },
      { what: '006 to be unstaked with its held key', timeoutMs: 30_000 },
    );
    await h.patchKeys({ '006': keys.get('006') ?? '' });
    await h.expectInactive('006');
    await blocks(2);
    expect((await counts()).get('006')).toEqual({ stakes: 2, unstakes: 2 });
  });

  it.skipIf(noKubectl)(
    'reports a missing and a malformed key (one KeyInvalid Event on the Secret) while the others carry on',
    async () => {
      const { h } = devnet;
      const keys = await h.privateKeys();
      const key007 = keys.get('007') ?? '';
      const malformed = (keys.get('008') ?? '').slice(0, 126);
      await h.patchKeys({ '007': null, '008': malformed });
      await h.kubectlScale(8);
      await h.waitForValidator(
        '007',
        (row) => row.phase === 'failed' && row.reason.startsWith('KEY_MISSING'),
        'failed for its missing key',
        { timeoutMs: 30_000 },
      );
      await h.waitForValidator(
        '008',
        (row) => row.phase === 'failed' && row.reason.startsWith('KEY_INVALID'),
        'failed for its malformed key',
        { timeoutMs: 30_000 },
      );
      // 006 is wanted again and carries on.
      const height = await h.height();
      await h.expectActive('006', { since: height + 1 });

      const events = await waitFor(async () => {
        const found = await keyEvents();
        return found.length > 0 && found;
      });
      expect(events).toHaveLength(1);
      expect(events[0]).toMatchObject({ type: 'Warning', count: 1 });
      expect(events[0]?.message).toContain('"008"');
      // An unrelated change of the Secret and more reconciles do not repeat it.
      await h.core.patchNamespacedSecret(
        {
          name: 'validators-private-keys',
          namespace: h.info.namespace,
          body: { metadata: { labels: { touched: 'yes' } } },
        },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
      await blocks(2);
      const again = await keyEvents();
      expect(again).toHaveLength(1);
      expect(again[0]?.count).toBe(1);
      // kubectl 1.32 shows an object's Events with `kubectl events --for` (its `describe secret`
      // prints no Events section).
      const shown = await h.kubectl(['events', '--for', 'secret/validators-private-keys']);
      expect(shown.stdout).toMatch(/Warning\s+KeyInvalid\s+Secret\/validators-private-keys/);

      // The node of 007 could not start without its key either; the emulator's kubelet (unlike a
      // real one) does not refresh a mounted Secret, so its pod is recreated. The manager is not.
      await h.patchKeys({ '007': key007 });
      await h.core.deleteNamespacedPod({ name: h.podOf('007'), namespace: h.info.namespace });
      const at = await h.height();
      await h.expectActive('007', { since: at + 1 });
      const all = await counts();
      expect(all.get('007')).toEqual({ stakes: 1, unstakes: 0 });
      expect(all.get('008')).toBeUndefined();
      expect(await h.stakedValidators()).toEqual(['001', '002', '003', '004', '005', '006', '007']);
    },
  );
});
