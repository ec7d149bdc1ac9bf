// The devnet end to end: time from `POST /v1/scale` to the answer of `wait: active`, for
// 4 → 8, 8 → 4, 4 → 16 and 16 → 4 validators with the auto pacemaker, each against a floor
// measured in the same run. Scale-up: the pacing-aware floor (bench/support/pacing-floor.ts),
// computed from this run's block commit times, block proposal times, first votes and pod Ready
// times. Scale-down: the commit of the first block proposed after the call (the unstakes must
// land in one) plus the leaving pods' stop time (from their deletion to their removal, the
// slowest of them). Run alone: `npx node bench/devnet.bench.ts`.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CoreV1Api, KubeConfig, makeInformer, type V1Pod } from '@kubernetes/client-node';
import { startDevnet } from '../src/devnet/devnet.ts';
import { KEYS_SECRET } from '../src/devnet/manifests.ts';
import { parsePrivateKey, PocketRpcClient } from '../src/pocket/index.ts';
import { duration, round, runAlone, type BenchResult } from './bench-types.ts';
import { readChainRecord } from './support/chain-record.ts';
import { landingBlock, pacingAwareFloor } from './support/pacing-floor.ts';

const BLOCK_INTERVAL_MS = 500;
const isReady = (pod: V1Pod): boolean =>
  pod.metadata?.deletionTimestamp === undefined &&
  pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true;

const GENESIS = 4;

interface ScaleOutcome {
  ms: number;
  blocks: number;
  started: number;
  ended: number;
  /** Heights when the call was made and when its answer came. */
  before: number;
  after: number;
  /** Date.now() − performance.now() at the call: maps the chain's epoch times to this clock. */
  epochOffset: number;
}

export async function run(): Promise<BenchResult[]> {
  const dir = await mkdtemp(join(tmpdir(), 'bench-devnet-'));
  const devnet = await startDevnet({
    validators: GENESIS,
    keys: 16,
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
  // Per pod uid: first seen Ready, first seen terminating, seen deleted (the floors' clocks).
  const readyAt = new Map<string, number>();
  const nameOf = new Map<string, string>();
  const stopping = new Map<string, number>();
  const stopped = new Map<string, number>();
  const informer = makeInformer(kc, `/api/v1/namespaces/${info.namespace}/pods`, () =>
    core.listNamespacedPod({ namespace: info.namespace }),
  );
  const seen = (pod: V1Pod): void => {
    const uid = pod.metadata?.uid ?? '';
    nameOf.set(uid, pod.metadata?.name ?? '');
    if (isReady(pod) && !readyAt.has(uid)) readyAt.set(uid, performance.now());
    if (pod.metadata?.deletionTimestamp !== undefined && !stopping.has(uid))
      stopping.set(uid, performance.now());
  };
  informer.on('add', seen);
  informer.on('update', seen);
  informer.on('delete', (pod) => {
    const uid = pod.metadata?.uid ?? '';
    if (!stopping.has(uid)) stopping.set(uid, performance.now());
    stopped.set(uid, performance.now());
  });
  await informer.start();
  const chain = new PocketRpcClient({ baseUrl: info.chainRpcUrl });
  // Each pod's validator address (validator-N holds id N + 1), from the devnet's keys Secret.
  const secret = await core.readNamespacedSecret({ name: KEYS_SECRET, namespace: info.namespace });
  const addressOfPod = new Map(
    Object.entries(secret.data ?? {}).map(([id, value]) => [
      `validator-${Number(id) - 1}`,
      parsePrivateKey(Buffer.from(value, 'base64').toString('utf8').trim()).address,
    ]),
  );

  // When each height was first seen committed: polled every 20 ms (the floor's block clock; it
  // reads a block up to 20 ms late, which only raises the floor).
  const commits: number[] = [];
  let lastHeight = await chain.height();
  /** commits[k] is the height firstHeight + 1 + k. */
  const firstHeight = lastHeight;
  let polling = true;
  const poller = (async () => {
    while (polling) {
      const height = await chain.height().catch(() => lastHeight);
      const now = performance.now();
      for (; lastHeight < height; lastHeight++) commits.push(now);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  })();
  const blocksAfter = async (at: number, count: number): Promise<void> => {
    const deadline = performance.now() + 60_000;
    while (commits.filter((t) => t > at).length < count && performance.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 50));
  };

  const scale = async (replicas: number): Promise<ScaleOutcome> => {
    const before = await chain.height();
    const epochOffset = Date.now() - performance.now();
    const started = performance.now();
    const response = await fetch(`${info.managerUrl ?? ''}/v1/scale`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${info.token ?? ''}` },
      body: JSON.stringify({ replicas, wait: 'active', timeoutSeconds: 300 }),
      signal: AbortSignal.timeout(330_000),
    });
    const ended = performance.now();
    if (response.status !== 200)
      throw new Error(`scale to ${replicas}: HTTP ${response.status} ${await response.text()}`);
    const after = await chain.height();
    return {
      ms: ended - started,
      blocks: after - before,
      started,
      ended,
      before,
      after,
      epochOffset,
    };
  };
  const podsOf = (from: number, to: number): string[] =>
    Array.from({ length: to - from }, (_, i) => `validator-${from + i}`);
  /**
   * Per entry of `commits`: when that block was proposed, on this clock. Blocks committed by the
   * call (heights ≤ before) can take none of its transactions: -Infinity, so that a poll that saw
   * one a few ms after the call never counts it. Unknown proposal times stay undefined (the
   * commit time stands in).
   */
  const proposalTimes = (outcome: ScaleOutcome, proposed: ReadonlyMap<number, number>) =>
    commits.map((_, k) => {
      const height = firstHeight + 1 + k;
      if (height <= outcome.before) return Number.NEGATIVE_INFINITY;
      const at = proposed.get(height);
      return at === undefined ? undefined : at - outcome.epochOffset;
    });
  const uidsOf = (names: readonly string[], map: ReadonlyMap<string, number>, after: number) =>
    [...map].filter(([uid, t]) => names.includes(nameOf.get(uid) ?? '') && t >= after);

  const up = async (to: number): Promise<BenchResult> => {
    const outcome = await scale(to);
    await blocksAfter(outcome.ended, 2);
    const pods = podsOf(GENESIS, to);
    const ready = uidsOf(pods, readyAt, outcome.started).map(([uid, t]) => ({
      name: nameOf.get(uid) ?? '',
      t,
    }));
    if (ready.length !== pods.length)
      throw new Error(`scale to ${to}: saw ${ready.length} of ${pods.length} new pods Ready`);
    ready.sort((a, b) => Number(a.name.split('-')[1]) - Number(b.name.split('-')[1]));
    const record = await readChainRecord(
      chain,
      outcome.before + 1,
      await chain.height(),
      ready.map((r) => addressOfPod.get(r.name) ?? ''),
    );
    const lags = record.firstVoteLags;
    const proposedAt = proposalTimes(outcome, record.proposedAt);
    const run = {
      start: outcome.started,
      voters: GENESIS,
      readyAt: ready.map((r) => r.t),
      commits,
    };
    // The floor: proposal times, every newcomer voting in the block after its stake's. Beside
    // it, the plain floor (blocks as seen committed) and one with the first-vote lags this run's
    // chain showed: a lag may be consensus (a certificate holds only a quorum) or the manager's
    // CPU slowing a new node on this 2-core machine, so it is not taken into the floor.
    const plain = pacingAwareFloor(run);
    const floor = pacingAwareFloor({ ...run, proposedAt });
    const lagged = pacingAwareFloor({
      ...run,
      proposedAt,
      firstVoteLags: lags.map((lag) => lag ?? 1),
    });
    const late = lags.filter((lag) => lag !== undefined && lag > 1).length;
    const lastReady = Math.max(...ready.map((r) => r.t)) - outcome.started;
    const intervals = commits.filter((t) => t > outcome.started && t <= outcome.ended);
    const meanBlock =
      intervals.length > 1
        ? (intervals[intervals.length - 1]! - intervals[0]!) / (intervals.length - 1)
        : BLOCK_INTERVAL_MS;
    return duration(
      `devnet: POST /v1/scale ${GENESIS} → ${to} until wait active (auto pacemaker, ${BLOCK_INTERVAL_MS} ms blocks)`,
      outcome.ms,
      {
        name: "pacing-aware floor (this run's pod Ready, block proposal and commit times)",
        value: floor.ms,
      },
      `${outcome.blocks} blocks, ${round(outcome.ms / meanBlock, 1)} block intervals of ${round(meanBlock)} ms (target ≤ 6.5 for 4 → 8); floor: waves ${floor.waves.join('+')}, ${floor.blocks} blocks; last new pod Ready ${round(lastReady)} ms after the call; ${late} of ${lags.length} newcomers first signed later than the block after their stake (first-vote lags ${lags.map((l) => l ?? '?').join(',')}; with them the floor is ${round(lagged.ms)} ms, ratio ${round(outcome.ms / lagged.ms, 3)}); the plain floor (blocks as seen committed, no proposal times) is ${round(plain.ms)} ms (ratio ${round(outcome.ms / plain.ms, 3)})`,
    );
  };

  const down = async (from: number): Promise<BenchResult> => {
    const outcome = await scale(GENESIS);
    const pods = podsOf(GENESIS, from);
    const deadline = performance.now() + 120_000;
    while (
      uidsOf(pods, stopped, outcome.started).length < pods.length &&
      performance.now() < deadline
    )
      await new Promise((resolve) => setTimeout(resolve, 50));
    const stops = uidsOf(pods, stopped, outcome.started).map(
      ([uid, t]) => t - (stopping.get(uid) ?? t),
    );
    const stopMs = stops.length > 0 ? Math.max(...stops) : 0;
    // The unstakes can land in the first block proposed after the call at the earliest (the
    // proposer reaps its mempool when it builds the block); that block's commit, as the chain
    // RPC showed it, starts the floor (the first block seen committed, when proposal times are
    // missing).
    const record = await readChainRecord(chain, outcome.before + 1, outcome.after, []);
    const proposed = proposalTimes(outcome, record.proposedAt);
    const landing = landingBlock(commits, proposed, outcome.started);
    const firstBlock = (commits[landing] ?? outcome.ended) - outcome.started;
    const nextSeen = (commits.find((t) => t > outcome.started) ?? outcome.ended) - outcome.started;
    const podsGoneMs =
      Math.max(...uidsOf(pods, stopped, outcome.started).map(([, t]) => t)) - outcome.started;
    return duration(
      `devnet: POST /v1/scale ${from} → ${GENESIS} until every leaving pod is gone`,
      podsGoneMs,
      {
        name: 'first block proposed after the call + slowest pod stop',
        value: firstBlock + stopMs,
      },
      `the answer (wait active) came after ${round(outcome.ms)} ms, ${outcome.blocks} blocks; that block seen committed ${round(firstBlock)} ms after the call (the next block seen: ${round(nextSeen)} ms), slowest pod stop (deletion → removal) ${round(stopMs)} ms`,
    );
  };

  try {
    const results: BenchResult[] = [];
    for (const to of (process.env.BENCH_DEVNET_TO ?? '8,16').split(',').map(Number)) {
      results.push(await up(to));
      results.push(await down(to));
    }
    return results;
  } finally {
    polling = false;
    await poller;
    await informer.stop();
    await devnet.stop();
    // BENCH_KEEP=1 keeps the devnet's folder (manager log, journal) to look into a run.
    if (process.env.BENCH_KEEP === '1') process.stderr.write(`bench: kept ${dir}\n`);
    else await rm(dir, { recursive: true, force: true });
  }
}

await runAlone(run, import.meta);
