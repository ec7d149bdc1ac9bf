// A node under hostile or careless input (issue 16): an altered copy of a signed transaction is
// not a new transaction, a transaction no block can hold is refused at admission, one that does
// not fit the next block does not hold up the ones behind it, and an oversized request body is
// answered with 413 instead of a reset connection.
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../../src/harness/wait.ts';
import { buildGenesis } from '../../src/localnet/genesis.ts';
import { startNode, type RunningNode } from '../../src/localnet/server.ts';
import {
  bytesToHex,
  generateKeys,
  PocketRpcClient,
  sendMessage,
  signTransaction,
  type SignedTransaction,
  type ValidatorKey,
} from '../../src/pocket/index.ts';
import { triggerView, unstakeTx } from './support/chain.ts';

const MAX_BLOCK_BYTES = 3_000;
const keys = generateKeys({ count: 4, seed: 'admission-limits' });
const key = (id: string): ValidatorKey => keys.get(id)!;
const nodes: RunningNode[] = [];

async function start(fidelity: 'intended' | 'v1'): Promise<RunningNode> {
  const genesis = buildGenesis({ keys, validators: 1, serviceUrl: '127.0.0.1:1' });
  genesis.max_block_bytes = MAX_BLOCK_BYTES;
  // 004: a validator paused since genesis, outside the active set, that can still unstake.
  const paused = key('004');
  genesis.validators.push({
    address: paused.address,
    public_key: paused.publicKeyHex,
    chains: null,
    service_url: '127.0.0.1:2',
    staked_amount: '15000000000',
    paused_height: 0,
    unstaking_height: -1,
    output: paused.address,
    actor_type: 4,
  });
  const node = await startNode({
    debugRoutes: true,
    genesis,
    key: key('001'),
    fidelity,
    host: '127.0.0.1',
    rpcPort: 0,
    p2pPort: 0,
    roundTimeoutMs: 300,
    logger: pino({ level: 'silent' }),
  });
  nodes.push(node);
  return node;
}

let node: RunningNode;
let rpc: PocketRpcClient;

beforeAll(async () => {
  node = await start('intended');
  rpc = new PocketRpcClient({ baseUrl: node.rpcUrl });
});
afterAll(async () => {
  await Promise.all(nodes.map((n) => n.stop()));
});

/** A send whose amount has `digits` digits (leading zeros: still 1 uPOKT), to size a tx. */
function send(from: ValidatorKey, digits: number): SignedTransaction {
  return signTransaction({
    key: from,
    message: sendMessage({
      fromAddress: from.addressBytes,
      toAddress: key('004').addressBytes,
      amount: `${'0'.repeat(digits - 1)}1`,
    }),
  });
}

async function broadcast(url: string, hex: string): Promise<{ status: number; body: string }> {
  const response = await fetch(`${url}/v1/client/broadcast_tx_sync`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ address: '', raw_hex_bytes: hex }),
  });
  return { status: response.status, body: await response.text() };
}

describe('admission', () => {
  it('refuses an altered copy of a committed unstake: the appended field breaks the signature', async () => {
    const unstake = unstakeTx(key('004'));
    await rpc.broadcast(unstake);
    expect((await triggerView(node.rpcUrl)).status).toBe(200);
    expect((await waitFor(() => rpc.transaction(unstake.hash))).result_code).toBe(0);
    const replay = await broadcast(node.rpcUrl, `${unstake.hex}7801`);
    expect(replay).toEqual({
      status: 500,
      body: 'CODE: 10, ERROR: the public key / signature combination is not valid for the msg',
    });
    expect((await rpc.mempool()).readable && node.node.mempool.size).toBe(0);
  });

  it('refuses a transaction larger than a block can hold with V1’s code 125', async () => {
    const huge = send(key('001'), MAX_BLOCK_BYTES);
    expect(huge.bytes.length).toBeGreaterThan(MAX_BLOCK_BYTES);
    expect(await broadcast(node.rpcUrl, huge.hex)).toEqual({
      status: 500,
      body: `CODE: 125, ERROR: socket error: payload size is too big. : payload length: ${huge.bytes.length}, accepted length: ${MAX_BLOCK_BYTES}`,
    });
    expect(node.node.mempool.size).toBe(0);
  });

  it('admits it in the v1 profile, as V1 has no such check', async () => {
    const v1 = await start('v1');
    const huge = send(key('001'), MAX_BLOCK_BYTES);
    expect(await broadcast(v1.rpcUrl, huge.hex)).toEqual({ status: 200, body: '' });
  });
});

describe('block building', () => {
  it('skips a transaction that does not fit, includes the ones behind it, and keeps it for the next block', async () => {
    const first = send(key('001'), 1_600);
    const second = send(key('002'), 1_600);
    const small = send(key('003'), 10);
    expect(first.bytes.length + second.bytes.length).toBeGreaterThan(MAX_BLOCK_BYTES);
    for (const tx of [first, second, small]) await rpc.broadcast(tx);
    const { height } = await triggerView(node.rpcUrl);
    const block = await rpc.block(height);
    expect(block.transactions?.map((t) => t.tx.hash)).toEqual([first.hash, small.hash]);
    expect((await rpc.mempoolEntry(second.hash)).inMempool).toBe(true);
    const next = await rpc.block((await triggerView(node.rpcUrl)).height);
    expect(next.transactions?.map((t) => t.tx.hash)).toEqual([second.hash]);
  });
});

describe('the RPC body limit', () => {
  it('answers an oversized body with 413 and does not reset the connection', async () => {
    const body = JSON.stringify({ address: '', raw_hex_bytes: bytesToHex(new Uint8Array(9e6)) });
    expect(body.length).toBeGreaterThan(16 * 1024 * 1024);
    const response = await fetch(`${node.rpcUrl}/v1/client/broadcast_tx_sync`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    });
    expect(response.status).toBe(413);
    expect(await response.text()).toBe('{"message":"Request Entity Too Large"}\n');
    expect(await rpc.height()).toBeGreaterThan(0);
  });
});
