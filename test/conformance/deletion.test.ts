// Issue 31, deletion: propagation through finalizers and the garbage collector, a finalizer
// holding an immediate delete, StatefulSets adopting the pods `kubectl delete sts --cascade=orphan`
// left, and namespace deletion (Terminating, graceful content deletion, 403 for new content),
// checked with the newest kubectl and raw HTTP against the 1.32 behaviour (registry store.go,
// garbagecollector.go, stateful_set_utils.go isMemberOf, namespace lifecycle admission and
// namespaced_resources_deleter.go).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pending, waitFor } from '../../src/harness/wait.ts';
import { newest, startCluster, type Cluster } from './support.ts';

let cluster: Cluster;
beforeAll(async () => {
  cluster = await startCluster({
    kubelet: { mode: 'simulated', pendingMs: 20, readyMs: 20, terminationMs: 300 },
  });
});
afterAll(() => cluster.stop());

async function json(path: string, init: RequestInit = {}): Promise<Record<string, unknown>> {
  const response = await fetch(`${cluster.emulator.url}${path}`, {
    ...init,
    headers: { 'content-type': 'application/json', accept: 'application/json' },
  });
  return { ...((await response.json()) as Record<string, unknown>), httpStatus: response.status };
}

type Meta = {
  uid: string;
  ownerReferences?: { uid: string; controller?: boolean }[];
  deletionTimestamp?: string;
  finalizers?: string[];
};

const statefulSet = (name: string) =>
  JSON.stringify({
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: { name },
    spec: {
      replicas: 2,
      serviceName: name,
      podManagementPolicy: 'Parallel',
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: { containers: [{ name: 'c', image: 'i' }] },
      },
    },
  });

describe.skipIf(newest === undefined)('deletion semantics', () => {
  const kubectl = (args: string[], input?: string) => {
    if (newest === undefined) throw new Error('no kubectl');
    return cluster.kubectl(newest, args, input === undefined ? {} : { input });
  };
  const pods = async (selector: string) =>
    (
      (await json(`/api/v1/namespaces/default/pods?labelSelector=${selector}`)).items as {
        metadata: Meta;
      }[]
    ).map((pod) => pod.metadata);

  it('kubectl delete sts --cascade=orphan keeps the pods; the re-created set adopts them', async () => {
    expect((await kubectl(['apply', '-f', '-'], statefulSet('web'))).code).toBe(0);
    await waitFor(async () => (await pods('app%3Dweb')).length === 2 || pending('2 pods'), {
      what: 'two pods',
      timeoutMs: 10_000,
    });
    const before = await pods('app%3Dweb');
    expect((await kubectl(['delete', 'sts', 'web', '--cascade=orphan'])).code).toBe(0);
    const orphans = await pods('app%3Dweb');
    expect(orphans.map((p) => p.uid).sort()).toEqual(before.map((p) => p.uid).sort());
    expect(orphans.every((p) => (p.ownerReferences ?? []).length === 0)).toBe(true);
    expect((await kubectl(['apply', '-f', '-'], statefulSet('web'))).code).toBe(0);
    const set = (await json('/apis/apps/v1/namespaces/default/statefulsets/web')).metadata as Meta;
    await waitFor(
      async () =>
        (await pods('app%3Dweb')).every((p) =>
          p.ownerReferences?.some((ref) => ref.uid === set.uid && ref.controller === true),
        ) || pending('adoption'),
      { what: 'the pods adopted', timeoutMs: 10_000 },
    );
    expect((await pods('app%3Dweb')).map((p) => p.uid).sort()).toEqual(
      before.map((p) => p.uid).sort(),
    );
  });

  it('kubectl delete rs --cascade=orphan keeps the pods; the re-created ReplicaSet adopts them (no new pod), a bare matching pod too', async () => {
    // replica_set.go syncReplicaSet → ClaimPods (controller_ref_manager.go): orphans that match
    // the selector are adopted before the count; a pod that stops matching is released.
    const replicaSet = (replicas: number) =>
      JSON.stringify({
        apiVersion: 'apps/v1',
        kind: 'ReplicaSet',
        metadata: { name: 'rs' },
        spec: {
          replicas,
          selector: { matchLabels: { app: 'rs' } },
          template: {
            metadata: { labels: { app: 'rs' } },
            spec: { containers: [{ name: 'c', image: 'i' }] },
          },
        },
      });
    expect((await kubectl(['apply', '-f', '-'], replicaSet(2))).code).toBe(0);
    await waitFor(async () => (await pods('app%3Drs')).length === 2 || pending('2 pods'), {
      what: 'two pods',
      timeoutMs: 10_000,
    });
    const before = (await pods('app%3Drs')).map((p) => p.uid).sort();
    expect((await kubectl(['delete', 'rs', 'rs', '--cascade=orphan'])).code).toBe(0);
    // A bare pod with the same labels: the new set (3 replicas) adopts it instead of creating one.
    const bare = await json('/api/v1/namespaces/default/pods', {
      method: 'POST',
      body: JSON.stringify({
        metadata: { name: 'rs-bare', labels: { app: 'rs' } },
        spec: { containers: [{ name: 'c', image: 'i' }] },
      }),
    });
    expect(bare.httpStatus).toBe(201);
    expect((await kubectl(['apply', '-f', '-'], replicaSet(3))).code).toBe(0);
    const set = (await json('/apis/apps/v1/namespaces/default/replicasets/rs')).metadata as Meta;
    await waitFor(
      async () =>
        (await pods('app%3Drs')).every((p) =>
          p.ownerReferences?.some((ref) => ref.uid === set.uid && ref.controller === true),
        ) || pending('adoption'),
      { what: 'the pods adopted', timeoutMs: 10_000 },
    );
    const after = await pods('app%3Drs');
    expect(after.map((p) => p.uid).sort()).toEqual([...before, (bare.metadata as Meta).uid].sort());
    // Relabelled, a pod is released and the set makes a new one.
    expect((await kubectl(['label', 'pod', 'rs-bare', 'app=gone', '--overwrite'])).code).toBe(0);
    await waitFor(
      async () =>
        (((await pods('app%3Dgone'))[0]?.ownerReferences ?? []).length === 0 &&
          (await pods('app%3Drs')).length === 3) ||
        pending('release and replacement'),
      { what: 'released and replaced', timeoutMs: 10_000 },
    );
  });

  it('Foreground keeps the owner (foregroundDeletion) until its dependents are gone; Background removes it first', async () => {
    expect((await kubectl(['apply', '-f', '-'], statefulSet('fg'))).code).toBe(0);
    await waitFor(async () => (await pods('app%3Dfg')).length === 2 || pending('pods'), {
      what: 'two pods',
      timeoutMs: 10_000,
    });
    const deleted = await json('/apis/apps/v1/namespaces/default/statefulsets/fg', {
      method: 'DELETE',
      body: JSON.stringify({ propagationPolicy: 'Foreground' }),
    });
    const meta = deleted.metadata as Meta;
    expect(meta.finalizers).toEqual(['foregroundDeletion']);
    expect(meta.deletionTimestamp).toBeDefined();
    await waitFor(
      async () =>
        (await json('/apis/apps/v1/namespaces/default/statefulsets/fg')).httpStatus === 404 ||
        pending('the set'),
      { what: 'the set gone after its pods', timeoutMs: 15_000 },
    );
    expect(await pods('app%3Dfg')).toEqual([]);
  });

  it('Orphan through the orphan finalizer: the owner goes, its dependents stay without the reference', async () => {
    expect((await kubectl(['apply', '-f', '-'], statefulSet('orph'))).code).toBe(0);
    await waitFor(async () => (await pods('app%3Dorph')).length === 2 || pending('pods'), {
      what: 'two pods',
      timeoutMs: 10_000,
    });
    const deleted = await json('/apis/apps/v1/namespaces/default/statefulsets/orph', {
      method: 'DELETE',
      body: JSON.stringify({ propagationPolicy: 'Orphan' }),
    });
    expect((deleted.metadata as Meta).finalizers).toEqual(['orphan']);
    await waitFor(
      async () =>
        (await json('/apis/apps/v1/namespaces/default/statefulsets/orph')).httpStatus === 404 ||
        pending('the set'),
      { what: 'the set gone', timeoutMs: 10_000 },
    );
    const left = await pods('app%3Dorph');
    expect(left).toHaveLength(2);
    expect(left.every((p) => (p.ownerReferences ?? []).length === 0)).toBe(true);
  });

  it('a finalizer holds a pod deleted with grace 0 until it is removed', async () => {
    await json('/api/v1/namespaces/default/pods', {
      method: 'POST',
      body: JSON.stringify({
        metadata: { name: 'held', finalizers: ['example.com/hold'] },
        spec: { containers: [{ name: 'c', image: 'i' }] },
      }),
    });
    const forced = await kubectl([
      'delete',
      'pod',
      'held',
      '--grace-period=0',
      '--force',
      '--wait=false',
    ]);
    expect(forced.code).toBe(0);
    const held = (await json('/api/v1/namespaces/default/pods/held')).metadata as Meta & {
      deletionGracePeriodSeconds?: number;
    };
    expect(held.deletionTimestamp).toBeDefined();
    expect(held.deletionGracePeriodSeconds).toBe(0);
    expect(
      (
        await kubectl([
          'patch',
          'pod',
          'held',
          '--type=json',
          '-p',
          '[{"op":"remove","path":"/metadata/finalizers"}]',
        ])
      ).code,
    ).toBe(0);
    expect((await json('/api/v1/namespaces/default/pods/held')).httpStatus).toBe(404);
  });

  it('a namespace goes Terminating, refuses new content (403 NamespaceTerminating), deletes its pods gracefully, then goes', async () => {
    expect((await kubectl(['create', 'namespace', 'doomed'])).code).toBe(0);
    const ns = (await json('/api/v1/namespaces/doomed')).spec as { finalizers: string[] };
    expect(ns.finalizers).toEqual(['kubernetes']);
    await json('/api/v1/namespaces/doomed/pods', {
      method: 'POST',
      body: JSON.stringify({
        metadata: { name: 'slow' },
        spec: {
          terminationGracePeriodSeconds: 5,
          containers: [
            {
              name: 'c',
              image: 'i',
              lifecycle: { preStop: { sleep: { seconds: 1 } } },
            },
          ],
        },
      }),
    });
    await waitFor(
      async () =>
        ((await json('/api/v1/namespaces/doomed/pods/slow')).spec as { nodeName?: string })
          .nodeName !== undefined || pending('bound'),
      { what: 'the pod bound', timeoutMs: 5_000 },
    );
    expect((await kubectl(['delete', 'namespace', 'doomed', '--wait=false'])).code).toBe(0);
    const terminating = await json('/api/v1/namespaces/doomed');
    expect((terminating.status as { phase: string }).phase).toBe('Terminating');
    const refused = await json('/api/v1/namespaces/doomed/configmaps', {
      method: 'POST',
      body: JSON.stringify({ metadata: { name: 'late' } }),
    });
    expect(refused.httpStatus).toBe(403);
    expect(refused.message).toBe(
      'configmaps "late" is forbidden: unable to create new content in namespace doomed because it is being terminated',
    );
    expect((refused.details as { causes: unknown[] }).causes).toEqual([
      {
        reason: 'NamespaceTerminating',
        message: 'namespace doomed is being terminated',
        field: 'metadata.namespace',
      },
    ]);
    const pod = (await json('/api/v1/namespaces/doomed/pods/slow')).metadata as Meta;
    expect(pod.deletionTimestamp).toBeDefined();
    await waitFor(
      async () => (await json('/api/v1/namespaces/doomed')).httpStatus === 404 || pending('ns'),
      { what: 'the namespace gone', timeoutMs: 15_000 },
    );
    const kept = await kubectl(['delete', 'namespace', 'default']);
    expect(kept.stderr).toContain(
      'namespaces "default" is forbidden: this namespace may not be deleted',
    );
  });
});
