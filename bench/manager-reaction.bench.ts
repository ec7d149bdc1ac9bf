// The manager's reaction latency: from the moment the API server writes a validator pod Ready to
// the moment the chain's node admits that validator's stake, one validator at a time, p50 and p99
// over 300 (RPC mode; simulated kubelet; sync check, pacing and Ready debounce off, so only the
// manager's own path is timed). The floor, per validator, in the same run: a bare client-node
// informer's notification of the same pod plus one broadcast_tx_sync round trip to the same node.
// Run alone: `npx node bench/manager-reaction.bench.ts`.
import {
  PocketRpcClient,
  sha256Digest,
  signTransaction,
  unstakeMessage,
  ValidatorKey,
} from '../src/pocket/index.ts';
import { percentile, round, runAlone, type BenchResult } from './bench-types.ts';
import { Rig } from './support/manager-rig.ts';

const WARM_UP = 10;
const MEASURED = 300;
const GENESIS = 4;

export async function run(): Promise<BenchResult[]> {
  const total = GENESIS + WARM_UP + MEASURED;
  const rig = await Rig.start({ keys: total, replicas: GENESIS, staked: GENESIS });
  try {
    await rig.startManager({
      CM_SYNC_CHECK: 'false',
      CM_PACING: 'off',
      CM_READY_DEBOUNCE: '0',
    });
    // Distinct signers, so that no cache flatters the floor's admission.
    const dummies = Array.from({ length: WARM_UP + MEASURED }, (_, i) => {
      const key = ValidatorKey.fromSeed(sha256Digest(new TextEncoder().encode(`floor/${i}`)));
      const tx = signTransaction({
        key,
        message: unstakeMessage({ address: key.addressBytes, signer: key.addressBytes }),
      });
      return { hex: tx.hex, signer: key.address };
    });
    const rpc = new PocketRpcClient({ baseUrl: rig.node.rpcUrl });
    const manager: number[] = [];
    const floor: number[] = [];
    const informer: number[] = [];
    for (let ordinal = GENESIS; ordinal < total; ordinal++) {
      const id = String(ordinal + 1).padStart(3, '0');
      const pod = `validator-${ordinal}`;
      const address = rig.addressOf(id);
      await rig.scale(ordinal + 1);
      await rig.waitFor(
        () => rig.admitted.has(address) && rig.readySeen.has(pod),
        20_000,
        `the stake of ${id}`,
      );
      const dummy = dummies[ordinal - GENESIS];
      if (dummy === undefined) throw new Error('no floor transaction');
      const sent = performance.now();
      await rpc.broadcast(dummy);
      const rtt = performance.now() - sent;
      if (ordinal < GENESIS + WARM_UP) continue;
      const ready = rig.readyWritten.get(pod) ?? Number.NaN;
      manager.push((rig.admitted.get(address) ?? Number.NaN) - ready);
      informer.push((rig.readySeen.get(pod) ?? Number.NaN) - ready);
      floor.push((rig.readySeen.get(pod) ?? Number.NaN) - ready + rtt);
    }
    const notes = (p: number): string =>
      `${MEASURED} validators one at a time; floor p${p} parts: informer notification p${p} ${round(percentile(informer, p), 2)} ms + broadcast round trip; RPC mode, no sync check, no pacing, no debounce`;
    const result = (p: number): BenchResult => {
      const value = percentile(manager, p);
      const floorValue = percentile(floor, p);
      return {
        name: `manager: reaction, pod Ready → stake admitted by the node (p${p})`,
        value: round(value, 2),
        unit: 'ms',
        floor: {
          name: `bare informer notification + one broadcast (p${p})`,
          value: round(floorValue, 2),
        },
        ratio: round(value / floorValue, 2),
        notes: `${notes(p)}; target p99 ≤ 1.5 × floor`,
      };
    };
    return [result(50), result(99)];
  } finally {
    await rig.stop();
  }
}

await runAlone(run, import.meta);
