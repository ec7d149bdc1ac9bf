// Idle cost: what the manager asks of the API server and of the chain's RPC per minute while
// nothing changes — every validator staked, every pod Ready — with 100 validators, against the
// same manager with 4 (the floor: the chain's cost must not grow with the number of validators,
// and the API server should see nothing but watch renewals). The chain commits a block a second
// (one node as validator 001; the others are staked but paused on chain, out of the active set).
// The manager runs in this process here, to read its ChainView's request counter.
// Run alone: `npx node bench/manager-idle.bench.ts`.
import { loadConfig } from '../src/manager/config.ts';
import { loadKubeClients } from '../src/manager/kube/client.ts';
import { createLogger } from '../src/manager/logger.ts';
import { composeManager } from '../src/manager/compose.ts';
import { Metrics } from '../src/manager/metrics.ts';
import { round, runAlone, type BenchResult } from './bench-types.ts';
import { NAMESPACE, Rig } from './support/manager-rig.ts';

const WINDOW_MS = Number(process.env.BENCH_IDLE_WINDOW_MS ?? 60_000);
const BLOCK_MS = 1_000;

interface Idle {
  apiPerMinute: number;
  apiKinds: string;
  chainPerMinute: number;
  blocks: number;
}

async function idle(validators: number): Promise<Idle> {
  const rig = await Rig.start({
    keys: validators,
    replicas: validators,
    staked: validators,
    blockIntervalMs: BLOCK_MS,
  });
  try {
    await rig.stopObserver();
    const config = loadConfig({
      env: {
        CM_CHAIN_RPC_URL: rig.node.rpcUrl,
        CM_NAMESPACE: NAMESPACE,
        CM_JOURNAL_PATH: ':memory:',
        CM_SERVICE_URL_TEMPLATE: '127.0.0.1:{ordinal}',
        CM_LOG_LEVEL: 'warn',
      },
    });
    const manager = composeManager({
      config,
      logger: createLogger({ level: 'warn' }),
      kube: loadKubeClients({ namespace: NAMESPACE, env: {}, kubeConfig: rig.kc }),
      metrics: new Metrics(),
    });
    await manager.start();
    try {
      // Settled: synced, nothing planned, the queue empty.
      await rig.waitForAsync(
        () =>
          Promise.resolve(manager.isSynced() && manager.plan().every((d) => d.action === 'none')),
        30_000,
        'the manager to settle',
      );
      await manager.drained();
      const apiBefore = rig.emulator.requestLog.length;
      const chainBefore = manager.chain.requests;
      const heightBefore = manager.chain.height;
      const started = performance.now();
      await new Promise((resolve) => setTimeout(resolve, WINDOW_MS));
      const minutes = (performance.now() - started) / 60_000;
      const api = rig.emulator.requestLog.slice(apiBefore);
      const kinds = new Map<string, number>();
      for (const r of api) {
        const kind = `${r.method} ${r.path.split('/').at(-1) ?? ''}${r.query.includes('watch=') ? ' (watch)' : ''}`;
        kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
      }
      if (manager.plan().some((d) => d.action !== 'none'))
        throw new Error('the manager planned an action while idle');
      return {
        apiPerMinute: api.length / minutes,
        apiKinds: [...kinds].map(([k, n]) => `${k} ×${n}`).join(', ') || 'none',
        chainPerMinute: (manager.chain.requests - chainBefore) / minutes,
        blocks: manager.chain.height - heightBefore,
      };
    } finally {
      await manager.stop();
    }
  } finally {
    await rig.stop();
  }
}

export async function run(): Promise<BenchResult[]> {
  const small = await idle(4);
  const large = await idle(100);
  return [
    {
      name: 'manager: idle, chain RPC requests per minute, 100 validators',
      value: round(large.chainPerMinute),
      unit: 'req/min',
      floor: { name: 'the same with 4 validators', value: round(small.chainPerMinute) },
      ratio: round(large.chainPerMinute / small.chainPerMinute, 2),
      notes: `${large.blocks} blocks in the window (1 per second); per block: height, validators (one page per 1,000), the block, the mempool; between blocks: height and mempool every 500 ms`,
    },
    {
      name: 'manager: idle, API-server requests per minute, 100 validators',
      value: round(large.apiPerMinute, 2),
      unit: 'req/min',
      floor: { name: 'the same with 4 validators', value: round(small.apiPerMinute, 2) },
      ...(small.apiPerMinute > 0
        ? { ratio: round(large.apiPerMinute / small.apiPerMinute, 2) }
        : {}),
      notes: `requests seen: ${large.apiKinds} (4 validators: ${small.apiKinds}); watches are renewed when the server ends them (30–60 min)`,
    },
  ];
}

await runAlone(run, import.meta);
