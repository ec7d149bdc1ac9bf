// The stand-in's `v1` fidelity profile, one in-process validator: its answers have the shapes of
// V1's Go handlers (the same fixtures the RPC client is tested with), and its chain follows V1's
// code: unstaked rows stay in the validator set, a known validator's stake is 60, views are
// triggered by debug messages to the validators, not by an RPC route.
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../../src/harness/wait.ts';
import { buildGenesis } from '../../src/localnet/genesis.ts';
import { startNode, type RunningNode } from '../../src/localnet/server.ts';
import { generateKeys, PocketRpcClient, type ValidatorKey } from '../../src/pocket/index.ts';
import { jsonShape, V1_BODIES, type V1BodyName } from '../pocket/fixtures/v1-rpc-bodies.ts';
import { sendDebugMessage, stakeTx, unstakeTx } from './support/chain.ts';

const keys = generateKeys({ count: 3, seed: 'rpc-v1-test' });
const key = (id: string): ValidatorKey => keys.get(id)!;
let node: RunningNode;
let rpc: PocketRpcClient;

beforeAll(async () => {
  node = await startNode({
    genesis: buildGenesis({ keys, validators: 1, serviceUrl: '127.0.0.1:1', unstakingBlocks: 2 }),
    key: key('001'),
    fidelity: 'v1',
    host: '127.0.0.1',
    rpcPort: 0,
    p2pPort: 0,
    roundTimeoutMs: 300,
    logger: pino({ level: 'silent' }),
  });
  rpc = new PocketRpcClient({ baseUrl: node.rpcUrl });
});
afterAll(async () => {
  await node.stop();
});

interface Answer {
  status: number;
  contentType: string;
  body: string;
}

async function ask(method: 'GET' | 'POST', path: string, body?: unknown): Promise<Answer> {
  const response = await fetch(`${node.rpcUrl}${path}`, {
    method,
    ...(body === undefined
      ? {}
      : { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }),
  });
  return {
    status: response.status,
    contentType: response.headers.get('content-type') ?? '',
    body: await response.text(),
  };
}

/** The stand-in's answer has the fixture's status, type and JSON shape (maps compared as maps). */
function expectShapeOf(answer: Answer, name: V1BodyName): void {
  const fixture = V1_BODIES[name];
  expect({ status: answer.status, contentType: answer.contentType }).toEqual({
    status: fixture.status,
    contentType: fixture.contentType,
  });
  expect(answer.body.endsWith('\n')).toBe(true);
  expect(shape(answer.body)).toEqual(shape(fixture.body));
}

const shape = (body: string): unknown =>
  jsonShape(JSON.parse(body, (k, v: unknown) => (k === 'state_tree_hashes' ? 'map' : v)));

async function nextBlock(): Promise<number> {
  const before = node.node.chain.height;
  await sendDebugMessage([node.p2pAddress]);
  return waitFor(() => node.node.chain.height > before && node.node.chain.height, {
    what: `block ${before + 1}`,
  });
}

async function committed(hash: string): Promise<number> {
  const tx = await waitFor(() => rpc.transaction(hash), { what: `transaction ${hash}` });
  return tx.result_code;
}

describe('the v1 profile answers as V1’s Go handlers do', () => {
  it('has no debug routes: views are debug messages sent to each validator', async () => {
    const answer = await ask('POST', '/v1/debug/trigger_view');
    expect(answer).toEqual({
      status: 404,
      contentType: V1_BODIES.debugRoute.contentType,
      body: V1_BODIES.debugRoute.body,
    });
    expect(await nextBlock()).toBe(1);
  });

  it('answers the mempool queries with 135 while anything is pending', async () => {
    expect(await ask('POST', '/v1/query/unconfirmed_txs', { page: 1, per_page: 10 })).toEqual({
      status: 200,
      contentType: V1_BODIES.mempoolEmpty.contentType,
      body: V1_BODIES.mempoolEmpty.body,
    });
    // A stake of a genesis validator: V1 includes it with 60 (the actor exists).
    const stake = stakeTx(key('001'), '127.0.0.1:1');
    await rpc.broadcast(stake);
    for (const [path, body] of [
      ['/v1/query/unconfirmed_txs', { page: 1, per_page: 10 }],
      ['/v1/query/unconfirmed_tx', { hash: stake.hash }],
    ] as const) {
      expect(await ask('POST', path, body)).toEqual({
        status: 500,
        contentType: V1_BODIES.mempoolBusy.contentType,
        body: V1_BODIES.mempoolBusy.body,
      });
    }
    const missing = V1_BODIES.mempoolTxMissing.body.slice('hash not found in mempool: '.length);
    expect(await ask('POST', '/v1/query/unconfirmed_tx', { hash: missing })).toMatchObject({
      status: 400,
      body: V1_BODIES.mempoolTxMissing.body,
    });
    expect(await rpc.mempool()).toMatchObject({ readable: false });
    await nextBlock();
    expect(await committed(stake.hash)).toBe(60);
    expect(await rpc.mempool()).toEqual({ readable: true, transactions: [] });
  });

  it('writes the block itself, blocks and transactions in the Go handlers’ shapes', async () => {
    const height = node.node.chain.height;
    const withTx = await ask('POST', '/v1/query/block', { height });
    expectShapeOf(withTx, 'block');
    expect(JSON.parse(withTx.body)).not.toHaveProperty('block');
    expectShapeOf(await ask('POST', '/v1/query/block', { height: 1 }), 'emptyBlock');
    expect(await ask('POST', '/v1/query/block', { height: 99 })).toMatchObject({
      status: 500,
      body: V1_BODIES.blockMissing.body,
    });
    const hash = (JSON.parse(withTx.body) as { transactions: { tx: { hash: string } }[] })
      .transactions[0]?.tx.hash;
    expectShapeOf(await ask('POST', '/v1/query/tx', { hash }), 'transaction');
    expectShapeOf(await ask('GET', '/v1/query/height'), 'height');
    expectShapeOf(await ask('GET', '/v1/consensus/state'), 'consensusState');
    expectShapeOf(
      await ask('POST', '/v1/query/validators', { page: 1, per_page: 10 }),
      'validators',
    );
    expectShapeOf(
      await ask('POST', '/v1/query/validator', { address: key('001').address }),
      'validator',
    );
    expect(await ask('POST', '/v1/query/validator', { address: 'ab'.repeat(20) })).toMatchObject({
      status: 500,
      body: V1_BODIES.validatorMissing.body,
    });
    expectShapeOf(
      await ask('POST', '/v1/query/account', { address: key('001').address }),
      'account',
    );
  });

  it('lists every validator row in the address book, with V1’s answers to bad queries', async () => {
    const book = await ask('GET', '/v1/p2p/staked_actors_address_book?actor_type=validator');
    expectShapeOf(book, 'addressBook');
    expect(
      (JSON.parse(book.body) as { actors: { address: string }[] }).actors.map((a) => a.address),
    ).toEqual([key('001').address]);
    expectShapeOf(
      await ask('GET', '/v1/p2p/staked_actors_address_book?actor_type=fisherman'),
      'addressBookEmpty',
    );
    expect(
      await ask('GET', '/v1/p2p/staked_actors_address_book?actor_type=validator&height=abc'),
    ).toEqual({
      status: 400,
      contentType: V1_BODIES.addressBookBadHeight.contentType,
      body: V1_BODIES.addressBookBadHeight.body,
    });
    // No actor_type: V1 dereferences a nil pointer (rpc/utils.go:461) and Go drops the connection.
    await expect(ask('GET', '/v1/p2p/staked_actors_address_book')).rejects.toThrow();
  });
});

describe('the v1 profile’s chain follows V1’s code', () => {
  it('keeps an unstaked validator in the set: the lone genesis validator unstakes and the chain goes on', async () => {
    const unstake = unstakeTx(key('001'));
    await rpc.broadcast(unstake);
    await nextBlock();
    expect(await committed(unstake.hash)).toBe(0);
    const unstaked = await rpc.validator(key('001').address);
    expect(unstaked?.unstaking_height).toBeGreaterThan(0);
    const after = await nextBlock();
    await nextBlock();
    const block = await rpc.block(after);
    expect(block.block_header.quorum_cert.threshold_sig.signatures?.map((s) => s.address)).toEqual([
      key('001').address,
    ]);
  });

  it('answers 60 to a stake of a validator that unstaked (intended re-activates it)', async () => {
    const again = stakeTx(key('001'), '127.0.0.1:9');
    await rpc.broadcast(again);
    await nextBlock();
    expect(await committed(again.hash)).toBe(60);
    expect((await rpc.validator(key('001').address))?.unstaking_height).toBeGreaterThan(0);
  });

  it('puts a new validator’s row in the set and the address book at once', async () => {
    const stake = stakeTx(key('002'), '127.0.0.1:2');
    await rpc.broadcast(stake);
    const height = await nextBlock();
    expect(await committed(stake.hash)).toBe(0);
    const book = await rpc.addressBook({ actorType: 'validator' });
    expect(book.actors?.map((a) => a.address).sort()).toEqual(
      [key('001').address, key('002').address].sort(),
    );
    // Both rows sign the next height: 2 of 2 needed, and 002 has no node: V1 would stop here.
    expect(node.node.chain.validatorSet(height + 1).quorum).toBe(2);
  });
});
