// The process kubelet rewrites a running pod's secret volume when its Secret changes, as a real
// kubelet's periodic remount does (pkg/volume/secret/secret.go `RequiresRemount`, SetUpAt through
// pkg/volume/util/atomic_writer.go): a container that crashed on a missing key starts once the
// key is back, in the same pod; a running one reads the new content; a missing `items` key is a
// FailedMount that holds the pod in ContainerCreating.

import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { V1Pod } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { HOST_PORTS_ANNOTATION } from '../../src/kube-emulator/index.ts';
import { waitFor } from '../../src/harness/wait.ts';
import { startHarness, type Harness } from './harness.ts';

const fixture = join(import.meta.dirname, 'fixtures', 'probe-server.mjs');
const NS = 'default';

async function start(): Promise<Harness> {
  return startHarness({
    kubelet: {
      mode: 'process',
      images: { 'probe-server': { command: process.execPath, args: [fixture] } },
      readinessPeriodMs: 50,
      restartBackoffMs: 100,
      maxRestartBackoffMs: 400,
      volumeRefreshDelayMs: 200,
    },
  });
}

async function writeKeys(h: Harness, keys: Record<string, string>): Promise<void> {
  const body = { metadata: { name: 'keys' }, stringData: keys };
  try {
    await h.core.readNamespacedSecret({ name: 'keys', namespace: NS });
  } catch {
    await h.core.createNamespacedSecret({ namespace: NS, body });
    return;
  }
  await h.core.replaceNamespacedSecret({ name: 'keys', namespace: NS, body });
}

/** A validator-like pod: it reads /etc/keys/<id> at start and exits 1 when that file is not there. */
async function createPod(
  h: Harness,
  id: string,
  volume: Record<string, unknown> = { secretName: 'keys', defaultMode: 0o400 },
): Promise<V1Pod> {
  return h.core.createNamespacedPod({
    namespace: NS,
    body: {
      metadata: { name: 'validator' },
      spec: {
        containers: [
          {
            name: 'node',
            image: 'probe-server:1.0',
            ports: [{ name: 'http', containerPort: 8080 }],
            env: [{ name: 'KEY_FILE', value: `/etc/keys/${id}` }],
            volumeMounts: [{ name: 'keys', mountPath: '/etc/keys' }],
            readinessProbe: { httpGet: { path: '/healthz', port: 'http' }, periodSeconds: 1 },
          },
        ],
        volumes: [{ name: 'keys', secret: volume }],
      },
    },
  });
}

async function readPod(h: Harness): Promise<V1Pod> {
  return h.core.readNamespacedPod({ name: 'validator', namespace: NS });
}

/** What the container reads from its key file now (`ENOENT` when there is none). */
async function keySeen(h: Harness): Promise<string> {
  const ports = JSON.parse(
    (await readPod(h)).metadata?.annotations?.[HOST_PORTS_ANNOTATION] ?? '{}',
  ) as { http?: number };
  return (await fetch(`http://127.0.0.1:${ports.http ?? 0}/key`)).text();
}

async function isReady(h: Harness): Promise<boolean> {
  return (await readPod(h)).status?.containerStatuses?.[0]?.ready === true;
}

/** The pod's secret volume folder (under the emulator's dir, pod-volumes.ts). */
async function volumeFolder(h: Harness, uid: string): Promise<string> {
  const pods = join(h.emulator.dir, 'pods');
  const folder = (await readdir(pods)).find((name) => name.endsWith(`_${uid.slice(0, 8)}`));
  return join(pods, folder ?? 'missing', 'volumes', 'keys');
}

describe('secret volumes of the process kubelet', () => {
  it('starts a container that crashed on a key missing from its Secret once the key is back, in the same pod', async () => {
    const h = await start();
    await writeKeys(h, { '001': 'key-1' });
    const created = await createPod(h, '002');
    const crashing = await waitFor(
      async () => {
        const status = (await readPod(h)).status?.containerStatuses?.[0];
        return (status?.restartCount ?? 0) >= 2 && status;
      },
      { what: 'the container to crash without its key', timeoutMs: 15_000 },
    );
    expect(crashing.lastState?.terminated?.exitCode).toBe(1);
    await writeKeys(h, { '001': 'key-1', '002': 'key-2' });
    await waitFor(() => isReady(h), {
      what: 'the pod to be Ready with its key',
      timeoutMs: 15_000,
    });
    const pod = await readPod(h);
    expect(pod.metadata?.uid).toBe(created.metadata?.uid);
    expect(await keySeen(h)).toBe('key-2');
    // Written as a private file by a rename: no temporary file is left beside it.
    const folder = await volumeFolder(h, pod.metadata?.uid ?? '');
    expect((await readdir(folder)).sort()).toEqual(['001', '002']);
    expect((await stat(join(folder, '002'))).mode & 0o777).toBe(0o600);
  });

  it('gives a running container the new content of its key file after the Secret changes, and takes the file away with the key', async () => {
    const h = await start();
    await writeKeys(h, { '001': 'key-1' });
    await createPod(h, '001');
    await waitFor(() => isReady(h), { what: 'the pod to be Ready', timeoutMs: 15_000 });
    expect(await keySeen(h)).toBe('key-1');
    const before = (await readPod(h)).status?.containerStatuses?.[0];
    await writeKeys(h, { '001': 'key-1-rotated' });
    await waitFor(async () => (await keySeen(h)) === 'key-1-rotated', {
      what: 'the container to read the rotated key',
      timeoutMs: 10_000,
    });
    await writeKeys(h, { '003': 'key-3' });
    await waitFor(async () => (await keySeen(h)) === 'ENOENT', {
      what: 'the removed key file to be gone',
      timeoutMs: 10_000,
    });
    const after = (await readPod(h)).status?.containerStatuses?.[0];
    expect(after?.restartCount).toBe(0);
    expect(after?.state?.running?.startedAt).toEqual(before?.state?.running?.startedAt);
  });

  it('holds a pod whose volume lists a key the Secret lacks in ContainerCreating with a FailedMount Event, and starts it once the key is there', async () => {
    const h = await start();
    await writeKeys(h, { '001': 'key-1' });
    await createPod(h, '002', { secretName: 'keys', items: [{ key: '002', path: '002' }] });
    const waiting = await waitFor(
      async () => {
        const state = (await readPod(h)).status?.containerStatuses?.[0]?.state?.waiting;
        const events = await h.core.listNamespacedEvent({ namespace: NS });
        const failed = events.items.find((event) => event.reason === 'FailedMount');
        return failed !== undefined && state !== undefined && { state, failed };
      },
      { what: 'a FailedMount Event', timeoutMs: 15_000 },
    );
    expect(waiting.state.reason).toBe('ContainerCreating');
    expect(waiting.failed).toMatchObject({
      type: 'Warning',
      message:
        'MountVolume.SetUp failed for volume "keys" : references non-existent secret key: 002',
      involvedObject: { kind: 'Pod', name: 'validator' },
    });
    await writeKeys(h, { '001': 'key-1', '002': 'key-2' });
    await waitFor(() => isReady(h), { what: 'the pod to start with its key', timeoutMs: 15_000 });
    const status = (await readPod(h)).status?.containerStatuses?.[0];
    expect(status?.restartCount).toBe(0);
    expect(await keySeen(h)).toBe('key-2');
  });

  it('leaves out a missing key of an optional volume instead of failing it', async () => {
    const h = await start();
    await writeKeys(h, { '001': 'key-1' });
    await createPod(h, '001', {
      secretName: 'keys',
      optional: true,
      items: [
        { key: '001', path: '001' },
        { key: '002', path: '002' },
      ],
    });
    await waitFor(() => isReady(h), { what: 'the pod to be Ready', timeoutMs: 15_000 });
    const uid = (await readPod(h)).metadata?.uid ?? '';
    expect(await readdir(await volumeFolder(h, uid))).toEqual(['001']);
  });
});
