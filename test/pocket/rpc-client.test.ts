// The RPC client against a canned V1 server: paths, bodies, paging, and V1's error texts.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  PocketErrorCode,
  PocketRpcClient,
  RpcError,
  type ProtocolActor,
} from '../../src/pocket/index.ts';

interface Seen {
  method: string;
  url: string;
  contentType: string | undefined;
  body: unknown;
}

const seen: Seen[] = [];
let server: Server;
let client: PocketRpcClient;

function actor(index: number): ProtocolActor {
  return {
    address: index.toString(16).padStart(40, '0'),
    actor_type: 'validator',
    public_key: '00'.repeat(32),
    chains: null,
    service_url: `v${index}:42069`,
    staked_amount: '15000000000',
    paused_height: -1,
    unstaking_height: -1,
    output_addr: index.toString(16).padStart(40, '0'),
  };
}
const ACTORS = Array.from({ length: 1500 }, (_, i) => actor(i + 1));

function text(res: ServerResponse, status: number, body: string): void {
  res.writeHead(status, { 'content-type': 'text/plain; charset=UTF-8' }).end(body);
}
function json(res: ServerResponse, body: unknown): void {
  res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
  let raw = '';
  for await (const chunk of req) raw += String(chunk);
  const body: unknown = raw === '' ? undefined : JSON.parse(raw);
  seen.push({
    method: req.method ?? '',
    url: req.url ?? '',
    contentType: req.headers['content-type'],
    body,
  });
  const b = (body ?? {}) as Record<string, unknown>;
  switch (req.url) {
    case '/v1/health':
      return void res.writeHead(200).end();
    case '/v1/query/height':
      return json(res, { height: 41 });
    case '/v1/consensus/state':
      return json(res, { height: 42, round: 0, step: 1 });
    case '/v1/query/validator':
      return b.address === ACTORS[0]?.address
        ? json(res, ACTORS[0])
        : text(res, 500, 'no rows in result set');
    case '/v1/query/validators': {
      const page = Number(b.page);
      const perPage = Number(b.per_page);
      const slice = ACTORS.slice((page - 1) * perPage, page * perPage);
      return json(res, {
        validators: slice,
        total_validators: ACTORS.length,
        page,
        total_pages: Math.ceil(ACTORS.length / perPage),
      });
    }
    case '/v1/query/tx':
      return text(res, 500, 'Key not found');
    case '/v1/query/unconfirmed_txs':
      return json(res, { transactions: null, total_txs: 0, page: 0, total_pages: 0 });
    case '/v1/client/broadcast_tx_sync':
      return text(res, 500, 'CODE: 35, ERROR: the transaction is already found in the mempool');
    case '/v1/version':
      return text(res, 200, 'v0.0.1-pre-alpha.1');
    case '/v1/query/param':
      return json(res, { parameter_name: b.param_name, parameter_value: '2016' });
    case '/slow/v1/query/height':
      return void setTimeout(() => json(res, { height: 1 }), 2_000);
    case '/bad/v1/query/height':
      return text(res, 200, 'not json');
    default:
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"message":"Not Found"}');
  }
}

beforeAll(async () => {
  server = createServer((req, res) => void handle(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  client = new PocketRpcClient({
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
  });
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

describe('PocketRpcClient', () => {
  it('reads heights, health, version and params', async () => {
    expect(await client.height()).toBe(41);
    expect(await client.consensusState()).toEqual({ height: 42, round: 0, step: 1 });
    expect(await client.isHealthy()).toBe(true);
    expect(await client.version()).toBe('v0.0.1-pre-alpha.1');
    expect(await client.param('validator_unstaking_blocks')).toBe('2016');
  });

  it('reads every validator across pages at one pinned height', async () => {
    seen.length = 0;
    const all = await client.validators();
    expect(all).toHaveLength(1500);
    expect(all.at(-1)?.service_url).toBe('v1500:42069');
    const pages = seen.filter((s) => s.url === '/v1/query/validators');
    expect(pages.map((s) => s.body)).toEqual([
      { height: 41, page: 1, per_page: 1000 },
      { height: 41, page: 2, per_page: 1000 },
    ]);
    expect(pages[0]?.contentType).toBe('application/json');
  });

  it('maps V1 "does not exist" answers to undefined', async () => {
    expect((await client.validator(ACTORS[0]?.address ?? ''))?.service_url).toBe('v1:42069');
    expect(await client.validator('ff'.repeat(20))).toBeUndefined();
    expect(await client.transaction('ab'.repeat(32))).toBeUndefined();
    expect(await client.unconfirmedTransactions()).toEqual([]);
  });

  it('parses V1 error texts into the error code', async () => {
    const error = await client.broadcast({ hex: '00', signer: 'aa' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RpcError);
    expect(error).toMatchObject({ code: PocketErrorCode.rpcHttp, status: 500, v1Code: 35 });
    expect(seen.at(-1)?.body).toEqual({ address: 'aa', raw_hex_bytes: '00' });
  });

  it('times out, cancels, and reports unreachable nodes as transport errors', async () => {
    const slow = new PocketRpcClient({ baseUrl: `${client.baseUrl}/slow`, timeoutMs: 100 });
    await expect(slow.height()).rejects.toMatchObject({
      code: PocketErrorCode.rpcTimeout,
      isTransport: true,
    });
    const controller = new AbortController();
    const pending = slow.height({ signal: controller.signal, timeoutMs: 5_000 });
    controller.abort();
    await expect(pending).rejects.toMatchObject({ code: PocketErrorCode.rpcAborted });
    const down = new PocketRpcClient({ baseUrl: 'http://127.0.0.1:1' });
    await expect(down.height()).rejects.toMatchObject({ code: PocketErrorCode.rpcUnreachable });
    expect(await down.isHealthy()).toBe(false);
  });

  it('rejects a 200 that is not JSON and a URL that is not http', async () => {
    const bad = new PocketRpcClient({ baseUrl: `${client.baseUrl}/bad` });
    await expect(bad.height()).rejects.toMatchObject({ code: PocketErrorCode.rpcBadResponse });
    expect(() => new PocketRpcClient({ baseUrl: 'ftp://x' })).toThrow(/http/);
    expect(() => new PocketRpcClient({ baseUrl: 'not a url' })).toThrow(/not a URL/);
  });
});
