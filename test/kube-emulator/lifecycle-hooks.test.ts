// Lifecycle hooks and graceful termination in the process kubelet, as kuberuntime's
// killContainer does them: the preStop hook runs first (with the container's env, the image's
// binaries, or an httpGet to the pod's own port) while the container keeps running; then
// SIGTERM; SIGKILL when the grace period ends (at least 2 s after the hook); a failed hook is a
// FailedPreStopHook event and termination goes on; a shorter second delete cuts it short.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { V1Container, V1Lifecycle } from '@kubernetes/client-node';
import { afterEach, describe, expect, it, onTestFinished } from 'vitest';
import { pending, waitFor } from '../../src/harness/wait.ts';
import type { KubeObject } from '../../src/kube-emulator/types.ts';
import { startHarness, type Harness } from './harness.ts';

const NS = 'default';
const fixture = join(import.meta.dirname, 'fixtures', 'lifecycle-node.mjs');
/** A hook script standing for a binary of the image: notes its env, waits for $WORK/release. */
const AWAIT_SCRIPT =
  'echo "hook $POD_NAME $TOKEN $0" >> "$WORK/events"; ' +
  'while [ ! -e "$WORK/release" ]; do sleep 0.05; done; echo "hook done" >> "$WORK/events"';

let work = '';
afterEach(() => {
  if (work !== '') rmSync(work, { recursive: true, force: true });
  work = '';
});

async function start(): Promise<Harness> {
  work = mkdtempSync(join(tmpdir(), 'lifecycle-'));
  const h = await startHarness({
    kubelet: {
      mode: 'process',
      images: {
        'lifecycle-node': {
          command: process.execPath,
          args: [fixture],
          binaries: { 'await-release': { command: '/bin/sh', args: ['-c', AWAIT_SCRIPT] } },
        },
      },
      readinessPeriodMs: 50,
      restartBackoffMs: 100,
    },
  });
  await h.core.createNamespacedSecret({
    namespace: NS,
    body: { metadata: { name: 'tok' }, stringData: { token: 'sekret' } },
  });
  return h;
}

function container(
  lifecycle: V1Lifecycle | undefined,
  env: Record<string, string> = {},
): V1Container {
  return {
    name: 'node',
    image: 'lifecycle-node',
    env: [
      { name: 'WORK', value: work },
      { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
      { name: 'TOKEN', valueFrom: { secretKeyRef: { name: 'tok', key: 'token' } } },
      ...Object.entries(env).map(([name, value]) => ({ name, value })),
    ],
    ports: [{ name: 'http', containerPort: 8080 }],
    readinessProbe: { httpGet: { path: '/healthz', port: 'http' } },
    ...(lifecycle === undefined ? {} : { lifecycle }),
  };
}

async function runPod(
  h: Harness,
  spec: { lifecycle?: V1Lifecycle; grace: number; env?: Record<string, string> },
): Promise<void> {
  await h.core.createNamespacedPod({
    namespace: NS,
    body: {
      metadata: { name: 'node-0' },
      spec: {
        terminationGracePeriodSeconds: spec.grace,
        containers: [container(spec.lifecycle, spec.env)],
      },
    },
  });
  await waitFor(
    async () => {
      const pod = await h.core.readNamespacedPod({ name: 'node-0', namespace: NS });
      return pod.status?.containerStatuses?.[0]?.ready === true ? pod : pending('not ready');
    },
    { what: 'node-0 ready', timeoutMs: 20_000 },
  );
}

const lines = (file: string): string[] =>
  existsSync(join(work, file)) ? readFileSync(join(work, file), 'utf8').trim().split('\n') : [];

async function gone(h: Harness, timeoutMs = 20_000): Promise<void> {
  await waitFor(
    async () => {
      const list = await h.core.listNamespacedPod({ namespace: NS });
      return list.items.length === 0 ? true : pending('still there');
    },
    { what: 'the pod to be removed', timeoutMs, intervalMs: 20 },
  );
}

async function eventsAbout(
  h: Harness,
): Promise<{ reason: string; message: string; type: string }[]> {
  const list = await h.core.listNamespacedEvent({ namespace: NS });
  return list.items.map((e) => ({
    reason: e.reason ?? '',
    message: e.message ?? '',
    type: e.type ?? '',
  }));
}

describe('preStop hooks and graceful termination (process kubelet)', { timeout: 60_000 }, () => {
  it('keeps the container running while its preStop hook runs, then sends SIGTERM', async () => {
    const h = await start();
    await runPod(h, {
      grace: 30,
      lifecycle: { preStop: { exec: { command: ['await-release', 'arg1'] } } },
    });
    await h.core.deleteNamespacedPod({ name: 'node-0', namespace: NS });
    await waitFor(
      () => (lines('events').some((l) => l.startsWith('hook ')) ? true : pending('no hook')),
      {
        what: 'the hook to start',
      },
    );
    // The hook ran with the container's resolved env, through the image's binary.
    expect(lines('events')).toContain('hook node-0 sekret arg1');
    // While it blocks, the container keeps beating and has not been told to stop.
    const beatsAtHook = lines('beats').length;
    await waitFor(() => (lines('beats').length >= beatsAtHook + 20 ? true : pending('beating')), {
      what: 'a second of beats during the hook',
    });
    expect(lines('events')).not.toContain('sigterm');
    const pod = await h.core.readNamespacedPod({ name: 'node-0', namespace: NS });
    expect(pod.metadata?.deletionTimestamp).toBeDefined();

    writeFileSync(join(work, 'release'), '');
    await gone(h);
    const events = lines('events');
    expect(events.indexOf('hook done')).toBeGreaterThan(-1);
    expect(events.indexOf('sigterm')).toBeGreaterThan(events.indexOf('hook done'));
    expect(await eventsAbout(h)).toContainEqual({
      reason: 'Killing',
      message: 'Stopping container node',
      type: 'Normal',
    });
  });

  it('calls an httpGet hook on the pod’s own port with its headers, and waits for the answer', async () => {
    const h = await start();
    await runPod(h, {
      grace: 30,
      lifecycle: {
        preStop: {
          httpGet: {
            path: '/prestop',
            port: 'http',
            httpHeaders: [{ name: 'X-Hook', value: 'yes' }],
          },
        },
      },
    });
    await h.core.deleteNamespacedPod({ name: 'node-0', namespace: NS });
    await waitFor(
      () => (lines('events').includes('prestop http yes') ? true : pending('no call')),
      {
        what: 'the hook request',
      },
    );
    const beatsAtHook = lines('beats').length;
    await waitFor(() => (lines('beats').length >= beatsAtHook + 10 ? true : pending('beating')), {
      what: 'beats during the hook',
    });
    expect(lines('events')).not.toContain('sigterm');
    writeFileSync(join(work, 'release'), '');
    await gone(h);
    const events = lines('events');
    expect(events.indexOf('sigterm')).toBeGreaterThan(events.indexOf('prestop released'));
  });

  it('cuts a hook at the end of the grace period and SIGKILLs a container that ignores SIGTERM', async () => {
    const h = await start();
    const statuses: KubeObject[] = [];
    const unsubscribe = h.emulator.store.subscribe((event) => {
      if (event.storage === '/pods' && event.type === 'MODIFIED') statuses.push(event.object);
    });
    await runPod(h, {
      grace: 3,
      env: { IGNORE_SIGTERM: '1' },
      lifecycle: {
        preStop: {
          exec: { command: ['/bin/sh', '-c', 'echo $$ > "$WORK/hookpid"; exec sleep 1000'] },
        },
      },
    });
    const started = Date.now();
    await h.core.deleteNamespacedPod({ name: 'node-0', namespace: NS });
    await gone(h);
    const elapsed = Date.now() - started;
    unsubscribe();
    // 3 s of grace for the hook, SIGTERM (ignored), then the 2 s minimum before SIGKILL.
    expect(elapsed).toBeGreaterThanOrEqual(4_800);
    expect(elapsed).toBeLessThan(9_000);
    expect(lines('events')).toContain('sigterm');
    const last = statuses.at(-1) as { status?: { phase?: string; containerStatuses?: unknown[] } };
    expect(last.status?.phase).toBe('Failed');
    expect(last.status?.containerStatuses?.[0]).toMatchObject({
      state: { terminated: { exitCode: 137 } },
    });
    // The hook process went with its container.
    const hookPid = Number(lines('hookpid')[0]);
    expect(() => process.kill(hookPid, 0)).toThrow();
  });

  it('records a failed hook as FailedPreStopHook and terminates at once', async () => {
    const h = await start();
    await runPod(h, {
      grace: 30,
      lifecycle: { preStop: { exec: { command: ['/bin/sh', '-c', 'exit 3'] } } },
    });
    const started = Date.now();
    await h.core.deleteNamespacedPod({ name: 'node-0', namespace: NS });
    await gone(h);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(await eventsAbout(h)).toContainEqual({
      reason: 'FailedPreStopHook',
      message: 'PreStopHook failed',
      type: 'Warning',
    });
  });

  it('lets a second delete with a shorter grace period cut a running hook short', async () => {
    const h = await start();
    await runPod(h, {
      grace: 60,
      lifecycle: { preStop: { exec: { command: ['await-release'] } } },
    });
    await h.core.deleteNamespacedPod({ name: 'node-0', namespace: NS });
    await waitFor(
      () => (lines('events').some((l) => l.startsWith('hook ')) ? true : pending('no hook')),
      {
        what: 'the hook to start',
      },
    );
    const started = Date.now();
    await h.core.deleteNamespacedPod({ name: 'node-0', namespace: NS, gracePeriodSeconds: 1 });
    await gone(h, 10_000);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(lines('events')).not.toContain('hook done');
    expect(lines('events')).toContain('sigterm');
  });

  it('runs a sleep hook for its seconds', async () => {
    const h = await start();
    await runPod(h, { grace: 30, lifecycle: { preStop: { sleep: { seconds: 1 } } } });
    const started = Date.now();
    await h.core.deleteNamespacedPod({ name: 'node-0', namespace: NS });
    await gone(h);
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
  });
});

describe('postStart hooks (process kubelet)', { timeout: 60_000 }, () => {
  it('runs beside the container; a failing one is FailedPostStartHook and restarts it', async () => {
    const h = await start();
    await h.core.createNamespacedPod({
      namespace: NS,
      body: {
        metadata: { name: 'node-0' },
        spec: {
          containers: [
            container({
              postStart: {
                exec: {
                  command: [
                    '/bin/sh',
                    '-c',
                    'echo "poststart $POD_NAME" >> "$WORK/events"; exit 1',
                  ],
                },
              },
            }),
          ],
        },
      },
    });
    const restarted = await waitFor(
      async () => {
        const pod = await h.core.readNamespacedPod({ name: 'node-0', namespace: NS });
        const count = pod.status?.containerStatuses?.[0]?.restartCount ?? 0;
        return count >= 1 ? count : pending(`restarts ${count}`);
      },
      { what: 'a restart after the failed postStart', timeoutMs: 20_000 },
    );
    expect(restarted).toBeGreaterThanOrEqual(1);
    expect(lines('events')).toContain('poststart node-0');
    expect((await eventsAbout(h)).map((e) => e.reason)).toContain('FailedPostStartHook');
  });
});

describe('graceful termination in the simulated kubelet', { timeout: 60_000 }, () => {
  async function simulated(terminationMs: number): Promise<{ h: Harness; finals: KubeObject[] }> {
    const h = await startHarness({
      kubelet: { mode: 'simulated', pendingMs: 0, readyMs: 0, terminationMs },
    });
    const finals: KubeObject[] = [];
    const unsubscribe = h.emulator.store.subscribe((event) => {
      const status = event.object.status as { phase?: string } | undefined;
      if (
        event.storage === '/pods' &&
        (status?.phase === 'Failed' || status?.phase === 'Succeeded')
      )
        finals.push(event.object);
    });
    onTestFinished(unsubscribe);
    return { h, finals };
  }

  async function simplePod(h: Harness, grace: number, lifecycle?: V1Lifecycle): Promise<void> {
    await h.core.createNamespacedPod({
      namespace: NS,
      body: {
        metadata: { name: 'node-0' },
        spec: {
          terminationGracePeriodSeconds: grace,
          containers: [
            { name: 'node', image: 'x', ...(lifecycle === undefined ? {} : { lifecycle }) },
          ],
        },
      },
    });
    await waitFor(
      async () => {
        const pod = await h.core.readNamespacedPod({ name: 'node-0', namespace: NS });
        return pod.status?.containerStatuses?.[0]?.ready === true ? pod : pending('not ready');
      },
      { what: 'node-0 ready' },
    );
  }

  it('kills containers that outlast the grace period (exit 137) and lets quick ones finish (exit 0)', async () => {
    const slow = await simulated(30_000);
    await simplePod(slow.h, 3);
    let started = Date.now();
    await slow.h.core.deleteNamespacedPod({ name: 'node-0', namespace: NS });
    await gone(slow.h);
    expect(Date.now() - started).toBeGreaterThanOrEqual(2_900);
    expect(slow.finals.at(-1)?.status).toMatchObject({
      phase: 'Failed',
      containerStatuses: [{ state: { terminated: { exitCode: 137, reason: 'Error' } } }],
    });

    const quick = await simulated(200);
    await simplePod(quick.h, 30);
    started = Date.now();
    await quick.h.core.deleteNamespacedPod({ name: 'node-0', namespace: NS });
    await gone(quick.h);
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(quick.finals.at(-1)?.status).toMatchObject({
      phase: 'Succeeded',
      containerStatuses: [{ state: { terminated: { exitCode: 0, reason: 'Completed' } } }],
    });
  });

  it('holds a pod while its httpGet preStop hook to an explicit host has not answered', async () => {
    const { h } = await simulated(20);
    let release: () => void = () => undefined;
    const released = new Promise<void>((resolve) => (release = resolve));
    const calls: string[] = [];
    const server = createServer((request, response) => {
      calls.push(request.url ?? '');
      void released.then(() => response.writeHead(200).end());
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const port = (server.address() as AddressInfo).port;
      await simplePod(h, 30, {
        preStop: { httpGet: { host: '127.0.0.1', port, path: '/v1/departures/node-0' } },
      });
      await h.core.deleteNamespacedPod({ name: 'node-0', namespace: NS });
      await waitFor(() => (calls.length > 0 ? true : pending('no call')), {
        what: 'the hook call',
      });
      expect(calls).toEqual(['/v1/departures/node-0']);
      // A window to show what does not happen: the pod is still there, terminating, well after
      // the 20 ms its container needs to stop.
      await new Promise((resolve) => setTimeout(resolve, 500));
      const pod = await h.core.readNamespacedPod({ name: 'node-0', namespace: NS });
      expect(pod.metadata?.deletionTimestamp).toBeDefined();
      release();
      await gone(h);
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });
});
