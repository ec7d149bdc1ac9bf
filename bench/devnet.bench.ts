// The devnet end to end: time from `POST /v1/scale` to the answer of `wait: active`, for
// 4 → 8 and 8 → 4 validators with the auto pacemaker, each against a floor measured in the same
// run: the new pods Ready as an informer sees them, plus one block interval (a stake must land
// in a block before its validator can sign the next); for the way down, one block interval (the
// unstakes must land in a block). Run alone: `npx node bench/devnet.bench.ts`.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CoreV1Api, KubeConfig, makeInformer, type V1Pod } from '@kubernetes/client-node';
import { startDevnet } from '../src/devnet/devnet.ts';
import { PocketRpcClient } from '../src/pocket/index.ts';
import { duration, runAlone, type BenchResult } from './bench-types.ts';

const BLOCK_INTERVAL_MS = 500;

const isReady = (pod: V1Pod): boolean =>
  pod.metadata?.deletionTimestamp === undefined &&
  pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true;

export async function run(): Promise<BenchResult[]> {
  const dir = await mkdtemp(join(tmpdir(), 'bench-devnet-'));
  const devnet = await startDevnet({
    validators: 4,
    keys: 8,
    dir,
    kubePort: 0,
    rpcPort: 0,
    pacemaker: 'auto',
    blockIntervalMs: BLOCK_INTERVAL_MS,
    txMode: 'rpc',
    manager: true,
  });
  const { info } = devnet;
  const kc = new KubeConfig();
  kc.loadFromFile(info.kubeconfig);
  const core = kc.makeApiClient(CoreV1Api);
  // When each pod was first seen Ready by an informer (the floor's clock).
  const readyAt = new Map<string, number>();
  const informer = makeInformer(kc, `/api/v1/namespaces/${info.namespace}/pods`, () =>
    core.listNamespacedPod({ namespace: info.namespace }),
  );
  const seen = (pod: V1Pod): void => {
    const name = pod.metadata?.name ?? '';
    if (isReady(pod) && !readyAt.has(name)) readyAt.set(name, performance.now());
  };
  informer.on('add', seen);
  informer.on('update', seen);
  await informer.start();
  const chain = new PocketRpcClient({ baseUrl: info.chainRpcUrl });

  const scale = async (replicas: number): Promise<{ ms: number; blocks: number }> => {
    const before = await chain.height();
    const started = performance.now();
    const response = await fetch(`${info.managerUrl ?? ''}/v1/scale`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${info.token ?? ''}` },
      body: JSON.stringify({ replicas, wait: 'active', timeoutSeconds: 300 }),
      signal: AbortSignal.timeout(330_000),
    });
    const ms = performance.now() - started;
    if (response.status !== 200)
      throw new Error(`scale to ${replicas}: HTTP ${response.status} ${await response.text()}`);
    return { ms, blocks: (await chain.height()) - before };
  };

  try {
    const upStart = performance.now();
    const up = await scale(8);
    const newPods = ['validator-4', 'validator-5', 'validator-6', 'validator-7'];
    const lastReady = Math.max(...newPods.map((p) => readyAt.get(p) ?? Number.NaN));
    const upFloor = lastReady - upStart + BLOCK_INTERVAL_MS;
    const down = await scale(4);
    return [
      duration(
        'devnet: POST /v1/scale 4 → 8 until wait active (auto pacemaker, 500 ms blocks)',
        up.ms,
        { name: 'last new pod Ready (informer) + one block interval', value: upFloor },
        `${up.blocks} blocks; BFT pacing lets fewer than half of the proven set join at once, so 4 joiners come in waves`,
      ),
      duration(
        'devnet: POST /v1/scale 8 → 4 until wait active (drain, then remove)',
        down.ms,
        { name: 'one block interval', value: BLOCK_INTERVAL_MS },
        `${down.blocks} blocks; the unstakes go out together and the pods go once the chain shows them out`,
      ),
    ];
  } finally {
    await informer.stop();
    await devnet.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

await runAlone(run, import.meta);
