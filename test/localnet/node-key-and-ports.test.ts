// localnet-node's key handling and its start-up failures, as processes: one key rule with the
// manager (`parsePrivateKey`, no trimming: a trailing newline is KEY_WHITESPACE, as V1's
// `hex.DecodeString` refuses it), a key file that keeps the key out of /proc/<pid>/environ and
// argv (also for the nodes `net` starts), and a taken port named in the one-line error.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../../src/harness/wait.ts';
import { buildGenesis } from '../../src/localnet/genesis.ts';
import { startNet } from '../../src/localnet/net.ts';
import { generateKeys, parsePrivateKey } from '../../src/pocket/index.ts';
import { compileCacheEnv } from '../support/compile-cache-env.ts';
import { ownedPort } from '../support/owned-ports.ts';
import { rpcUrlFromLog } from './support/started-line.ts';

const BIN = fileURLToPath(new URL('../../src/bin/localnet-node.ts', import.meta.url));
const keys = generateKeys({ count: 2, seed: 'node-key-and-ports' });
const secret = keys.get('001')!.exportPrivateKeyHex();
let dir: string;
let genesisFile: string;
const children: ChildProcess[] = [];
const servers: Server[] = [];

interface Started {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<number | null>;
}

function start(args: string[], env: Record<string, string> = {}): Started {
  const child = spawn(process.execPath, [BIN, ...args], {
    env: { PATH: process.env.PATH ?? '', ...compileCacheEnv(), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
  return { child, stdout: () => stdout, stderr: () => stderr, exited };
}

/** A port held the way another program would hold it (listening), from the moment it is known. */
async function occupied(): Promise<number> {
  const { port, server } = await ownedPort();
  servers.push(server);
  return port;
}

const procFile = (pid: number, name: 'environ' | 'cmdline'): string =>
  readFileSync(`/proc/${pid}/${name}`).toString('latin1');

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'node-key-ports-'));
  genesisFile = join(dir, 'genesis.json');
  writeFileSync(
    genesisFile,
    JSON.stringify(buildGenesis({ keys, validators: 1, serviceUrl: '127.0.0.1:1' })),
  );
});
afterEach(async () => {
  for (const child of children.splice(0)) child.kill('SIGKILL');
  for (const server of servers.splice(0)) await new Promise((resolve) => server.close(resolve));
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

const run = (extra: string[], env: Record<string, string> = {}) =>
  start(['run', '--genesis', genesisFile, '--host', '127.0.0.1', '--p2p-port', '0', ...extra], env);

describe('the node key: one rule with the manager', () => {
  it('refuses a key with a trailing newline at start, as the manager does (KEY_WHITESPACE)', async () => {
    // The manager's key store parses with the same function and gets the same code.
    expect(() => parsePrivateKey(`${secret}\n`)).toThrow(
      expect.objectContaining({ code: 'KEY_WHITESPACE' }),
    );
    const fromEnv = run(['--rpc-port', '0'], { POCKET_PRIVATE_KEY: `${secret}\n` });
    expect(await fromEnv.exited).toBe(2);
    expect(fromEnv.stderr()).toContain('POCKET_PRIVATE_KEY: KEY_WHITESPACE');
    expect(fromEnv.stderr() + fromEnv.stdout()).not.toContain(secret.slice(0, 32));

    const file = join(dir, 'key-with-newline');
    writeFileSync(file, `${secret}\n`, { mode: 0o600 });
    const fromFile = run(['--rpc-port', '0', '--key-file', file]);
    expect(await fromFile.exited).toBe(2);
    expect(fromFile.stderr()).toContain(`--key-file ${file}: KEY_WHITESPACE`);
  });

  it('with --key-file, keeps the key out of the process environment and argv', async () => {
    const file = join(dir, 'key');
    writeFileSync(file, secret, { mode: 0o600 });
    const node = run(['--rpc-port', '0', '--key-file', file]);
    const url = await rpcUrlFromLog(node.stdout);
    const roles = await waitFor(
      async () => {
        const response = await fetch(`${url}/v1/query/nodeRoles`, { method: 'POST' });
        return (await response.json()) as { node_roles: string[] };
      },
      { timeoutMs: 15_000, what: 'the node to answer' },
    );
    expect(roles.node_roles).toEqual(['validator']);
    const pid = node.child.pid!;
    expect(procFile(pid, 'environ')).not.toContain(secret.slice(0, 64));
    expect(procFile(pid, 'cmdline')).not.toContain(secret.slice(0, 64));
  });

  it('with --key-file -, waits for a key written to its stdin after it started (no EAGAIN)', async () => {
    const child = spawn(
      process.execPath,
      [BIN, 'run', '--genesis', genesisFile, '--rpc-port', '0', '--key-file', '-'],
      {
        env: { PATH: process.env.PATH ?? '', ...compileCacheEnv() },
        stdio: ['pipe', 'pipe', 'pipe'],
      },
    );
    children.push(child);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    // A slow writer: the node reaches its read first (a non-blocking pipe answered EAGAIN, and the
    // node refused to start; seen with the faster bundles in CI).
    const late = setTimeout(() => child.stdin.end(secret), 1_500);
    try {
      const url = await Promise.race([
        rpcUrlFromLog(() => stdout),
        new Promise<never>((_, reject) =>
          child.once('exit', () => reject(new Error(`the node exited: ${stderr}`))),
        ),
      ]);
      const roles = await waitFor(
        async () => {
          if (child.exitCode !== null) throw new Error(`the node exited: ${stderr}`);
          const response = await fetch(`${url}/v1/query/nodeRoles`, { method: 'POST' });
          return (await response.json()) as { node_roles: string[] };
        },
        { timeoutMs: 15_000, what: 'the node to answer' },
      );
      expect(roles.node_roles).toEqual(['validator']);
    } finally {
      clearTimeout(late);
    }
  });

  it('gives the nodes that `net` starts their keys through a pipe, not the environment', async () => {
    const net = await startNet({ keys, validators: 2, roundTimeoutMs: 300 });
    try {
      const pids = readdirSync('/proc')
        .filter((entry) => /^\d+$/.test(entry))
        .map(Number)
        .filter((pid) => {
          try {
            return procFile(pid, 'cmdline').includes(join(net.dir, 'genesis.json'));
          } catch {
            return false; // exited meanwhile, or not ours
          }
        });
      expect(pids).toHaveLength(2);
      for (const pid of pids) {
        for (const key of keys.values()) {
          expect(procFile(pid, 'environ')).not.toContain(key.exportPrivateKeyHex().slice(0, 64));
        }
      }
      const roles = await fetch(`${net.nodes[1]!.rpcUrl}/v1/query/nodeRoles`, { method: 'POST' });
      expect(await roles.json()).toEqual({ node_roles: ['validator'] });
    } finally {
      await net.stop();
    }
  });
});

describe('a port that is taken', () => {
  it('is named in run’s one-line error', async () => {
    const port = await occupied();
    const node = run(['--rpc-port', String(port)]);
    expect(await node.exited).toBe(1);
    expect(node.stderr().trim()).toBe(
      `error: cannot listen on 127.0.0.1:${port} (--rpc-port): address already in use (EADDRINUSE)`,
    );
  });

  it('is named in net’s one-line error before any node starts', async () => {
    const secretFile = join(dir, 'secret.yaml');
    const entries = [...keys].map(([id, key]) => `  "${id}": "${key.exportPrivateKeyHex()}"`);
    writeFileSync(secretFile, `kind: Secret\nstringData:\n${entries.join('\n')}\n`);
    // The first port `net` checks is the one held here: a port next to a free one may be anyone's.
    const base = await occupied();
    const net = start([
      'net',
      '--keys',
      secretFile,
      '--validators',
      '2',
      '--base-port',
      String(base),
    ]);
    expect(await net.exited).toBe(1);
    expect(net.stderr().trim()).toBe(
      `error: port ${base} (node 001 rpc, --base-port ${base}) on 127.0.0.1: address already in use (EADDRINUSE)`,
    );
  });
});
