// The RPC client's trust boundary over a fake transport (no socket): V1's real bodies come through
// whole; an answer past the size cap is RPC_RESPONSE_TOO_LARGE and stops being read; a body that
// is not JSON, or not the shape a caller relies on, is RPC_BAD_RESPONSE naming the field; a node
// that never answers is RPC_TIMEOUT.
import { describe, expect, it } from 'vitest';
import {
  PocketErrorCode,
  PocketRpcClient,
  type HttpRequest,
  type HttpResponse,
  type HttpTransport,
} from '../../src/pocket/index.ts';
import { V1_BODIES, type V1Fixture } from './fixtures/v1-rpc-bodies.ts';

const BASE = 'http://node.test:50832';
const encoder = new TextEncoder();

async function* chunksOf(text: string): AsyncIterable<Uint8Array> {
  yield encoder.encode(text);
}

/** Answers each path with a fixed body; records every request it was given. */
function fakeNode(answers: Record<string, { status: number; body: string }>): {
  transport: HttpTransport;
  requests: HttpRequest[];
} {
  const requests: HttpRequest[] = [];
  const transport: HttpTransport = (request) => {
    requests.push(request);
    const answer = answers[new URL(request.url).pathname] ?? { status: 404, body: 'Not Found' };
    return Promise.resolve({
      status: answer.status,
      contentLength: encoder.encode(answer.body).byteLength,
      body: chunksOf(answer.body),
    });
  };
  return { transport, requests };
}

const fixture = (f: V1Fixture): Record<string, { status: number; body: string }> => ({
  [f.path.replace(/\?.*$/, '')]: f,
});

function client(transport: HttpTransport, extra: { maxResponseBytes?: number } = {}) {
  return new PocketRpcClient({ baseUrl: BASE, transport, ...extra });
}

describe('the RPC client over a fake transport', () => {
  it('returns V1’s block, rows and transaction exactly as the Go handlers write them', async () => {
    const { transport } = fakeNode({
      ...fixture(V1_BODIES.block),
      ...fixture(V1_BODIES.validators),
      ...fixture(V1_BODIES.transaction),
    });
    const rpc = client(transport);
    expect(await rpc.block(5)).toEqual(JSON.parse(V1_BODIES.block.body));
    const page = JSON.parse(V1_BODIES.validators.body) as { validators: unknown[] };
    expect(await rpc.validatorsPage({ page: 1, perPage: 1000 })).toEqual({
      ...page,
      validators: page.validators.map((row) => ({ ...(row as object), chains: null })),
    });
    expect(await rpc.transaction('ef'.repeat(32))).toEqual(JSON.parse(V1_BODIES.transaction.body));
  });

  it('refuses a body whose declared length passes the cap, without reading it', async () => {
    let read = false;
    let seen: HttpRequest | undefined;
    const transport: HttpTransport = (request) => {
      seen = request;
      return Promise.resolve({
        status: 200,
        contentLength: 4_097,
        body: (async function* () {
          read = true;
          yield encoder.encode('{"height":1}');
        })(),
      });
    };
    await expect(client(transport, { maxResponseBytes: 4_096 }).height()).rejects.toMatchObject({
      code: PocketErrorCode.rpcResponseTooLarge,
      message: expect.stringContaining('more than 4096 bytes') as unknown,
    });
    expect(read).toBe(false);
    expect(seen?.signal.aborted).toBe(true); // the exchange is torn down
  });

  it('stops reading an undeclared body as soon as it passes the cap', async () => {
    let chunks = 0;
    let seen: HttpRequest | undefined;
    const endless: HttpResponse = {
      status: 200,
      contentLength: undefined,
      body: (async function* () {
        yield encoder.encode('{"height":1,"pad":"');
        for (;;) {
          chunks++;
          yield encoder.encode('x'.repeat(1_024));
        }
      })(),
    };
    const transport: HttpTransport = (request) => {
      seen = request;
      return Promise.resolve(endless);
    };
    await expect(client(transport, { maxResponseBytes: 8 * 1_024 }).height()).rejects.toMatchObject(
      { code: PocketErrorCode.rpcResponseTooLarge },
    );
    expect(chunks).toBeLessThanOrEqual(9);
    expect(seen?.signal.aborted).toBe(true);
  });

  it('names a 200 body that is not JSON, or lacks a field callers read, RPC_BAD_RESPONSE', async () => {
    const notJson = fakeNode({ '/v1/query/height': { status: 200, body: '<html>proxy</html>' } });
    await expect(client(notJson.transport).height()).rejects.toMatchObject({
      code: PocketErrorCode.rpcBadResponse,
      message: expect.stringContaining('not JSON') as unknown,
    });

    const block = JSON.parse(V1_BODIES.block.body) as { block_header: Record<string, unknown> };
    delete block.block_header.prev_state_hash;
    const noParent = fakeNode({ '/v1/query/block': { status: 200, body: JSON.stringify(block) } });
    await expect(client(noParent.transport).block(5)).rejects.toMatchObject({
      code: PocketErrorCode.rpcBadResponse,
      message: expect.stringContaining('block_header.prev_state_hash is not a string') as unknown,
    });

    const row = JSON.parse(V1_BODIES.validator.body) as Record<string, unknown>;
    const oddType = fakeNode({
      '/v1/query/validator': { status: 200, body: JSON.stringify({ ...row, actor_type: 'miner' }) },
    });
    await expect(client(oddType.transport).validator('00')).rejects.toMatchObject({
      code: PocketErrorCode.rpcBadResponse,
      message: expect.stringContaining('actor_type is not one of validator') as unknown,
    });
  });

  it('names a height below 0 or not an integer RPC_BAD_RESPONSE, with the value (issue 30)', async () => {
    for (const [height, shown] of [
      ['-5', '-5'],
      ['2.5', '2.5'],
      ['"7"', '"7"'],
    ] as const) {
      const node = fakeNode({ '/v1/query/height': { status: 200, body: `{"height":${height}}` } });
      await expect(client(node.transport).height()).rejects.toMatchObject({
        code: PocketErrorCode.rpcBadResponse,
        message: expect.stringContaining(
          `height is not a block height, an integer ≥ 0 (it is ${shown})`,
        ) as unknown,
      });
    }
    const zero = fakeNode({ '/v1/query/height': { status: 200, body: '{"height":0}' } });
    await expect(client(zero.transport).height()).resolves.toBe(0);
  });

  it('gives up on a node that never answers after the call’s timeout', async () => {
    const silent: HttpTransport = ({ signal }) =>
      new Promise((_, reject) => {
        signal.addEventListener('abort', () => reject(signal.reason as Error), { once: true });
      });
    await expect(client(silent).height({ timeoutMs: 20 })).rejects.toMatchObject({
      code: PocketErrorCode.rpcTimeout,
      message: expect.stringContaining('timed out after 20 ms') as unknown,
    });
  });
});
