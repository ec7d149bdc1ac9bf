// A validator told to stop (SIGTERM) while still in the active set keeps voting until the block
// that removes it commits — through rounds that fail because another validator is down — or
// until its drain time is over.
import { afterEach, describe, expect, it } from 'vitest';
import { startNet, type LocalNet, type NetNode } from '../../src/localnet/net.ts';
import { generateKeys } from '../../src/pocket/index.ts';
import { pending, waitFor } from '../../src/harness/wait.ts';
import { client, signers, unstakeTx } from './support/chain.ts';

const keys = generateKeys({ count: 5, seed: 'shutdown-drain' });
let net: LocalNet | undefined;

afterEach(async () => {
  await net?.stop();
  net = undefined;
});

describe('a validator stopped while in the active set', { timeout: 90_000 }, () => {
  it('keeps voting through failed rounds until its unstake commits, then exits', async () => {
    // 5 validators, quorum 4. With one killed, the chain needs every other vote: the stopped
    // validator's included. A round timeout longer than the old "2 s without a block" rule.
    net = await startNet({
      keys,
      validators: 5,
      pacemaker: 'auto',
      blockIntervalMs: 200,
      roundTimeoutMs: 2_500,
      shutdownDrainMs: 60_000,
    });
    const live = net;
    const [a, , , d, e] = net.nodes as [NetNode, NetNode, NetNode, NetNode, NetNode];
    const chain = client(a.rpcUrl);
    await waitFor(async () => ((await chain.height()) >= 2 ? true : pending('height < 2')), {
      what: 'the chain to start',
      timeoutMs: 30_000,
    });
    await net.kill(d.id); // down for good: every round it leads fails
    void net.kill(e.id, 'SIGTERM');
    const exited = (): boolean => !live.isRunning(e.id);
    const from = await chain.height();

    // The chain goes on through heights whose first round was led by the dead validator.
    const through = await waitFor(
      async () => {
        const height = await chain.height();
        for (let h = from + 1; h <= height; h++) {
          const block = await chain.block(h);
          if (block.block_header.quorum_cert.round > 0) return h;
        }
        return pending(`height ${height}; no block after a failed round yet (exited: ${exited()})`);
      },
      { what: 'a block committed after a round led by the dead validator', timeoutMs: 60_000 },
    );
    expect(exited()).toBe(false);
    expect(signers(await chain.block(through))).toContain(e.address);

    // Its unstake commits; the next height's set lacks it, and it exits.
    const tx = unstakeTx(keys.get(e.id)!);
    await chain.broadcast(tx);
    await waitFor(() => (exited() ? true : pending('still running')), {
      what: 'the unstaked validator to exit',
      timeoutMs: 60_000,
    });
    expect(await chain.transaction(tx.hash)).toMatchObject({ result_code: 0 });
  });

  it('leaves at the end of its drain time when the chain has stopped', async () => {
    net = await startNet({
      keys,
      validators: 4,
      pacemaker: 'auto',
      blockIntervalMs: 200,
      roundTimeoutMs: 300,
      shutdownDrainMs: 3_000,
    });
    const [a, b, c] = net.nodes as [NetNode, NetNode, NetNode, NetNode];
    const chain = client(a.rpcUrl);
    await waitFor(async () => ((await chain.height()) >= 2 ? true : pending('height < 2')), {
      what: 'the chain to start',
      timeoutMs: 30_000,
    });
    // 4 validators, quorum 3: two down and the chain has stopped; a is still in the set.
    await net.kill(b.id);
    await net.kill(c.id);
    const started = Date.now();
    await net.kill(a.id, 'SIGTERM');
    await waitFor(() => (net?.isRunning(a.id) === false ? true : pending('still running')), {
      what: 'the stopped validator to exit',
      timeoutMs: 15_000,
    });
    expect(Date.now() - started).toBeGreaterThanOrEqual(2_900);
  });
});
