// GET /v1/participation and the page's files at /ui/ through inject(): the read needs the token
// (401 without), refuses a token in the query string, windows it will not answer (from > to,
// negative, huge, over 1,000 heights) with 400 naming the limit, and answers the record's heights;
// the page is served without a token, with a Content-Security-Policy that keeps it to this
// server, only the files it is made of, and never with a token in its query string.
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ActionKind } from '../../src/manager/model.ts';
import {
  participationSource,
  type Participation,
} from '../../src/manager/participation/participation.ts';
import { ParticipationRecord } from '../../src/manager/participation/record.ts';
import { UI_FILES } from '../../src/manager/rpc/routes/ui.ts';
import { buildServer, type ControlServer } from '../../src/manager/rpc/server.ts';
import { FakeControlPlane } from '../support/fake-control-plane.ts';

const TOKEN = 'unit-test-token-0123456789abcdef';
const auth = { authorization: `Bearer ${TOKEN}` };
const A = 'a'.repeat(40);
const B = 'b'.repeat(40);

let app: ControlServer;

beforeAll(async () => {
  const record = new ParticipationRecord();
  record.addRows(0, new Map());
  for (let h = 1; h <= 30; h++) {
    record.addBlock({
      height: h,
      hash: `hash-${h}`,
      parentHash: `hash-${h - 1}`,
      time: Date.UTC(2026, 0, 1, 0, 0, h),
      signers: h % 5 === 0 ? [A] : [A, B],
      proposer: A,
      txs:
        h === 2 ? [{ hash: 't', height: 2, resultCode: 0, signer: B, kind: ActionKind.stake }] : [],
    });
    record.addRows(
      h,
      new Map(
        [A, ...(h >= 2 ? [B] : [])].map((address) => [
          address,
          {
            address,
            status: 'staked',
            stakedAmount: '1',
            unstakingHeight: -1,
            serviceUrl: 'x:1',
          } as const,
        ]),
      ),
    );
  }
  const participation = participationSource({
    record,
    keys: { idOfAddress: (a) => (a === A ? '001' : undefined), addressOf: () => undefined },
    desired: () => ({ validators: new Map(), unresolvedWanted: [], problems: [] }),
    chain: { height: 30, validators: new Map() },
  });
  app = await buildServer({
    control: new FakeControlPlane(),
    token: TOKEN,
    logger: pino({ level: 'silent' }),
    version: 'unit',
    participation,
  });
});
afterAll(async () => {
  await app.close();
});

const get = (url: string, headers: Record<string, string> = auth) =>
  app.inject({ method: 'GET', url, headers });

describe('GET /v1/participation', () => {
  it('answers the last 50 heights by default, named by id, with who was absent', async () => {
    const response = await get('/v1/participation');
    expect(response.statusCode).toBe(200);
    const body = response.json<Participation>();
    expect(body).toMatchObject({ validators: ['001', B], from: 1, to: 30, height: 30 });
    expect(body.heights).toHaveLength(30);
    expect(body.heights[1]).toEqual({
      height: 2,
      hash: 'hash-2',
      time: '2026-01-01T00:00:02.000Z',
      proposer: '001',
      signers: ['001', B],
      absent: [],
      transactions: [{ kind: 'stake', validator: B, hash: 't', resultCode: 0 }],
    });
    expect(body.heights[4]).toMatchObject({ height: 5, signers: ['001'], absent: [B] });
  });

  it('is 401 without the token, and refuses a token in the query string', async () => {
    const none = await get('/v1/participation', {});
    expect(none.statusCode).toBe(401);
    expect(none.json()).toMatchObject({ error: { code: 'UNAUTHORIZED' } });
    // The token in the URL is not read: without the header it is still 401.
    expect((await get(`/v1/participation?token=${TOKEN}`, {})).statusCode).toBe(401);
    const both = await get(`/v1/participation?access_token=${TOKEN}`);
    expect(both.statusCode).toBe(400);
    expect(both.json<{ error: { message: string } }>().error.message).toMatch(
      /token in the query string .* refused/,
    );
  });

  it.each([
    ['?from=9&to=3', /above/],
    ['?from=-1', /must match pattern/],
    ['?to=0', /must match pattern/],
    ['?from=99999999999999999999', /must match pattern/],
    ['?from=1.5', /must match pattern/],
    ['?from=1&to=1001', /at most 1000 heights per call \(asked for 1001\)/],
    ['?from=1&limit=3', /must NOT have additional properties/],
  ])('refuses %s with 400', async (query, message) => {
    const response = await get(`/v1/participation${query}`);
    expect(response.statusCode).toBe(400);
    expect(response.json()).toMatchObject({ error: { code: 'BAD_REQUEST', message } });
  });

  it('answers a window past the chain with no heights (huge but valid)', async () => {
    const response = await get('/v1/participation?from=9007199254740000&to=9007199254740990');
    expect(response.statusCode).toBe(200);
    expect(response.json<Participation>().heights).toEqual([]);
  });

  it('is in the OpenAPI document with its schema, and the block events are described', async () => {
    const doc = (await app.inject({ url: '/openapi.json' })).json<{
      paths: Record<string, { get?: { summary?: string } }>;
      components: { schemas: Record<string, unknown> };
    }>();
    expect(doc.paths['/v1/participation']?.get).toBeDefined();
    expect(doc.components.schemas.ParticipationHeight).toBeDefined();
    expect(doc.paths['/v1/events']?.get?.summary).toContain('`block`');
    expect(Object.keys(doc.paths).some((p) => p.startsWith('/ui'))).toBe(false);
  });
});

describe('GET /ui/', () => {
  it('serves the page without a token, kept to this server by its CSP', async () => {
    const response = await get('/ui/', {});
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(response.body).toContain('<script type="module" src="app.js">');
    const csp = String(response.headers['content-security-policy']);
    expect(csp).toContain("connect-src 'self'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain('unsafe-inline');
    expect(response.headers['referrer-policy']).toBe('no-referrer');
    expect((await get('/ui', {})).headers.location).toBe('/ui/');
  });

  it('serves each of its files with its type, and nothing else', async () => {
    for (const [name, type] of Object.entries(UI_FILES)) {
      const response = await get(`/ui/${name}`, {});
      expect(response.statusCode, name).toBe(200);
      expect(response.headers['content-type']).toBe(type);
    }
    for (const path of [
      '/ui/cells.d.ts',
      '/ui/tsconfig.json',
      '/ui/../package.json',
      '/ui/%2e%2e/package.json',
    ])
      expect((await get(path, {})).statusCode, path).toBe(404);
  });

  it('refuses a token in its query string (the fragment is the place)', async () => {
    const response = await get(`/ui/?token=${TOKEN}`, {});
    expect(response.statusCode).toBe(400);
    expect(response.body).toContain('#token=');
    expect(response.body).not.toContain(TOKEN);
  });
});
