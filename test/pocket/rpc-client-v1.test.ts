// The RPC client against V1 as its Go handlers answer (fixtures/v1-rpc-bodies.ts, with their
// sources): the unwrapped block, the mempool's 135 while busy, `null` lists; and the trust
// boundary: malformed 200 bodies and oversized answers are named errors.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { PocketErrorCode, PocketRpcClient } from '../../src/pocket/index.ts';
import {
  V001,
  V002,
  V1_BODIES,
  type V1BodyName,
  type V1Fixture,
} from './fixtures/v1-rpc-bodies.ts';

/** What the fake node answers per path; a test sets the situation it needs. */
let answers: Record<string, V1Fixture | { status: number; contentType: string; body: string }>;
let server: Server;
let client: PocketRpcClient;

const use = (...names: V1BodyName[]): void => {
  for (const name of names) answers[V1_BODIES[name].path.replace(/\?.*$/, '')] = V1_BODIES[name];
};

function handle(req: IncomingMessage, res: ServerResponse): void {
  req.resume();
  req.on('end', () => {
    const path = (req.url ?? '').replace(/\?.*$/, '');
    const answer = answers[path];
    if (answer === undefined) {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"message":"Not Found"}\n');
      return;
    }
    if (answer.body === '<chunked 2 MiB>') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write(`{"height":1,"pad":"`);
      for (let i = 0; i < 32; i++) res.write('x'.repeat(64 * 1024));
      res.end('"}\n');
      return;
    }
    res.writeHead(answer.status, { 'content-type': answer.contentType }).end(answer.body);
  });
}

beforeAll(async () => {
  server = createServer(handle);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  client = new PocketRpcClient({
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    maxResponseBytes: 1024 * 1024,
  });
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});
beforeEach(() => {
  answers = {};
});

describe('PocketRpcClient against V1 as it runs', () => {
  it('reads the block V1 writes unwrapped, and the openapi file’s wrapped one alike', async () => {
    use('block');
    const block = await client.block(5);
    expect(block.block_header.height).toBe(5);
    expect(block.block_header.quorum_cert.threshold_sig.signatures?.map((s) => s.address)).toEqual([
      V001.address,
      V002.address,
    ]);
    expect(block.transactions?.[0]).toMatchObject({ result_code: 60, signer_addr: V002.address });
    answers['/v1/query/block'] = {
      status: 200,
      contentType: 'application/json',
      body: `{"block":${V1_BODIES.block.body}}`,
    };
    expect(await client.block(5)).toEqual(block);
  });

  it('treats V1’s 135 on the mempool queries as "not readable now", not a failure', async () => {
    use('mempoolBusy', 'mempoolTxBusy');
    expect(await client.mempool()).toEqual({
      readable: false,
      reason: expect.stringMatching(/135/),
    });
    expect(await client.mempoolEntry('ef'.repeat(32))).toEqual({
      inMempool: true,
      transaction: undefined,
    });
    // The older list call names the outcome instead of a generic HTTP failure.
    await expect(client.unconfirmedTransactions()).rejects.toMatchObject({
      code: PocketErrorCode.rpcMempoolUnreadable,
    });
    use('mempoolEmpty', 'mempoolTxMissing');
    expect(await client.mempool()).toEqual({ readable: true, transactions: [] });
    expect(await client.mempoolEntry('ef'.repeat(32))).toEqual({ inMempool: false });
  });

  it('reads Go’s null lists as empty lists', async () => {
    use('validatorsEmpty', 'addressBookEmpty', 'height');
    expect(await client.validators({ height: 5 })).toEqual([]);
    const book = await client.addressBook({ actorType: 'fisherman' });
    expect(book.actors).toEqual([]);
    use('validators', 'addressBook');
    const all = await client.validators({ height: 5 });
    expect(all.map((v) => [v.address, v.chains])).toEqual([
      [V001.address, null],
      [V002.address, null],
    ]);
    expect((await client.addressBook({ actorType: 'validator' })).height).toBe(6);
  });

  it('reads V1’s transaction, validator and account bodies', async () => {
    use('transaction', 'validator', 'account', 'consensusState', 'emptyBlock');
    expect(await client.transaction('ef'.repeat(32))).toMatchObject({
      height: 5,
      message_type: 'MessageStake',
      result_code: 60,
    });
    expect((await client.validator(V001.address))?.unstaking_height).toBe(-1);
    expect((await client.account(V001.address)).coins).toEqual([
      { amount: '100000000000000', denom: 'upokt' },
    ]);
    expect(await client.consensusState()).toEqual({ height: 6, round: 0, step: 1 });
    expect((await client.block(5)).transactions).toEqual([]);
    use('validatorMissing', 'blockMissing');
    expect(await client.validator(V002.address)).toBeUndefined();
    await expect(client.block(99)).rejects.toMatchObject({
      code: PocketErrorCode.rpcHttp,
      status: 500,
    });
  });

  it('names a 200 body without the fields callers rely on, by its JSON path', async () => {
    const bad = (path: string, body: string) => {
      answers[path] = { status: 200, contentType: 'application/json', body };
    };
    bad('/v1/query/height', '{"height":"5"}');
    await expect(client.height()).rejects.toMatchObject({
      code: PocketErrorCode.rpcBadResponse,
      message: expect.stringContaining('height is not a block height, an integer ≥ 0 (it is "5")'),
    });
    bad('/v1/query/block', '{"transactions":[]}');
    await expect(client.block(1)).rejects.toMatchObject({
      code: PocketErrorCode.rpcBadResponse,
      message: expect.stringContaining('block_header is not an object'),
    });
    bad('/v1/query/block', V1_BODIES.block.body.replace('"signatures":[', '"signatures":[7,'));
    await expect(client.block(1)).rejects.toMatchObject({
      message: expect.stringContaining('block_header.quorum_cert.threshold_sig.signatures[0]'),
    });
    bad('/v1/query/validators', '{"validators":{},"total_validators":1,"page":1,"total_pages":1}');
    await expect(client.validators({ height: 1 })).rejects.toMatchObject({
      message: expect.stringContaining('validators is not a list or null'),
    });
    bad('/v1/query/unconfirmed_txs', '[]');
    await expect(client.mempool()).rejects.toMatchObject({ code: PocketErrorCode.rpcBadResponse });
  });

  it('refuses an answer over its size cap, declared or streamed', async () => {
    answers['/v1/query/height'] = {
      status: 200,
      contentType: 'application/json',
      body: `{"height":1,"pad":"${'x'.repeat(2 * 1024 * 1024)}"}`,
    };
    await expect(client.height()).rejects.toMatchObject({
      code: PocketErrorCode.rpcResponseTooLarge,
    });
    answers['/v1/query/height'] = {
      status: 200,
      contentType: 'application/json',
      body: '<chunked 2 MiB>',
    };
    await expect(client.height()).rejects.toMatchObject({
      code: PocketErrorCode.rpcResponseTooLarge,
    });
    // The connection is usable again afterwards.
    use('height');
    expect(await client.height()).toBe(5);
  });
});
