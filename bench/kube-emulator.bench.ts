// Benchmark: a StatefulSet scaled 0 → 1,000 (Parallel, simulated kubelet) with 20 client-node
// informers watching, timed until every pod is Ready as an informer sees it; the floor is the
// same number of bare store writes. Run alone with `npx node bench/kube-emulator.bench.ts`.

import { fileURLToPath } from 'node:url';
import {
  AppsV1Api,
  CoreV1Api,
  KubeConfig,
  makeInformer,
  PatchStrategy,
  setHeaderOptions,
  type Informer,
  type ObjectCache,
  type V1Pod,
} from '@kubernetes/client-node';
import { startEmulator } from '../src/kube-emulator/index.ts';
import { Store } from '../src/kube-emulator/store.ts';
import type { KubeObject } from '../src/kube-emulator/types.ts';
import type { BenchResult } from './bench-types.ts';

const REPLICAS = 1000;
const INFORMERS = 20;

function isReady(pod: V1Pod): boolean {
  return pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true;
}

/** The time (ms) for `writes` bare store writes of pod-sized objects: the floor. */
function bareWrites(writes: number, template: KubeObject): number {
  const store = new Store({ historySize: 20_000 });
  const objects = Array.from({ length: writes }, (_, i) => ({
    ...structuredClone(template),
    metadata: { ...template.metadata, name: `web-${i % REPLICAS}`, namespace: 'default' },
  }));
  const started = performance.now();
  for (const [i, object] of objects.entries()) {
    if (i < REPLICAS) store.create('/pods', object);
    else store.update('/pods', object);
  }
  return performance.now() - started;
}

async function waitUntil(condition: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('benchmark timed out');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

export async function run(): Promise<BenchResult[]> {
  const emulator = await startEmulator({
    kubelet: { mode: 'simulated', pendingMs: 10, readyMs: 10 },
    historySize: 20_000,
  });
  const informers: (Informer<V1Pod> & ObjectCache<V1Pod>)[] = [];
  try {
    const kc = new KubeConfig();
    kc.loadFromOptions(emulator.kubeconfigFor());
    const core = kc.makeApiClient(CoreV1Api);
    const apps = kc.makeApiClient(AppsV1Api);
    await apps.createNamespacedStatefulSet({
      namespace: 'default',
      body: {
        metadata: { name: 'web' },
        spec: {
          replicas: 0,
          serviceName: 'web',
          podManagementPolicy: 'Parallel',
          selector: { matchLabels: { app: 'web' } },
          template: {
            metadata: { labels: { app: 'web' } },
            spec: { containers: [{ name: 'main', image: 'busybox:1.36' }] },
          },
        },
      },
    });
    for (let i = 0; i < INFORMERS; i++) {
      const informer = makeInformer(
        kc,
        '/api/v1/namespaces/default/pods',
        () => core.listNamespacedPod({ namespace: 'default', labelSelector: 'app=web' }),
        'app=web',
      );
      await informer.start();
      informers.push(informer);
    }
    global.gc?.();
    const heapBefore = process.memoryUsage().heapUsed;
    const rvBefore = emulator.store.resourceVersion;
    const started = performance.now();
    await apps.patchNamespacedStatefulSetScale(
      { name: 'web', namespace: 'default', body: { spec: { replicas: REPLICAS } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    const readyIn = (informer: ObjectCache<V1Pod>) => () =>
      informer.list('default').filter(isReady).length === REPLICAS;
    await waitUntil(readyIn(informers[0]!), 120_000);
    const firstInformer = performance.now() - started;
    await waitUntil(() => informers.every((informer) => readyIn(informer)()), 120_000);
    const allInformers = performance.now() - started;
    const writes = emulator.store.resourceVersion - rvBefore;
    const memory = process.memoryUsage();
    const template = await core.readNamespacedPod({
      name: 'web-0',
      namespace: 'default',
    });
    const floor = bareWrites(writes, JSON.parse(JSON.stringify(template)) as KubeObject);
    return [
      {
        name: 'kube-emulator: sts 0→1000 Ready, seen by the first of 20 informers',
        value: Math.round(firstInformer),
        unit: 'ms',
        floor: { name: `${writes} bare store writes`, value: Math.round(floor * 100) / 100 },
        ratio: Math.round((firstInformer / floor) * 10) / 10,
        notes: `simulated kubelet pendingMs=10 readyMs=10, Parallel; ${writes} writes`,
      },
      {
        name: 'kube-emulator: sts 0→1000 Ready, seen by all 20 informers',
        value: Math.round(allInformers),
        unit: 'ms',
        floor: { name: `${writes} bare store writes`, value: Math.round(floor * 100) / 100 },
        ratio: Math.round((allInformers / floor) * 10) / 10,
      },
      {
        name: 'kube-emulator: heap growth during the scale (server and 20 informers, one process)',
        value: Math.round((memory.heapUsed - heapBefore) / 1024 / 1024),
        unit: 'MiB',
        notes: `rss ${Math.round(memory.rss / 1024 / 1024)} MiB at the end`,
      },
    ];
  } finally {
    for (const informer of informers) await informer.stop();
    await emulator.stop();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  process.stdout.write(`${JSON.stringify(await run(), null, 2)}\n`);
}
