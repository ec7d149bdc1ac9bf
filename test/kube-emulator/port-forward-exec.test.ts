// `kubectl port-forward` and `kubectl exec` against process-kubelet pods: SPDY/3.1 upgrades
// (every kubectl), the WebSocket tunnel (1.31+ port-forward) and v5 channels (1.30+ exec), the
// WebSocket channel protocols client-node speaks, and the errors the kubelet writes.
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Writable } from 'node:stream';
import { Exec, PortForward, type V1Status } from '@kubernetes/client-node';
import { describe, expect, it, onTestFinished } from 'vitest';
import { kubectlVersions, type KubectlBinary } from '../../src/harness/kubectl.ts';
import { waitFor } from '../../src/harness/wait.ts';
import { startHarness, type Harness } from './harness.ts';
import { eachKubectl, noKubectl } from '../support/kubectl-gate.ts';

const fixtures = join(import.meta.dirname, 'fixtures');
// The wire of each version is checked in test/conformance/kubectl-streams.test.ts; here the
// oldest (SPDY) and the newest (WebSocket) kubectl.
const versions = [...new Set([kubectlVersions()[0], kubectlVersions().at(-1)])].filter(
  (binary): binary is KubectlBinary => binary !== undefined,
);

async function echoHarness(): Promise<Harness> {
  const h = await startHarness({
    kubelet: {
      mode: 'process',
      images: {
        echo: {
          command: process.execPath,
          args: [join(fixtures, 'echo-server.mjs')],
          binaries: {
            greet: {
              command: '/bin/sh',
              args: ['-c', 'echo "hello on $PORT"'],
              env: { PORT: '$(PORT_HTTP)' },
            },
          },
        },
      },
      readinessPeriodMs: 50,
    },
  });
  await h.core.createNamespacedPod({
    namespace: 'default',
    body: {
      metadata: { name: 'web' },
      spec: {
        containers: [
          {
            name: 'main',
            image: 'echo',
            env: [{ name: 'GREETING', value: 'hi there' }],
            ports: [
              { name: 'http', containerPort: 8080 },
              { name: 'echo', containerPort: 7000 },
            ],
            readinessProbe: { httpGet: { path: '/healthz', port: 'http' } },
          },
        ],
      },
    },
  });
  await waitFor(
    async () =>
      (
        await h.core.readNamespacedPod({ name: 'web', namespace: 'default' })
      ).status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'),
    { what: 'pod web ready', timeoutMs: 15_000 },
  );
  return h;
}

interface Forwarding {
  port: number;
  output: () => string;
}

/** Runs `kubectl port-forward` (a child we stop at the end of the test) until it listens. */
async function portForward(
  h: Harness,
  binary: KubectlBinary,
  args: readonly string[],
): Promise<Forwarding> {
  const cache = await mkdtemp(join(tmpdir(), 'pf-cache-'));
  const child = spawn(
    binary.path,
    [`--kubeconfig=${h.kubeconfigPath}`, `--cache-dir=${cache}`, '-v=4', 'port-forward', ...args],
    { stdio: ['ignore', 'pipe', 'pipe'], env: { PATH: process.env.PATH ?? '', HOME: cache } },
  );
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  onTestFinished(async () => {
    child.kill('SIGKILL');
    await rm(cache, { recursive: true, force: true });
  });
  const port = await waitFor(() => /Forwarding from 127\.0\.0\.1:(\d+)/.exec(output)?.[1], {
    what: 'kubectl port-forward listening',
    timeoutMs: 15_000,
  });
  return { port: Number(port), output: () => output };
}

/** Sends `payload` to a TCP port and reads until as many bytes came back. */
function echo(port: number, payload: Buffer): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port });
    const chunks: Buffer[] = [];
    let received = 0;
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      received += chunk.length;
      if (received >= payload.length) {
        socket.end();
        resolve(Buffer.concat(chunks));
      }
    });
    socket.on('error', reject);
    socket.write(payload);
  });
}

function pattern(size: number): Buffer {
  const body = Buffer.alloc(size);
  for (let i = 0; i < size; i++) body[i] = (i * 7) % 256;
  return body;
}

describe('kubectl port-forward', () => {
  eachKubectl(versions, 'no kubectl of 1.27 or newer')(
    'kubectl $version forwards HTTP and raw TCP, several connections, megabytes both ways',
    async (binary) => {
      const h = await echoHarness();
      const forwarding = await portForward(h, binary, ['pod/web', ':8080', ':7000']);
      const ports = [
        ...forwarding.output().matchAll(/Forwarding from 127\.0\.0\.1:(\d+) -> (\d+)/g),
      ];
      const local = new Map(ports.map((m) => [Number(m[2]), Number(m[1])]));
      const http = `http://127.0.0.1:${local.get(8080) ?? 0}`;
      expect(await (await fetch(`${http}/healthz`)).text()).toBe('ok');
      const big = Buffer.from(await (await fetch(`${http}/big?bytes=3000000`)).arrayBuffer());
      expect(big.length).toBe(3_000_000);
      expect(big.every((byte, i) => byte === i % 251)).toBe(true);
      const payload = pattern(2_000_000);
      const results = await Promise.all([1, 2, 3].map(() => echo(local.get(7000) ?? 0, payload)));
      for (const back of results) expect(back.equals(payload)).toBe(true);
      // 1.31 and later reach the pod through the WebSocket tunnel, not the SPDY fallback.
      if (binary.minor >= 31) {
        expect(forwarding.output()).toContain('negotiated protocol: portforward.k8s.io');
        expect(forwarding.output()).not.toContain('fallback to secondary dialer');
      }
    },
  );

  it.skipIf(noKubectl)(
    'reports a port no container declares, and a simulated pod, as the kubelet reports failures',
    async () => {
      const binary = versions.at(-1);
      if (binary === undefined) throw new Error('no kubectl (the test is skipIf(noKubectl))');
      const h = await echoHarness();
      const forwarding = await portForward(h, binary, ['pod/web', ':9999']);
      const refused = await fetch(`http://127.0.0.1:${forwarding.port}/`).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(Error);
      await waitFor(
        () => forwarding.output().includes('port 9999 is not a container port of pod web'),
        {
          what: 'the error on the error stream',
        },
      );
      const sim = await startHarness({ kubelet: { mode: 'simulated' } });
      await sim.core.createNamespacedPod({
        namespace: 'default',
        body: {
          metadata: { name: 's' },
          spec: { containers: [{ name: 'c', image: 'x', ports: [{ containerPort: 80 }] }] },
        },
      });
      await waitFor(
        async () =>
          (await sim.core.readNamespacedPod({ name: 's', namespace: 'default' })).status?.phase ===
          'Running',
      );
      const simulated = await portForward(sim, binary, ['pod/s', ':80']);
      await fetch(`http://127.0.0.1:${simulated.port}/`).catch(() => undefined);
      await waitFor(() => simulated.output().includes('runs no process'), {
        what: 'the simulated pod refusal',
      });
    },
  );

  it('serves client-node PortForward (WebSocket channels with the port header)', async () => {
    const h = await echoHarness();
    const received: Buffer[] = [];
    const output = new Writable({
      write(chunk: Buffer, _encoding, done) {
        received.push(chunk);
        done();
      },
    });
    const input = new PassThrough();
    const ws = await new PortForward(h.kc).portForward(
      'default',
      'web',
      [7000],
      output,
      null,
      input,
    );
    onTestFinished(() => (ws as { close(): void }).close());
    input.write('ping through the channel');
    await waitFor(() => Buffer.concat(received).toString() === 'ping through the channel', {
      what: 'the echo',
    });
  });

  it.skipIf(noKubectl)(
    'answers 400 without an upgrade and 404 for a missing pod, before upgrading',
    async () => {
      const h = await echoHarness();
      const plain = await fetch(
        `${h.emulator.url}/api/v1/namespaces/default/pods/web/portforward`,
        {
          method: 'POST',
        },
      );
      expect(plain.status).toBe(400);
      expect(((await plain.json()) as { message: string }).message).toBe(
        'Upgrade request required',
      );
      const binary = versions.at(-1);
      if (binary === undefined) throw new Error('no kubectl (the test is skipIf(noKubectl))');
      const missing = await h.kubectl(['port-forward', 'pod/ghost', '8080'], { binary });
      expect(missing.code).not.toBe(0);
      expect(missing.stderr).toContain('pods "ghost" not found');
    },
  );
});

describe('kubectl exec', () => {
  eachKubectl(versions, 'no kubectl of 1.27 or newer')(
    'kubectl $version runs a command with the container env, stdin, exit codes',
    async (binary) => {
      const h = await echoHarness();
      const run = h.kubectl(
        ['exec', 'web', '--', 'sh', '-c', 'echo "out $GREETING"; echo err >&2; exit 3'],
        {
          binary,
        },
      );
      expect(await run).toMatchObject({ code: 3, stdout: 'out hi there\n' });
      expect((await run).stderr).toContain('err\n');
      expect((await run).stderr).toContain('command terminated with exit code 3');
      const cat = await h.kubectl(['exec', '-i', 'web', '--', 'cat'], {
        binary,
        input: 'from stdin\n',
      });
      expect(cat).toMatchObject({ code: 0, stdout: 'from stdin\n' });
      const provided = await h.kubectl(['exec', 'web', '--', 'greet'], { binary });
      expect(provided.stdout).toMatch(/^hello on \d+\n$/);
      const missing = await h.kubectl(['exec', 'web', '--', 'no-such-program'], { binary });
      expect(missing.code).toBe(1);
      expect(missing.stderr).toContain(
        'error executing command in container: exec: "no-such-program": executable file not found in $PATH',
      );
    },
  );

  eachKubectl(versions, 'no kubectl of 1.27 or newer')(
    "kubectl $version killed mid-command: the command's process group is killed too",
    async (binary) => {
      const h = await echoHarness();
      const child = spawn(
        binary.path,
        [
          `--kubeconfig=${h.kubeconfigPath}`,
          'exec',
          'web',
          '--',
          'sh',
          '-c',
          'echo $$; exec sleep 60',
        ],
        {
          stdio: ['ignore', 'pipe', 'ignore'],
          env: { PATH: process.env.PATH ?? '', HOME: h.emulator.dir },
        },
      );
      onTestFinished(() => {
        child.kill('SIGKILL');
      });
      let out = '';
      child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
      const pid = Number(
        await waitFor(() => /^(\d+)\n/.exec(out)?.[1], { what: "the command's pid" }),
      );
      const alive = (): boolean => {
        try {
          process.kill(pid, 0);
          return true;
        } catch {
          return false;
        }
      };
      expect(alive()).toBe(true);
      child.kill('SIGKILL');
      await waitFor(() => !alive(), { what: `process ${pid} gone` });
    },
  );

  it.skipIf(noKubectl)(
    'runs through client-node Exec (WebSocket v5), and refuses a simulated pod and attach',
    async () => {
      const h = await echoHarness();
      let out = '';
      const stdout = new Writable({
        write(chunk: Buffer, _encoding, done) {
          out += chunk.toString();
          done();
        },
      });
      const status = await new Promise<V1Status>((resolve, reject) => {
        new Exec(h.kc)
          .exec(
            'default',
            'web',
            'main',
            ['sh', '-c', 'echo $GREETING; exit 2'],
            stdout,
            null,
            null,
            false,
            resolve,
          )
          .catch(reject);
      });
      expect(out).toBe('hi there\n');
      expect(status).toMatchObject({
        status: 'Failure',
        reason: 'NonZeroExitCode',
        details: { causes: [{ reason: 'ExitCode', message: '2' }] },
      });
      const binary = versions.at(-1);
      if (binary === undefined) throw new Error('no kubectl (the test is skipIf(noKubectl))');
      const attach = await h.kubectl(['attach', 'web'], { binary, timeoutMs: 10_000 });
      expect(attach.stderr).toContain('attach is not supported by the kube-emulator');
      const sim = await startHarness({ kubelet: { mode: 'simulated' } });
      await sim.core.createNamespacedPod({
        namespace: 'default',
        body: { metadata: { name: 's' }, spec: { containers: [{ name: 'c', image: 'x' }] } },
      });
      await waitFor(
        async () =>
          (await sim.core.readNamespacedPod({ name: 's', namespace: 'default' })).status?.phase ===
          'Running',
      );
      const simulated = await sim.kubectl(['exec', 's', '--', 'true'], { binary });
      expect(simulated.stderr).toContain('runs no process for pod s (simulated mode)');
    },
  );
});
