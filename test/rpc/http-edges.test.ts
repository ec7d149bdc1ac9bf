// The control RPC's edges on a real socket, with a fake control plane (the port the routes use):
// every /v1 read needs the token, the event stream has a bounded number of clients and drops a
// client that does not read, and errors of the HTTP layer answer in the error shape.
import { EventEmitter } from 'node:events';
import { connect, type Socket } from 'node:net';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pending, waitFor } from '../../src/harness/wait.ts';
import type { ManagerEvents } from '../../src/manager/manager.ts';
import type { ControlPlane } from '../../src/manager/rpc/control-plane.ts';
import { startControlServer } from '../../src/manager/rpc/server.ts';
import { EventReader } from './support/event-reader.ts';

const TOKEN = 'edges-test-token-0123456789';
const events = new EventEmitter<ManagerEvents>();
const control = {
  readiness: () => ({
    ready: true,
    synced: true,
    leader: true,
    leaderIdentity: null,
    paused: false,
    chain: {
      healthy: true,
      height: 7,
      lastError: null,
      trusted: true,
      untrustedReason: null,
      highest: 7,
    },
    minimumSet: null,
    informers: [],
    queueDepth: 0,
  }),
  validators: () => [],
  plan: () => ({ synced: true, paused: false, height: 7, actions: [] }),
  events,
} as unknown as ControlPlane;

let server: Awaited<ReturnType<typeof startControlServer>>;
let port: number;
beforeAll(async () => {
  server = await startControlServer(
    {
      control,
      token: TOKEN,
      logger: pino({ level: 'silent' }),
      version: 'test',
      streams: { max: 2, maxUnsentBytes: 64 * 1024 },
    },
    { host: '127.0.0.1', port: 0 },
  );
  port = Number(new URL(server.url).port);
});
afterAll(async () => {
  await server.close();
});

/** Sends raw bytes and collects the answer until the server closes (or 2 s pass). */
function raw(text: string): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(text));
    let out = '';
    socket.on('data', (chunk: Buffer) => (out += chunk.toString()));
    socket.on('close', () => resolve(out));
    socket.on('error', () => resolve(out));
    setTimeout(() => socket.destroy(), 2_000).unref();
  });
}

function statusAndBody(answer: string): { status: number; body: unknown } {
  const [head = '', ...rest] = answer.split('\r\n\r\n');
  return { status: Number(head.split(' ')[1]), body: JSON.parse(rest.join('\r\n\r\n')) as unknown };
}

describe('reads need the token', () => {
  it.each([
    '/v1/validators',
    '/v1/plan',
    '/v1/actions',
    '/v1/events',
    '/v1/departures/validator-0',
  ])('GET %s answers 401 UNAUTHORIZED without it', async (path) => {
    const response = await fetch(`${server.url}${path}`);
    expect(response.status).toBe(401);
    expect(await response.json()).toMatchObject({ error: { code: 'UNAUTHORIZED' } });
  });

  it('the probes, /metrics and /openapi.json stay open', async () => {
    for (const path of ['/healthz', '/openapi.json'])
      expect((await fetch(`${server.url}${path}`)).status).toBe(200);
  });
});

describe('the event stream', () => {
  it('takes a bounded number of clients: beyond it, 503 TOO_MANY_STREAMS with Retry-After', async () => {
    const first = await EventReader.open(server.url, TOKEN);
    const second = await EventReader.open(server.url, TOKEN);
    try {
      await first.reader.next((e) => e.event === 'hello', { what: 'hello' });
      const third = await fetch(`${server.url}/v1/events`, {
        headers: { authorization: `Bearer ${TOKEN}` },
      });
      expect(third.status).toBe(503);
      expect(third.headers.get('retry-after')).toBe('2');
      expect(await third.json()).toMatchObject({ error: { code: 'TOO_MANY_STREAMS' } });
    } finally {
      first.reader.close();
      second.reader.close();
      await Promise.all([first.reader.done, second.reader.done]);
    }
    // Their places are free again.
    await waitFor(
      async () => {
        const again = await EventReader.open(server.url, TOKEN).catch(() => undefined);
        if (again === undefined) return pending('still full');
        again.reader.close();
        await again.reader.done;
        return true;
      },
      { what: 'a place on the stream', timeoutMs: 5_000 },
    );
  });

  it('drops a client that does not read instead of buffering its events without end', async () => {
    // A client that sends its request and then never reads a byte.
    const socket: Socket = connect(port, '127.0.0.1');
    await new Promise<void>((resolve) => socket.once('connect', resolve));
    socket.write(
      `GET /v1/events HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TOKEN}\r\nAccept: text/event-stream\r\n\r\n`,
    );
    socket.pause();
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    await waitFor(() => (events.listenerCount('phase') > 0 ? true : pending('not subscribed')), {
      what: 'the slow client to be subscribed',
    });
    const reason = 'x'.repeat(16 * 1024);
    // 16 MiB of events: far past what the socket buffers and the 64 KiB bound.
    for (let i = 0; i < 1024; i++) {
      events.emit('phase', { key: '001', id: '001', from: 'active', to: 'active', reason });
      await new Promise((resolve) => setImmediate(resolve));
      if (events.listenerCount('phase') === 0) break;
    }
    expect(events.listenerCount('phase')).toBe(0);
    socket.resume();
    await closed;
  });
});

describe('errors of the HTTP layer answer in the error shape', () => {
  it.each([
    [
      'a malformed header line',
      'GET /healthz HTTP/1.1\r\nHost: a\r\nBad Header\r\n\r\n',
      400,
      'BAD_REQUEST',
    ],
    ['an unknown method', 'FOO / HTTP/1.1\r\nHost: a\r\n\r\n', 400, 'BAD_REQUEST'],
    [
      'headers too large',
      `GET /healthz HTTP/1.1\r\nHost: a\r\nX: ${'y'.repeat(20_000)}\r\n\r\n`,
      431,
      'HEADERS_TOO_LARGE',
    ],
    [
      'a URL that does not decode',
      'GET /v1/%zz HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n',
      400,
      'BAD_REQUEST',
    ],
  ])('%s', async (_name, request, status, code) => {
    const answer = statusAndBody(await raw(request));
    expect(answer.status).toBe(status);
    expect(answer.body).toEqual({ error: { code, message: expect.any(String) as unknown } });
    expect(JSON.stringify(answer.body)).not.toContain('yyyy');
  });
});
