// `startService({ env })` runs the manager in-process with an env of its own (tests, embedding):
// the Kubernetes configuration must come from that env's KUBECONFIG, not from process.env.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '../../src/kube-emulator/index.ts';
import { loadKubeClients } from '../../src/manager/kube/client.ts';

let emulator: Emulator | undefined;
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'cm-kubeconfig-'));
  emulator = await startEmulator({ kubelet: false });
});

afterAll(async () => {
  await emulator?.stop();
  await rm(dir, { recursive: true, force: true });
});

it('reads the kubeconfig named by the KUBECONFIG of the env it is given', async () => {
  const path = await emulator!.writeKubeconfig(join(dir, 'kubeconfig'), { namespace: 'devnet' });
  expect(process.env.KUBECONFIG).not.toBe(path);
  const kube = loadKubeClients({ namespace: undefined, env: { KUBECONFIG: path } });
  expect(kube.server).toBe(emulator!.url);
  expect(kube.namespace).toBe('devnet');
  expect(kube.source).toBe('kubeconfig');
  const pods = await kube.core.listNamespacedPod({ namespace: 'devnet' });
  expect(pods.items).toEqual([]);
});
