// The control RPC's routes through inject() with a fake control plane (the port the routes use):
// statuses, error codes and bodies of every refusal (400, 401, 404, 409, 501, 502, 503, 504, 500)
// and that a refused request reaches no mutation. What needs a real manager behind the routes
// (phases, the journal, effects on the chain) is in routes.test.ts.
import { Writable } from 'node:stream';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { PocketErrors } from '../../src/manager/chain/pocket/pocket-errors.ts';
import { ErrorCatalogue, ManagerError } from '../../src/manager/errors.ts';
import { createLogger } from '../../src/manager/logger.ts';
import { buildServer, type ControlServer } from '../../src/manager/rpc/server.ts';
import type { ActionSummary } from '../../src/manager/status.ts';
import { FakeControlPlane, readyState, scaleResult } from '../support/fake-control-plane.ts';

const TOKEN = 'unit-test-token-0123456789abcdef';
const auth = { authorization: `Bearer ${TOKEN}` };
const mutations = ['/v1/scale', '/v1/pause', '/v1/resume', '/v1/trigger-view'] as const;

interface ErrorBody {
  error: {
    code: keyof typeof ErrorCatalogue;
    message: string;
    details?: Record<string, unknown>;
  };
}

let control: FakeControlPlane;
let app: ControlServer;
const logs: string[] = [];

/** A server over `control` (one per file: building one costs about 100 ms). */
async function serve(token: string | undefined): Promise<ControlServer> {
  const logger = createLogger({
    level: 'info',
    destination: new Writable({
      write(chunk: Buffer, _encoding, done) {
        logs.push(chunk.toString('utf8'));
        done();
      },
    }),
  });
  return buildServer({ control, token, logger, version: 'unit' });
}

beforeAll(async () => {
  control = new FakeControlPlane();
  app = await serve(TOKEN);
});
beforeEach(() => {
  control.reset();
  logs.length = 0;
});
afterAll(async () => {
  await app.close();
});

// The callers name the body type they expect from the route's schema.
// eslint-disable-next-line @typescript-eslint/no-unnecessary-type-parameters
async function get<T>(url: string, headers = auth): Promise<{ status: number; body: T }> {
  const response = await app.inject({ method: 'GET', url, headers });
  return { status: response.statusCode, body: response.json<T>() };
}

// eslint-disable-next-line @typescript-eslint/no-unnecessary-type-parameters
async function post<T>(
  url: string,
  payload?: unknown,
  headers: Record<string, string> = auth,
): Promise<{ status: number; body: T }> {
  const response = await app.inject({
    method: 'POST',
    url,
    headers,
    ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }),
  });
  return { status: response.statusCode, body: response.json<T>() };
}

function action(seq: number, validatorId = '002'): ActionSummary {
  return {
    seq,
    validatorId,
    kind: seq % 2 === 0 ? 'unstake' : 'stake',
    state: 'committed',
    mode: 'rpc',
    txHash: null,
    preparedHeight: seq,
    sentHeight: null,
    committedHeight: null,
    resultCode: null,
    errorCode: null,
    error: null,
    reason: 'test',
    attempts: 1,
    createdAt: '2026-01-01T00:00:00.000Z',
    updatedAt: '2026-01-01T00:00:00.000Z',
  };
}

describe('health and documents', () => {
  it('GET /healthz answers 200 with the version, without a token', async () => {
    const { status, body } = await get('/healthz', {} as typeof auth);
    expect(status).toBe(200);
    expect(body).toEqual({ status: 'ok', version: 'unit' });
  });

  it('GET /readyz answers 200 when ready and 503 with the same body when not', async () => {
    expect((await get<{ ready: boolean }>('/readyz')).status).toBe(200);
    control.ready = {
      ...readyState(),
      ready: false,
      chain: { ...readyState().chain, healthy: false },
    };
    const { status, body } = await get<{ ready: boolean; chain: { healthy: boolean } }>('/readyz');
    expect(status).toBe(503);
    expect(body.ready).toBe(false);
    expect(body.chain.healthy).toBe(false);
  });

  it("GET /metrics answers the control plane's exposition text as text/plain", async () => {
    const response = await app.inject({ url: '/metrics' });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toContain('text/plain');
    expect(response.body).toBe(control.metricsBody);
  });

  it('GET /openapi.json describes every route, each with a 200 answer', async () => {
    const { status, body } = await get<{ paths: Record<string, Record<string, unknown>> }>(
      '/openapi.json',
    );
    expect(status).toBe(200);
    expect(Object.keys(body.paths).sort()).toEqual(
      [
        '/healthz',
        '/metrics',
        '/openapi.json',
        '/readyz',
        '/v1/actions',
        '/v1/chain',
        '/v1/departures/{pod}',
        '/v1/events',
        '/v1/participation',
        '/v1/pause',
        '/v1/plan',
        '/v1/resume',
        '/v1/scale',
        '/v1/trigger-view',
        '/v1/validators',
      ].sort(),
    );
    for (const [path, methods] of Object.entries(body.paths))
      for (const operation of Object.values(methods) as { responses?: Record<string, unknown> }[])
        expect(Object.keys(operation.responses ?? {}), path).toContain('200');
  });

  it('answers an unknown route with 404 NOT_FOUND naming it, the query left out', async () => {
    const { status, body } = await get<ErrorBody>('/v1/nothing-here?secret=1');
    expect(status).toBe(404);
    expect(body.error).toEqual({ code: 'NOT_FOUND', message: 'no route GET /v1/nothing-here' });
  });
});

describe('authorization', () => {
  const wrong = [
    {},
    { authorization: 'Bearer not-the-token-0123456789' },
    { authorization: `Bearer ${TOKEN}x` },
    { authorization: TOKEN },
    { authorization: `Basic ${Buffer.from(`a:${TOKEN}`).toString('base64')}` },
  ];

  it.each(mutations)(
    '%s refuses a missing, wrong or malformed token with 401 and calls nothing',
    async (url) => {
      for (const headers of wrong) {
        const { status, body } = await post<ErrorBody>(url, { replicas: 2 }, headers);
        expect(status).toBe(401);
        expect(body.error.code).toBe('UNAUTHORIZED');
      }
      expect(control.calls).toEqual([]);
    },
  );

  it.each(['/v1/chain', '/v1/validators', '/v1/plan', '/v1/actions', '/v1/departures/validator-0'])(
    'GET %s refuses a wrong token with 401',
    async (url) => {
      for (const headers of wrong) {
        const { status, body } = await get<ErrorBody>(url, headers as typeof auth);
        expect(status).toBe(401);
        expect(body.error.code).toBe('UNAUTHORIZED');
      }
      expect(control.calls).toEqual([]);
    },
  );

  it('checks the token before it reads the body', async () => {
    const { status } = await post<ErrorBody>('/v1/scale', 'not json', {
      'content-type': 'application/json',
    });
    expect(status).toBe(401);
  });

  it('refuses every mutation when the manager has no token configured, naming CM_RPC_TOKEN', async () => {
    const open = await serve(undefined);
    try {
      for (const url of mutations) {
        const response = await open.inject({ method: 'POST', url, headers: auth });
        expect(response.statusCode).toBe(401);
        expect(response.json<ErrorBody>().error.message).toMatch(/CM_RPC_TOKEN/);
      }
      expect(control.calls).toEqual([]);
    } finally {
      await open.close();
    }
  });
});

describe('POST /v1/scale with a bad body', () => {
  const cases: [string, string, string?][] = [
    ['negative replicas', '{"replicas": -1}'],
    ['fractional replicas', '{"replicas": 2.5}'],
    ['huge replicas', '{"replicas": 1e9}'],
    ['replicas as a string', '{"replicas": "2"}'],
    ['missing replicas', '{"wait": "active"}'],
    ['an unknown wait', '{"replicas": 2, "wait": "forever"}'],
    ['a zero timeout', '{"replicas": 2, "timeoutSeconds": 0}'],
    ['drive as a string', '{"replicas": 2, "drive": "yes"}'],
    ['an unknown field', '{"replicas": 2, "turbo": true}'],
    ['an array', '[2]'],
    ['null', 'null'],
    ['not JSON', '{replicas: 2}'],
    ['an empty body', ''],
    ['a text body', 'replicas=2', 'text/plain'],
    ['a form body', 'replicas=2', 'application/x-www-form-urlencoded'],
  ];

  it.each(cases)(
    'refuses %s with 400 BAD_REQUEST and does not scale',
    async (_name, payload, type) => {
      const response = await app.inject({
        method: 'POST',
        url: '/v1/scale',
        headers: { ...auth, 'content-type': type ?? 'application/json' },
        payload,
      });
      expect(response.statusCode).toBe(400);
      const body = response.json<ErrorBody>();
      expect(body.error.code).toBe('BAD_REQUEST');
      expect(body.error.message).not.toContain('xxxxxxxx');
      expect(control.calls).toEqual([]);
    },
  );

  it("refuses more replicas than the chain has ids, by the chain's own range", async () => {
    const scale = (replicas: number) =>
      app.inject({
        method: 'POST',
        url: '/v1/scale',
        headers: { ...auth, 'content-type': 'application/json' },
        payload: JSON.stringify({ replicas }),
      });
    const tooMany = await scale(1000);
    expect(tooMany.statusCode).toBe(400);
    expect(tooMany.json<ErrorBody>().error).toEqual({
      code: 'BAD_REQUEST',
      message: 'replicas: at most 999 (the highest id number of chain pocket-v1), got 1000',
    });
    expect(control.calls).toEqual([]);
    // A chain of 64 ids (val-1 … val-64): 64 pods are its most, whatever Pocket's range is.
    control.chainAnswer = {
      name: 'toy',
      ids: { prefix: 'val-', width: 0, min: 1, max: 64 },
      stake: '50 utoy',
    };
    expect((await scale(65)).json<ErrorBody>().error.message).toBe(
      'replicas: at most 64 (the highest id number of chain toy), got 65',
    );
    expect(control.calls).toEqual([]);
    expect((await scale(64)).statusCode).toBe(200);
    expect(control.mutations()).toEqual([expect.objectContaining({ method: 'scale' })]);
  });

  it('answers 413 BODY_TOO_LARGE naming the limit when the body is too large, and calls nothing', async () => {
    const response = await app.inject({
      method: 'POST',
      url: '/v1/scale',
      headers: { ...auth, 'content-type': 'application/json' },
      payload: JSON.stringify({ replicas: 2, pad: 'x'.repeat(5000) }),
    });
    expect(response.statusCode).toBe(413);
    expect(response.json<ErrorBody>().error).toEqual({
      code: 'BODY_TOO_LARGE',
      message: 'request body too large (limit 4096 bytes)',
    });
    expect(control.calls).toEqual([]);
  });

  it.each(['/v1/pause', '/v1/resume', '/v1/trigger-view'])(
    '%s refuses a body that is not JSON with 400 and calls nothing',
    async (url) => {
      const response = await app.inject({
        method: 'POST',
        url,
        headers: { ...auth, 'content-type': 'application/json' },
        payload: '{"paused":',
      });
      expect(response.statusCode).toBe(400);
      expect(response.json<ErrorBody>().error.code).toBe('BAD_REQUEST');
      expect(control.calls).toEqual([]);
    },
  );
});

describe('POST /v1/scale', () => {
  it('passes the defaults on: wait none, 300 s, no drive, no force', async () => {
    const { status, body } = await post<{ outcome: string; replicas: number }>('/v1/scale', {
      replicas: 2,
    });
    expect(status).toBe(200);
    expect(body).toMatchObject({ outcome: 'done', replicas: 2 });
    expect(control.calls).toEqual([
      {
        method: 'scale',
        request: { replicas: 2, wait: 'none', timeoutSeconds: 300, drive: false, force: false },
      },
    ]);
  });

  it('answers 202 for a drain left running and 504 SCALE_TIMEOUT naming who is missing', async () => {
    control.onScale = (request) => Promise.resolve(scaleResult(request, 'draining'));
    expect((await post('/v1/scale', { replicas: 1 })).status).toBe(202);
    control.onScale = (request) =>
      Promise.resolve(
        scaleResult(request, 'timeout', [{ id: '003', phase: 'failed', reason: 'KEY_MISSING' }]),
      );
    const { status, body } = await post<ErrorBody & { outcome: string }>('/v1/scale', {
      replicas: 3,
      wait: 'active',
      timeoutSeconds: 5,
      drive: true,
      force: true,
    });
    expect(status).toBe(504);
    expect(body.outcome).toBe('timeout');
    expect(body.error).toEqual({
      code: 'SCALE_TIMEOUT',
      message: 'validator did not reach 3 active validators in time; not there yet: 003',
    });
    expect(control.calls.at(-1)).toEqual({
      method: 'scale',
      request: { replicas: 3, wait: 'active', timeoutSeconds: 5, drive: true, force: true },
    });
  });

  it.each([
    ['PAUSED', 409],
    ['SCALE_IN_PROGRESS', 409],
    ['KEY_MISSING', 409],
    ['BELOW_MINIMUM_SET', 409],
    ['SCALE_UNSUPPORTED', 501],
    ['NOT_READY', 503],
    ['KUBE_UNAVAILABLE', 503],
  ] as const)('answers a %s refusal with %i, its message and details', async (code, status) => {
    const details = { validators: [{ id: '003', code: 'KEY_MISSING' }] };
    control.onScale = () => Promise.reject(new ManagerError(code, `refused: ${code}`, { details }));
    const answer = await post<ErrorBody>('/v1/scale', { replicas: 2 });
    expect(answer.status).toBe(status);
    expect(answer.body).toEqual({ error: { code, message: `refused: ${code}`, details } });
  });

  it('answers SCALE_BLOCKED with the validators that can never get there', async () => {
    const missing = [{ id: '003', phase: 'failed', reason: 'KEY_MISSING: no key' }];
    control.onScale = () =>
      Promise.reject(
        new ManagerError('SCALE_BLOCKED', 'cannot get there', {
          details: { reason: 'VALIDATOR_STUCK', missing },
        }),
      );
    const { status, body } = await post<ErrorBody>('/v1/scale', { replicas: 3, wait: 'staked' });
    expect(status).toBe(409);
    expect(body.error.details).toEqual({ reason: 'VALIDATOR_STUCK', missing });
  });
});

describe('pause, resume and trigger-view', () => {
  it('POST /v1/pause and /v1/resume switch the control plane and answer the flag', async () => {
    expect(await post('/v1/pause')).toEqual({ status: 200, body: { paused: true } });
    expect((await get<{ paused: boolean }>('/readyz')).body.paused).toBe(true);
    expect(await post('/v1/resume')).toEqual({ status: 200, body: { paused: false } });
    expect(control.calls).toEqual([
      { method: 'setPaused', paused: true },
      { method: 'setPaused', paused: false },
    ]);
  });

  it('POST /v1/trigger-view answers the height the control plane reports', async () => {
    expect(await post('/v1/trigger-view')).toEqual({
      status: 200,
      body: { height: 8, committed: true },
    });
  });

  it("answers a chain failure with 503 CHAIN_UNAVAILABLE, the chain's text left in the log", async () => {
    control.onTriggerView = () => Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:9'));
    const response = await app.inject({ method: 'POST', url: '/v1/trigger-view', headers: auth });
    expect(response.statusCode).toBe(503);
    expect(response.json<ErrorBody>().error).toEqual({
      code: 'CHAIN_UNAVAILABLE',
      message: 'trigger view failed: the chain did not accept it',
    });
    expect(response.body).not.toContain('ECONNREFUSED');
    expect(logs.some((line) => line.includes('ECONNREFUSED'))).toBe(true);
  });

  it.each([
    ['CLI_FAILED', 502],
    ['CLI_TIMEOUT', 504],
  ] as const)("passes the chain's own %s through as %i", async (code, status) => {
    control.onTriggerView = () =>
      Promise.reject(new ManagerError(PocketErrors[code], `p1: ${code}`));
    const { status: got, body } = await post<ErrorBody>('/v1/trigger-view');
    expect(got).toBe(status);
    expect(body.error.code).toBe(code);
  });
});

describe('GET /v1/chain', () => {
  it("answers the selected chain's name and id format, as the control plane reports them", async () => {
    control.chainAnswer = {
      name: 'toy',
      ids: { prefix: 'val-', width: 0, min: 1, max: 64 },
      stake: '50 utoy',
    };
    const { status, body } = await get<unknown>('/v1/chain');
    expect(status).toBe(200);
    expect(body).toEqual({
      name: 'toy',
      ids: { prefix: 'val-', width: 0, min: 1, max: 64 },
      stake: '50 utoy',
    });
  });
});

describe('GET /v1/actions', () => {
  it('asks for 50 by default and pages with limit and before', async () => {
    control.actionRows = [5, 4, 3, 2, 1].map((seq) => action(seq));
    expect((await get<{ actions: unknown[] }>('/v1/actions')).body.actions).toHaveLength(5);
    expect(control.calls[0]).toEqual({
      method: 'actions',
      query: { limit: 50, before: undefined, validator: undefined },
    });
    const first = await get<{ actions: { seq: number }[]; next: number | null }>(
      '/v1/actions?limit=2',
    );
    expect(first.body.actions.map((a) => a.seq)).toEqual([5, 4]);
    expect(first.body.next).toBe(4);
    const second = await get<{ actions: { seq: number }[] }>('/v1/actions?limit=2&before=4');
    expect(second.body.actions.map((a) => a.seq)).toEqual([3, 2]);
    await get('/v1/actions?validator=001');
    expect(control.calls.at(-1)).toEqual({
      method: 'actions',
      query: { limit: 50, before: undefined, validator: '001' },
    });
  });

  it.each([
    'limit=0',
    'limit=1001',
    'limit=abc',
    'before=-1',
    'validator=-2',
    'validator=a%20b',
    `validator=${'a'.repeat(64)}`,
    'other=1',
  ])('refuses the query %s with 400 BAD_REQUEST', async (query) => {
    const { status, body } = await get<ErrorBody>(`/v1/actions?${query}`);
    expect(status).toBe(400);
    expect(body.error.code).toBe('BAD_REQUEST');
    expect(control.calls).toEqual([]);
  });

  // The id is a generic token, not one chain's id format: an id no validator has is not a bad
  // request, it is asked for and answers the (empty) page the journal has for it.
  it.each(['2', 'validator-7', 'val.0_1'])('passes the id %s on as it is', async (id) => {
    const { status } = await get(`/v1/actions?validator=${id}`);
    expect(status).toBe(200);
    expect(control.calls).toEqual([
      { method: 'actions', query: { limit: 50, before: undefined, validator: id } },
    ]);
  });
});

describe('GET /v1/departures/{pod}', () => {
  it('asks for 30 s by default and N s with timeoutSeconds=N', async () => {
    const { status, body } = await get<{ code: string }>('/v1/departures/validator-1');
    expect(status).toBe(200);
    expect(body.code).toBe('STILL_WANTED');
    await get('/v1/departures/validator-1?timeoutSeconds=0');
    expect(control.calls).toEqual([
      { method: 'departure', pod: 'validator-1', timeoutMs: 30_000 },
      { method: 'departure', pod: 'validator-1', timeoutMs: 0 },
    ]);
  });

  it('answers 503 NOT_READY while the manager has not listed pods and keys', async () => {
    control.onDeparture = () => Promise.reject(new ManagerError('NOT_READY', 'retry'));
    const { status, body } = await get<ErrorBody>('/v1/departures/validator-1');
    expect(status).toBe(503);
    expect(body.error.code).toBe('NOT_READY');
  });

  it.each([
    'Bad_Name',
    'a'.repeat(254),
    'validator-0?timeoutSeconds=301',
    'validator-0?timeoutSeconds=-1',
    'validator-0?other=1',
  ])('refuses %s with 400 BAD_REQUEST', async (path) => {
    const { status, body } = await get<ErrorBody>(`/v1/departures/${path}`);
    expect(status).toBe(400);
    expect(body.error.code).toBe('BAD_REQUEST');
    expect(control.calls).toEqual([]);
  });
});

describe('unexpected errors', () => {
  it('answer 500 INTERNAL with a generic message and log the error itself', async () => {
    control.failReads = new Error('SQLITE_MISUSE: database is closed');
    const response = await app.inject({ url: '/v1/actions', headers: auth });
    expect(response.statusCode).toBe(500);
    expect(response.json()).toEqual({
      error: { code: 'INTERNAL', message: 'internal error; see the manager log' },
    });
    const pause = await app.inject({ method: 'POST', url: '/v1/pause', headers: auth });
    expect(pause.statusCode).toBe(500);
    expect(pause.json<ErrorBody>().error.code).toBe('INTERNAL');
    expect(response.body + pause.body).not.toContain('SQLITE');
    const logged = logs.filter((line) => line.includes('unexpected error'));
    expect(logged).toHaveLength(2);
    expect(logged[0]).toContain('SQLITE_MISUSE: database is closed');
  });
});
