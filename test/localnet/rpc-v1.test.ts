// The stand-in's `v1` fidelity profile, four in-process genesis validators (V1's leader never
// counts its own vote, so fewer never commit): its answers have the shapes of V1's Go handlers
// (the same fixtures the RPC client is tested with), and its chain follows V1's code: unstaked
// rows stay in the validator set, a known validator's stake is 60, views are triggered by debug
// messages to the validators, not by an RPC route.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../../src/harness/wait.ts';
import type { RunningNode } from '../../src/localnet/server.ts';
import { generateKeys, PocketRpcClient, type ValidatorKey } from '../../src/pocket/index.ts';
import { jsonShape, V1_BODIES, type V1BodyName } from '../pocket/fixtures/v1-rpc-bodies.ts';
import { nextV1Block, signers, stakeTx, unstakeTx } from './support/chain.ts';
import { startInProcessNet, type InProcessNet } from './support/in-process-net.ts';

const keys = generateKeys({ count: 5, seed: 'rpc-v1-test' });
const key = (id: string): ValidatorKey => keys.get(id)!;
const GENESIS = ['001', '002', '003', '004'];
let net: InProcessNet;
let node: RunningNode;
let rpc: PocketRpcClient;

beforeAll(async () => {
  net = await startInProcessNet({ keys, fidelity: 'v1', unstakingBlocks: 2 });
  node = net.nodes[0]!;
  rpc = new PocketRpcClient({ baseUrl: node.rpcUrl });
});
afterAll(async () => {
  await net.stop();
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

const nextBlock = (): Promise<number> =>
  nextV1Block(
    net.nodes.map((n) => n.p2pAddress),
    net.nodes.map((n) => n.rpcUrl),
  );

async function committed(hash: string): Promise<number> {
  const tx = await waitFor(() => rpc.transaction(hash), { what: `transaction ${hash}` });
  return tx.result_code;
}

describe('the v1 profile answers as V1’s Go handlers do', () => {
  it('says height 0 before the first height starts (consensus/module.go:116, 298-302)', async () => {
    const state = JSON.parse((await ask('GET', '/v1/consensus/state')).body) as {
      height: number;
      step: number;
    };
    expect(state).toMatchObject({ height: 0, step: 1 });
  });

  it('has no debug routes: views are debug messages sent to each validator', async () => {
    const answer = await ask('POST', '/v1/debug/trigger_view');
    expect(answer).toEqual({
      status: 404,
      contentType: V1_BODIES.debugRoute.contentType,
      body: V1_BODIES.debugRoute.body,
    });
    expect(await nextBlock()).toBe(1);
    const state = JSON.parse((await ask('GET', '/v1/consensus/state')).body) as { height: number };
    expect(state.height).toBe(2);
  });

  it('answers HEAD with 405 and OPTIONS with 204, both with Allow (Echo v4.9.1’s router)', async () => {
    for (const [method, status] of [
      ['HEAD', 405],
      ['OPTIONS', 204],
    ] as const) {
      const response = await fetch(`${node.rpcUrl}/v1/health`, { method });
      expect({ status: response.status, allow: response.headers.get('allow') }).toEqual({
        status,
        allow: 'OPTIONS, GET',
      });
    }
    const post = await fetch(`${node.rpcUrl}/v1/query/height`, { method: 'POST' });
    expect({ status: post.status, allow: post.headers.get('allow') }).toEqual({
      status: 405,
      allow: 'OPTIONS, GET',
    });
  });

  it('binds as Echo does: a form gives zero values, the JSON check is case-sensitive, no body limit', async () => {
    const validator = async (type: string, body: string) =>
      fetch(`${node.rpcUrl}/v1/query/validator`, {
        method: 'POST',
        headers: { 'content-type': type },
        body,
      }).then(async (r) => ({ status: r.status, body: await r.text() }));
    // A form binds no field (V1's structs have no `form` tags): the handler runs on address "".
    expect(
      await validator('application/x-www-form-urlencoded', `address=${key('001').address}`),
    ).toEqual({ status: 500, body: V1_BODIES.validatorMissing.body });
    expect(await validator('application/x-www-form-urlencoded', 'address=%zz')).toEqual({
      status: 400,
      body: 'bad request',
    });
    expect((await validator('multipart/form-data', 'x')).status).toBe(400); // no boundary
    const json = JSON.stringify({ address: key('001').address });
    expect((await validator('application/json; charset=UTF-8', json)).status).toBe(200);
    expect(await validator('Application/JSON', json)).toEqual({ status: 400, body: 'bad request' });
    expect(await validator('text/plain', json)).toEqual({ status: 400, body: 'bad request' });
    // 17 MiB: V1's Echo has no BodyLimit (rpc/server.go:36-62); the intended profile answers 413.
    const padded = JSON.stringify({ address: key('001').address, pad: 'x'.repeat(17 << 20) });
    expect((await validator('application/json', padded)).status).toBe(200);
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
    // V1's mempool is keyed by the lowercase hash and looked up as given.
    const upper = stake.hash.toUpperCase();
    expect(await ask('POST', '/v1/query/unconfirmed_tx', { hash: upper })).toMatchObject({
      status: 400,
      body: `hash not found in mempool: ${upper}`,
    });
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
      (JSON.parse(book.body) as { actors: { address: string }[] }).actors
        .map((a) => a.address)
        .sort(),
    ).toEqual(GENESIS.map((id) => key(id).address).sort());
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
  it('keeps an unstaked validator in the set: 004 unstakes, still counts and still signs', async () => {
    const unstake = unstakeTx(key('004'));
    await rpc.broadcast(unstake);
    await nextBlock();
    expect(await committed(unstake.hash)).toBe(0);
    expect((await rpc.validator(key('004').address))?.unstaking_height).toBeGreaterThan(0);
    const rows = GENESIS.map((id) => key(id).address).sort();
    // Past its unstaking height (2 blocks): the chain goes on, and 004 is still one of the rows
    // the certificates come from — each signed by the three that did not lead its round.
    for (let i = 0; i < 3; i++) await nextBlock();
    const block = await rpc.block(node.node.chain.height);
    const { height, round } = block.block_header.quorum_cert;
    const leader = rows[(height + round) % rows.length];
    expect(signers(block).sort()).toEqual(rows.filter((a) => a !== leader));
    const book = await rpc.addressBook({ actorType: 'validator' });
    expect(book.actors?.map((a) => a.address)).toContain(key('004').address);
  });

  it('answers 60 to a stake of a validator that unstaked (intended re-activates it)', async () => {
    const again = stakeTx(key('004'), net.nodes[3]!.p2pAddress);
    await rpc.broadcast(again);
    await nextBlock();
    expect(await committed(again.hash)).toBe(60);
    expect((await rpc.validator(key('004').address))?.unstaking_height).toBeGreaterThan(0);
  });

  it('puts a new validator’s row in the set and the address book at once', async () => {
    const stake = stakeTx(key('005'), '127.0.0.1:2');
    await rpc.broadcast(stake);
    const height = await nextBlock();
    expect(await committed(stake.hash)).toBe(0);
    const book = await rpc.addressBook({ actorType: 'validator' });
    expect(book.actors?.map((a) => a.address).sort()).toEqual(
      [...GENESIS, '005'].map((id) => key(id).address).sort(),
    );
    // Five rows sign the next height: 4 votes besides the leader's, and 005 has no node — V1
    // stops here (test/localnet/v1-consensus.test.ts).
    expect(node.node.chain.validatorSet(height + 1).quorum).toBe(4);
  });
});

describe('the v1 profile’s automatic pacemaker', () => {
  it('has no block interval: the next height starts at once, whatever --block-interval-ms says', async () => {
    // V1's NewHeight → startNextView broadcasts NewRound at once in automatic mode
    // (consensus/pacemaker/module.go:226-287); debug_time_between_steps_msec is never used.
    const interval = 60_000;
    const auto = await startInProcessNet({
      keys,
      fidelity: 'v1',
      pacemaker: 'auto',
      blockIntervalMs: interval,
      roundTimeoutMs: interval, // no round of the height may time out meanwhile either
    });
    try {
      const started = Date.now();
      await waitFor(() => auto.nodes.every((n) => n.node.chain.height >= 5), {
        what: 'five blocks on every validator',
        timeoutMs: 20_000,
      });
      expect(Date.now() - started).toBeLessThan(interval);
    } finally {
      await auto.stop();
    }
  });
});
