// Benchmarks of the localnet node: admission throughput of one node process, and the time a
// 4-validator net of processes takes to commit a block of 1,000 stake transactions, each set
// against the cost of the Ed25519 checks the work implies. Run alone: `npx node bench/localnet.bench.ts`.
import { fileURLToPath } from 'node:url';
import {
  admitTransaction,
  generateKeys,
  PocketRpcClient,
  sha256Digest,
  signTransaction,
  stakeMessage,
  verifyEd25519Native,
  ValidatorKey,
  type SignedTransaction,
} from '../src/pocket/index.ts';
import { startNet, type LocalNet } from '../src/localnet/net.ts';
import type { BenchResult } from './bench-types.ts';

const ADMISSION_TXS = 3_000;
const BLOCK_TXS = 1_000;
const CONCURRENCY = 32;

/** A fresh validator key per index (not from a Secret: ids stop at 999). */
function joiner(label: string, index: number): ValidatorKey {
  return ValidatorKey.fromSeed(sha256Digest(new TextEncoder().encode(`${label}/${index}`)));
}

/** A stake of `staked`'s key, paid by `funder` (the output address, so a valid signer). */
function stakeOf(
  staked: ValidatorKey,
  funder: ValidatorKey,
  serviceUrl: string,
): SignedTransaction {
  return signTransaction({
    key: funder,
    message: stakeMessage({
      publicKey: staked.publicKey,
      amount: '15100000000',
      chains: ['0001'],
      serviceUrl,
      outputAddress: funder.addressBytes,
      signer: funder.addressBytes,
    }),
  });
}

/** Milliseconds to check every transaction's signature once on this thread (node:crypto). */
function signatureCheckMs(txs: readonly SignedTransaction[]): number {
  const started = performance.now();
  for (const tx of txs) admitTransaction(tx.bytes, { verify: verifyEd25519Native });
  return performance.now() - started;
}

async function broadcastAll(
  rpc: PocketRpcClient,
  txs: readonly SignedTransaction[],
): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < txs.length) {
        const tx = txs[next++];
        if (tx !== undefined) await rpc.broadcast(tx);
      }
    }),
  );
}

/** The mempool's size from one-item page (`total_txs`), cheap to poll. */
async function mempoolSize(rpcUrl: string): Promise<number> {
  const response = await fetch(`${rpcUrl}/v1/query/unconfirmed_txs`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ page: 1, per_page: 1 }),
  });
  return ((await response.json()) as { total_txs: number }).total_txs;
}

async function waitUntil(condition: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('benchmark condition not reached in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function admissionThroughput(): Promise<BenchResult> {
  const keys = generateKeys({ count: 1, seed: 'bench-admission' });
  // Every transaction has its own signer (stage A checks no funds), so no cache flatters the
  // signature checks; each stakes its own key.
  const txs = Array.from({ length: ADMISSION_TXS }, (_, i) => {
    const key = joiner('admission', i);
    return stakeOf(key, key, '127.0.0.1:1');
  });
  const floorMs = signatureCheckMs(txs);
  let net: LocalNet | undefined;
  try {
    net = await startNet({ keys, validators: 1, logLevel: 'warn', debugRoutes: true });
    const rpc = new PocketRpcClient({ baseUrl: net.nodes[0]!.rpcUrl });
    await broadcastAll(rpc, txs.slice(0, 200)); // warm-up: JIT, connections
    const measured = txs.slice(200);
    const started = performance.now();
    await broadcastAll(rpc, measured);
    const seconds = (performance.now() - started) / 1000;
    const value = measured.length / seconds;
    const floor = txs.length / (floorMs / 1000);
    return {
      name: 'localnet: transactions admitted per second by one node (HTTP broadcast_tx_sync)',
      value: Math.round(value),
      unit: 'tx/s',
      floor: {
        name: 'Ed25519 checks per second on one core (node:crypto)',
        value: Math.round(floor),
      },
      ratio: Number((value / floor).toFixed(3)),
      notes: `${measured.length} stake txs, ${CONCURRENCY} concurrent keep-alive requests, node in its own process; distinct signers; includes decode, hash, duplicate checks and mempool insert`,
    };
  } finally {
    await net?.stop();
  }
}

async function blockCommitTime(): Promise<BenchResult[]> {
  const keys = generateKeys({ count: 8, seed: 'bench-block' });
  const funders = [...keys.values()].slice(4);
  const txs = Array.from({ length: BLOCK_TXS }, (_, i) =>
    stakeOf(joiner('block', i), funders[i % funders.length]!, `127.0.0.1:${20_000 + i}`),
  );
  const floorMs = signatureCheckMs(txs);
  let net: LocalNet | undefined;
  try {
    net = await startNet({
      keys,
      validators: 4,
      logLevel: 'warn',
      roundTimeoutMs: 5_000,
      debugRoutes: true,
    });
    const clients = net.nodes.map((n) => new PocketRpcClient({ baseUrl: n.rpcUrl }));
    const gossipStarted = performance.now();
    await broadcastAll(clients[0]!, txs);
    await waitUntil(
      async () =>
        (await Promise.all(net!.nodes.map((n) => mempoolSize(n.rpcUrl)))).every(
          (size) => size === BLOCK_TXS,
        ),
      60_000,
    );
    const gossipMs = performance.now() - gossipStarted;
    const started = performance.now();
    const response = await fetch(`${net.nodes[0]!.rpcUrl}/v1/debug/trigger_view?wait=true`, {
      method: 'POST',
    });
    if (response.status !== 200) throw new Error(`trigger_view answered ${response.status}`);
    await waitUntil(
      async () => (await Promise.all(clients.map((c) => c.height()))).every((h) => h === 1),
      60_000,
    );
    const commitMs = performance.now() - started;
    const block = await clients[3]!.block(1);
    const included = block.transactions?.filter((t) => t.result_code === 0).length ?? 0;
    if (included !== BLOCK_TXS) throw new Error(`block 1 holds ${included} successful stakes`);
    return [
      {
        name: 'localnet: 4-node net commits a block of 1,000 stake transactions (trigger → committed on all 4)',
        value: Math.round(commitMs),
        unit: 'ms',
        floor: {
          name: 'checking 1,000 signatures once on one core (node:crypto)',
          value: Math.round(floorMs),
        },
        ratio: Number((commitMs / floorMs).toFixed(2)),
        notes:
          'txs already gossiped to every mempool; the proposer builds and executes the block, 3 validators re-execute it (signatures were checked at admission), 2 vote rounds over HTTP',
      },
      {
        name: 'localnet: 1,000 stake transactions broadcast to one node until in all 4 mempools',
        value: Math.round(gossipMs),
        unit: 'ms',
        floor: {
          name: 'checking 1,000 signatures once on one core (node:crypto)',
          value: Math.round(floorMs),
        },
        ratio: Number((gossipMs / floorMs).toFixed(2)),
        notes:
          'admission on the first node, batched gossip, admission (signature checks) on the other 3',
      },
    ];
  } finally {
    await net?.stop();
  }
}

export async function run(): Promise<BenchResult[]> {
  return [await admissionThroughput(), ...(await blockCommitTime())];
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  process.stdout.write(`${JSON.stringify(await run(), null, 2)}\n`);
}
