// A 4-validator network of node processes: one view commits one block everywhere with a quorum
// certificate; crashes of one and of two validators; restarts that sync without a fork.
import { afterEach, describe, expect, it } from 'vitest';
import { generateKeys } from '../../src/pocket/index.ts';
import { startNet, type LocalNet, type NetNode } from '../../src/localnet/net.ts';
import { blockHashes, client, signers, triggerView } from './support/chain.ts';
import { waitFor } from '../../src/harness/wait.ts';

const keys = generateKeys({ count: 4, seed: 'net-consensus' });
let net: LocalNet | undefined;

afterEach(async () => {
  await net?.stop();
  net = undefined;
});

const heights = (n: LocalNet) => Promise.all(n.nodes.map((node) => client(node.rpcUrl).height()));

describe('a 4-validator localnet', () => {
  it('commits one block on every node per TriggerView, certified by at least 3 of the 4', async () => {
    net = await startNet({ keys, validators: 4, roundTimeoutMs: 300, debugRoutes: true });
    const addresses = net.nodes.map((n) => n.address);
    expect(await heights(net)).toEqual([0, 0, 0, 0]);

    const first = await triggerView(net.nodes[0]!.rpcUrl);
    expect(first).toEqual({ status: 200, height: 1 });
    await waitFor(async () => (await heights(net!)).every((h) => h === 1), {
      timeoutMs: 5_000,
      what: 'height 1 on every node',
    });
    expect(await heights(net)).toEqual([1, 1, 1, 1]);

    const blocks = await Promise.all(net.nodes.map((n) => client(n.rpcUrl).block(1)));
    const [block] = blocks;
    expect(new Set(blocks.map((b) => b.block_header.quorum_cert.block)).size).toBe(1);
    const qcSigners = signers(block!);
    expect(qcSigners.length).toBeGreaterThanOrEqual(3);
    expect(new Set(qcSigners).size).toBe(qcSigners.length);
    for (const signer of qcSigners) expect(addresses).toContain(signer);
    expect(addresses).toContain(block!.block_header.proposer_addr);
    expect(block!.block_header.quorum_cert.height).toBe(1);

    await triggerView(net.nodes[2]!.rpcUrl);
    await waitFor(async () => (await heights(net!)).every((h) => h === 2), {
      timeoutMs: 5_000,
      what: 'height 2 on every node',
    });
    expect(await client(net.nodes[3]!.rpcUrl).consensusState()).toMatchObject({ height: 3 });
  });

  it('commits with one validator down, stalls with two, and resumes without a fork after restarts', async () => {
    net = await startNet({ keys, validators: 4, roundTimeoutMs: 250, debugRoutes: true });
    const [a, b, c, d] = net.nodes as [NetNode, NetNode, NetNode, NetNode];
    expect((await triggerView(a.rpcUrl)).height).toBe(1);

    await net.kill(d.id);
    for (const expected of [2, 3]) {
      expect(await triggerView(a.rpcUrl)).toEqual({ status: 200, height: expected });
    }
    const live = () => Promise.all([a, b, c].map((n) => client(n.rpcUrl).height()));
    await waitFor(async () => (await live()).every((h) => h === 3), {
      timeoutMs: 5_000,
      what: 'height 3 on the three live nodes',
    });
    const certified = await client(b.rpcUrl).block(3);
    expect(signers(certified)).not.toContain(d.address);
    expect(signers(certified)).toHaveLength(3);

    await net.kill(c.id);
    const stalled = await triggerView(a.rpcUrl, 2_000);
    expect(stalled).toEqual({ status: 504, height: 3 });
    expect(await client(b.rpcUrl).height()).toBe(3);

    await net.restart(c.id);
    await net.restart(d.id);
    // The stuck height commits once a quorum is back; the restarted nodes sync and vote.
    await waitFor(async () => (await heights(net!)).every((h) => h === 4), {
      timeoutMs: 20_000,
      what: 'height 4 on all four nodes after the restarts',
    });
    expect(await triggerView(c.rpcUrl)).toEqual({ status: 200, height: 5 });
    await waitFor(async () => (await heights(net!)).every((h) => h === 5), {
      timeoutMs: 10_000,
      what: 'height 5 everywhere',
    });
    const chains = await Promise.all(net.nodes.map((n) => blockHashes(n.rpcUrl, 5)));
    for (const chain of chains) expect(chain).toEqual(chains[0]);
    const latest = await client(d.rpcUrl).block(5);
    expect(signers(latest).length).toBeGreaterThanOrEqual(3);
  });
});
