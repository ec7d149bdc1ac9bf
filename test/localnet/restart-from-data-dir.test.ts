// Nodes that come back from their data dir: one validator killed and restarted is at its old
// height before it talks to anyone; the whole network killed at once (a StatefulSet scaled to 0)
// comes back at its height, with the same blocks, and goes on — it used to restart at genesis,
// where the vote guards refused to sign again and the chain stood still for good.
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { startNet, type LocalNet, type NetNode } from '../../src/localnet/net.ts';
import { generateKeys } from '../../src/pocket/index.ts';
import { pending, waitFor } from '../../src/harness/wait.ts';
import { blockHashes, client, signers } from './support/chain.ts';

const keys = generateKeys({ count: 4, seed: 'restart-from-data-dir' });
let net: LocalNet | undefined;

afterEach(async () => {
  await net?.stop();
  net = undefined;
});

async function heightAtLeast(url: string, height: number, what: string): Promise<number> {
  return waitFor(
    async () => {
      const h = await client(url).height();
      return h >= height ? h : pending(`height ${h}`);
    },
    { what, timeoutMs: 45_000 },
  );
}

/** The `resumed from the data dir` lines a node logged, newest last. */
function resumedLines(net: LocalNet, id: string): { height: number; blocks: number; ms: number }[] {
  return readFileSync(net.logFile(id), 'utf8')
    .split('\n')
    .filter((line) => line.includes('resumed from the data dir'))
    .map((line) => JSON.parse(line) as { height: number; blocks: number; ms: number });
}

describe('restarting localnet nodes with their data dirs', { timeout: 120_000 }, () => {
  it('brings a whole network that was killed at once back at its height, with the same blocks', async () => {
    net = await startNet({ keys, validators: 4, pacemaker: 'auto', blockIntervalMs: 150 });
    const live = net;
    const nodes = net.nodes as NetNode[];
    const [a] = nodes as [NetNode];
    await heightAtLeast(a.rpcUrl, 8, 'height 8');
    await Promise.all(nodes.map((node) => live.kill(node.id)));
    const before = Math.min(...nodes.map((node) => resumedOrCommitted(live, node.id)));
    const history = await (async () => {
      await Promise.all(nodes.map((node) => live.restart(node.id)));
      return blockHashes(a.rpcUrl, before);
    })();

    // Each node came back at (at least) the height it had committed when it was killed.
    for (const node of nodes) {
      const [resumed] = resumedLines(live, node.id).slice(-1);
      expect(resumed?.height, node.id).toBeGreaterThanOrEqual(before);
    }
    // The chain goes on past where it stopped, every validator signing again.
    const after = await heightAtLeast(
      a.rpcUrl,
      before + 5,
      `height ${before + 5} after the restart`,
    );
    const latest = await client(a.rpcUrl).block(after);
    expect(signers(latest).length).toBeGreaterThanOrEqual(3);
    // No fork: every node has the same blocks, the old ones unchanged.
    const reference = await blockHashes(a.rpcUrl, before + 5);
    expect(reference.slice(0, before)).toEqual(history);
    for (const node of nodes) {
      expect(await blockHashes(node.rpcUrl, before + 5), node.id).toEqual(reference);
    }
  });

  it('brings back a network stopped in the middle of a height its validators had signed in', async () => {
    // Two validators die first: the next height cannot commit, the other two have signed their
    // prevotes of it; then they die too. Their guards hold messages of a height no block
    // closed — restoring those on start crashed the node before it listened.
    net = await startNet({ keys, validators: 4, pacemaker: 'auto', blockIntervalMs: 150 });
    const live = net;
    const nodes = net.nodes as NetNode[];
    const [a, b, c, d] = nodes as [NetNode, NetNode, NetNode, NetNode];
    await heightAtLeast(a.rpcUrl, 4, 'height 4');
    await Promise.all([live.kill(c.id), live.kill(d.id)]);
    const stuck = await waitFor(
      async () => {
        const state = (await (await fetch(`${a.rpcUrl}/v1/consensus/state`)).json()) as {
          height: number;
          step: number;
        };
        const committed = await client(a.rpcUrl).height();
        // Step 3 = prevote: it signed at a height that cannot commit with two of four.
        return state.step >= 3 && state.height === committed + 1
          ? state
          : pending(`step ${state.step} of ${state.height}`);
      },
      { what: 'a prevote at a height that cannot commit', timeoutMs: 30_000 },
    );
    await Promise.all([live.kill(a.id), live.kill(b.id)]);
    await Promise.all(nodes.map((node) => live.restart(node.id)));
    const after = await heightAtLeast(a.rpcUrl, stuck.height + 3, `height ${stuck.height + 3}`);
    const reference = await blockHashes(a.rpcUrl, after);
    for (const node of nodes) {
      expect(await blockHashes(node.rpcUrl, after), node.id).toEqual(reference);
    }
  });

  it('restarts one killed validator at its own height, before any peer has told it anything', async () => {
    net = await startNet({ keys, validators: 4, pacemaker: 'auto', blockIntervalMs: 150 });
    const [a, , , d] = net.nodes as [NetNode, NetNode, NetNode, NetNode];
    await heightAtLeast(d.rpcUrl, 6, 'height 6 on the fourth validator');
    await net.kill(d.id);
    const killedAt = resumedOrCommitted(net, d.id);
    await net.restart(d.id);
    const [resumed] = resumedLines(net, d.id).slice(-1);
    // Its own last block: the node writes a block to its data dir, then logs it, so a SIGKILL
    // between the two leaves the data dir one block ahead of the log.
    expect(resumed?.height).toBeGreaterThanOrEqual(killedAt);
    expect(resumed?.height).toBeLessThanOrEqual(killedAt + 1);
    await heightAtLeast(a.rpcUrl, killedAt + 4, 'the chain to go on');
    const h = await heightAtLeast(d.rpcUrl, killedAt + 4, 'the restarted validator to follow');
    expect(await blockHashes(d.rpcUrl, h)).toEqual(await blockHashes(a.rpcUrl, h));
  });
});

/** The last height a node logged as committed (or resumed at), from its log file. */
function resumedOrCommitted(net: LocalNet, id: string): number {
  let height = 0;
  for (const line of readFileSync(net.logFile(id), 'utf8').split('\n')) {
    if (!line.includes('"committed block"') && !line.includes('resumed from the data dir'))
      continue;
    height = Math.max(height, (JSON.parse(line) as { height: number }).height);
  }
  return height;
}
