// Scale throughput: the validator StatefulSet patched from 4 to 999 replicas in one call
// (Parallel, simulated kubelet), timed until the chain's node has admitted a stake from every new
// validator, against the time until every pod is Ready as a bare informer sees it (the floor; the
// difference is the manager's overhead). Also the manager's CPU time per validator (against
// building and signing the same transactions here, the irreducible work of RPC mode) and its peak
// resident memory (against its own idle footprint). 999 is the most three-digit ids allow.
// Run alone: `npx node bench/manager-scale.bench.ts`.
import { signTransaction, stakeMessage } from '../src/pocket/index.ts';
import { round, runAlone, type BenchResult } from './bench-types.ts';
import { Rig } from './support/manager-rig.ts';

const GENESIS = 4;
const TARGET = 999;

export async function run(): Promise<BenchResult[]> {
  const rig = await Rig.start({ keys: TARGET, replicas: GENESIS, staked: GENESIS });
  try {
    const manager = await rig.startManager({
      CM_SYNC_CHECK: 'false',
      CM_PACING: 'off',
      CM_READY_DEBOUNCE: '0',
    });
    const idleRss = await manager.peakRssMiB();
    const joiners = [...rig.keys.keys()].slice(GENESIS);
    const addresses = joiners.map((id) => rig.addressOf(id));
    const pods = joiners.map((_, i) => `validator-${GENESIS + i}`);

    const cpuBefore = await manager.cpuMs();
    const started = performance.now();
    await rig.scale(TARGET);
    await rig.waitFor(
      () => addresses.every((a) => rig.admitted.has(a)) && pods.every((p) => rig.readySeen.has(p)),
      300_000,
      `${joiners.length} stakes admitted`,
    );
    const cpuMs = (await manager.cpuMs()) - cpuBefore;
    const peakRss = await manager.peakRssMiB();
    const allAdmitted = Math.max(...addresses.map((a) => rig.admitted.get(a) ?? Number.NaN));
    const allReady = Math.max(...pods.map((p) => rig.readySeen.get(p) ?? Number.NaN));
    const admittedMs = allAdmitted - started;
    const readyMs = allReady - started;

    // The floor of CPU per validator: build and sign the same stakes here, with the manager's signer
    // (noble, each seed expanded once when its key was read; src/pocket/crypto.ts). One signature
    // first, so that noble's base-point tables (built once per process) are not in the floor.
    rig.keys.values().next().value?.sign(new Uint8Array(1));
    const cpuStart = process.cpuUsage();
    for (const id of joiners) {
      const key = rig.keys.get(id);
      if (key === undefined) continue;
      signTransaction({
        key,
        message: stakeMessage({
          publicKey: key.publicKey,
          amount: '150000000001',
          chains: ['0001'],
          serviceUrl: '127.0.0.1:1',
          outputAddress: key.addressBytes,
          signer: key.addressBytes,
        }),
      });
    }
    const cpu = process.cpuUsage(cpuStart);
    const signMsPerTx = (cpu.user + cpu.system) / 1000 / joiners.length;
    const perValidator = cpuMs / joiners.length;
    return [
      {
        name: `manager: scale 4 → ${TARGET}, scale call → every stake admitted`,
        value: round(admittedMs),
        unit: 'ms',
        floor: { name: 'scale call → every pod Ready (bare informer)', value: round(readyMs) },
        ratio: round(admittedMs / readyMs, 2),
        notes: `overhead ${round(admittedMs - readyMs)} ms for ${joiners.length} validators (target < 1,000 ms); Parallel, simulated kubelet, RPC mode, no pacing/sync check/debounce, concurrency 32 (the default)`,
      },
      {
        name: 'manager: CPU time per validator added (user + system)',
        value: round(perValidator, 2),
        unit: 'ms',
        floor: {
          name: "build + sign one stake here (the manager's signer: noble Ed25519, seed expanded once)",
          value: round(signMsPerTx, 2),
        },
        ratio: round(perValidator / signMsPerTx, 2),
        notes: `${round(cpuMs)} ms CPU of the manager process for ${joiners.length} validators (informers, planning, journal, signing, HTTP, logs)`,
      },
      {
        name: `manager: peak resident memory during the scale to ${TARGET}`,
        value: round(peakRss),
        unit: 'MiB',
        floor: { name: 'its peak before the scale (4 validators)', value: round(idleRss) },
        ratio: round(peakRss / idleRss, 2),
        notes: 'VmHWM of the manager process (target < 150 MiB; idle with 4: < 100 MiB)',
      },
    ];
  } finally {
    await rig.stop();
  }
}

await runAlone(run, import.meta);
