// The process kubelet: pods run as local child processes with resolved env, private volume
// files, mapped loopback ports, HTTP readiness, restarts with backoff and clean termination.

import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { freeLoopbackPorts, HOST_PORTS_ANNOTATION } from '../../src/kube-emulator/index.ts';
import { startHarness, type Harness } from './harness.ts';
import { waitFor } from '../../src/harness/wait.ts';

const fixture = join(import.meta.dirname, 'fixtures', 'probe-server.mjs');

interface Report {
  pid: number;
  cwd: string;
  args: string[];
  env: Record<string, string>;
  genesis?: string;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function start(fixedPorts?: Record<string, number>): Promise<Harness> {
  return startHarness({
    kubelet: {
      mode: 'process',
      images: {
        'probe-server': { command: process.execPath, args: [fixture], env: { FROM_TABLE: 'yes' } },
      },
      readinessPeriodMs: 50,
      restartBackoffMs: 100,
      ...(fixedPorts === undefined
        ? {}
        : {
            hostPort: (pod, port) => fixedPorts[`${pod.name}/${port.name ?? port.containerPort}`],
          }),
    },
  });
}

async function seed(h: Harness, replicas: number, periodSeconds = 1): Promise<void> {
  await h.core.createNamespacedSecret({
    namespace: 'default',
    body: { metadata: { name: 'keys' }, stringData: { '001': 'secret-key-1' } },
  });
  await h.core.createNamespacedConfigMap({
    namespace: 'default',
    body: { metadata: { name: 'genesis' }, data: { 'genesis.json': '{"chain":"localnet"}' } },
  });
  await h.core.createNamespacedServiceAccount({
    namespace: 'default',
    body: { metadata: { name: 'manager' } },
  });
  await h.apps.createNamespacedStatefulSet({
    namespace: 'default',
    body: {
      metadata: { name: 'node' },
      spec: {
        replicas,
        serviceName: 'node',
        podManagementPolicy: 'Parallel',
        selector: { matchLabels: { app: 'node' } },
        template: {
          metadata: { labels: { app: 'node' } },
          spec: {
            serviceAccountName: 'manager',
            terminationGracePeriodSeconds: 5,
            containers: [
              {
                name: 'node',
                image: 'probe-server:1.0',
                args: [
                  'run',
                  '--genesis',
                  '/etc/localnet/genesis.json',
                  '--id=$(POD_NAME)',
                  '$$(LITERAL)',
                ],
                ports: [{ name: 'http', containerPort: 8080 }, { containerPort: 9090 }],
                env: [
                  { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
                  {
                    name: 'POD_NAMESPACE',
                    valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } },
                  },
                  { name: 'POD_IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } },
                  { name: 'KEY', valueFrom: { secretKeyRef: { name: 'keys', key: '001' } } },
                  {
                    name: 'GENESIS_JSON',
                    valueFrom: { configMapKeyRef: { name: 'genesis', key: 'genesis.json' } },
                  },
                  { name: 'GREETING', value: 'hello $(POD_NAME)' },
                  { name: 'CONFIG_DIR', value: '/etc/localnet' },
                  { name: 'HOST', value: '0.0.0.0' },
                ],
                volumeMounts: [{ name: 'genesis', mountPath: '/etc/localnet' }],
                readinessProbe: { httpGet: { path: '/healthz', port: 'http' }, periodSeconds },
              },
            ],
            volumes: [{ name: 'genesis', configMap: { name: 'genesis' } }],
          },
        },
      },
    },
  });
}

async function report(h: Harness, pod: string): Promise<Report> {
  const read = await h.core.readNamespacedPod({ name: pod, namespace: 'default' });
  const ports = JSON.parse(read.metadata?.annotations?.[HOST_PORTS_ANNOTATION] ?? '{}') as Record<
    string,
    number
  >;
  const response = await fetch(`http://127.0.0.1:${ports.http ?? 0}/env`);
  return (await response.json()) as Report;
}

/** The host port published for the pod's `http` port. */
async function httpPort(h: Harness, pod: string): Promise<number> {
  const read = await h.core.readNamespacedPod({ name: pod, namespace: 'default' });
  const ports = JSON.parse(read.metadata?.annotations?.[HOST_PORTS_ANNOTATION] ?? '{}') as {
    http: number;
  };
  return ports.http;
}

async function readyReplicas(h: Harness): Promise<number> {
  return (
    (await h.apps.readNamespacedStatefulSet({ name: 'node', namespace: 'default' })).status
      ?.readyReplicas ?? 0
  );
}

describe('process kubelet', () => {
  it('runs each pod as a process with resolved env, rewritten mount paths, private files and published host ports', async () => {
    const h = await start();
    await seed(h, 2);
    await waitFor(async () => (await readyReplicas(h)) === 2, {
      what: 'two ready pods',
      timeoutMs: 15_000,
    });
    const pod = await h.core.readNamespacedPod({ name: 'node-0', namespace: 'default' });
    expect(pod.status).toMatchObject({ podIP: '127.0.0.1', hostIP: '127.0.0.1', phase: 'Running' });
    const ports = JSON.parse(pod.metadata?.annotations?.[HOST_PORTS_ANNOTATION] ?? '') as Record<
      string,
      number
    >;
    expect(Object.keys(ports).sort()).toEqual(['9090', 'http']);
    const r = await report(h, 'node-0');
    expect(r.env).toMatchObject({
      POD_NAME: 'node-0',
      POD_NAMESPACE: 'default',
      POD_IP: '127.0.0.1',
      KEY: 'secret-key-1',
      GENESIS_JSON: '{"chain":"localnet"}',
      GREETING: 'hello node-0',
      HOST: '127.0.0.1',
      PORT_HTTP: String(ports.http),
      FROM_TABLE: 'yes',
      KUBERNETES_NAMESPACE: 'default',
    });
    expect(r.env.PORT_9090).toBeUndefined();
    expect(Object.keys(r.env).sort()).toEqual(
      [
        'CONFIG_DIR',
        'FROM_TABLE',
        'GENESIS_JSON',
        'GREETING',
        'HOME',
        'HOST',
        'KEY',
        'KUBECONFIG',
        'KUBERNETES_NAMESPACE',
        'PATH',
        'PORT_HTTP',
        'POD_IP',
        'POD_NAME',
        'POD_NAMESPACE',
      ].sort(),
    );
    expect(r.args.slice(0, 2)).toEqual(['run', '--genesis']);
    expect(r.args[2]).toBe(join(r.env.CONFIG_DIR ?? '', 'genesis.json'));
    expect(r.args.slice(3)).toEqual(['--id=node-0', '$(LITERAL)']);
    expect(r.genesis).toBe('{"chain":"localnet"}');
    expect(r.env.CONFIG_DIR?.startsWith(h.emulator.dir)).toBe(true);
    expect((await stat(r.args[2] ?? '')).mode & 0o777).toBe(0o600);
    expect((await stat(r.env.CONFIG_DIR ?? '')).mode & 0o777).toBe(0o700);
    expect((await stat(r.cwd)).mode & 0o777).toBe(0o700);
    // The pod's kubeconfig carries its ServiceAccount's token and the emulator's URL.
    const kc = new KubeConfig();
    kc.loadFromFile(r.env.KUBECONFIG ?? '');
    expect(kc.getCurrentCluster()?.server).toBe(h.emulator.url);
    expect(kc.getCurrentUser()?.token).toBe(h.emulator.issueToken('default', 'manager'));
    const pods = await kc.makeApiClient(CoreV1Api).listNamespacedPod({ namespace: 'default' });
    expect(pods.items).toHaveLength(2);
    const log = await readFile(h.emulator.kubelet.logPath('default', 'node-0'), 'utf8');
    expect(log).toContain('env names: ');
    expect(log).not.toContain('secret-key-1');
  });

  it('restarts an exited process with backoff, shows CrashLoopBackOff and counts restarts', async () => {
    const h = await start();
    await seed(h, 1);
    await waitFor(async () => (await readyReplicas(h)) === 1, { timeoutMs: 15_000 });
    const first = await report(h, 'node-0');
    const ports = (await h.core.readNamespacedPod({ name: 'node-0', namespace: 'default' }))
      .metadata?.annotations?.[HOST_PORTS_ANNOTATION];
    await fetch(
      `http://127.0.0.1:${(JSON.parse(ports ?? '{}') as { http: number }).http}/exit?code=3`,
    );
    const crashed = await waitFor(async () => {
      const pod = await h.core.readNamespacedPod({ name: 'node-0', namespace: 'default' });
      const status = pod.status?.containerStatuses?.[0];
      return status?.restartCount === 1 && status;
    });
    expect(crashed.lastState?.terminated?.exitCode).toBe(3);
    await waitFor(async () => (await readyReplicas(h)) === 1, {
      timeoutMs: 15_000,
      what: 'the restarted process to be ready',
    });
    const second = await report(h, 'node-0');
    expect(second.pid).not.toBe(first.pid);
    expect(isAlive(first.pid)).toBe(false);
    h.emulator.kubelet.crash('default', 'node-0');
    await waitFor(async () => {
      const pod = await h.core.readNamespacedPod({ name: 'node-0', namespace: 'default' });
      return pod.status?.containerStatuses?.[0]?.restartCount === 2;
    });
  });

  it('probes a Ready pod every periodSeconds, as the real kubelet does', async () => {
    const h = await start();
    await seed(h, 1);
    await waitFor(async () => (await readyReplicas(h)) === 1, { timeoutMs: 15_000 });
    const port = await httpPort(h, 'node-0');
    const probes = async (): Promise<number[]> =>
      (await (await fetch(`http://127.0.0.1:${port}/probes`)).json()) as number[];
    // Before Ready the kubelet probed every 50 ms (readinessPeriodMs); once Ready, every 1 s
    // (the pod's periodSeconds): three more probes are at least two periods apart.
    const seen = (await probes()).length;
    const later = await waitFor(
      async () => {
        const all = await probes();
        return all.length >= seen + 3 && all.slice(seen);
      },
      { what: 'three probes of the Ready pod', timeoutMs: 15_000 },
    );
    expect(later[2]! - later[0]!).toBeGreaterThanOrEqual(1_800);
  });

  it("probes a restarted container at the fast period again, not a Ready pod's period later", async () => {
    const h = await start();
    await seed(h, 1, 60);
    await waitFor(async () => (await readyReplicas(h)) === 1, { timeoutMs: 15_000 });
    await fetch(`http://127.0.0.1:${await httpPort(h, 'node-0')}/exit?code=3`);
    // With the Ready pod's 60 s period still running, the new process would wait a minute for a
    // probe; at the fast period it is Ready again in well under a second.
    await waitFor(
      async () => {
        const pod = await h.core.readNamespacedPod({ name: 'node-0', namespace: 'default' });
        const status = pod.status?.containerStatuses?.[0];
        return status?.restartCount === 1 && status.ready;
      },
      { what: 'the restarted container to be Ready', timeoutMs: 15_000 },
    );
  });

  it('stops the process with SIGTERM when the pod is deleted, removes its folder, and gives the recreated pod the same ports', async () => {
    const h = await start();
    await seed(h, 1);
    await waitFor(async () => (await readyReplicas(h)) === 1, { timeoutMs: 15_000 });
    const before = await h.core.readNamespacedPod({ name: 'node-0', namespace: 'default' });
    const first = await report(h, 'node-0');
    await h.core.deleteNamespacedPod({ name: 'node-0', namespace: 'default' });
    await waitFor(() => !isAlive(first.pid), { what: 'the process to stop' });
    const recreated = await waitFor(async () => {
      const pod = await h.core.readNamespacedPod({ name: 'node-0', namespace: 'default' });
      return (
        pod.metadata?.uid !== before.metadata?.uid &&
        pod.metadata?.annotations?.[HOST_PORTS_ANNOTATION] !== undefined &&
        pod
      );
    });
    expect(recreated.metadata?.annotations?.[HOST_PORTS_ANNOTATION]).toBe(
      before.metadata?.annotations?.[HOST_PORTS_ANNOTATION],
    );
    await expect(stat(first.cwd)).rejects.toThrow();
    const log = await readFile(h.emulator.kubelet.logPath('default', 'node-0'), 'utf8');
    expect(log).toContain('terminating on SIGTERM');
  });

  it('uses the ports the caller fixes and leaves no process behind after stop()', async () => {
    // A pod cannot be handed a socket: the port is chosen outside the kernel's ephemeral range,
    // which no listen(0) or outgoing connection takes before the pod listens (a port from
    // listen(0), closed and released, could be; test/support/owned-ports.ts).
    const [free = 0] = await freeLoopbackPorts(1);
    const h = await start({ 'node-0/http': free });
    await seed(h, 1);
    await waitFor(async () => (await readyReplicas(h)) === 1, { timeoutMs: 15_000 });
    const pod = await h.core.readNamespacedPod({ name: 'node-0', namespace: 'default' });
    expect(JSON.parse(pod.metadata?.annotations?.[HOST_PORTS_ANNOTATION] ?? '{}')).toMatchObject({
      http: free,
    });
    const r = await report(h, 'node-0');
    await h.close();
    expect(isAlive(r.pid)).toBe(false);
  });
});
