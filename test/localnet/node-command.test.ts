// The localnet-node commands as processes: genesis from a Secret manifest; run with the env a
// process kubelet sets (key only in env, JSON logs, SIGTERM exits 0); net prints its nodes and
// leaves no process behind, even when it is killed.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { generateKeys } from '../../src/pocket/index.ts';
import { parseGenesis } from '../../src/localnet/genesis.ts';
import { client, triggerView } from './support/chain.ts';
import { listeningFd } from '../../src/localnet/net.ts';
import { ownedPort } from '../support/owned-ports.ts';
import { rpcUrlFromLog } from './support/started-line.ts';
import { waitFor } from '../../src/harness/wait.ts';
import { compileCacheEnv } from '../support/compile-cache-env.ts';

const BIN = fileURLToPath(new URL('../../src/bin/localnet-node.ts', import.meta.url));
const keys = generateKeys({ count: 3, seed: 'node-command' });
const secrets = [...keys.values()].map((k) => k.exportPrivateKeyHex());
let dir: string;
let secretFile: string;
const children: ChildProcess[] = [];

interface Started {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

/** `inherit`: listening sockets the child gets as fds 3, 4, … (`PORT_RPC=fd:3`). */
function start(args: string[], env: Record<string, string> = {}, inherit: number[] = []): Started {
  const child = spawn(process.execPath, [BIN, ...args], {
    env: { PATH: process.env.PATH ?? '', ...compileCacheEnv(), ...env },
    stdio: ['ignore', 'pipe', 'pipe', ...inherit],
  });
  children.push(child);
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) =>
    child.on('close', (code) => resolve(code)),
  );
  return { child, output: () => output, exited };
}

const healthy = async (url: string, method = 'GET') => {
  try {
    return (
      (await fetch(`${url}/v1/health`, { method, signal: AbortSignal.timeout(1000) })).status ===
      200
    );
  } catch {
    return false;
  }
};

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'localnet-node-test-'));
  secretFile = join(dir, 'secret.yaml');
  const entries = [...keys].map(([id, key]) => `  "${id}": "${key.exportPrivateKeyHex()}"`);
  writeFileSync(
    secretFile,
    `apiVersion: v1\nkind: Secret\nmetadata:\n  name: validators-private-keys\ntype: Opaque\nstringData:\n${entries.join('\n')}\n`,
  );
});

afterEach(() => {
  for (const child of children.splice(0)) child.kill('SIGKILL');
});

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe('localnet-node genesis', () => {
  it('writes a V1-shaped genesis from the Secret with the template and unstaking period', async () => {
    const out = join(dir, 'genesis.json');
    const run = start([
      'genesis',
      '--keys',
      secretFile,
      '--validators',
      '2',
      '--service-url-template',
      'validator-{id}:{index}/{ordinal}',
      '--unstaking-blocks',
      '7',
      '--out',
      out,
    ]);
    expect(await run.exited).toBe(0);
    const genesis = parseGenesis(JSON.parse(readFileSync(out, 'utf8')));
    expect(genesis.validators.map((v) => v.service_url)).toEqual([
      'validator-001:1/0',
      'validator-002:2/1',
    ]);
    expect(genesis.accounts).toHaveLength(3);
    expect(genesis.params.validator_unstaking_blocks).toBe(7);
    expect(readFileSync(out, 'utf8')).not.toContain(secrets[0]!.slice(0, 64));
  });

  it('refuses a malformed or missing Secret manifest as a usage error (exit 2) with one line', async () => {
    const bad = join(dir, 'bad-secret.yaml');
    writeFileSync(bad, `keys: [${secrets[0]!}\n`);
    for (const [file, reason] of [
      [bad, 'the manifest is not valid YAML (BAD_INDENT at line 2)'],
      [join(dir, 'missing.yaml'), 'cannot read it (ENOENT)'],
    ] as const) {
      const run = start(['genesis', '--keys', file, '--validators', '1']);
      expect(await run.exited).toBe(2);
      expect(run.output().trim()).toBe(`error: --keys ${file}: ${reason}`);
      expect(run.output()).not.toContain(secrets[0]!.slice(0, 64));
    }
  });
});

describe('localnet-node run', () => {
  it('takes ports and host from the kubelet env and the key from POCKET_PRIVATE_KEY only', async () => {
    // The ports are held from the moment the genesis names them: the node gets the listening
    // sockets (fds 3 and 4) through the kubelet's variables.
    const [rpc, p2p] = [await ownedPort(), await ownedPort()];
    const [rpcPort, p2pPort] = [rpc.port, p2p.port];
    const genesisFile = join(dir, 'run-genesis.json');
    const genesisRun = start([
      'genesis',
      '--keys',
      secretFile,
      '--validators',
      '1',
      '--service-url-template',
      `127.0.0.1:${p2pPort}`,
      '--out',
      genesisFile,
    ]);
    expect(await genesisRun.exited).toBe(0);
    const node = start(
      ['run', '--genesis', genesisFile, '--round-timeout-ms', '300'],
      {
        HOST: '127.0.0.1',
        PORT_RPC: 'fd:3',
        PORT_P2P: 'fd:4',
        LOCALNET_DEBUG_ROUTES: 'true',
        POCKET_PRIVATE_KEY: secrets[0]!,
        LOCALNET_SHUTDOWN_DRAIN_MS: '0',
      },
      [listeningFd(rpc.server), listeningFd(p2p.server)],
    );
    await Promise.all([rpc.close(), p2p.close()]);
    const rpcUrl = `http://127.0.0.1:${rpcPort}`;
    await waitFor(() => healthy(rpcUrl), { timeoutMs: 15_000, what: 'the node to be healthy' });
    expect(await healthy(rpcUrl, 'HEAD')).toBe(true);
    const roles = await fetch(`${rpcUrl}/v1/query/nodeRoles`, { method: 'POST' });
    expect(await roles.json()).toEqual({ node_roles: ['validator'] });
    expect((await triggerView(rpcUrl)).height).toBe(1);
    expect((await triggerView(rpcUrl)).height).toBe(2);
    await waitFor(
      () =>
        node
          .output()
          .split('\n')
          .filter((l) => l.includes('"committed block"')).length === 2,
      {
        timeoutMs: 5_000,
        what: 'two committed-block log lines',
      },
    );
    const cmdline = readFileSync(`/proc/${node.child.pid}/cmdline`, 'utf8');
    expect(cmdline).not.toContain(secrets[0]!.slice(0, 64));
    const stoppedAt = Date.now();
    node.child.kill('SIGTERM');
    expect(await node.exited).toBe(0);
    expect(Date.now() - stoppedAt).toBeLessThan(3_000);
    const lines = node.output().trim().split('\n');
    for (const line of lines) expect(() => JSON.parse(line) as unknown).not.toThrow();
    const committed = lines.map((l) => JSON.parse(l) as { msg: string; height?: number });
    expect(committed.filter((l) => l.msg === 'committed block').map((l) => l.height)).toEqual([
      1, 2,
    ]);
    expect(node.output()).not.toContain(secrets[0]!.slice(0, 64));
  });

  it('runs as a full node without a key and rejects a bad key without printing it', async () => {
    const genesisFile = join(dir, 'run-genesis.json');
    const full = start([
      'run',
      '--genesis',
      genesisFile,
      '--host',
      '127.0.0.1',
      '--rpc-port',
      '0',
      '--p2p-port',
      '0',
    ]);
    const rpcUrl = await rpcUrlFromLog(full.output);
    await waitFor(() => healthy(rpcUrl), {
      timeoutMs: 15_000,
      what: 'the full node to be healthy',
    });
    const roles = await fetch(`${rpcUrl}/v1/query/nodeRoles`, { method: 'POST' });
    expect(await roles.json()).toEqual({ node_roles: [] });
    expect(await client(rpcUrl).height()).toBe(0);
    full.child.kill('SIGTERM');
    expect(await full.exited).toBe(0);

    const badKey = secrets[1]!.slice(0, 100);
    const bad = start(
      ['run', '--genesis', join(dir, 'missing.json'), '--rpc-port', '0', '--p2p-port', '0'],
      {
        POCKET_PRIVATE_KEY: badKey,
        LOCALNET_PACEMAKER: 'sometimes',
        LOCALNET_DEBUG_ROUTES: 'maybe',
      },
    );
    expect(await bad.exited).toBe(2);
    expect(bad.output()).toContain('--genesis');
    expect(bad.output()).toContain(
      'POCKET_PRIVATE_KEY: KEY_BAD_LENGTH: key has 100 hex characters',
    );
    expect(bad.output()).toContain('--pacemaker must be manual or auto');
    expect(bad.output()).toContain('LOCALNET_DEBUG_ROUTES must be true or false');
    expect(bad.output()).not.toContain(badKey.slice(0, 32));
  });
});

describe('localnet-node net', () => {
  const readLine = async (started: Started) =>
    JSON.parse(
      await waitFor(
        () =>
          started
            .output()
            .split('\n')
            .find((l) => l.startsWith('{"nodes"')),
        {
          timeoutMs: 30_000,
          what: 'the JSON line of the net',
        },
      ),
    ) as {
      nodes: { id: string; address: string; rpc: string; serviceUrl: string; staked: boolean }[];
      dir: string;
    };

  it('prints every node once all are healthy and stops them all on SIGTERM', async () => {
    const net = start([
      'net',
      '--keys',
      secretFile,
      '--debug-routes',
      '--validators',
      '3',
      '--staked',
      '2',
      '--round-timeout-ms',
      '300',
    ]);
    const { nodes } = await readLine(net);
    expect(nodes.map((n) => [n.id, n.address, n.staked])).toEqual([
      ['001', keys.get('001')!.address, true],
      ['002', keys.get('002')!.address, true],
      ['003', keys.get('003')!.address, false],
    ]);
    for (const node of nodes) {
      expect(node.rpc).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(node.serviceUrl).toMatch(/^127\.0\.0\.1:\d+$/);
      expect(await healthy(node.rpc)).toBe(true);
    }
    expect((await triggerView(nodes[2]!.rpc)).height).toBe(1);
    net.child.kill('SIGTERM');
    expect(await net.exited).toBe(0);
    for (const node of nodes) expect(await healthy(node.rpc)).toBe(false);
  });

  it('leaves no node behind when it is killed outright', async () => {
    const net = start(['net', '--keys', secretFile, '--validators', '2']);
    const { nodes, dir: netDir } = await readLine(net);
    net.child.kill('SIGKILL');
    await net.exited;
    try {
      for (const node of nodes) {
        await waitFor(async () => !(await healthy(node.rpc)), {
          timeoutMs: 10_000,
          what: `node ${node.id} to exit with its parent`,
        });
      }
    } finally {
      // A killed net cannot remove its temp dir; the test does.
      rmSync(netDir, { recursive: true, force: true });
    }
  });
});
