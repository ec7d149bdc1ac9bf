// The V1 RPC of one in-process validator: paths, JSON shapes, Echo-style errors, pagination,
// every stage-A admission error with V1's text, and stage-B result codes as the chain records them.
import { create, toBinary } from '@bufbuild/protobuf';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  bytesToHex,
  editStakeMessage,
  generateKeys,
  packMessage,
  PocketRpcClient,
  sendMessage,
  signableBytes,
  signTransaction,
  stakeMessage,
  unpauseMessage,
  unstakeMessage,
  type PocketMessage,
  type SignedTransaction,
  type ValidatorKey,
} from '../../src/pocket/index.ts';
import { SignatureSchema, TransactionSchema } from '../../src/pocket/gen/core/transaction_pb.js';
import { buildGenesis } from '../../src/localnet/genesis.ts';
import { startNode, type RunningNode } from '../../src/localnet/server.ts';
import { triggerView } from './support/chain.ts';

const keys = generateKeys({ count: 4, seed: 'rpc-test' });
const key = (id: string): ValidatorKey => keys.get(id)!;
const stranger = generateKeys({ count: 1, seed: 'rpc-test-unfunded' }).get('001')!;
let node: RunningNode;
let rpc: PocketRpcClient;

beforeAll(async () => {
  const genesis = buildGenesis({
    keys,
    validators: 1,
    serviceUrl: '127.0.0.1:1',
    unstakingBlocks: 5,
  });
  // 004 is a validator paused since genesis: not in the active set, and able to show 68.
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
  node = await startNode({
    debugRoutes: true,
    genesis,
    key: key('001'),
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

async function call(
  method: string,
  path: string,
  body?: unknown,
  contentType = 'application/json',
): Promise<{ status: number; type: string; text: string }> {
  const response = await fetch(`${node.rpcUrl}${path}`, {
    method,
    ...(body === undefined
      ? {}
      : {
          body: typeof body === 'string' ? body : JSON.stringify(body),
          headers: { 'content-type': contentType },
        }),
  });
  return {
    status: response.status,
    type: response.headers.get('content-type') ?? '',
    text: await response.text(),
  };
}

const broadcastHex = (hex: string) =>
  call('POST', '/v1/client/broadcast_tx_sync', { address: '', raw_hex_bytes: hex });

function sign(signer: ValidatorKey, message: PocketMessage): SignedTransaction {
  return signTransaction({ key: signer, message });
}

function stakeOf(of: ValidatorKey, amount: string, signer = of): PocketMessage {
  return stakeMessage({
    publicKey: of.publicKey,
    amount,
    chains: ['0001'],
    serviceUrl: '127.0.0.1:9',
    outputAddress: of.addressBytes,
    signer: signer.addressBytes,
  });
}

describe('localnet RPC: service endpoints', () => {
  it('answers health on GET and HEAD with an empty 200, and the version as text', async () => {
    expect(await call('GET', '/v1/health')).toMatchObject({ status: 200, text: '' });
    expect((await fetch(`${node.rpcUrl}/v1/health`, { method: 'HEAD' })).status).toBe(200);
    expect(await call('GET', '/v1/version')).toMatchObject({
      status: 200,
      type: 'text/plain; charset=UTF-8',
      text: 'v0.0.1-pre-alpha.1',
    });
  });

  it('answers unknown routes and methods with Echo-style JSON 404 and 405', async () => {
    expect(await call('GET', '/v1/nope')).toEqual({
      status: 404,
      type: 'application/json; charset=UTF-8',
      text: '{"message":"Not Found"}\n',
    });
    expect(await call('POST', '/v1/health', {})).toMatchObject({
      status: 405,
      text: '{"message":"Method Not Allowed"}\n',
    });
  });

  it('reports heights: committed for query/height, committed + 1 for consensus/state', async () => {
    const height = await rpc.height();
    expect(await rpc.consensusState()).toMatchObject({ height: height + 1 });
  });

  it("binds bodies as Echo does: other content types and bad JSON are 400 'bad request'", async () => {
    expect(await call('POST', '/v1/query/validators', 'page=1', 'text/plain')).toMatchObject({
      status: 400,
      text: 'bad request',
    });
    expect(await call('POST', '/v1/query/validators', '{"page":')).toMatchObject({
      status: 400,
      text: 'bad request',
    });
    expect(await call('POST', '/v1/query/validators', { page: '1' })).toMatchObject({
      status: 400,
      text: 'bad request',
    });
  });

  it('paginates validators with V1 rules and texts', async () => {
    const page = await rpc.validatorsPage({ page: 1, perPage: 10 });
    expect(page).toMatchObject({ total_validators: 2, page: 1, total_pages: 1 });
    expect(page.validators?.map((v) => v.address)).toEqual(
      [key('001').address, key('004').address].sort(),
    );
    expect(page.validators?.find((v) => v.address === key('001').address)).toEqual({
      address: key('001').address,
      actor_type: 'validator',
      public_key: key('001').publicKeyHex,
      chains: null,
      service_url: '127.0.0.1:1',
      staked_amount: '1000000000000',
      paused_height: -1,
      unstaking_height: -1,
      output_addr: key('001').address,
    });
    const query = (body: object) => call('POST', '/v1/query/validators', body);
    expect(await query({ page: 0, per_page: 10 })).toMatchObject({
      status: 400,
      text: 'page and per_page must both be greater than 0',
    });
    expect(await query({ page: 1, per_page: 1001 })).toMatchObject({
      status: 400,
      text: 'per_page has a max value of 1000',
    });
    expect(await query({ page: 3, per_page: 1 })).toMatchObject({
      status: 400,
      text: 'starting page too high: got 3, total pages: 2',
    });
  });

  it('answers an empty mempool with a zero-valued 200 body', async () => {
    expect(
      JSON.parse((await call('POST', '/v1/query/unconfirmed_txs', { page: 1, per_page: 10 })).text),
    ).toEqual({ transactions: null, total_txs: 0, page: 0, total_pages: 0 });
  });

  it('reports missing rows, keys and bad hex with V1 texts', async () => {
    expect(
      await call('POST', '/v1/query/validator', { address: key('002').address }),
    ).toMatchObject({ status: 500, text: 'no rows in result set' });
    expect(await call('POST', '/v1/query/tx', { hash: 'ab'.repeat(32) })).toMatchObject({
      status: 500,
      text: 'Key not found',
    });
    expect(await call('POST', '/v1/query/tx', { hash: 'xyz' })).toMatchObject({
      status: 500,
      text: "encoding/hex: invalid byte: U+0078 'x'",
    });
    expect(await call('POST', '/v1/query/account', { address: 'abc' })).toMatchObject({
      status: 400,
      text: 'encoding/hex: odd length hex string',
    });
    expect(await call('POST', '/v1/query/unconfirmed_tx', { hash: 'beef' })).toMatchObject({
      status: 400,
      text: 'hash not found in mempool: beef',
    });
    expect(await call('POST', '/v1/query/param', { param_name: 'nope' })).toMatchObject({
      status: 500,
      text: 'no rows in result set',
    });
  });

  it('serves accounts, balances, parameters, node roles and the address book', async () => {
    expect(await rpc.account(stranger.address)).toEqual({
      address: stranger.address,
      coins: [{ amount: '0', denom: 'upokt' }],
    });
    expect(await rpc.balance(key('003').address)).toBe(100_000_000_000_000);
    expect(await rpc.param('validator_minimum_stake')).toBe('15000000000');
    expect(await rpc.param('validator_unstaking_blocks')).toBe('5');
    const params = await rpc.allParams();
    expect(params).toContainEqual({
      parameter_name: 'message_stake_validator_fee',
      parameter_value: '10000',
    });
    expect(JSON.parse((await call('POST', '/v1/query/nodeRoles')).text)).toEqual({
      node_roles: ['validator'],
    });
    expect(await rpc.addressBook({ actorType: 'validator' })).toEqual({
      actors: [
        {
          address: key('001').address,
          type: 'validator',
          public_key: key('001').publicKeyHex,
          service_url: '127.0.0.1:1',
        },
      ],
      height: (await rpc.height()) + 1,
    });
  });
});

describe('localnet RPC: stage-A admission errors (V1 codes and texts)', () => {
  const msg = packMessage(unstakeMessage({ address: key('002').addressBytes }));
  const encode = (fields: Parameters<typeof create<typeof TransactionSchema>>[1]) =>
    bytesToHex(toBinary(TransactionSchema, create(TransactionSchema, fields)));
  const signature = (nonce: string) => key('002').sign(signableBytes({ msg, nonce }));

  it.each([
    [
      'not JSON bound',
      () => call('POST', '/v1/client/broadcast_tx_sync', '{', 'application/json'),
      400,
      'bad request',
    ],
    ['not hex', () => broadcastHex('zz'), 400, 'cannot decode tx bytes'],
  ])('rejects a body that is %s', async (_name, send, status, text) => {
    expect(await send()).toMatchObject({ status, text });
  });

  it.each<[number, string, () => string]>([
    [26, 'an error occurred unmarshalling the structure in protobuf: ', () => '0aff'],
    [30, 'the nonce in the transaction is empty', () => encode({ msg })],
    [136, 'the signature structure is empty', () => encode({ msg, nonce: '1' })],
    [
      32,
      'the signature field is empty',
      () =>
        encode({
          msg,
          nonce: '1',
          signature: create(SignatureSchema, { publicKey: key('002').publicKey }),
        }),
    ],
    [
      31,
      'the public key field is empty',
      () =>
        encode({
          msg,
          nonce: '1',
          signature: create(SignatureSchema, { signature: signature('1') }),
        }),
    ],
    [
      8,
      'unable to convert the raw bytes to a valid public key: ',
      () =>
        encode({
          msg,
          nonce: '1',
          signature: create(SignatureSchema, {
            publicKey: new Uint8Array(31),
            signature: signature('1'),
          }),
        }),
    ],
    [
      4,
      'unable to decode the message: ',
      () =>
        encode({
          msg: { ...msg, typeUrl: 'type.googleapis.com/utility.MessageBogus' },
          nonce: '1',
          signature: create(SignatureSchema, {
            publicKey: key('002').publicKey,
            signature: signature('1'),
          }),
        }),
    ],
    [
      10,
      'the public key / signature combination is not valid for the msg',
      () =>
        encode({
          msg,
          nonce: '1',
          signature: create(SignatureSchema, {
            publicKey: key('002').publicKey,
            signature: signature('2'),
          }),
        }),
    ],
  ])('answers code %i with 500 and V1 text', async (code, text, bytes) => {
    const answer = await broadcastHex(bytes());
    expect(answer.status).toBe(500);
    expect(answer.type).toBe('text/plain; charset=UTF-8');
    expect(answer.text.startsWith(`CODE: ${code}, ERROR: ${text}`)).toBe(true);
  });

  it('answers 35 for a transaction already in the mempool and 95 once it is committed', async () => {
    const tx = sign(
      key('003'),
      sendMessage({
        fromAddress: key('003').addressBytes,
        toAddress: key('004').addressBytes,
        amount: '1',
      }),
    );
    expect(await broadcastHex(tx.hex)).toMatchObject({ status: 200, text: '' });
    expect(await broadcastHex(tx.hex)).toEqual({
      status: 500,
      type: 'text/plain; charset=UTF-8',
      text: 'CODE: 35, ERROR: the transaction is already found in the mempool',
    });
    await triggerView(node.rpcUrl);
    expect(await broadcastHex(tx.hex)).toMatchObject({
      status: 500,
      text: 'CODE: 95, ERROR: the transaction is already committed',
    });
  });
});

describe('localnet RPC: stage-B outcomes recorded by the chain', () => {
  it('indexes message failures with their V1 result code and drops signer and fee failures', async () => {
    const newcomer = key('002');
    const cases: [string, SignedTransaction][] = [
      ['ok stake', sign(newcomer, stakeOf(newcomer, '20000000000'))],
      ['ok unstake', sign(newcomer, unstakeMessage({ address: newcomer.addressBytes }))],
      ['45', sign(key('003'), stakeOf(key('003'), '14999999999'))],
      ['41', sign(key('003'), stakeOf(key('003'), '200000000000000'))],
      ['40', sign(key('003'), stakeOf(key('003'), 'lots'))],
      ['60', sign(key('001'), stakeOf(key('001'), '20000000000'))],
      [
        '71',
        sign(
          key('003'),
          editStakeMessage({
            address: key('003').addressBytes,
            amount: '1',
            chains: [],
            serviceUrl: '',
          }),
        ),
      ],
      ['67', sign(key('001'), unpauseMessage({ address: key('001').addressBytes }))],
      ['68', sign(key('004'), unpauseMessage({ address: key('004').addressBytes }))],
      [
        'edit ok',
        sign(
          key('001'),
          editStakeMessage({
            address: key('001').addressBytes,
            amount: '1000000000001',
            chains: [],
            serviceUrl: '127.0.0.1:1',
          }),
        ),
      ],
      [
        'send ok',
        sign(
          key('004'),
          sendMessage({
            fromAddress: key('004').addressBytes,
            toAddress: stranger.addressBytes,
            amount: '5',
          }),
        ),
      ],
      ['dropped: not a candidate', sign(key('004'), stakeOf(key('003'), '20000000000'))],
      ['dropped: cannot pay the fee', sign(stranger, stakeOf(stranger, '20000000000'))],
      [
        'dropped: unstake of an unknown actor',
        sign(stranger, unstakeMessage({ address: stranger.addressBytes })),
      ],
    ];
    for (const [, tx] of cases) await rpc.broadcast(tx);
    expect((await rpc.unconfirmedTransactions()).length).toBe(cases.length);
    const { status, height } = await triggerView(node.rpcUrl);
    expect(status).toBe(200);

    const outcome = async (tx: SignedTransaction) => (await rpc.transaction(tx.hash))?.result_code;
    const codes = Object.fromEntries(
      await Promise.all(cases.map(async ([name, tx]) => [name, await outcome(tx)] as const)),
    );
    expect(codes).toEqual({
      'ok stake': 0,
      'ok unstake': 0,
      '45': 45,
      '41': 41,
      '40': 40,
      '60': 60,
      '71': 71,
      '67': 67,
      '68': 68,
      'edit ok': 0,
      'send ok': 0,
      'dropped: not a candidate': undefined,
      'dropped: cannot pay the fee': undefined,
      'dropped: unstake of an unknown actor': undefined,
    });
    // Dropped transactions leave the mempool too.
    expect(await rpc.unconfirmedTransactions()).toEqual([]);
    const block = await rpc.block(height);
    expect(block.transactions).toHaveLength(cases.length - 3);
    expect(block.transactions?.[2]).toMatchObject({ height, index: 2, result_code: 45 });

    // 54: unstaking twice; 128: editing to less than the stake.
    const again = sign(newcomer, unstakeMessage({ address: newcomer.addressBytes }));
    const lower = sign(
      newcomer,
      editStakeMessage({ address: newcomer.addressBytes, amount: '1', chains: [], serviceUrl: '' }),
    );
    await rpc.broadcast(again);
    await rpc.broadcast(lower);
    await triggerView(node.rpcUrl);
    expect(await outcome(again)).toBe(54);
    expect(await outcome(lower)).toBe(128);
    expect(await rpc.validator(newcomer.address)).toMatchObject({
      unstaking_height: height + 5,
      staked_amount: '20000000000',
    });
    expect(await rpc.validator(key('001').address)).toMatchObject({
      staked_amount: '1000000000001',
    });
  });

  it('shows an indexed transaction and a block in V1 JSON shape', async () => {
    const tx = sign(key('003'), stakeOf(key('003'), '1'));
    await rpc.broadcast(tx);
    expect(await rpc.unconfirmedTransaction(tx.hash)).toMatchObject({
      height: 0,
      result_code: 0,
      message_type: 'MessageStake',
    });
    const { height } = await triggerView(node.rpcUrl);
    expect(await rpc.transaction(tx.hash)).toEqual({
      height,
      index: 0,
      result_code: 45,
      signer_addr: key('003').address,
      recipient_addr: '',
      message_type: 'MessageStake',
      tx: {
        hash: tx.hash,
        height,
        index: 0,
        txMsg: {
          fee: { amount: '10000', denom: 'upokt' },
          message: {
            actor_type: 'validator',
            public_key: key('003').publicKeyHex,
            chains: ['0001'],
            amount: '1',
            service_url: '127.0.0.1:9',
            output_address: key('003').address,
            signer: key('003').address,
            denom: 'upokt',
          },
          nonce: tx.nonce,
          signature: {
            public_key: key('003').publicKeyHex,
            signature: expect.stringMatching(/^[0-9a-f]{128}$/),
          },
        },
      },
    });
    const { block } = JSON.parse((await call('POST', '/v1/query/block', { height })).text) as {
      block: Record<string, unknown> & { block_header: Record<string, unknown> };
    };
    expect(Object.keys(block).sort()).toEqual(['block_header', 'transactions']);
    expect(Object.keys(block.block_header).sort()).toEqual(
      [
        'height',
        'network_id',
        'state_hash',
        'prev_state_hash',
        'proposer_addr',
        'quorum_cert',
        'timestamp',
        'state_tree_hashes',
        'val_set_hash',
        'next_val_set_hash',
      ].sort(),
    );
    expect(block.block_header).toMatchObject({
      height,
      network_id: 'testnet',
      proposer_addr: key('001').address,
      timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(\.\d+)? \+0000 UTC$/),
      quorum_cert: {
        height,
        round: 0,
        step: 'HOTSTUFF_STEP_COMMIT',
        block: expect.stringMatching(/^[0-9a-f]{64}$/),
        threshold_sig: {
          signatures: [
            { address: key('001').address, signature: expect.stringMatching(/^[0-9a-f]{128}$/) },
          ],
        },
        transactions: [Buffer.from(tx.hex, 'hex').toString('base64')],
      },
    });
    expect(await call('POST', '/v1/query/block', { height: height + 1 })).toMatchObject({
      status: 500,
      text: 'Key not found',
    });
  });
});
