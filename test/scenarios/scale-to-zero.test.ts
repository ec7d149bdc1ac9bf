// The devnet's validators keep their chain through pod churn: each node's data dir is a claim of
// its ordinal, so a validator pod deleted and recreated resumes where it was, and a StatefulSet
// scaled to 0 and back — with the manager holding its minimum set, or paused — brings back the
// same chain at its height. Before, the pods came back from genesis with an empty vote guard and
// signed a forked history (issue 16, item 1).
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { pending, waitFor, type Harness } from '../../src/harness/index.ts';
import { useDevnet } from '../integration/support.ts';

// The departure hook's timeout and the node's drain are not what this file proves (the hook:
// test/deploy/v1-departure-hook.test.ts, test/manager/departure.unit.test.ts, the kubelet's
// lifecycle-hooks test; the drain: test/localnet/shutdown-drain.test.ts), but a pod of a staked
// validator waits for them on each stop: a short hook timeout for the paused and the stopped
// manager, and a short drain for the validators that stay staked (with the node's 20 s, each
// scale to 0 and each pod deletion waited 20 s for nothing: nobody removes them). A pod removed
// while paused is held until 32 s before its grace period (12 + 20 + 10 s) ends: 10 s after its
// deletion, 2 s before its hook would give up.
const HOOK_TIMEOUT_S = 12;
const devnet = useDevnet('scale-to-zero', {
  pacemaker: 'auto',
  blockIntervalMs: 400,
  departureTimeoutSeconds: HOOK_TIMEOUT_S,
  nodeShutdownDrainMs: 2_000,
  managerEnv: { CM_PAUSE_DEPARTURE_MARGIN: '32s' },
});
const HOLD_MS = 10_000;

const VALIDATORS = ['001', '002', '003', '004'];

async function validatorPods(h: Harness): Promise<string[]> {
  const pods = await h.core.listNamespacedPod({
    namespace: h.info.namespace,
    labelSelector: 'pokt.network/purpose=validator',
  });
  return pods.items.map((pod) => pod.metadata?.name ?? '').sort();
}

/** Block hashes 1…upTo as a node (or the full node, by default) has them. */
async function hashes(h: Harness, upTo: number, rpcUrl = h.info.chainRpcUrl): Promise<string[]> {
  const out: string[] = [];
  for (let height = 1; height <= upTo; height++) {
    const response = await fetch(`${rpcUrl}/v1/query/block`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ height }),
    });
    const body = (await response.json()) as {
      block: { block_header: { quorum_cert: { block: string } } };
    };
    out.push(body.block.block_header.quorum_cert.block);
  }
  return out;
}

/** The claim folder of a validator ordinal on the process kubelet's host. */
function claimFolder(h: Harness, ordinal: number): string {
  const root = join(h.info.dir, 'emulator', 'pvcs');
  const name = readdirSync(root).find((entry) =>
    entry.startsWith(`${h.info.namespace}_data-validator-${ordinal}_`),
  );
  if (name === undefined) throw new Error(`no claim folder for ordinal ${ordinal}`);
  return join(root, name);
}

function guardHeight(h: Harness, ordinal: number): number {
  const file = join(claimFolder(h, ordinal), 'vote-guard.json');
  return existsSync(file)
    ? (JSON.parse(readFileSync(file, 'utf8')) as { height: number }).height
    : 0;
}

/**
 * Scales to 0, checks the pods go and their claims stay, scales back to 4 and checks the chain
 * goes on from where it stopped with the same blocks. `unstakes`: how many unstakes the manager
 * may send meanwhile (down to its minimum set of 3, or none when it is paused or stopped).
 */
async function scaleToZeroAndBack(h: Harness, unstakes: { atMost: number }): Promise<void> {
  const before = await unstakeCount(h);
  await h.kubectlScale(0);
  await waitFor(
    async () => {
      const pods = await validatorPods(h);
      return pods.length === 0 ? true : pending(pods.join(', '));
    },
    { what: 'every validator pod to go', timeoutMs: 90_000, intervalMs: 500 },
  );
  const stopped = await h.height();
  const history = await hashes(h, stopped);
  // A quorum of the genesis set stays staked while no pod runs: the chain can come back.
  expect((await h.stakedValidators()).length).toBeGreaterThanOrEqual(3);
  // Every claim stays (Retain), with its node's data.
  for (let ordinal = 0; ordinal < 4; ordinal++) expect(guardHeight(h, ordinal)).toBeGreaterThan(0);
  await h.kubectlScale(4);
  const resumed = await waitFor(
    async () => {
      const height = await h.height();
      return height >= stopped + 4 ? height : pending(`height ${height}, stopped at ${stopped}`);
    },
    { what: 'the chain to go on from where it stopped', timeoutMs: 90_000, intervalMs: 500 },
  );
  // The same chain: nothing before the stop changed, and every validator agrees with the full node.
  expect(await hashes(h, stopped)).toEqual(history);
  const reference = await hashes(h, resumed);
  for (const id of VALIDATORS) {
    expect(await hashes(h, resumed, await h.nodeRpcUrl(id)), id).toEqual(reference);
  }
  expect((await unstakeCount(h)) - before).toBeLessThanOrEqual(unstakes.atMost);
}

async function unstakeCount(h: Harness): Promise<number> {
  let count = 0;
  for (const id of VALIDATORS) count += await h.unstakeTransactions(id);
  return count;
}

describe('validators that keep their data through pod churn', { timeout: 300_000 }, () => {
  it('a deleted validator pod comes back at its height, with its vote guard, and signs again', async () => {
    const { h } = devnet;
    await h.waitForHeight(5);
    const guardBefore = guardHeight(h, 1);
    const heightBefore = await h.height();
    await h.core.deleteNamespacedPod({ name: h.podOf('002'), namespace: h.info.namespace });
    const log = h.kubelet.logPath(h.info.namespace, h.podOf('002'));
    const resumed = await waitFor(
      () => {
        const line = readFileSync(log, 'utf8')
          .split('\n')
          .filter((l) => l.includes('resumed from the data dir'))
          .at(-1);
        return line === undefined
          ? pending('not resumed yet')
          : (JSON.parse(line) as { height: number });
      },
      { what: 'the new pod of 002 to resume from its claim', timeoutMs: 90_000, intervalMs: 250 },
    );
    expect(resumed.height).toBeGreaterThanOrEqual(heightBefore);
    expect(guardHeight(h, 1)).toBeGreaterThanOrEqual(guardBefore);
    await h.expectActive('002', { since: resumed.height + 1, timeoutMs: 60_000 });
    const height = await h.height();
    expect(await hashes(h, height, await h.nodeRpcUrl('002'))).toEqual(await hashes(h, height));
  });

  it('scale to 0 and back: the manager keeps its minimum set staked; the same chain resumes', async () => {
    const { h } = devnet;
    await scaleToZeroAndBack(h, { atMost: 1 });
    // Back at 4 replicas, the manager stakes again whatever it let go.
    await waitFor(
      async () => {
        const staked = await h.stakedValidators();
        return staked.length === 4 ? staked : pending(staked.join());
      },
      { what: 'all four staked again', timeoutMs: 60_000, intervalMs: 500 },
    );
  });

  it('scale to 0 and back with the manager paused: the pods are held until their margin, then only the minimum set stays staked; the chain resumes', async () => {
    const { h } = devnet;
    expect((await h.post('/v1/pause', {})).status).toBe(200);
    try {
      await scaleToZeroAndBack(h, { atMost: 1 });
    } finally {
      await h.post('/v1/resume', {});
    }
  });

  it('pause, then kubectl scale 7 → 4: the leaving pods are held, then their validators leave while their nodes still vote; the chain never halts (issue 30, item 6)', async () => {
    // Before, the pause held the unstakes until the preStop hooks gave up and the nodes exited:
    // three of seven staked rows without a node, a halt that resume could not undo.
    const { h } = devnet;
    const seven = ['001', '002', '003', '004', '005', '006', '007'];
    await h.kubectlScale(7);
    await h.expectStakedSet(seven, { timeoutMs: 90_000 });
    await h.waitForVoting(seven);
    const before = new Map(
      await Promise.all(
        ['005', '006', '007'].map(async (id) => [id, await h.unstakeTransactions(id)] as const),
      ),
    );
    expect((await h.post('/v1/pause', {})).status).toBe(200);
    try {
      await h.kubectlScale(4);
      const deletedAt = Date.now();
      // Held: the pods are terminating but their nodes run, and nothing is unstaked yet.
      await waitFor(
        async () => {
          const row = await h.validator('007');
          return (
            (row?.waitingFor === 'paused' && /held until/.test(row.reason)) ||
            pending(`${row?.phase ?? '?'}: ${row?.reason ?? ''}`)
          );
        },
        { what: '007 held by the pause, saying until when', timeoutMs: HOLD_MS - 2_000 },
      );
      expect(await h.stakedValidators()).toEqual(seven);
      expect(Date.now() - deletedAt).toBeLessThan(HOLD_MS);
      // Then they leave, and the pods with them; the chain goes on throughout.
      await h.expectStakedSet(['001', '002', '003', '004'], { timeoutMs: 60_000 });
      await waitFor(
        async () => {
          const pods = await validatorPods(h);
          return pods.length === 4 || pending(pods.join(', '));
        },
        { what: 'the three pods to go', timeoutMs: 60_000, intervalMs: 500 },
      );
      await h.expectChainProgress(5, 20_000);
      const reasons = (await h.core.listNamespacedEvent({ namespace: h.info.namespace })).items
        .filter((e) => e.involvedObject.name === h.podOf('007'))
        .map((e) => e.reason);
      expect(reasons).toEqual(expect.arrayContaining(['PausedDeparture', 'PauseYielded']));
    } finally {
      await h.post('/v1/resume', {});
    }
    await h.expectChainProgress(3, 20_000);
    for (const [id, count] of before) expect(await h.unstakeTransactions(id), id).toBe(count + 1);
    const failed = (await h.committedTransactions()).filter((t) => t.resultCode !== 0);
    expect(failed).toEqual([]);
  });

  it('scale to 0 and back with the manager stopped: hooks wait their timeout, the chain resumes', async () => {
    const { h } = devnet;
    await h.killManager('SIGTERM');
    try {
      await scaleToZeroAndBack(h, { atMost: 0 });
    } finally {
      await h.restartManager();
    }
  });
});
