// Rollout history for StatefulSets (ControllerRevisions) and Deployments (ReplicaSets):
// revisions, the pods' hash labels, `kubectl rollout history|undo`, history limits, and the
// ReplicaSet controller between a Deployment and its pods.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { waitFor } from '../../src/harness/wait.ts';
import { noKubectl } from '../support/kubectl-gate.ts';
import { isGone, startHarness, statefulSet, type Harness } from './harness.ts';

const fast = { mode: 'simulated', pendingMs: 10, readyMs: 20, terminationMs: 10 } as const;

async function rolledOut(h: Harness, what: string): Promise<void> {
  const status = await h.kubectl(['rollout', 'status', what, '--timeout=30s'], {
    timeoutMs: 40_000,
  });
  expect(status.code, status.stderr).toBe(0);
}

function deployment(image: string, extra: Record<string, unknown> = {}) {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'api', namespace: 'default' },
    spec: {
      replicas: 3,
      revisionHistoryLimit: 2,
      selector: { matchLabels: { app: 'api' } },
      template: {
        metadata: { labels: { app: 'api' } },
        spec: { containers: [{ name: 'c', image }] },
      },
      ...extra,
    },
  };
}

async function replicaSets(h: Harness) {
  return (await h.apps.listNamespacedReplicaSet({ namespace: 'default' })).items;
}

describe.skipIf(noKubectl)('Deployment rollouts', () => {
  it('runs pods through ReplicaSets with revisions; history, undo to a reused ReplicaSet, a skipped undo', async () => {
    const h = await startHarness({ kubelet: fast });
    const file = join(h.emulator.dir, 'deploy.json');
    await writeFile(file, JSON.stringify(deployment('api:1')));
    expect((await h.kubectl(['apply', '-f', file])).code).toBe(0);
    await rolledOut(h, 'deployment/api');
    const [first] = await replicaSets(h);
    const hash = first?.metadata?.labels?.['pod-template-hash'] ?? '';
    expect(first?.metadata?.name).toBe(`api-${hash}`);
    expect(first?.metadata?.annotations).toMatchObject({
      'deployment.kubernetes.io/revision': '1',
      'deployment.kubernetes.io/desired-replicas': '3',
      'deployment.kubernetes.io/max-replicas': '4',
    });
    expect(first?.spec?.selector.matchLabels).toEqual({ app: 'api', 'pod-template-hash': hash });
    const pods = await h.core.listNamespacedPod({ namespace: 'default', labelSelector: 'app=api' });
    expect(pods.items).toHaveLength(3);
    for (const pod of pods.items) {
      expect(pod.metadata?.ownerReferences?.[0]).toMatchObject({
        kind: 'ReplicaSet',
        name: `api-${hash}`,
        controller: true,
      });
      expect(pod.metadata?.name).toMatch(
        new RegExp(`^api-${hash}-[bcdfghjklmnpqrstvwxz2456789]{5}$`),
      );
    }
    await writeFile(
      file,
      JSON.stringify({
        ...deployment('api:2'),
        metadata: {
          name: 'api',
          namespace: 'default',
          annotations: { 'kubernetes.io/change-cause': 'image api:2' },
        },
      }),
    );
    expect((await h.kubectl(['apply', '-f', file])).code).toBe(0);
    await rolledOut(h, 'deployment/api');
    const history = await h.kubectl(['rollout', 'history', 'deployment/api']);
    expect(history.stdout).toMatch(/REVISION\s+CHANGE-CAUSE\n1\s+<none>\n2\s+image api:2\n/);
    expect((await h.kubectl(['rollout', 'undo', 'deployment/api'])).stdout).toContain(
      'rolled back',
    );
    await rolledOut(h, 'deployment/api');
    // Revision 1's ReplicaSet is the new one again, as revision 3; no third ReplicaSet.
    const afterUndo = await replicaSets(h);
    expect(afterUndo).toHaveLength(2);
    const reused = afterUndo.find((rs) => rs.metadata?.name === `api-${hash}`);
    expect(reused?.metadata?.annotations).toMatchObject({
      'deployment.kubernetes.io/revision': '3',
      'deployment.kubernetes.io/revision-history': '1',
    });
    expect(reused?.spec?.replicas).toBe(3);
    const read = await h.apps.readNamespacedDeployment({ name: 'api', namespace: 'default' });
    expect(read.spec?.template.spec?.containers[0]?.image).toBe('api:1');
    expect(read.metadata?.annotations?.['deployment.kubernetes.io/revision']).toBe('3');
    const again = await h.kubectl(['rollout', 'undo', 'deployment/api', '--to-revision=3']);
    expect(again.stdout).toContain(
      'skipped rollback (current template already matches revision 3)',
    );
    const shown = await h.kubectl(['rollout', 'history', 'deployment/api', '--revision=2']);
    expect(shown.stdout).toMatch(/Image:\s+api:2/);
  });

  it('keeps revisionHistoryLimit old ReplicaSets, collects them with the Deployment, and recreates under Recreate', async () => {
    const h = await startHarness({ kubelet: fast });
    const file = join(h.emulator.dir, 'deploy.json');
    for (const image of ['api:1', 'api:2', 'api:3', 'api:4']) {
      await writeFile(file, JSON.stringify(deployment(image, { strategy: { type: 'Recreate' } })));
      expect((await h.kubectl(['apply', '-f', file])).code).toBe(0);
      await rolledOut(h, 'deployment/api');
    }
    await waitFor(async () => (await replicaSets(h)).length === 3, {
      what: 'the current ReplicaSet and two old ones',
    });
    const revisions = (await replicaSets(h))
      .map((rs) => Number(rs.metadata?.annotations?.['deployment.kubernetes.io/revision']))
      .sort();
    expect(revisions).toEqual([2, 3, 4]);
    // Recreate: each old ReplicaSet went to 0 before its successor grew.
    const events = (await h.core.listNamespacedEvent({ namespace: 'default' })).items
      .filter((e) => e.reason === 'ScalingReplicaSet')
      .map((e) => e.message ?? '');
    const downTo0 = events.findIndex((m) => /^Scaled down replica set .* to 0 from 3$/.test(m));
    const upAfter = events.findIndex(
      (m, i) => i > 0 && /^Scaled up replica set .* to 3 from 0$/.test(m),
    );
    expect(downTo0).toBeGreaterThanOrEqual(0);
    expect(upAfter).toBeGreaterThan(downTo0);
    await h.apps.deleteNamespacedDeployment({ name: 'api', namespace: 'default' });
    await waitFor(async () => (await replicaSets(h)).length === 0, {
      what: 'the ReplicaSets collected',
    });
    await waitFor(
      async () =>
        (await h.core.listNamespacedPod({ namespace: 'default', labelSelector: 'app=api' })).items
          .length === 0,
      { what: 'the pods collected' },
    );
  });
});

describe.skipIf(noKubectl)('StatefulSet rollouts', () => {
  it('records a ControllerRevision per template; history and undo reuse it with the next revision', async () => {
    const h = await startHarness({ kubelet: fast });
    await h.apps.createNamespacedStatefulSet({
      namespace: 'default',
      body: statefulSet({ name: 'web', replicas: 2, image: 'busybox:1.36' }),
    });
    await rolledOut(h, 'sts/web');
    const revisions = async () =>
      (await h.apps.listNamespacedControllerRevision({ namespace: 'default' })).items;
    const [first] = await revisions();
    const set = await h.apps.readNamespacedStatefulSet({ name: 'web', namespace: 'default' });
    expect(first).toMatchObject({
      revision: 1,
      metadata: {
        name: set.status?.updateRevision,
        labels: { app: 'web' },
        ownerReferences: [{ kind: 'StatefulSet', name: 'web', controller: true }],
      },
    });
    expect(first?.metadata?.labels?.['controller.kubernetes.io/hash']).toBe(
      (first?.metadata?.name ?? '').slice('web-'.length),
    );
    const data = first?.data as { spec: { template: { $patch: string; spec: unknown } } };
    expect(data.spec.template.$patch).toBe('replace');
    const pod = await h.core.readNamespacedPod({ name: 'web-0', namespace: 'default' });
    expect(pod.metadata?.labels?.['controller-revision-hash']).toBe(first?.metadata?.name);
    expect((await h.kubectl(['set', 'image', 'sts/web', 'main=busybox:1.37'])).code).toBe(0);
    await rolledOut(h, 'sts/web');
    expect((await h.kubectl(['rollout', 'history', 'sts/web'])).stdout).toMatch(
      /REVISION\s+CHANGE-CAUSE\n1\s+<none>\n2\s+<none>\n/,
    );
    expect((await h.kubectl(['rollout', 'undo', 'sts/web'])).stdout).toContain('rolled back');
    await rolledOut(h, 'sts/web');
    const after = await revisions();
    expect(after).toHaveLength(2);
    expect(after.find((cr) => cr.metadata?.name === first?.metadata?.name)?.revision).toBe(3);
    const read = await h.apps.readNamespacedStatefulSet({ name: 'web', namespace: 'default' });
    expect(read.spec?.template.spec?.containers[0]?.image).toBe('busybox:1.36');
    expect(read.status?.updateRevision).toBe(first?.metadata?.name);
    const table = await h.kubectl(['get', 'controllerrevisions']);
    expect(table.stdout).toMatch(/^NAME\s+CONTROLLER\s+REVISION\s+AGE\n/);
    expect(table.stdout).toContain('statefulset.apps/web');
    // The history is trimmed to revisionHistoryLimit unused revisions.
    await h.apps.patchNamespacedStatefulSet({
      name: 'web',
      namespace: 'default',
      body: [{ op: 'add', path: '/spec/revisionHistoryLimit', value: 0 }],
    });
    await waitFor(async () => (await revisions()).length === 1, { what: 'old revisions deleted' });
    await h.apps.deleteNamespacedStatefulSet({ name: 'web', namespace: 'default' });
    await waitFor(async () => (await revisions()).length === 0, { what: 'revisions collected' });
    await waitFor(
      () => isGone(() => h.core.readNamespacedPod({ name: 'web-0', namespace: 'default' })),
      {
        what: 'the pods collected',
      },
    );
  });
});
