// kubectl logs, exec and port-forward against process-kubelet pods, with the versions whose wire
// differs: port-forward is SPDY/3.1 up to 1.30 and the WebSocket tunnel
// (`SPDY/3.1+portforward.k8s.io`) from 1.31; exec is SPDY up to 1.29 and WebSocket
// `v5.channel.k8s.io` from 1.30 (kubectl pkg/cmd/util/helpers.go feature gates); logs is plain
// HTTP in every version (oldest and newest).
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { waitFor } from '../../src/harness/wait.ts';
import {
  fixtureImages,
  podReady,
  startCluster,
  withVersions,
  type Cluster,
} from './ops-support.ts';
import { eachKubectl } from '../support/kubectl-gate.ts';

let cluster: Cluster;

beforeAll(async () => {
  cluster = await startCluster({
    kubelet: {
      mode: 'process',
      images: fixtureImages,
      readinessPeriodMs: 50,
      restartBackoffMs: 100,
    },
  });
  const pod = (
    name: string,
    image: string,
    env: Record<string, string>,
    ports: { name: string; containerPort: number }[] = [],
  ) =>
    cluster.core.createNamespacedPod({
      namespace: 'default',
      body: {
        metadata: { name },
        spec: {
          containers: [
            {
              name: 'main',
              image,
              ports,
              env: Object.entries(env).map(([k, v]) => ({ name: k, value: v })),
            },
          ],
        },
      },
    });
  await pod('web', 'echo', { GREETING: 'hi there' }, [
    { name: 'http', containerPort: 8080 },
    { name: 'echo', containerPort: 7000 },
  ]);
  await pod('chatty', 'talker', { EXIT_AFTER: '3', INTERVAL_MS: '30' });
  await podReady(cluster, 'web');
  await waitFor(
    async () =>
      ((await cluster.core.readNamespacedPod({ name: 'chatty', namespace: 'default' })).status
        ?.containerStatuses?.[0]?.restartCount ?? 0) >= 1,
    { what: 'a restart of chatty' },
  );
});

afterAll(() => cluster.stop());

function echo(port: number, payload: Buffer): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port });
    const chunks: Buffer[] = [];
    let size = 0;
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      size += chunk.length;
      if (size >= payload.length) {
        socket.end();
        resolve(Buffer.concat(chunks));
      }
    });
    socket.on('error', reject);
    socket.write(payload);
  });
}

describe('kubectl port-forward', () => {
  eachKubectl(withVersions([27, 30, 31, 33]), 'no kubectl of 1.{27, 30, 31, 33}')(
    'kubectl $version forwards TCP to a pod port',
    async (binary) => {
      const forward = cluster.background(binary, ['-v=4', 'port-forward', 'pod/web', ':7000']);
      const port = Number(
        await waitFor(() => /Forwarding from 127\.0\.0\.1:(\d+)/.exec(forward.output())?.[1], {
          what: 'kubectl listening',
          timeoutMs: 15_000,
        }),
      );
      const payload = Buffer.alloc(1_000_000, 'x');
      expect((await echo(port, payload)).equals(payload)).toBe(true);
      if (binary.minor >= 31)
        expect(forward.output()).toContain('negotiated protocol: portforward.k8s.io');
      else expect(forward.output()).not.toContain('WebSocket');
      forward.stop();
    },
  );
});

describe('kubectl exec', () => {
  eachKubectl(withVersions([27, 29, 30, 33]), 'no kubectl of 1.{27, 29, 30, 33}')(
    'kubectl $version runs a command with stdin and its exit code',
    async (binary) => {
      const run = await cluster.kubectl(
        binary,
        ['-v=4', 'exec', '-i', 'web', '--', 'sh', '-c', 'cat; echo "$GREETING"; exit 4'],
        'in\n',
      );
      expect(run.code).toBe(4);
      expect(run.stdout).toBe('in\nhi there\n');
      expect(run.stderr).toContain('command terminated with exit code 4');
      if (binary.minor >= 30) expect(run.stderr).toContain('The subprotocol is v5.channel.k8s.io');
    },
  );
});

describe('kubectl logs', () => {
  eachKubectl(withVersions([27, 33]), 'no kubectl of 1.{27, 33}')(
    'kubectl $version reads the current and previous run, tails and follows',
    async (binary) => {
      const previous = await cluster.kubectl(binary, ['logs', 'chatty', '--previous', '--tail=3']);
      expect(previous).toMatchObject({
        code: 0,
        stdout: 'line 3\nwarning 3\nno newline at the end',
      });
      const stamped = await cluster.kubectl(binary, [
        'logs',
        'chatty',
        '--previous',
        '--timestamps',
        '--tail=1',
      ]);
      expect(stamped.stdout).toMatch(/^\d{4}-\d\d-\d\dT[\d:.]+Z no newline at the end$/);
      const followed = await cluster.kubectl(binary, ['logs', '-f', 'chatty']);
      expect(followed.code).toBe(0);
      expect(followed.stdout).toMatch(/^start pid=\d+\n/);
      const none = await cluster.kubectl(binary, ['logs', 'web', '-c', 'sidecar']);
      expect(none.stderr).toContain('container sidecar is not valid for pod web');
    },
  );
});
