// The control RPC against a web page (issue 30 item 8, "the same rule for every state-changing
// route of every server we ship"): a request a page can make a browser send — it carries Origin
// or Sec-Fetch-Site, and its body is text/plain, a form or absent — changes nothing: 403
// CROSS_ORIGIN, even with the right token; a body that is not JSON is 400 BAD_REQUEST. The CLI's
// own requests (no Origin, JSON or no body) go through, and reads are not touched.
import { Writable } from 'node:stream';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/manager/logger.ts';
import { buildServer, type ControlServer } from '../../src/manager/rpc/server.ts';
import { FakeControlPlane } from '../support/fake-control-plane.ts';

const TOKEN = 'unit-test-token-0123456789abcdef';
const auth = { authorization: `Bearer ${TOKEN}` };
const mutations = ['/v1/scale', '/v1/pause', '/v1/resume', '/v1/trigger-view'] as const;
const SCALE = '{"replicas":5}';

let control: FakeControlPlane;
let app: ControlServer;

beforeAll(async () => {
  control = new FakeControlPlane();
  const logger = createLogger({
    level: 'silent',
    destination: new Writable({ write: (_chunk, _encoding, done) => done() }),
  });
  app = await buildServer({ control, token: TOKEN, logger, version: 'unit' });
});
beforeEach(() => {
  control.reset();
});
afterAll(async () => {
  await app.close();
});

async function post(
  url: string,
  headers: Record<string, string>,
  payload?: string,
): Promise<{ status: number; code: string | undefined }> {
  const response = await app.inject({
    method: 'POST',
    url,
    headers,
    ...(payload === undefined ? {} : { payload }),
  });
  const body = response.json<{ error?: { code: string } }>();
  return { status: response.statusCode, code: body.error?.code };
}

describe('the control RPC and a web page', () => {
  it.each(mutations)(
    'refuses %s from a page (Origin, text/plain), even with the token: nothing changes',
    async (url) => {
      for (const headers of [
        { origin: 'http://attacker.example', 'content-type': 'text/plain' },
        { origin: 'null' },
        { 'sec-fetch-site': 'cross-site', 'content-type': 'application/x-www-form-urlencoded' },
        { 'sec-fetch-site': 'same-site', ...auth, 'content-type': 'application/json' },
        { origin: 'http://127.0.0.1:8080', ...auth, 'content-type': 'application/json' },
      ]) {
        const payload = url === '/v1/scale' ? SCALE : undefined;
        expect(await post(url, headers, payload), JSON.stringify(headers)).toEqual({
          status: 403,
          code: 'CROSS_ORIGIN',
        });
      }
      expect(control.mutations()).toEqual([]);
    },
  );

  it.each(mutations)(
    'refuses %s with a body that is not JSON: 400, nothing changes',
    async (url) => {
      for (const type of [
        'text/plain',
        'application/x-www-form-urlencoded',
        'multipart/form-data; boundary=x',
      ]) {
        expect(await post(url, { ...auth, 'content-type': type }, 'replicas=5')).toEqual({
          status: 400,
          code: 'BAD_REQUEST',
        });
      }
      expect(control.mutations()).toEqual([]);
    },
  );

  it('takes the CLI’s requests: JSON with the token, or no body at all', async () => {
    const json = { ...auth, 'content-type': 'application/json' };
    expect((await post('/v1/scale', json, SCALE)).status).toBe(200);
    expect((await post('/v1/pause', auth)).status).toBe(200);
    expect((await post('/v1/resume', json, '{}')).status).toBe(200);
    expect((await post('/v1/trigger-view', json, '{}')).status).toBe(200);
    expect(control.mutations().map((call) => call.method)).toEqual([
      'scale',
      'setPaused',
      'setPaused',
      'triggerView',
    ]);
  });

  it('leaves reads alone, and documents the 403 of each mutation', async () => {
    const read = await app.inject({
      method: 'GET',
      url: '/v1/validators',
      headers: { ...auth, origin: 'http://attacker.example' },
    });
    expect(read.statusCode).toBe(200);
    const spec = (await app.inject({ method: 'GET', url: '/openapi.json' })).json<{
      paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
    }>();
    for (const url of mutations)
      expect(Object.keys(spec.paths[url]!.post!.responses)).toContain('403');
    expect(Object.keys(spec.paths['/v1/validators']!.get!.responses)).not.toContain('403');
  });
});
