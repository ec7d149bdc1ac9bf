// The emulator's objects kept in a file (`stateFile`, src/kube-emulator/persistence.ts), as etcd
// keeps a cluster's: an emulator started again on the file serves the same objects — uids,
// resourceVersions, a StatefulSet's claims — and goes on from its resourceVersion; the pods
// (whose processes ended) are made again by their controller; a watch from before the restart
// gets 410 Expired; a file that is not a snapshot fails the start, naming it.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AppsV1Api, CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { afterAll, describe, expect, it } from 'vitest';
import { SnapshotError, startEmulator, type Emulator } from '../../src/kube-emulator/index.ts';
import { pending, waitFor } from '../../src/harness/wait.ts';

const work = await mkdtemp(join(tmpdir(), 'emulator-persistence-'));
afterAll(() => rm(work, { recursive: true, force: true }));
const stateFile = join(work, 'objects.json');

async function start(): Promise<{ emulator: Emulator; core: CoreV1Api; apps: AppsV1Api }> {
  const emulator = await startEmulator({ dir: join(work, 'emulator'), stateFile });
  const kc = new KubeConfig();
  kc.loadFromOptions(emulator.kubeconfigFor());
  return { emulator, core: kc.makeApiClient(CoreV1Api), apps: kc.makeApiClient(AppsV1Api) };
}

async function runningPods(core: CoreV1Api): Promise<Map<string, string>> {
  return waitFor(
    async () => {
      const pods = (await core.listNamespacedPod({ namespace: 'default' })).items;
      const running = pods.filter((p) => p.status?.phase === 'Running');
      return running.length === 2
        ? new Map(running.map((p) => [p.metadata?.name ?? '', p.metadata?.uid ?? '']))
        : pending(`${running.length} of 2 pods running`);
    },
    { what: 'both pods of the StatefulSet to run', timeoutMs: 20_000 },
  );
}

describe('an emulator with a state file', () => {
  it('comes back with the same objects, the same claims and newer resourceVersions; pods made again', async () => {
    const first = await start();
    expect(first.emulator.restoredObjects).toBe(0);
    await first.core.createNamespacedSecret({
      namespace: 'default',
      body: { metadata: { name: 'keys' }, stringData: { '001': 'abc' } },
    });
    await first.apps.createNamespacedStatefulSet({
      namespace: 'default',
      body: {
        metadata: { name: 'web', annotations: { 'example.dev/target': '2' } },
        spec: {
          replicas: 2,
          serviceName: 'web',
          selector: { matchLabels: { app: 'web' } },
          template: {
            metadata: { labels: { app: 'web' } },
            spec: { containers: [{ name: 'main', image: 'busybox' }] },
          },
          volumeClaimTemplates: [
            {
              metadata: { name: 'data' },
              spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
            },
          ],
        },
      },
    });
    const podsBefore = await runningPods(first.core);
    const secret = await first.core.readNamespacedSecret({ name: 'keys', namespace: 'default' });
    const claimsBefore = (
      await first.core.listNamespacedPersistentVolumeClaim({ namespace: 'default' })
    ).items.map((c) => [c.metadata?.name, c.metadata?.uid]);
    expect(claimsBefore).toHaveLength(2);
    const rvBefore = first.emulator.store.resourceVersion;
    await first.emulator.stop();
    // Written whole, owner-only.
    const snapshot = JSON.parse(await readFile(stateFile, 'utf8')) as {
      resourceVersion: number;
      objects: { storage: string }[];
    };
    expect(snapshot.resourceVersion).toBe(rvBefore);
    expect(snapshot.objects.some((o) => o.storage === '/pods')).toBe(false);

    const second = await start();
    try {
      expect(second.emulator.restoredObjects).toBe(snapshot.objects.length);
      const again = await second.core.readNamespacedSecret({ name: 'keys', namespace: 'default' });
      expect([again.metadata?.uid, again.metadata?.resourceVersion, again.data]).toEqual([
        secret.metadata?.uid,
        secret.metadata?.resourceVersion,
        secret.data,
      ]);
      const sts = await second.apps.readNamespacedStatefulSet({
        name: 'web',
        namespace: 'default',
      });
      expect(sts.metadata?.annotations?.['example.dev/target']).toBe('2');
      const claimsAfter = (
        await second.core.listNamespacedPersistentVolumeClaim({ namespace: 'default' })
      ).items.map((c) => [c.metadata?.name, c.metadata?.uid]);
      expect(claimsAfter).toEqual(claimsBefore);
      // The pods are made again by the StatefulSet: the same names, new uids.
      const podsAfter = await runningPods(second.core);
      expect([...podsAfter.keys()].sort()).toEqual([...podsBefore.keys()].sort());
      for (const [name, uid] of podsAfter) expect(uid).not.toBe(podsBefore.get(name));
      expect(second.emulator.store.resourceVersion).toBeGreaterThan(rvBefore);
      // A watch from before the restart cannot be served from the history: 410 Expired.
      const watch = await fetch(
        `${second.emulator.url}/api/v1/namespaces/default/secrets?watch=1&resourceVersion=${rvBefore - 5}`,
        { signal: AbortSignal.timeout(5_000) },
      );
      const reader = watch.body!.getReader();
      const { value } = (await reader.read()) as { value?: Uint8Array };
      await reader.cancel();
      expect(new TextDecoder().decode(value)).toMatch(/"code":410/);
    } finally {
      await second.emulator.stop();
    }
  });

  it('refuses a file that is not a snapshot, naming it; a missing file is a new cluster', async () => {
    await writeFile(stateFile, '{"version":1,"resourceVersion":12,"objects":[{"sto');
    await expect(start()).rejects.toThrow(SnapshotError);
    await expect(start()).rejects.toThrow(`${stateFile} is not JSON (cut short?)`);
    await writeFile(stateFile, '{"version":2,"resourceVersion":12,"objects":[]}');
    await expect(start()).rejects.toThrow(/is not a snapshot of this emulator's objects/);
    await rm(stateFile);
    const fresh = await start();
    expect(fresh.emulator.restoredObjects).toBe(0);
    await fresh.emulator.stop();
  });
});
