// kubectl cp both ways against a process-kubelet pod: kubectl (pkg/cmd/cp/cp.go) runs `tar` in
// the container through exec — `tar -xmf - -C <dir>` to copy in (copyToPod), `tar cf - <path>` to
// copy out (copyFromPod) — so it works wherever exec runs a `tar` (the emulator runs exec's
// command on this machine, in the pod's folder).
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { eachKubectl } from '../support/kubectl-gate.ts';
import {
  fixtureImages,
  podReady,
  startCluster,
  withVersions,
  type Cluster,
} from './ops-support.ts';

let cluster: Cluster;
let local: string;

beforeAll(async () => {
  local = await mkdtemp(join(tmpdir(), 'kubectl-cp-'));
  cluster = await startCluster({
    kubelet: { mode: 'process', images: fixtureImages, readinessPeriodMs: 50 },
  });
  await cluster.core.createNamespacedPod({
    namespace: 'default',
    body: {
      metadata: { name: 'box' },
      spec: {
        containers: [
          {
            name: 'main',
            image: 'echo',
            ports: [
              { name: 'http', containerPort: 8080 },
              { name: 'echo', containerPort: 7000 },
            ],
          },
        ],
      },
    },
  });
  await podReady(cluster, 'box');
});

afterAll(async () => {
  await cluster.stop();
  await rm(local, { recursive: true, force: true });
});

describe('kubectl cp', () => {
  eachKubectl(withVersions([27, 33]), 'no kubectl of 1.{27, 33}')(
    'kubectl $version: copies a file into the pod and back',
    async (binary) => {
      const source = join(local, `in-${binary.minor}.txt`);
      const text = `hello from ${binary.version}\n`;
      await writeFile(source, text);
      const name = `copied-${binary.minor}.txt`;
      const into = await cluster.kubectl(binary, ['cp', source, `default/box:${name}`]);
      expect(into.stderr).toBe('');
      expect(into.code).toBe(0);
      const cat = await cluster.kubectl(binary, ['exec', 'box', '--', 'cat', name]);
      expect(cat.stdout).toBe(text);
      const back = join(local, `out-${binary.minor}.txt`);
      const out = await cluster.kubectl(binary, ['cp', `default/box:${name}`, back]);
      expect(out.code).toBe(0);
      expect(await readFile(back, 'utf8')).toBe(text);
    },
  );
});
