// The hook ports against real processes and a real HTTP server: a command gets exactly the
// environment it is given, no shell, is killed at its timeout or on cancel, and its output is
// bounded; an HTTP hook gets a JSON POST and its answer's status.
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execaCommandPort, fetchHttpPort } from '../../src/manager/hooks/hook-ports.ts';

let dir: string;
let server: Server;
let url: string;
const bodies: unknown[] = [];

function script(name: string, body: string): string {
  const path = join(dir, name);
  writeFileSync(path, `#!/bin/sh\n${body}\n`);
  chmodSync(path, 0o755);
  return path;
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'cm-hook-ports-'));
  server = createServer((req, res) => {
    let text = '';
    req.on('data', (chunk: Buffer) => (text += chunk.toString()));
    req.on('end', () => {
      bodies.push({ type: req.headers['content-type'], body: JSON.parse(text) as unknown });
      res.writeHead(req.url === '/fail' ? 500 : 200).end(req.url === '/fail' ? 'broken' : 'ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  rmSync(dir, { recursive: true, force: true });
});

const never = new AbortController().signal;

describe('execaCommandPort', () => {
  it('passes exactly the given environment and the args as they are (no shell)', async () => {
    const env = script('env.sh', 'env | sort; printf "%s|" "$@"');
    const outcome = await execaCommandPort.run({
      file: env,
      args: ['a b', '$HOME', ';id'],
      env: { PATH: '/usr/bin:/bin', CM_VALIDATOR_ID: '005' },
      timeoutMs: 5_000,
      signal: never,
    });
    expect(outcome.kind).toBe('exited');
    if (outcome.kind !== 'exited') return;
    const lines = outcome.output.split('\n');
    // sh itself adds PWD (and may add SHLVL, _); nothing of this process's environment comes through.
    const names = lines.slice(0, -1).map((l) => l.split('=')[0]);
    expect(names.filter((n) => !['PWD', 'SHLVL', '_', 'OLDPWD'].includes(n ?? ''))).toEqual([
      'CM_VALIDATOR_ID',
      'PATH',
    ]);
    expect(lines.at(-1)).toBe('a b|$HOME|;id|');
  });

  it('reports the exit code, kills at the timeout, stops on cancel, bounds the output', async () => {
    const fails = script('fail.sh', 'echo nope >&2; exit 7');
    expect(
      await execaCommandPort.run({
        file: fails,
        args: [],
        env: {},
        timeoutMs: 5_000,
        signal: never,
      }),
    ).toEqual({ kind: 'exited', exitCode: 7, output: 'nope' });
    const slow = script('slow.sh', 'exec sleep 30');
    let started = Date.now();
    expect(
      await execaCommandPort.run({ file: slow, args: [], env: {}, timeoutMs: 300, signal: never }),
    ).toEqual({ kind: 'timeout' });
    expect(Date.now() - started).toBeLessThan(5_000);
    const cancel = new AbortController();
    started = Date.now();
    const running = execaCommandPort.run({
      file: slow,
      args: [],
      env: {},
      timeoutMs: 30_000,
      signal: cancel.signal,
    });
    setTimeout(() => cancel.abort(), 200);
    expect(await running).toEqual({ kind: 'cancelled' });
    expect(Date.now() - started).toBeLessThan(5_000);
    const loud = script('loud.sh', 'exec yes');
    expect(
      await execaCommandPort.run({
        file: loud,
        args: [],
        env: {},
        timeoutMs: 10_000,
        signal: never,
      }),
    ).toEqual({ kind: 'output-too-large' });
    expect(
      await execaCommandPort.run({
        file: join(dir, 'missing'),
        args: [],
        env: {},
        timeoutMs: 1_000,
        signal: never,
      }),
    ).toMatchObject({ kind: 'not-run' });
  });
});

describe('fetchHttpPort', () => {
  it('POSTs JSON and returns the status and the start of the body', async () => {
    expect(
      await fetchHttpPort.post({
        url: `${url}/ok`,
        body: { hook: 'x' },
        timeoutMs: 5_000,
        signal: never,
      }),
    ).toEqual({ kind: 'answered', status: 200, body: 'ok' });
    expect(
      await fetchHttpPort.post({
        url: `${url}/fail`,
        body: { n: 1 },
        timeoutMs: 5_000,
        signal: never,
      }),
    ).toEqual({ kind: 'answered', status: 500, body: 'broken' });
    expect(bodies).toEqual([
      { type: 'application/json', body: { hook: 'x' } },
      { type: 'application/json', body: { n: 1 } },
    ]);
  });

  it('says unreachable, timeout and cancelled apart', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    expect(
      await fetchHttpPort.post({
        url: `http://127.0.0.1:${port}/`,
        body: {},
        timeoutMs: 5_000,
        signal: never,
      }),
    ).toMatchObject({ kind: 'unreachable', reason: 'ECONNREFUSED' });
    const hang = createServer(() => undefined);
    await new Promise<void>((resolve) => hang.listen(0, '127.0.0.1', resolve));
    const hangUrl = `http://127.0.0.1:${(hang.address() as AddressInfo).port}/`;
    try {
      expect(
        await fetchHttpPort.post({ url: hangUrl, body: {}, timeoutMs: 300, signal: never }),
      ).toEqual({
        kind: 'timeout',
      });
      const cancel = new AbortController();
      const posting = fetchHttpPort.post({
        url: hangUrl,
        body: {},
        timeoutMs: 30_000,
        signal: cancel.signal,
      });
      setTimeout(() => cancel.abort(), 100);
      expect(await posting).toEqual({ kind: 'cancelled' });
    } finally {
      hang.closeAllConnections();
      await new Promise((resolve) => hang.close(resolve));
    }
  });
});
