// Conformance checks 19, 20 and 24: kubectl apply (client side and server side) and Events in
// kubectl describe.

import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { V1MicroTime } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { startHarness, statefulSet } from './harness.ts';
import { waitFor } from '../../src/harness/wait.ts';
import { noKubectl } from '../support/kubectl-gate.ts';

function twoContainers() {
  const manifest = statefulSet({ name: 'web', replicas: 1 });
  manifest.spec.template.spec.containers.push({ name: 'side', image: 'busybox:1.36' });
  return manifest;
}

describe('kubectl apply', () => {
  it.skipIf(noKubectl)(
    'applies twice, dropping a container the second time; the stored object has no directive keys (check 19)',
    async () => {
      const harness = await startHarness({ kubelet: false });
      const file = join(harness.emulator.dir, 'sts.json');
      const manifest = twoContainers();
      await writeFile(file, JSON.stringify(manifest));
      const first = await harness.kubectl(['apply', '--validate=false', '-f', file]);
      expect(first.stdout).toContain('statefulset.apps/web created');
      manifest.spec.template.spec.containers = manifest.spec.template.spec.containers.filter(
        (c) => c.name !== 'side',
      );
      manifest.spec.template.spec.containers[0]!.image = 'busybox:1.37';
      await writeFile(file, JSON.stringify(manifest));
      const second = await harness.kubectl(['apply', '--validate=false', '-f', file]);
      expect(second.stdout).toContain('statefulset.apps/web configured');
      expect(
        harness.emulator.requestLog.some(
          (r) => r.method === 'PATCH' && r.path.endsWith('/statefulsets/web'),
        ),
      ).toBe(true);
      const sts = await harness.apps.readNamespacedStatefulSet({
        name: 'web',
        namespace: 'default',
      });
      expect(sts.spec?.template.spec?.containers.map((c) => c.name)).toEqual(['main']);
      expect(sts.spec?.template.spec?.containers[0]?.image).toBe('busybox:1.37');
      expect(sts.metadata?.generation).toBe(2);
      const raw = JSON.stringify(harness.emulator.store.list('apps/statefulsets'));
      expect(raw).not.toContain('$setElementOrder');
      expect(raw).not.toContain('$patch');
    },
  );

  it.skipIf(noKubectl)(
    'works without --validate=false: the OpenAPI documents say the server validates fields',
    async () => {
      const harness = await startHarness({ kubelet: false });
      const file = join(harness.emulator.dir, 'sts.json');
      await writeFile(file, JSON.stringify(twoContainers()));
      const applied = await harness.kubectl(['apply', '-f', file]);
      expect(applied.code).toBe(0);
      expect(applied.stdout).toContain('statefulset.apps/web created');
    },
  );

  it.skipIf(noKubectl)(
    'creates with kubectl apply --server-side and updates on a second run (check 20)',
    async () => {
      const harness = await startHarness({ kubelet: false });
      const file = join(harness.emulator.dir, 'sts.json');
      const manifest = twoContainers();
      await writeFile(file, JSON.stringify(manifest));
      const first = await harness.kubectl([
        'apply',
        '--server-side',
        '--validate=false',
        '-f',
        file,
      ]);
      expect(first.code).toBe(0);
      expect(first.stdout).toContain('serverside-applied');
      manifest.spec.replicas = 4;
      await writeFile(file, JSON.stringify(manifest));
      const second = await harness.kubectl([
        'apply',
        '--server-side',
        '--validate=false',
        '-f',
        file,
      ]);
      expect(second.code).toBe(0);
      const sts = await harness.apps.readNamespacedStatefulSet({
        name: 'web',
        namespace: 'default',
      });
      expect(sts.spec?.replicas).toBe(4);
      expect(sts.spec?.template.spec?.containers).toHaveLength(2);
    },
  );
});

describe('events', () => {
  it.skipIf(noKubectl)(
    'shows a core/v1 Event (with involvedObject.uid) in kubectl describe and in a field-selected get (check 24)',
    async () => {
      const h = await startHarness({ kubelet: { mode: 'simulated', pendingMs: 0, readyMs: 0 } });
      await h.apps.createNamespacedStatefulSet({
        namespace: 'default',
        body: statefulSet({ name: 'web', replicas: 1 }),
      });
      const pod = await waitFor(() =>
        h.core.readNamespacedPod({ name: 'web-0', namespace: 'default' }),
      );
      await h.core.createNamespacedEvent({
        namespace: 'default',
        body: {
          metadata: { generateName: 'web-0.' },
          involvedObject: {
            kind: 'Pod',
            namespace: 'default',
            name: 'web-0',
            uid: pod.metadata?.uid ?? '',
            apiVersion: 'v1',
          },
          reason: 'Staked',
          message: 'validator 001 staked',
          type: 'Normal',
          source: { component: 'cluster-manager' },
          firstTimestamp: new Date(),
          lastTimestamp: new Date(),
          count: 1,
        },
      });
      await h.events.createNamespacedEvent({
        namespace: 'default',
        body: {
          metadata: { generateName: 'web-0.' },
          regarding: {
            kind: 'Pod',
            namespace: 'default',
            name: 'web-0',
            uid: pod.metadata?.uid ?? '',
            apiVersion: 'v1',
          },
          reason: 'Synced',
          note: 'node caught up',
          type: 'Normal',
          action: 'Sync',
          reportingController: 'cluster-manager',
          reportingInstance: 'cm-1',
          eventTime: new V1MicroTime(),
        },
      });
      const described = await h.kubectl(['describe', 'pod', 'web-0']);
      expect(described.code).toBe(0);
      expect(described.stdout).toMatch(/Normal\s+Staked\s+.*validator 001 staked/);
      expect(described.stdout).toMatch(/Synced\s+.*node caught up/);
      const listed = await h.kubectl([
        'get',
        'events',
        '--field-selector',
        'involvedObject.name=web-0',
        '-o',
        'json',
      ]);
      const items = (JSON.parse(listed.stdout) as { items: { reason: string }[] }).items;
      // Beside the two written here, the scheduler's and the kubelet's (as on a real node).
      expect(items.map((e) => e.reason).sort()).toEqual([
        'Created',
        'Pulled',
        'Scheduled',
        'Staked',
        'Started',
        'Synced',
      ]);
      const newStyle = await h.events.listNamespacedEvent({ namespace: 'default' });
      expect(newStyle.items.find((e) => e.reason === 'Staked')?.note).toBe('validator 001 staked');
    },
  );
});
