// The conformance layer's fixtures: one emulator per test file, each kubectl version with a
// discovery cache of its own, the Python client when /usr/bin/python3 can import it, and the
// versions to run a behaviour with (all that differ, or just the newest where none do).
import { execFile, execFileSync } from 'node:child_process';
import { mkdtemp, rm, writeFile, chmod } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeConfig, CoreV1Api } from '@kubernetes/client-node';
import { kubectlVersions, type KubectlBinary } from '../../src/harness/kubectl.ts';
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

/** The binary of minor version `minor`, when the machine has it. */
export function kubectlOf(minor: number): KubectlBinary | undefined {
  return versions.find((binary) => binary.minor === minor);
}

/** Versions among `minors` the machine has; prints which are missing. */
export function available(minors: readonly number[]): KubectlBinary[] {
  const found = minors
    .map(kubectlOf)
    .filter((binary): binary is KubectlBinary => binary !== undefined);
  const missing = minors.filter((minor) => kubectlOf(minor) === undefined);
  if (missing.length > 0)
    console.warn(`conformance: kubectl ${missing.map((m) => `1.${m}`).join(', ')} absent; skipped`);
  return found;
}

/** The newest kubectl, for behaviours no version changes. */
export const newest = versions.at(-1);

export const pythonReason = ((): string => {
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
if (pythonReason !== '') console.warn(`conformance: Python client checks skipped: ${pythonReason}`);

export interface Cluster {
  emulator: Emulator;
  kubeconfig: string;
  dir: string;
  core: CoreV1Api;
  /** kubectl of `binary` (its own cache dir), with `env` added (KUBE_EDITOR…). */
  kubectl(
    binary: KubectlBinary,
    args: readonly string[],
    options?: { input?: string; env?: Record<string, string> },
  ): Promise<Run>;
  /** /usr/bin/python3 with a script that gets the kubeconfig path as argv[1]. */
  python(script: string, timeoutMs?: number): Promise<Run>;
  /** An executable shell script in the cluster's folder (for KUBE_EDITOR). */
  script(name: string, body: string): Promise<string>;
  stop(): Promise<void>;
}

export async function startCluster(options: EmulatorOptions = {}): Promise<Cluster> {
  const dir = await mkdtemp(join(tmpdir(), 'conformance-'));
  const emulator = await startEmulator({ dir: join(dir, 'emulator'), kubelet: false, ...options });
  const kubeconfig = await emulator.writeKubeconfig(join(dir, 'kubeconfig'));
  const kc = new KubeConfig();
  kc.loadFromOptions(emulator.kubeconfigFor());
  const run = (
    command: string,
    args: readonly string[],
    options_: { input?: string; env?: Record<string, string>; timeoutMs?: number },
  ): Promise<Run> =>
    new Promise((resolve) => {
      const child = execFile(
        command,
        [...args],
        {
          timeout: options_.timeoutMs ?? 30_000,
          env: { PATH: process.env.PATH ?? '', HOME: dir, ...options_.env },
        },
        (error, stdout, stderr) => {
          resolve({
            code: error === null ? 0 : typeof error.code === 'number' ? error.code : 1,
            stdout,
            stderr,
          });
        },
      );
      child.stdin?.end(options_.input ?? '');
    });
  return {
    emulator,
    kubeconfig,
    dir,
    core: kc.makeApiClient(CoreV1Api),
    kubectl(binary, args, options_ = {}) {
      return run(
        binary.path,
        [
          `--kubeconfig=${kubeconfig}`,
          `--cache-dir=${join(dir, `cache-${binary.minor}`)}`,
          '--request-timeout=10s',
          ...args,
        ],
        options_,
      );
    },
    async python(body, timeoutMs) {
      const file = join(dir, `script-${Math.random().toString(36).slice(2)}.py`);
      await writeFile(file, body);
      return run('/usr/bin/python3', [file, kubeconfig], {
        ...(timeoutMs === undefined ? {} : { timeoutMs }),
      });
    },
    async script(name, body) {
      const file = join(dir, name);
      await writeFile(file, `#!/bin/sh\n${body}\n`);
      await chmod(file, 0o755);
      return file;
    },
    async stop() {
      await emulator.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** The requests of the log with `method` and a path that ends with `suffix`. */
export function requestsTo(emulator: Emulator, method: string, suffix: string) {
  return emulator.requestLog.filter(
    (request) => request.method === method && request.path.endsWith(suffix),
  );
}
