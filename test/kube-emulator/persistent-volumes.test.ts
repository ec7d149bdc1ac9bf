// PersistentVolumeClaims from a StatefulSet's volumeClaimTemplates, as the real controller makes
// them (pkg/controller/statefulset: names, labels, retention policy, owner references), bound
// at once, protected while a pod uses them, and — in the process kubelet — a host folder per
// claim that outlives every pod of its ordinal and goes with the claim.
import { existsSync } from 'node:fs';
import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { V1PersistentVolumeClaim, V1StatefulSet } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { pending, waitFor, type Pending } from '../../src/harness/wait.ts';
import { startHarness, type Harness } from './harness.ts';
import { noKubectl } from '../support/kubectl-gate.ts';

const NS = 'default';

function statefulSet(
  replicas: number,
  extra: { policy?: { whenDeleted: string; whenScaled: string }; image?: string } = {},
): V1StatefulSet {
  return {
    metadata: { name: 'web' },
    spec: {
      replicas,
      serviceName: 'web',
      podManagementPolicy: 'Parallel',
      selector: { matchLabels: { app: 'web' } },
      ...(extra.policy === undefined ? {} : { persistentVolumeClaimRetentionPolicy: extra.policy }),
      template: {
        metadata: { labels: { app: 'web' } },
        spec: {
          terminationGracePeriodSeconds: 2,
          containers: [
            {
              name: 'main',
              image: extra.image ?? 'busybox',
              args: ['-c', 'echo "$POD_UID" >> "$DATA/runs"; exec sleep 600'],
              env: [
                { name: 'DATA', value: '/var/lib/data' },
                { name: 'POD_UID', valueFrom: { fieldRef: { fieldPath: 'metadata.uid' } } },
              ],
              volumeMounts: [{ name: 'data', mountPath: '/var/lib/data' }],
            },
          ],
          // Replaced by the claim, as the real controller does (updateStorage).
          volumes: [{ name: 'data', emptyDir: {} }],
        },
      },
      volumeClaimTemplates: [
        {
          metadata: { name: 'data', labels: { tier: 'storage' } },
          spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
        },
      ],
    },
  };
}

async function claims(h: Harness): Promise<Map<string, V1PersistentVolumeClaim>> {
  const list = await h.core.listNamespacedPersistentVolumeClaim({ namespace: NS });
  return new Map(list.items.map((claim) => [claim.metadata?.name ?? '', claim]));
}

async function podNames(h: Harness): Promise<string[]> {
  const list = await h.core.listNamespacedPod({ namespace: NS });
  return list.items
    .filter((pod) => pod.metadata?.deletionTimestamp === undefined)
    .map((pod) => pod.metadata?.name ?? '')
    .sort();
}

async function scale(h: Harness, replicas: number): Promise<void> {
  await h.apps.replaceNamespacedStatefulSetScale({
    name: 'web',
    namespace: NS,
    body: { metadata: { name: 'web', namespace: NS }, spec: { replicas } },
  });
}

function until<T>(what: string, check: () => Promise<T>): Promise<Exclude<T, Pending>> {
  return waitFor(check, { what, timeoutMs: 20_000 }) as Promise<Exclude<T, Pending>>;
}

describe('StatefulSet claims', () => {
  it.skipIf(noKubectl)(
    'creates one bound claim per template and ordinal and mounts it in the pod',
    async () => {
      const h = await startHarness();
      await h.apps.createNamespacedStatefulSet({ namespace: NS, body: statefulSet(3) });
      const found = await until('three bound claims', async () => {
        const all = await claims(h);
        const bound = [...all.values()].filter((c) => c.status?.phase === 'Bound');
        return bound.length === 3 ? all : pending(`${bound.length} bound`);
      });
      expect([...found.keys()].sort()).toEqual(['data-web-0', 'data-web-1', 'data-web-2']);
      const claim = found.get('data-web-1')!;
      expect(claim.metadata?.labels).toEqual({ tier: 'storage', app: 'web' });
      expect(claim.metadata?.finalizers).toEqual(['kubernetes.io/pvc-protection']);
      expect(claim.metadata?.ownerReferences).toBeUndefined(); // Retain / Retain
      expect(claim.spec?.volumeName).toBe(`pvc-${claim.metadata?.uid}`);
      expect(claim.status?.capacity).toEqual({ storage: '1Gi' });
      const pod = await until('pod web-1', async () =>
        (await podNames(h)).includes('web-1')
          ? h.core.readNamespacedPod({ name: 'web-1', namespace: NS })
          : pending('no pod'),
      );
      expect(pod.spec?.volumes).toEqual([
        { name: 'data', persistentVolumeClaim: { claimName: 'data-web-1' } },
      ]);
      // kubectl knows the kind (discovery) and reads it.
      const got = await h.kubectl(['get', 'pvc', '-o', 'name']);
      expect(got.stdout.trim().split('\n').sort()).toEqual([
        'persistentvolumeclaim/data-web-0',
        'persistentvolumeclaim/data-web-1',
        'persistentvolumeclaim/data-web-2',
      ]);
    },
  );

  it('keeps claims on scale-down and gives the same claims back on scale-up (default Retain)', async () => {
    const h = await startHarness();
    await h.apps.createNamespacedStatefulSet({ namespace: NS, body: statefulSet(3) });
    const before = await until('three claims', async () => {
      const all = await claims(h);
      return all.size === 3 ? all : pending(`${all.size} claims`);
    });
    await scale(h, 1);
    await until('one pod', async () => {
      const pods = await podNames(h);
      return pods.length === 1 &&
        (await h.core.listNamespacedPod({ namespace: NS })).items.length === 1
        ? pods
        : pending(pods.join());
    });
    expect([...(await claims(h)).keys()].sort()).toEqual([
      'data-web-0',
      'data-web-1',
      'data-web-2',
    ]);
    await scale(h, 3);
    await until('three pods', async () => {
      const pods = await podNames(h);
      return pods.length === 3 ? pods : pending(pods.join());
    });
    const after = await claims(h);
    for (const name of ['data-web-0', 'data-web-1', 'data-web-2']) {
      expect(after.get(name)?.metadata?.uid, name).toBe(before.get(name)?.metadata?.uid);
    }
  });

  it('deletes the claims of scaled-down ordinals and of a deleted set under Delete / Delete', async () => {
    const h = await startHarness();
    const policy = { whenDeleted: 'Delete', whenScaled: 'Delete' };
    const set = await h.apps.createNamespacedStatefulSet({
      namespace: NS,
      body: statefulSet(3, { policy }),
    });
    const before = await until('three claims owned by the set', async () => {
      const all = await claims(h);
      const owned = [...all.values()].filter((c) =>
        c.metadata?.ownerReferences?.some(
          (r) => r.uid === set.metadata?.uid && r.controller === true,
        ),
      );
      return owned.length === 3 ? all : pending(`${owned.length} owned`);
    });
    expect(before.get('data-web-0')?.metadata?.ownerReferences).toEqual([
      {
        apiVersion: 'apps/v1',
        kind: 'StatefulSet',
        name: 'web',
        uid: set.metadata?.uid,
        controller: true,
        blockOwnerDeletion: true,
      },
    ]);
    await scale(h, 1);
    await until('claims of ordinals 1 and 2 gone', async () => {
      const names = [...(await claims(h)).keys()];
      return names.length === 1 ? names : pending(names.join());
    });
    await scale(h, 2);
    const again = await until('a new claim for ordinal 1', async () => {
      const claim = (await claims(h)).get('data-web-1');
      return claim?.status?.phase === 'Bound' ? claim : pending('none yet');
    });
    expect(again.metadata?.uid).not.toBe(before.get('data-web-1')?.metadata?.uid);
    await h.apps.deleteNamespacedStatefulSet({ name: 'web', namespace: NS });
    await until('every claim gone with the set', async () => {
      const names = [...(await claims(h)).keys()];
      return names.length === 0 ? names : pending(names.join());
    });
  });

  it('holds a deleted claim until no pod uses it, and holds the pod until the claim is gone', async () => {
    const h = await startHarness();
    await h.apps.createNamespacedStatefulSet({ namespace: NS, body: statefulSet(1) });
    const first = await until('claim and pod', async () => {
      const claim = (await claims(h)).get('data-web-0');
      return claim?.status?.phase === 'Bound' && (await podNames(h)).length === 1
        ? claim
        : pending('not yet');
    });
    await h.core.deleteNamespacedPersistentVolumeClaim({ name: 'data-web-0', namespace: NS });
    const held = await h.core.readNamespacedPersistentVolumeClaim({
      name: 'data-web-0',
      namespace: NS,
    });
    expect(held.metadata?.deletionTimestamp).toBeDefined();
    expect(held.metadata?.finalizers).toEqual(['kubernetes.io/pvc-protection']);
    // The pod goes; the claim follows; only then a new claim and a new pod are made.
    await h.core.deleteNamespacedPod({ name: 'web-0', namespace: NS });
    const second = await until('a new claim and pod', async () => {
      const claim = (await claims(h)).get('data-web-0');
      return claim !== undefined &&
        claim.metadata?.uid !== first.metadata?.uid &&
        (await podNames(h)).length === 1
        ? claim
        : pending('not yet');
    });
    expect(second.metadata?.deletionTimestamp).toBeUndefined();
  });
});

describe('claim folders in the process kubelet', () => {
  it('gives a recreated pod its ordinal’s folder back, and removes the folder with the claim', async () => {
    const h = await startHarness({
      kubelet: {
        mode: 'process',
        images: { busybox: { command: '/bin/sh' } },
        readinessPeriodMs: 50,
      },
    });
    await h.apps.createNamespacedStatefulSet({ namespace: NS, body: statefulSet(2) });
    const pvcs = join(h.emulator.dir, 'pvcs');
    const runsOf = async (claim: string): Promise<string[]> => {
      const uid = (await claims(h)).get(claim)?.metadata?.uid ?? '';
      const file = join(pvcs, `${NS}_${claim}_${uid.slice(0, 8)}`, 'runs');
      return existsSync(file) ? (await readFile(file, 'utf8')).trim().split('\n') : [];
    };
    const first = await until('web-0 wrote into its claim', async () => {
      const runs = await runsOf('data-web-0');
      return runs.length === 1 ? runs : pending(`${runs.length} runs`);
    });
    const oldUid = (await h.core.readNamespacedPod({ name: 'web-0', namespace: NS })).metadata?.uid;
    expect(first).toEqual([oldUid]);

    await h.core.deleteNamespacedPod({ name: 'web-0', namespace: NS });
    const both = await until('the new web-0 wrote into the same folder', async () => {
      const runs = await runsOf('data-web-0');
      return runs.length === 2 ? runs : pending(`${runs.length} runs`);
    });
    expect(both[0]).toBe(oldUid);
    expect(both[1]).not.toBe(oldUid);

    // Scale down (the claim stays, so does its folder), then delete the claim: the folder goes.
    await scale(h, 1);
    await until('web-1 gone', async () => {
      const list = await h.core.listNamespacedPod({ namespace: NS });
      return list.items.length === 1 ? list : pending(`${list.items.length} pods`);
    });
    expect(await runsOf('data-web-1')).toHaveLength(1);
    const uid1 = (await claims(h)).get('data-web-1')?.metadata?.uid ?? '';
    const folder1 = join(pvcs, `${NS}_data-web-1_${uid1.slice(0, 8)}`);
    expect(existsSync(folder1)).toBe(true);
    await h.core.deleteNamespacedPersistentVolumeClaim({ name: 'data-web-1', namespace: NS });
    await until('the folder of data-web-1 removed', async () =>
      existsSync(folder1) ? pending('still there') : true,
    );
    expect((await readdir(pvcs)).filter((name) => name.includes('data-web-0'))).toHaveLength(1);
  });

  it('holds a pod whose claim does not exist yet, and starts it once the claim is bound', async () => {
    const h = await startHarness({
      kubelet: {
        mode: 'process',
        images: { busybox: { command: '/bin/sh' } },
        readinessPeriodMs: 50,
      },
    });
    const template = statefulSet(1).spec?.template.spec?.containers[0];
    await h.core.createNamespacedPod({
      namespace: NS,
      body: {
        metadata: { name: 'lonely' },
        spec: {
          containers: [template!],
          volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'later' } }],
        },
      },
    });
    const waiting = await until('the pod to wait for its claim', async () => {
      const pod = await h.core.readNamespacedPod({ name: 'lonely', namespace: NS });
      const state = pod.status?.containerStatuses?.[0]?.state?.waiting;
      return state?.reason === 'CreateContainerConfigError'
        ? state
        : pending(JSON.stringify(state));
    });
    expect(waiting.message).toBe('persistentvolumeclaim "later" not found');
    await h.core.createNamespacedPersistentVolumeClaim({
      namespace: NS,
      body: {
        metadata: { name: 'later' },
        spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
      },
    });
    await until('the pod to run', async () => {
      const pod = await h.core.readNamespacedPod({ name: 'lonely', namespace: NS });
      return pod.status?.containerStatuses?.[0]?.state?.running !== undefined
        ? pod
        : pending('not yet');
    });
  });
});
