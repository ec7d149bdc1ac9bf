// Conformance checks 3, 4, 21, 22, 23 and 27: the StatefulSet controller, the simulated
// kubelet and garbage collection, seen through client-node informers and kubectl; plus the
// Deployment controller.

import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  makeInformer,
  PatchStrategy,
  setHeaderOptions,
  Watch,
  type V1Pod,
} from '@kubernetes/client-node';
import { describe, expect, it, onTestFinished } from 'vitest';
import { isGone, startHarness, statefulSet, type Harness } from './harness.ts';
import { waitFor } from '../../src/harness/wait.ts';
import { noKubectl } from '../support/kubectl-gate.ts';

function isReady(pod: V1Pod | undefined): boolean {
  return pod?.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true;
}

function podInformer(h: Harness, labelSelector: string) {
  const informer = makeInformer(
    h.kc,
    '/api/v1/namespaces/default/pods',
    () => h.core.listNamespacedPod({ namespace: 'default', labelSelector }),
    labelSelector,
  );
  onTestFinished(() => informer.stop());
  return informer;
}

async function podNames(h: Harness, labelSelector: string): Promise<string[]> {
  const list = await h.core.listNamespacedPod({ namespace: 'default', labelSelector });
  return list.items.map((pod) => pod.metadata?.name ?? '').sort();
}

describe('StatefulSet controller', () => {
  it('creates web-0..2 in order, each only after the previous one is Ready (check 3)', async () => {
    const h = await startHarness({ kubelet: { mode: 'simulated', pendingMs: 30, readyMs: 30 } });
    const informer = podInformer(h, 'app=web');
    const added: { name: string; previousReady: boolean; rv: number; created: number }[] = [];
    informer.on('add', (pod) => {
      const name = pod.metadata?.name ?? '';
      const ordinal = Number(name.split('-').pop());
      const previous = informer.get(`web-${ordinal - 1}`, 'default');
      added.push({
        name,
        previousReady: ordinal === 0 || isReady(previous),
        rv: Number(pod.metadata?.resourceVersion),
        // Watch events carry the raw JSON, so the timestamp is a string here.
        created: Date.parse(String(pod.metadata?.creationTimestamp)),
      });
    });
    await informer.start();
    await h.apps.createNamespacedStatefulSet({
      namespace: 'default',
      body: statefulSet({ name: 'web', replicas: 3 }),
    });
    await waitFor(() => informer.list('default').filter(isReady).length === 3, {
      what: 'three ready pods',
    });
    expect(added.map((a) => a.name)).toEqual(['web-0', 'web-1', 'web-2']);
    expect(added.every((a) => a.previousReady)).toBe(true);
    expect(added.map((a) => a.rv)).toEqual([...added.map((a) => a.rv)].sort((a, b) => a - b));
    expect(added[0]!.created).toBeLessThanOrEqual(added[2]!.created);
    const pod = informer.get('web-1', 'default');
    expect(pod?.metadata?.labels).toMatchObject({
      'apps.kubernetes.io/pod-index': '1',
      'statefulset.kubernetes.io/pod-name': 'web-1',
    });
    expect(pod?.metadata?.ownerReferences?.[0]).toMatchObject({
      kind: 'StatefulSet',
      name: 'web',
      controller: true,
    });
    expect(pod?.spec?.hostname).toBe('web-1');
  });

  it.skipIf(noKubectl)(
    'scales down from the highest ordinal, each pod MODIFIED with a deletionTimestamp and then DELETED (check 4)',
    async () => {
      const h = await startHarness({
        kubelet: { mode: 'simulated', pendingMs: 0, readyMs: 0, terminationMs: 80 },
      });
      await h.apps.createNamespacedStatefulSet({
        namespace: 'default',
        body: statefulSet({ name: 'web', replicas: 3 }),
      });
      await waitFor(
        async () =>
          (await h.apps.readNamespacedStatefulSet({ name: 'web', namespace: 'default' })).status
            ?.readyReplicas === 3,
      );
      const seen: string[] = [];
      const controller = await new Watch(h.kc).watch(
        '/api/v1/namespaces/default/pods',
        { labelSelector: 'app=web' },
        (type: string, pod: V1Pod) => {
          if (type === 'DELETED') seen.push(`DELETED ${pod.metadata?.name ?? ''}`);
          else if (type === 'MODIFIED' && pod.metadata?.deletionTimestamp !== undefined)
            seen.push(`TERMINATING ${pod.metadata.name ?? ''}`);
        },
        () => undefined,
      );
      onTestFinished(() => controller.abort());
      const scaled = await h.kubectl(['scale', 'sts', 'web', '--replicas=1']);
      expect(scaled.stdout).toContain('statefulset.apps/web scaled');
      await waitFor(() => seen.includes('DELETED web-1'), { what: 'web-1 to be deleted' });
      const firstOf = (entry: string) => seen.indexOf(entry);
      expect(firstOf('TERMINATING web-2')).toBeGreaterThanOrEqual(0);
      expect(firstOf('TERMINATING web-2')).toBeLessThan(firstOf('DELETED web-2'));
      expect(firstOf('DELETED web-2')).toBeLessThan(firstOf('TERMINATING web-1'));
      expect(firstOf('TERMINATING web-1')).toBeLessThan(firstOf('DELETED web-1'));
      expect(await podNames(h, 'app=web')).toEqual(['web-0']);
    },
  );

  it.skipIf(noKubectl)(
    'lets kubectl delete pod return once the pod is gone, then recreates it with a new uid (check 21)',
    async () => {
      const h = await startHarness({
        kubelet: { mode: 'simulated', pendingMs: 0, readyMs: 0, terminationMs: 200 },
      });
      await h.apps.createNamespacedStatefulSet({
        namespace: 'default',
        body: statefulSet({ name: 'web', replicas: 2 }),
      });
      await waitFor(
        async () =>
          (await h.apps.readNamespacedStatefulSet({ name: 'web', namespace: 'default' })).status
            ?.readyReplicas === 2,
      );
      const before = await h.core.readNamespacedPod({ name: 'web-1', namespace: 'default' });
      const deleted = await h.kubectl(['delete', 'pod', 'web-1']);
      expect(deleted.code).toBe(0);
      expect(deleted.stdout).toContain('pod "web-1" deleted');
      const after = await waitFor(
        async () => {
          const pod = await h.core.readNamespacedPod({ name: 'web-1', namespace: 'default' });
          return pod.metadata?.uid !== before.metadata?.uid && pod;
        },
        { what: 'web-1 to come back' },
      );
      expect(after.metadata?.uid).not.toBe(before.metadata?.uid);
      const deleteLog = h.emulator.requestLog.filter(
        (r) => r.method === 'DELETE' && r.path.endsWith('/pods/web-1'),
      );
      expect(deleteLog).toHaveLength(1);
    },
  );

  it.skipIf(noKubectl)(
    'lets kubectl wait --for=condition=Ready succeed once the kubelet marks the pod ready (check 22)',
    async () => {
      const h = await startHarness({
        kubelet: { mode: 'simulated', pendingMs: 100, readyMs: 300 },
      });
      await h.apps.createNamespacedStatefulSet({
        namespace: 'default',
        body: statefulSet({ name: 'web', replicas: 1 }),
      });
      await waitFor(() => h.core.readNamespacedPod({ name: 'web-0', namespace: 'default' }), {
        what: 'web-0 to exist',
      });
      const waited = await h.kubectl([
        'wait',
        '--for=condition=Ready',
        'pod/web-0',
        '--timeout=10s',
      ]);
      expect(waited.code).toBe(0);
      expect(waited.stdout).toContain('pod/web-0 condition met');
      expect(isReady(await h.core.readNamespacedPod({ name: 'web-0', namespace: 'default' }))).toBe(
        true,
      );
    },
  );

  it.skipIf(noKubectl)(
    'lets kubectl rollout status finish when readyReplicas == replicas and observedGeneration == generation (check 23)',
    async () => {
      const h = await startHarness({ kubelet: { mode: 'simulated', pendingMs: 50, readyMs: 100 } });
      await h.apps.createNamespacedStatefulSet({
        namespace: 'default',
        body: statefulSet({ name: 'web', replicas: 3 }),
      });
      const rollout = await h.kubectl(['rollout', 'status', 'sts/web', '--timeout=20s']);
      expect(rollout.code).toBe(0);
      expect(rollout.stdout).toContain('roll out complete: 3 new pods have been updated');
      const sts = await h.apps.readNamespacedStatefulSet({ name: 'web', namespace: 'default' });
      expect(sts.status).toMatchObject({
        replicas: 3,
        readyReplicas: 3,
        currentReplicas: 3,
        updatedReplicas: 3,
        availableReplicas: 3,
      });
      expect(sts.status?.observedGeneration).toBe(sts.metadata?.generation);
      expect(sts.status?.currentRevision).toBe(sts.status?.updateRevision);
    },
  );

  it.skipIf(noKubectl)(
    'prints kubectl get tables with the real columns (server-side printing)',
    async () => {
      const h = await startHarness({ kubelet: { mode: 'simulated', pendingMs: 0, readyMs: 0 } });
      await h.apps.createNamespacedStatefulSet({
        namespace: 'default',
        body: statefulSet({ name: 'web', replicas: 2 }),
      });
      expect((await h.kubectl(['rollout', 'status', 'sts/web', '--timeout=20s'])).code).toBe(0);
      const pods = await h.kubectl(['get', 'pods', '-o', 'wide']);
      const lines = pods.stdout.trim().split('\n');
      expect(lines[0]?.split(/\s{2,}/)).toEqual([
        'NAME',
        'READY',
        'STATUS',
        'RESTARTS',
        'AGE',
        'IP',
        'NODE',
        'NOMINATED NODE',
        'READINESS GATES',
      ]);
      expect(lines[1]).toMatch(
        /^web-0\s+1\/1\s+Running\s+0\s+\d+s\s+10\.244\.\d+\.\d+\s+kube-emulator\s+<none>\s+<none>$/,
      );
      const sets = await h.kubectl(['get', 'sts']);
      expect(sets.stdout).toMatch(/^NAME\s+READY\s+AGE\nweb\s+2\/2\s+\d+s\n$/);
    },
  );

  it('garbage-collects pods with Background deletion and orphans them, without owner references, with Orphan (check 27)', async () => {
    const h = await startHarness({
      kubelet: { mode: 'simulated', pendingMs: 0, readyMs: 0, terminationMs: 20 },
    });
    for (const name of ['bg', 'or']) {
      await h.apps.createNamespacedStatefulSet({
        namespace: 'default',
        body: statefulSet({ name, replicas: 2, podManagementPolicy: 'Parallel' }),
      });
    }
    await waitFor(async () => (await podNames(h, 'app in (bg,or)')).length === 4);
    await h.apps.deleteNamespacedStatefulSet({
      name: 'bg',
      namespace: 'default',
      propagationPolicy: 'Background',
    });
    await waitFor(async () => (await podNames(h, 'app=bg')).length === 0, {
      what: 'bg pods to be collected',
    });
    await h.apps.deleteNamespacedStatefulSet({
      name: 'or',
      namespace: 'default',
      propagationPolicy: 'Orphan',
    });
    await waitFor(() =>
      isGone(() => h.apps.readNamespacedStatefulSet({ name: 'or', namespace: 'default' })),
    );
    const orphans = await h.core.listNamespacedPod({
      namespace: 'default',
      labelSelector: 'app=or',
    });
    expect(orphans.items.map((p) => p.metadata?.name).sort()).toEqual(['or-0', 'or-1']);
    expect(orphans.items.every((p) => p.metadata?.ownerReferences === undefined)).toBe(true);
  });

  it('with Foreground deletion keeps the StatefulSet until its pods are gone', async () => {
    const h = await startHarness({
      kubelet: { mode: 'simulated', pendingMs: 0, readyMs: 0, terminationMs: 100 },
    });
    await h.apps.createNamespacedStatefulSet({
      namespace: 'default',
      body: statefulSet({ name: 'fg', replicas: 2, podManagementPolicy: 'Parallel' }),
    });
    await waitFor(async () => (await podNames(h, 'app=fg')).length === 2);
    await h.apps.deleteNamespacedStatefulSet({
      name: 'fg',
      namespace: 'default',
      propagationPolicy: 'Foreground',
    });
    const owner = await h.apps.readNamespacedStatefulSet({ name: 'fg', namespace: 'default' });
    expect(owner.metadata?.deletionTimestamp).toBeInstanceOf(Date);
    expect(owner.metadata?.finalizers).toContain('foregroundDeletion');
    await waitFor(
      () => isGone(() => h.apps.readNamespacedStatefulSet({ name: 'fg', namespace: 'default' })),
      { what: 'the owner to go' },
    );
    expect(await podNames(h, 'app=fg')).toEqual([]);
  });

  it('creates every pod at once under Parallel, where OrderedReady waits for the first', async () => {
    // No kubelet: no pod ever becomes Ready, so only the policy decides how many pods exist.
    const h = await startHarness({ kubelet: false });
    for (const [name, policy] of [
      ['par', 'Parallel'],
      ['ord', 'OrderedReady'],
    ] as const) {
      await h.apps.createNamespacedStatefulSet({
        namespace: 'default',
        body: statefulSet({ name, replicas: 4, podManagementPolicy: policy }),
      });
    }
    await waitFor(async () => (await podNames(h, 'app=par')).length === 4, { what: 'four pods' });
    expect(await podNames(h, 'app=ord')).toEqual(['ord-0']);
    await h.apps.patchNamespacedStatefulSetScale(
      { name: 'par', namespace: 'default', body: { spec: { replicas: 1 } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    await waitFor(async () => (await podNames(h, 'app=par')).join() === 'par-0', {
      what: 'three pods gone at once',
    });
  });

  it('lets tests crash a pod into CrashLoopBackOff and force its readiness', async () => {
    const h = await startHarness({ kubelet: { mode: 'simulated', pendingMs: 0, readyMs: 0 } });
    await h.apps.createNamespacedStatefulSet({
      namespace: 'default',
      body: statefulSet({ name: 'par', replicas: 4, podManagementPolicy: 'Parallel' }),
    });
    await waitFor(
      async () =>
        (await h.apps.readNamespacedStatefulSet({ name: 'par', namespace: 'default' })).status
          ?.readyReplicas === 4,
    );
    h.emulator.kubelet.crash('default', 'par-2');
    const crashed = await h.core.readNamespacedPod({ name: 'par-2', namespace: 'default' });
    expect(crashed.status?.containerStatuses?.[0]).toMatchObject({
      restartCount: 1,
      ready: false,
      state: { waiting: { reason: 'CrashLoopBackOff' } },
    });
    h.emulator.kubelet.setReady('default', 'par-2', true);
    expect(isReady(await h.core.readNamespacedPod({ name: 'par-2', namespace: 'default' }))).toBe(
      true,
    );
    h.emulator.kubelet.setReady('default', 'par-1', false);
    await waitFor(
      async () =>
        (await h.apps.readNamespacedStatefulSet({ name: 'par', namespace: 'default' })).status
          ?.readyReplicas === 3,
    );
  });
});

describe('Deployment controller', () => {
  it.skipIf(noKubectl)(
    'runs pods named <deploy>-<hash>-<suffix> and lets kubectl rollout status finish',
    async () => {
      const h = await startHarness({ kubelet: { mode: 'simulated', pendingMs: 20, readyMs: 50 } });
      const manifest = {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'api', namespace: 'default' },
        spec: {
          replicas: 2,
          selector: { matchLabels: { app: 'api' } },
          template: {
            metadata: { labels: { app: 'api' } },
            spec: { containers: [{ name: 'c', image: 'api:1' }] },
          },
        },
      };
      const file = join(h.emulator.dir, 'deploy.json');
      await writeFile(file, JSON.stringify(manifest));
      expect((await h.kubectl(['apply', '-f', file])).code).toBe(0);
      const rollout = await h.kubectl(['rollout', 'status', 'deployment/api', '--timeout=20s']);
      expect(rollout.code).toBe(0);
      expect(rollout.stdout).toContain('deployment "api" successfully rolled out');
      const pods = await h.core.listNamespacedPod({
        namespace: 'default',
        labelSelector: 'app=api',
      });
      expect(pods.items).toHaveLength(2);
      for (const pod of pods.items) {
        const hash = pod.metadata?.labels?.['pod-template-hash'] ?? '';
        expect(pod.metadata?.name).toMatch(
          new RegExp(`^api-${hash}-[bcdfghjklmnpqrstvwxz2456789]{5}$`),
        );
      }
      manifest.spec.template.spec.containers[0]!.image = 'api:2';
      await writeFile(file, JSON.stringify(manifest));
      expect((await h.kubectl(['apply', '-f', file])).code).toBe(0);
      expect((await h.kubectl(['rollout', 'status', 'deployment/api', '--timeout=20s'])).code).toBe(
        0,
      );
      await waitFor(
        async () => {
          const list = await h.core.listNamespacedPod({
            namespace: 'default',
            labelSelector: 'app=api',
          });
          return (
            list.items.length === 2 &&
            list.items.every((p) => p.spec?.containers[0]?.image === 'api:2')
          );
        },
        { what: 'the old pods to be replaced' },
      );
    },
  );
});
