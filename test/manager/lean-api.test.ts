// The manager's lean API clients (src/manager/kube/lean-api.ts) send what client-node's own
// classes send: every call the manager makes, against the Kubernetes API emulator over HTTP, read
// back through client-node's CoreV1Api/AppsV1Api/CoordinationV1Api. A parameter passed in the
// wrong position would name the wrong object, or none.
import {
  AppsV1Api,
  CoordinationV1Api,
  CoreV1Api,
  KubeConfig,
  PatchStrategy,
  setHeaderOptions,
} from '@kubernetes/client-node';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '../../src/kube-emulator/index.ts';
import { apiStatus } from '../../src/manager/kube/client.ts';
import { makeLeanApis } from '../../src/manager/kube/lean-api.ts';

const namespace = 'lean';
let emulator: Emulator | undefined;
let dir: string;
let lean: ReturnType<typeof makeLeanApis>;
let core: CoreV1Api;
let apps: AppsV1Api;
let coordination: CoordinationV1Api;
const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'cm-lean-api-'));
  emulator = await startEmulator({ kubelet: false });
  const kc = new KubeConfig();
  kc.loadFromFile(await emulator.writeKubeconfig(join(dir, 'kubeconfig'), { namespace }));
  lean = makeLeanApis(kc);
  core = kc.makeApiClient(CoreV1Api);
  apps = kc.makeApiClient(AppsV1Api);
  coordination = kc.makeApiClient(CoordinationV1Api);
  await core.createNamespace({ body: { metadata: { name: namespace } } });
  await core.createNamespacedPod({
    namespace,
    body: {
      metadata: { name: 'validator-0', labels: { app: 'v' } },
      spec: { containers: [{ name: 'node', image: 'localnet-node:dev' }] },
    },
  });
  await core.createNamespacedPod({
    namespace,
    body: {
      metadata: { name: 'other', labels: { app: 'o' } },
      spec: { containers: [{ name: 'node', image: 'localnet-node:dev' }] },
    },
  });
  await core.createNamespacedSecret({
    namespace,
    body: { metadata: { name: 'keys' }, stringData: { '001': 'x' } },
  });
  await apps.createNamespacedStatefulSet({
    namespace,
    body: {
      metadata: { name: 'validator' },
      spec: {
        replicas: 1,
        serviceName: 'validators',
        selector: { matchLabels: { app: 'v' } },
        template: {
          metadata: { labels: { app: 'v' } },
          spec: { containers: [{ name: 'node', image: 'localnet-node:dev' }] },
        },
      },
    },
  });
});

afterAll(async () => {
  await emulator?.stop();
  await rm(dir, { recursive: true, force: true });
});

describe('the lean CoreV1 client', () => {
  it('lists pods by label selector and secrets by field selector', async () => {
    const pods = await lean.core.listNamespacedPod({ namespace, labelSelector: 'app=v' });
    expect(pods.items.map((p) => p.metadata?.name)).toEqual(['validator-0']);
    expect(pods.metadata?.resourceVersion).toBeTruthy();
    const secrets = await lean.core.listNamespacedSecret({
      namespace,
      fieldSelector: 'metadata.name=keys',
    });
    expect(secrets.items.map((s) => s.metadata?.name)).toEqual(['keys']);
  });

  it('reads and merge-patches a pod, and answers a missing one with its status', async () => {
    const pod = await lean.core.readNamespacedPod({ name: 'validator-0', namespace });
    expect(pod).toEqual(await core.readNamespacedPod({ name: 'validator-0', namespace }));
    expect(pod.metadata?.creationTimestamp).toBeInstanceOf(Date);
    await lean.core.patchNamespacedPod(
      { name: 'validator-0', namespace, body: { metadata: { annotations: { a: 'b' } } } },
      merge,
    );
    const read = await core.readNamespacedPod({ name: 'validator-0', namespace });
    expect(read.metadata?.annotations).toMatchObject({ a: 'b' });
    const missing = await lean.core
      .readNamespacedPod({ name: 'none', namespace })
      .catch((e: unknown) => e);
    expect(apiStatus(missing)).toBe(404);
  });

  it('deletes a pod only while it has the uid asked for (the stale-key restart)', async () => {
    await core.createNamespacedPod({
      namespace,
      body: { metadata: { name: 'doomed' }, spec: { containers: [{ name: 'c', image: 'x' }] } },
    });
    const uid = (await core.readNamespacedPod({ name: 'doomed', namespace })).metadata?.uid;
    const wrong = await lean.core
      .deleteNamespacedPod({ name: 'doomed', namespace, body: { preconditions: { uid: 'other' } } })
      .catch((e: unknown) => e);
    expect(apiStatus(wrong)).toBe(409);
    await lean.core.deleteNamespacedPod({
      name: 'doomed',
      namespace,
      gracePeriodSeconds: 0,
      body: { preconditions: { uid: uid ?? '' } },
    });
    const gone = await core
      .readNamespacedPod({ name: 'doomed', namespace })
      .catch((e: unknown) => e);
    expect(apiStatus(gone)).toBe(404);
  });

  it('creates and patches an Event', async () => {
    await lean.core.createNamespacedEvent({
      namespace,
      body: {
        metadata: { name: 'e1' },
        involvedObject: { kind: 'Pod', name: 'validator-0', namespace },
        reason: 'Staked',
        message: 'm',
        count: 1,
      },
    });
    await lean.core.patchNamespacedEvent(
      { name: 'e1', namespace, body: { count: 2 } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    const events = await core.listNamespacedEvent({ namespace });
    expect(events.items.find((e) => e.metadata.name === 'e1')?.count).toBe(2);
  });
});

describe('the lean AppsV1 client', () => {
  it('lists, reads and patches a StatefulSet and its scale', async () => {
    const list = await lean.apps.listNamespacedStatefulSet({ namespace });
    expect(list.items.map((s) => s.metadata?.name)).toEqual(['validator']);
    await lean.apps.patchNamespacedStatefulSetScale(
      { name: 'validator', namespace, body: { spec: { replicas: 3 } } },
      merge,
    );
    await lean.apps.patchNamespacedStatefulSet(
      { name: 'validator', namespace, body: { metadata: { annotations: { c: 'd' } } } },
      merge,
    );
    const sts = await lean.apps.readNamespacedStatefulSet({ name: 'validator', namespace });
    expect(sts.spec?.replicas).toBe(3);
    expect(sts.metadata?.annotations).toMatchObject({ c: 'd' });
  });
});

describe('the lean CoordinationV1 client', () => {
  it('creates, reads and replaces a Lease, decoded as client-node decodes it', async () => {
    const renewTime = new Date('2026-01-01T00:00:00.000Z');
    await lean.coordination.createNamespacedLease({
      namespace,
      body: { metadata: { name: 'leader' }, spec: { holderIdentity: 'a', renewTime } },
    });
    const lease = await lean.coordination.readNamespacedLease({ name: 'leader', namespace });
    expect(lease).toEqual(await coordination.readNamespacedLease({ name: 'leader', namespace }));
    expect(lease.spec?.holderIdentity).toBe('a');
    await lean.coordination.replaceNamespacedLease({
      name: 'leader',
      namespace,
      body: { ...lease, spec: { ...lease.spec, holderIdentity: 'b' } },
    });
    const read = await coordination.readNamespacedLease({ name: 'leader', namespace });
    expect(read.spec?.holderIdentity).toBe('b');
  });
});
