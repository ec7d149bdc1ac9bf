// The hook ports against real processes and a real HTTP server: a command gets exactly the
// environment it is given, no shell, is killed at its timeout or on cancel, and its output is
// bounded; it runs in its own process group, which is stopped whole — children it left in the
// background too — and a hook whose last run's processes outlive SIGKILL is not started again
// (issue 30, item 7); an HTTP hook gets a JSON POST and its answer's status.
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commandPort, fetchHttpPort } from '../../src/manager/hooks/hook-ports.ts';
import { refusedPort } from '../support/owned-ports.ts';
import {
  liveGroupMembers,
  processGroupCommandPort,
} from '../../src/manager/hooks/process-group.ts';

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

describe('commandPort', () => {
  it('passes exactly the given environment and the args as they are (no shell)', async () => {
    const env = script('env.sh', 'env | sort; printf "%s|" "$@"');
    const outcome = await commandPort.run({
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
      await commandPort.run({
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
      await commandPort.run({ file: slow, args: [], env: {}, timeoutMs: 300, signal: never }),
    ).toMatchObject({ kind: 'timeout', group: { processes: 1, survivors: 0 } });
    expect(Date.now() - started).toBeLessThan(5_000);
    const cancel = new AbortController();
    started = Date.now();
    const running = commandPort.run({
      file: slow,
      args: [],
      env: {},
      timeoutMs: 30_000,
      signal: cancel.signal,
    });
    setTimeout(() => cancel.abort(), 200);
    expect(await running).toMatchObject({ kind: 'cancelled' });
    expect(Date.now() - started).toBeLessThan(5_000);
    const loud = script('loud.sh', 'exec yes');
    expect(
      await commandPort.run({
        file: loud,
        args: [],
        env: {},
        timeoutMs: 10_000,
        signal: never,
      }),
    ).toMatchObject({ kind: 'output-too-large' });
    expect(
      await commandPort.run({
        file: join(dir, 'missing'),
        args: [],
        env: {},
        timeoutMs: 1_000,
        signal: never,
      }),
    ).toMatchObject({ kind: 'not-run' });
  });
});

/** True while process `pid` exists and is not a zombie. */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

function pidIn(file: string): number {
  return Number(readFileSync(file, 'utf8').trim());
}

describe('a command hook is stopped with its whole process group (issue 30, item 7)', () => {
  it('at its timeout, a child it left in the background (holding the output pipe) dies too, and the run ends in time', async () => {
    const pids = join(dir, 'bg-timeout.pid');
    const hook = script('bg-timeout.sh', 'sleep 30 & echo $! > "$1"; sleep 30');
    const started = Date.now();
    const outcome = await commandPort.run({
      file: hook,
      args: [pids],
      env: {},
      timeoutMs: 500,
      signal: never,
    });
    expect(Date.now() - started).toBeLessThan(4_000);
    expect(outcome).toMatchObject({
      kind: 'timeout',
      group: { processes: 3, survivors: 0, sigkill: false },
    });
    expect(alive(pidIn(pids))).toBe(false);
  }, 15_000);

  it('a hook that exits leaving children (with or without our pipes): they are stopped, and the outcome says so', async () => {
    for (const [name, body] of [
      ['bg-pipe.sh', 'sleep 30 & echo $! > "$1"; exit 0'],
      ['bg-quiet.sh', 'sleep 30 >/dev/null 2>&1 & echo $! > "$1"; exit 0'],
    ] as const) {
      const pids = join(dir, `${name}.pid`);
      const started = Date.now();
      const outcome = await commandPort.run({
        file: script(name, body),
        args: [pids],
        env: {},
        timeoutMs: 10_000,
        signal: never,
      });
      expect(Date.now() - started, name).toBeLessThan(4_000);
      expect(outcome, name).toMatchObject({
        kind: 'exited',
        exitCode: 0,
        group: { processes: 1, survivors: 0 },
      });
      expect(alive(pidIn(pids)), name).toBe(false);
    }
  }, 20_000);

  it('a group that ignores SIGTERM gets SIGKILL after the kill-after delay', async () => {
    const pids = join(dir, 'stubborn.pid');
    const hook = script('stubborn.sh', `trap '' TERM; sleep 30 & echo $! > "$1"; wait`);
    const started = Date.now();
    const outcome = await commandPort.run({
      file: hook,
      args: [pids],
      env: {},
      timeoutMs: 300,
      signal: never,
    });
    expect(Date.now() - started).toBeGreaterThanOrEqual(2_000);
    expect(Date.now() - started).toBeLessThan(6_000);
    expect(outcome).toMatchObject({ kind: 'timeout', group: { survivors: 0, sigkill: true } });
    expect(alive(pidIn(pids))).toBe(false);
  }, 15_000);

  it('is not started again while processes of its last run outlive SIGKILL', async () => {
    let pinned: number | undefined;
    let stuck = true;
    // A process that SIGKILL does not end at once (uninterruptible sleep) cannot be made on
    // purpose: the group's liveness is faked for its first run, the processes are real.
    const port = processGroupCommandPort({
      maxOutputBytes: 1_024,
      killAfterMs: 100,
      settleMs: 100,
      liveMembers: (pgid) => {
        pinned ??= pgid;
        return pgid === pinned && stuck ? 1 : liveGroupMembers(pgid);
      },
    });
    const marker = join(dir, 'started-again');
    const hook = script('marks.sh', 'touch "$1"; exec sleep 30');
    const request = {
      file: hook,
      args: [marker],
      env: {},
      timeoutMs: 200,
      signal: never,
      key: '005|fund',
    };
    expect(await port.run(request)).toMatchObject({
      kind: 'timeout',
      group: { survivors: 1, sigkill: true },
    });
    rmSync(marker);
    expect(await port.run(request)).toEqual({ kind: 'still-running', pgid: pinned, processes: 1 });
    expect(existsSync(marker)).toBe(false); // not started
    expect(await port.run({ ...request, key: '006|fund' })).toMatchObject({ kind: 'timeout' });
    rmSync(marker);
    stuck = false; // gone now
    expect(await port.run(request)).toMatchObject({ kind: 'timeout' });
    expect(existsSync(marker)).toBe(true);
  }, 15_000);
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
    // Held bound and not listening (owned-ports.ts): a port closed and released could be taken by
    // another program's listen(0) before the post, which would then not be refused.
    const closed = await refusedPort();
    try {
      expect(
        await fetchHttpPort.post({
          url: `http://127.0.0.1:${closed.port}/`,
          body: {},
          timeoutMs: 5_000,
          signal: never,
        }),
      ).toMatchObject({ kind: 'unreachable', reason: 'ECONNREFUSED' });
    } finally {
      await closed.release();
    }
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
