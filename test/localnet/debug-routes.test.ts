// The stand-in's debug actions against a web page (issue 30 item 8): a cross-origin `text/plain`
// POST with no token to `/v1/debug/reset_to_genesis` reset every validator of a localnet whose
// RPC Tilt published on localhost (a fork at 51, the RPC frozen). Now the debug actions are off
// unless asked for, and where they are on, every state-changing route of the RPC and p2p ports
// refuses a browser's request (`Origin`, `Sec-Fetch-Site`) and any body but JSON — while the
// manager's requests, localnet-cli's and the peers' still work.
import { request } from 'node:http';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../../src/harness/wait.ts';
import { buildGenesis } from '../../src/localnet/genesis.ts';
import { startNode, type RunningNode } from '../../src/localnet/server.ts';
import { generateKeys } from '../../src/pocket/index.ts';
import { ownedPort } from '../support/owned-ports.ts';
import { blockHashes, client, sendDebugMessage, triggerView } from './support/chain.ts';

const keys = generateKeys({ count: 2, seed: 'debug-routes' });
const nodes: RunningNode[] = [];
let plain: RunningNode;

beforeAll(async () => {
  const owned = [await ownedPort(), await ownedPort()];
  const genesis = buildGenesis({
    keys,
    validators: 2,
    serviceUrl: (slot) => `127.0.0.1:${owned[slot.ordinal]?.port ?? 0}`,
  });
  const common = {
    genesis,
    host: '127.0.0.1',
    rpcPort: 0,
    roundTimeoutMs: 300,
    logger: pino({ level: 'silent' }),
  };
  for (const [i, id] of ['001', '002'].entries()) {
    nodes.push(
      await startNode({
        ...common,
        key: keys.get(id),
        p2pPort: owned[i]!.server,
        debugRoutes: true,
      }),
    );
  }
  // A full node of the same chain started without asking for the debug actions.
  plain = await startNode({ ...common, p2pPort: 0 });
  for (const height of [1, 2]) expect((await triggerView(nodes[0]!.rpcUrl)).height).toBe(height);
});
afterAll(async () => {
  await Promise.all([...nodes, plain].map((node) => node.stop()));
});

/** A POST exactly as given (fetch would not send `Origin` or `Sec-Fetch-Site` as a browser does). */
function post(
  url: string,
  headers: Record<string, string>,
  body = '',
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', headers }, (res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => (text += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** Both validators still hold blocks 1 and 2, the same ones: nothing was reset. */
async function expectChainIntact(before: string[]): Promise<void> {
  for (const node of nodes) {
    expect(await client(node.rpcUrl).height()).toBeGreaterThanOrEqual(2);
    expect(await blockHashes(node.rpcUrl, 2)).toEqual(before);
  }
}

describe('the debug actions and a web page', () => {
  it('refuses a cross-origin text/plain POST with no token to reset_to_genesis: no validator resets', async () => {
    const before = await blockHashes(nodes[0]!.rpcUrl, 2);
    // What a page on any site makes a browser send, without a preflight.
    const answer = await post(
      `${nodes[0]!.rpcUrl}/v1/debug/reset_to_genesis`,
      {
        origin: 'http://attacker.example',
        'sec-fetch-site': 'cross-site',
        'content-type': 'text/plain;charset=UTF-8',
      },
      'x',
    );
    expect(answer).toEqual({
      status: 403,
      body: '{"message":"cross-origin requests are refused"}\n',
    });
    await expectChainIntact(before);
  });

  it('refuses a browser request without Origin (Sec-Fetch-Site), and any body but JSON', async () => {
    const before = await blockHashes(nodes[0]!.rpcUrl, 2);
    const url = `${nodes[1]!.rpcUrl}/v1/debug/reset_to_genesis`;
    expect((await post(url, { 'sec-fetch-site': 'same-site' })).status).toBe(403);
    for (const type of [
      'text/plain',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
    ]) {
      expect(await post(url, { 'content-type': type }, 'a=b')).toEqual({
        status: 415,
        body: '{"message":"Unsupported Media Type"}\n',
      });
    }
    expect((await post(url, {}, '{"a":1}')).status).toBe(415); // a body with no type at all
    await expectChainIntact(before);
  });

  it('refuses the same on the p2p port: forwarded debug actions, V1 debug messages, consensus and gossip', async () => {
    const before = await blockHashes(nodes[0]!.rpcUrl, 2);
    const p2p = `http://${nodes[1]!.p2pAddress}`;
    const browser = { origin: 'http://attacker.example', 'content-type': 'text/plain' };
    for (const [path, body] of [
      ['/p2p/v1/debug', '{"action":"reset_to_genesis"}'],
      ['/p2p/v1/debug-message', '{"action":"DEBUG_CONSENSUS_RESET_TO_GENESIS"}'],
      ['/p2p/v1/consensus', '{}'],
      ['/p2p/v1/txs', '{"txs":[]}'],
    ] as const) {
      expect((await post(`${p2p}${path}`, browser, body)).status, path).toBe(403);
      expect((await post(`${p2p}${path}`, { 'content-type': 'text/plain' }, body)).status).toBe(
        415,
      );
    }
    await expectChainIntact(before);
  });

  it('still takes the requests of its own clients: no body, or JSON, and no Origin', async () => {
    // The manager's RPC adapter and localnet-cli: a POST with no body.
    const height = await client(nodes[0]!.rpcUrl).height();
    expect((await triggerView(nodes[0]!.rpcUrl)).height).toBe(height + 1);
    // A V1 debug message as localnet-cli's v1 mode sends it (JSON).
    await sendDebugMessage([nodes[0]!.p2pAddress, nodes[1]!.p2pAddress]);
    await waitFor(async () => (await client(nodes[1]!.rpcUrl).height()) === height + 2, {
      what: `block ${height + 2} from the debug messages`,
    });
    // And a JSON reset from a tool (no browser) still resets, on every validator.
    const reset = await post(`${nodes[0]!.rpcUrl}/v1/debug/reset_to_genesis`, {
      'content-type': 'application/json',
    });
    expect(reset).toEqual({ status: 200, body: '{"height":0}\n' });
    await waitFor(async () => (await client(nodes[1]!.rpcUrl).height()) === 0, {
      what: 'the peer to reset as well',
    });
  });
});

describe('a node that did not ask for the debug actions', () => {
  it('has no debug routes: 404 on the RPC, and neither forwarded actions nor debug messages on the p2p port', async () => {
    for (const path of [
      '/v1/debug/reset_to_genesis',
      '/v1/debug/trigger_view',
      '/v1/debug/toggle_pacemaker_mode',
    ]) {
      expect(await post(`${plain.rpcUrl}${path}`, {}), path).toEqual({
        status: 404,
        body: '{"message":"Not Found"}\n',
      });
    }
    expect((await fetch(`${plain.rpcUrl}/v1/debug/state`)).status).toBe(404);
    const p2p = `http://${plain.p2pAddress}`;
    const json = { 'content-type': 'application/json' };
    expect((await post(`${p2p}/p2p/v1/debug`, json, '{"action":"reset_to_genesis"}')).status).toBe(
      404,
    );
    expect(
      (
        await post(
          `${p2p}/p2p/v1/debug-message`,
          json,
          '{"action":"DEBUG_CONSENSUS_RESET_TO_GENESIS"}',
        )
      ).status,
    ).toBe(404);
  });
});
