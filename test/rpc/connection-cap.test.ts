// The control server under idle connections (issue 30 item 9: 19,990 idle sockets stalled it
// ~50 s with no log line). Thousands of sockets that never send a request: a request is still
// answered, the server keeps at most MAX_CONNECTIONS, and a warning says the cap was hit.
import { connect, type Socket } from 'node:net';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ControlPlane } from '../../src/manager/rpc/control-plane.ts';
import { MAX_CONNECTIONS } from '../../src/manager/rpc/connection-cap.ts';
import { startControlServer } from '../../src/manager/rpc/server.ts';

const IDLE = 3 * MAX_CONNECTIONS;
const lines: string[] = [];
const sink = new Writable({
  write(chunk: Buffer, _enc, done) {
    lines.push(chunk.toString());
    done();
  },
});
const control = {
  readiness: () => ({ ready: true }),
} as unknown as ControlPlane;

let server: Awaited<ReturnType<typeof startControlServer>>;
let port: number;
const idle: Socket[] = [];
beforeAll(async () => {
  server = await startControlServer(
    {
      control,
      token: 't'.repeat(32),
      logger: pino({ level: 'warn' }, sink),
      version: 'test',
      streams: { max: 2, maxUnsentBytes: 64 * 1024 },
    },
    { host: '127.0.0.1', port: 0 },
  );
  port = Number(new URL(server.url).port);
});
afterAll(async () => {
  for (const s of idle) s.destroy();
  await server.close();
});

function open(): Promise<void> {
  return new Promise((resolve) => {
    const s = connect(port, '127.0.0.1', () => resolve());
    s.on('error', () => resolve());
    s.on('close', () => resolve());
    idle.push(s);
  });
}

describe('the control server with thousands of idle connections', { timeout: 60_000 }, () => {
  it('answers a request, keeps at most the cap, and warns once', async () => {
    for (let i = 0; i < IDLE; i += 200)
      await Promise.all(Array.from({ length: Math.min(200, IDLE - i) }, open));
    const answer = await fetch(`${server.url}/healthz`, { signal: AbortSignal.timeout(10_000) });
    expect(answer.status).toBe(200);
    const held = await new Promise<number>((resolve, reject) =>
      server.app.server.getConnections((err, n) => (err ? reject(err) : resolve(n))),
    );
    expect(held).toBeLessThanOrEqual(MAX_CONNECTIONS);
    const warnings = lines.filter((l) => l.includes('connections; closing the oldest'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain(`"max":${MAX_CONNECTIONS}`);
  });
});

describe(
  'the limits as settings (CM_RPC_MAX_CONNECTIONS, CM_RPC_HEADERS_TIMEOUT)',
  { timeout: 30_000 },
  () => {
    it('keeps at most the cap it is given, and closes a stalled request after the timeout it is given', async () => {
      const warned: string[] = [];
      const small = await startControlServer(
        {
          control,
          token: 't'.repeat(32),
          logger: pino(
            { level: 'warn' },
            new Writable({
              write(chunk: Buffer, _enc, done) {
                warned.push(chunk.toString());
                done();
              },
            }),
          ),
          version: 'test',
          connections: { max: 8, headersTimeoutMs: 1_000 },
        },
        { host: '127.0.0.1', port: 0 },
      );
      const sockets: Socket[] = [];
      try {
        const smallPort = Number(new URL(small.url).port);
        await Promise.all(
          Array.from(
            { length: 40 },
            () =>
              new Promise<void>((resolve) => {
                const s = connect(smallPort, '127.0.0.1', () => resolve());
                s.on('error', () => resolve());
                s.on('close', () => resolve());
                sockets.push(s);
              }),
          ),
        );
        const answer = await fetch(`${small.url}/healthz`, { signal: AbortSignal.timeout(10_000) });
        expect(answer.status).toBe(200);
        const held = await new Promise<number>((resolve, reject) =>
          small.app.server.getConnections((err, n) => (err ? reject(err) : resolve(n))),
        );
        expect(held).toBeLessThanOrEqual(8);
        expect(warned.filter((l) => l.includes('"max":8'))).toHaveLength(1);
        // A request begun and never finished: 408 and closed after ~1 s. Before, Node checked only
        // every 30 s (its connectionsCheckingInterval), whatever the timeout: this wait ran out.
        const started = Date.now();
        const stalled = connect(smallPort, '127.0.0.1', () =>
          stalled.write('GET /healthz HTTP/1.1\r\nHost: x\r\n'),
        );
        sockets.push(stalled);
        const reply: string[] = [];
        stalled.on('data', (d: Buffer) => reply.push(d.toString()));
        await new Promise<void>((resolve, reject) => {
          const timer = setTimeout(() => reject(new Error('not closed within 5 s')), 5_000);
          stalled.on('close', () => {
            clearTimeout(timer);
            resolve();
          });
        });
        expect(reply.join('')).toMatch(/^HTTP\/1\.1 408 /);
        expect(Date.now() - started).toBeGreaterThanOrEqual(1_000);
      } finally {
        for (const s of sockets) s.destroy();
        await small.close();
      }
    });
  },
);
