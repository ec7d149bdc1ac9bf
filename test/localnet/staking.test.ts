// Five node processes, four staked: staking the fifth makes it vote (its signature appears in
// certificates); unstaking takes it out of the set and the certificates; the chain goes on.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateKeys } from '../../src/pocket/index.ts';
import { startNet, type LocalNet, type NetNode } from '../../src/localnet/net.ts';
import {
  client,
  inEveryMempool,
  signers,
  stakeTx,
  triggerView,
  unstakeTx,
} from './support/chain.ts';
import { waitFor } from '../../src/harness/wait.ts';

const keys = generateKeys({ count: 5, seed: 'staking' });
const fifthKey = keys.get('005')!;
let net: LocalNet;
let fifth: NetNode;
let first: NetNode;

beforeAll(async () => {
  net = await startNet({
    keys,
    validators: 5,
    staked: 4,
    unstakingBlocks: 2,
    roundTimeoutMs: 300,
    debugRoutes: true,
  });
  fifth = net.nodes[4]!;
  first = net.nodes[0]!;
});

afterAll(async () => {
  // Every node logged as JSON, and no key appears in any log.
  const secrets = [...keys.values()].map((k) => k.exportPrivateKeyHex().slice(0, 64));
  for (const node of net.nodes) {
    const log = readFileSync(net.logFile(node.id), 'utf8');
    expect(log).toContain('"msg":"committed block"');
    for (const secret of secrets) expect(log).not.toContain(secret);
  }
  await net.stop();
});

const activeSet = async (node: NetNode) =>
  ((await client(node.rpcUrl).addressBook({ actorType: 'validator' })).actors ?? []).map(
    (a) => a.address,
  );

describe('staking a fifth validator on a 4-validator localnet', () => {
  it('admits the stake, activates the fifth within two views and certifies its signature', async () => {
    expect(fifth.staked).toBe(false);
    expect(await activeSet(first)).not.toContain(fifth.address);
    const tx = stakeTx(fifthKey, fifth.serviceUrl);
    await client(first.rpcUrl).broadcast(tx);
    expect(await client(first.rpcUrl).unconfirmedTransaction(tx.hash)).toMatchObject({
      message_type: 'MessageStake',
      signer_addr: fifth.address,
    });

    await inEveryMempool(
      net.nodes.map((n) => n.rpcUrl),
      tx.hash,
    );
    const staked = await triggerView(first.rpcUrl);
    expect(staked.status).toBe(200);
    const indexed = await client(first.rpcUrl).transaction(tx.hash);
    expect(indexed).toMatchObject({ result_code: 0, height: staked.height });
    expect(await client(first.rpcUrl).validator(fifth.address)).toMatchObject({
      unstaking_height: -1,
      service_url: fifth.serviceUrl,
      staked_amount: '15100000000',
    });
    expect(await activeSet(first)).toContain(fifth.address);

    // The fifth node followed the chain as a full node; it is synced and votes at once.
    await waitFor(async () => (await client(fifth.rpcUrl).height()) === staked.height, {
      timeoutMs: 10_000,
      what: 'the fifth node to reach the stake height',
    });
    const next = await triggerView(first.rpcUrl);
    expect(next).toEqual({ status: 200, height: staked.height + 1 });
    const certified = await waitFor(
      async () => {
        const block = await client(first.rpcUrl).block(next.height);
        return signers(block).includes(fifth.address) ? block : undefined;
      },
      { timeoutMs: 10_000, what: "the fifth validator's signature in the certificate" },
    );
    expect(certified.block_header.val_set_hash).not.toBe(
      (await client(first.rpcUrl).block(staked.height)).block_header.val_set_hash,
    );
  });

  it('takes the fifth out of the set and the certificates after its unstake; the chain goes on', async () => {
    const tx = unstakeTx(fifthKey);
    await client(fifth.rpcUrl).broadcast(tx);
    // Gossip carries it from the fifth node to the others.
    await inEveryMempool(
      net.nodes.map((n) => n.rpcUrl),
      tx.hash,
    );
    const unstaked = await triggerView(first.rpcUrl);
    expect(await client(first.rpcUrl).transaction(tx.hash)).toMatchObject({ result_code: 0 });
    expect(await client(first.rpcUrl).validator(fifth.address)).toMatchObject({
      unstaking_height: unstaked.height + 2,
    });
    expect(await activeSet(first)).not.toContain(fifth.address);
    const balanceBefore = await client(first.rpcUrl).balance(fifth.address);

    for (let i = 1; i <= 3; i++) {
      const view = await triggerView(first.rpcUrl);
      expect(view).toEqual({ status: 200, height: unstaked.height + i });
      const block = await client(first.rpcUrl).block(view.height);
      expect(signers(block)).not.toContain(fifth.address);
      expect(signers(block).length).toBeGreaterThanOrEqual(3);
    }
    // Stake returned to the output when the unstaking height was reached; the row remains.
    expect(await client(first.rpcUrl).balance(fifth.address)).toBe(balanceBefore + 15_100_000_000);
    expect((await client(first.rpcUrl).validators()).map((v) => v.address)).toContain(
      fifth.address,
    );
    // The fifth node still follows the chain as a full node.
    await waitFor(async () => (await client(fifth.rpcUrl).height()) === unstaked.height + 3, {
      timeoutMs: 10_000,
      what: 'the fifth node to follow the chain',
    });
  });
});
