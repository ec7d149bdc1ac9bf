// Starts an emulator for one test, with a client-node KubeConfig, a kubeconfig file, and a
// kubectl 1.32 runner with a fresh discovery cache; `close()` stops all of it.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  AppsV1Api,
  CoordinationV1Api,
  CoreV1Api,
  EventsV1Api,
  KubeConfig,
} from '@kubernetes/client-node';
import { onTestFinished } from 'vitest';
import {
  startEmulator,
  type Emulator,
  type EmulatorOptions,
} from '../../src/kube-emulator/index.ts';
import {
  findKubectl,
  runKubectl,
  type KubectlBinary,
  type KubectlResult,
} from '../../src/harness/kubectl.ts';

export type { KubectlResult };

export const KUBECTL = findKubectl()?.path ?? 'kubectl';

export interface Harness {
  emulator: Emulator;
  kc: KubeConfig;
  core: CoreV1Api;
  apps: AppsV1Api;
  coordination: CoordinationV1Api;
  events: EventsV1Api;
  kubeconfigPath: string;
  /** Runs kubectl against the emulator (no shell; fresh cache dir for this harness). */
  kubectl(
    args: readonly string[],
    options?: { timeoutMs?: number; binary?: KubectlBinary; input?: string },
  ): Promise<KubectlResult>;
  close(): Promise<void>;
}

/** Starts an emulator for the running test; it is stopped (with all it runs) when the test ends. */
export async function startHarness(options: EmulatorOptions = {}): Promise<Harness> {
  const work = await mkdtemp(join(tmpdir(), 'emulator-test-'));
  const emulator = await startEmulator({ dir: join(work, 'emulator'), ...options });
  const kubeconfigPath = await emulator.writeKubeconfig(join(work, 'kubeconfig'));
  const cacheDir = join(work, 'kube-cache');
  const kc = new KubeConfig();
  kc.loadFromOptions(emulator.kubeconfigFor());
  onTestFinished(async () => {
    await emulator.stop();
    await rm(work, { recursive: true, force: true });
  });
  return {
    emulator,
    kc,
    core: kc.makeApiClient(CoreV1Api),
    apps: kc.makeApiClient(AppsV1Api),
    coordination: kc.makeApiClient(CoordinationV1Api),
    events: kc.makeApiClient(EventsV1Api),
    kubeconfigPath,
    kubectl(args, runOptions = {}) {
      // One discovery cache per kubectl version: their cache formats differ.
      const cache =
        runOptions.binary === undefined ? cacheDir : `${cacheDir}-${runOptions.binary.minor}`;
      return runKubectl(args, {
        kubeconfig: kubeconfigPath,
        cacheDir: cache,
        home: work,
        ...runOptions,
      });
    },
    async close() {
      await emulator.stop();
      await rm(work, { recursive: true, force: true });
    },
  };
}

/** A StatefulSet manifest with one container (tests change what they need). */
export function statefulSet(options: {
  name: string;
  replicas: number;
  podManagementPolicy?: 'OrderedReady' | 'Parallel';
  image?: string;
}) {
  const labels = { app: options.name };
  return {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: { name: options.name, namespace: 'default' },
    spec: {
      replicas: options.replicas,
      serviceName: options.name,
      podManagementPolicy: options.podManagementPolicy ?? 'OrderedReady',
      selector: { matchLabels: labels },
      template: {
        metadata: { labels },
        spec: { containers: [{ name: 'main', image: options.image ?? 'busybox:1.36' }] },
      },
    },
  };
}

/** Whether a read fails with 404 (for waiting until an object is gone). */
export async function isGone(read: () => Promise<unknown>): Promise<boolean> {
  try {
    await read();
    return false;
  } catch (error: unknown) {
    return (error as { code?: number }).code === 404;
  }
}

/** The Status a call fails with (the test fails if the call succeeds). */
export async function failure(call: Promise<unknown>): Promise<ReturnType<typeof statusOf>> {
  try {
    await call;
  } catch (error: unknown) {
    return statusOf(error);
  }
  throw new Error('the call succeeded');
}

/** The Status body of a client-node ApiException. */
export function statusOf(error: unknown): {
  code: number;
  reason: string;
  message: string;
  details?: Record<string, unknown>;
} {
  const body = (error as { body?: unknown }).body;
  return JSON.parse(typeof body === 'string' ? body : JSON.stringify(body)) as never;
}
