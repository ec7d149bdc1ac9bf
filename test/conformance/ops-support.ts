// Fixtures of the subresource and controller conformance checks: an emulator per test file whose
// process kubelet runs the test fixtures, each kubectl version with a discovery cache of its own,
// long-running kubectl commands (port-forward) stopped at the end, and the Python client when
// /usr/bin/python3 can import it. The kubectl versions a behaviour runs with: those that differ.
import { execFile, execFileSync, spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AppsV1Api, CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { kubectlVersions, type KubectlBinary } from '../../src/harness/kubectl.ts';
import { waitFor } from '../../src/harness/wait.ts';
import {
  startEmulator,
  type Emulator,
  type EmulatorOptions,
} from '../../src/kube-emulator/index.ts';

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

export const versions = kubectlVersions();
if (versions.length === 0)
  console.warn('conformance: no kubectl 1.27 or newer on this machine; kubectl checks skipped');

/** The versions among `minors` the machine has (missing ones are printed and skipped). */
export function withVersions(minors: readonly number[]): KubectlBinary[] {
  const found = versions.filter((binary) => minors.includes(binary.minor));
  const missing = minors.filter((minor) => !found.some((binary) => binary.minor === minor));
  if (missing.length > 0)
    console.warn(`conformance: kubectl ${missing.map((m) => `1.${m}`).join(', ')} absent; skipped`);
  return found;
}

export const pythonMissing = ((): string => {
  try {
    execFileSync('/usr/bin/python3', ['-c', 'import kubernetes'], {
      stdio: 'ignore',
      timeout: 20_000,
    });
    return '';
  } catch {
    return '/usr/bin/python3 cannot import kubernetes (apt-get install python3-kubernetes)';
  }
})();
if (pythonMissing !== '')
  console.warn(`conformance: Python client checks skipped: ${pythonMissing}`);

const fixtures = join(import.meta.dirname, '..', 'kube-emulator', 'fixtures');

/** The process kubelet's image table of the fixtures: `echo` (TCP echo + HTTP) and `talker`. */
export const fixtureImages = {
  echo: { command: process.execPath, args: [join(fixtures, 'echo-server.mjs')] },
  talker: { command: process.execPath, args: [join(fixtures, 'talker.mjs')] },
};

export interface Cluster {
  emulator: Emulator;
  kubeconfig: string;
  core: CoreV1Api;
  apps: AppsV1Api;
  kubectl(binary: KubectlBinary, args: readonly string[], input?: string): Promise<Run>;
  /** Starts a kubectl command that runs until the test file ends (port-forward). */
  background(
    binary: KubectlBinary,
    args: readonly string[],
  ): { output: () => string; stop: () => void };
  /** /usr/bin/python3 running `script` with the kubeconfig path as argv[1]. */
  python(script: string): Promise<Run>;
  stop(): Promise<void>;
}

function run(
  command: string,
  args: readonly string[],
  options: { home: string; input?: string },
): Promise<Run> {
  return new Promise((resolve) => {
    const child = execFile(
      command,
      [...args],
      { timeout: 40_000, env: { PATH: process.env.PATH ?? '', HOME: options.home } },
      (error, stdout, stderr) =>
        resolve({
          code: error === null ? 0 : typeof error.code === 'number' ? error.code : 1,
          stdout,
          stderr,
        }),
    );
    child.stdin?.end(options.input ?? '');
  });
}

export async function startCluster(options: EmulatorOptions = {}): Promise<Cluster> {
  const dir = await mkdtemp(join(tmpdir(), 'conformance-ops-'));
  const emulator = await startEmulator({ dir: join(dir, 'emulator'), ...options });
  const kubeconfig = await emulator.writeKubeconfig(join(dir, 'kubeconfig'));
  const kc = new KubeConfig();
  kc.loadFromOptions(emulator.kubeconfigFor());
  const children: { kill: () => void }[] = [];
  const flags = (binary: KubectlBinary): string[] => [
    `--kubeconfig=${kubeconfig}`,
    `--cache-dir=${join(dir, `cache-${binary.minor}`)}`,
    '--request-timeout=10s',
  ];
  return {
    emulator,
    kubeconfig,
    core: kc.makeApiClient(CoreV1Api),
    apps: kc.makeApiClient(AppsV1Api),
    kubectl: (binary, args, input) =>
      run(binary.path, [...flags(binary), ...args], {
        home: dir,
        ...(input === undefined ? {} : { input }),
      }),
    background(binary, args) {
      const child = spawn(binary.path, [...flags(binary), ...args], {
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { PATH: process.env.PATH ?? '', HOME: dir },
      });
      let output = '';
      child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
      const handle = { kill: () => child.kill('SIGKILL') };
      children.push(handle);
      return { output: () => output, stop: handle.kill };
    },
    async python(script) {
      const file = join(dir, `check-${children.length}-${Date.now()}.py`);
      await writeFile(file, script);
      return run('/usr/bin/python3', [file, kubeconfig], { home: dir });
    },
    async stop() {
      for (const child of children) child.kill();
      await emulator.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** Waits until a pod is Running and Ready. */
export async function podReady(cluster: Cluster, name: string): Promise<void> {
  await waitFor(
    async () =>
      (
        await cluster.core.readNamespacedPod({ name, namespace: 'default' }).catch(() => undefined)
      )?.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'),
    { what: `pod ${name} ready`, timeoutMs: 20_000 },
  );
}
