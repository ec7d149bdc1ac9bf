// `cluster-manager devnet` as a user runs it: it prints `devnet ready` once the validators are
// Ready and staked and the manager is synced, and it leaves no process and no port behind —
// after SIGINT, after SIGTERM, when interrupted while starting, and when it cannot start.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { DevnetInfo } from '../../src/devnet/devnet.ts';
import { PocketRpcClient } from '../../src/pocket/index.ts';
import { pending, waitFor } from '../../src/harness/wait.ts';
import { lines, runCli, startCli, type CliProcess } from '../rpc/support/cli.ts';
import { isAlive, isListening, recordDescendants } from './support/processes.ts';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'devnet-lifecycle-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** Starts `cluster-manager devnet` with one validator; it is killed at the end whatever happens. */
function startDevnetCli(dir: string, extra: string[] = []) {
  const cli = startCli(
    [
      'devnet',
      '--validators',
      '1',
      '--dir',
      dir,
      '--rpc-port',
      '0',
      '--pacemaker',
      'manual',
      ...extra,
    ],
    { timeoutMs: 90_000 },
  );
  const pid = cli.child.pid!;
  const recorded = recordDescendants(pid);
  cleanups.push(async () => {
    recorded.stop();
    if (cli.child.exitCode === null && cli.child.signalCode === null) cli.child.kill('SIGKILL');
    await cli.exited;
    for (const child of recorded.pids) if (isAlive(child)) process.kill(child, 'SIGKILL');
  });
  return { cli, pid, recorded };
}

async function untilReady(cli: CliProcess): Promise<void> {
  await waitFor(
    () =>
      cli.stdout.includes('devnet ready')
        ? true
        : cli.child.exitCode !== null
          ? pending(`exited: ${cli.stderr}`)
          : pending('starting'),
    { what: 'devnet ready', timeoutMs: 60_000 },
  );
}

/** Every port the devnet listens on: Kubernetes API, manager, and each pod's published ports. */
async function portsOf(dir: string): Promise<number[]> {
  const info = JSON.parse(await readFile(join(dir, 'devnet.json'), 'utf8')) as DevnetInfo;
  const ports = [info.kubeApi, info.chainRpcUrl, info.managerUrl ?? ''].map((u) =>
    Number(new URL(u).port),
  );
  const pods = (await (await fetch(`${info.kubeApi}/api/v1/namespaces/devnet/pods`)).json()) as {
    items: { metadata: { annotations?: Record<string, string> } }[];
  };
  for (const pod of pods.items) {
    const published = pod.metadata.annotations?.['kube-emulator.dev/host-ports'];
    if (published !== undefined)
      ports.push(...Object.values(JSON.parse(published) as Record<string, number>));
  }
  return [...new Set(ports)];
}

async function expectNothingLeft(recorded: Set<number>, ports: number[]): Promise<void> {
  expect(recorded.size).toBeGreaterThan(0);
  await waitFor(
    () => {
      const alive = [...recorded].filter(isAlive);
      return alive.length === 0 ? true : pending(`still running: ${alive.join(', ')}`);
    },
    { what: 'every process the devnet started to be gone', timeoutMs: 10_000 },
  );
  for (const port of ports) expect(await isListening(port), `port ${port}`).toBe(false);
}

describe('cluster-manager devnet', () => {
  it.each([
    ['SIGINT', 'rpc'],
    ['SIGTERM', 'cli'],
  ] as const)(
    'is ready once the validators are staked and the manager synced, and %s stops everything it started (tx mode %s)',
    async (signal, txMode) => {
      const dir = await tempDir();
      const { cli, recorded } = startDevnetCli(dir, ['--tx-mode', txMode]);
      await untilReady(cli);
      const readyLine = lines(cli.stdout).find((l) => l.startsWith('devnet ready'))!;
      expect(readyLine).toMatch(
        /^devnet ready kube=http:\/\/127\.0\.0\.1:\d+ kubeconfig=\S+ chain=http:\/\/127\.0\.0\.1:\d+ manager=http:\/\/127\.0\.0\.1:\d+ info=\S+devnet\.json$/,
      );
      const info = JSON.parse(await readFile(join(dir, 'devnet.json'), 'utf8')) as DevnetInfo;
      expect((await readFile(join(dir, 'kubeconfig'), 'utf8')).includes(info.kubeApi)).toBe(true);
      expect(await readFile(join(dir, 'manager.env'), 'utf8')).toMatch(/^CM_CHAIN_RPC_URL=/m);
      // Ready means: the manager answers /readyz, and the genesis validator is staked on chain.
      expect((await fetch(`${info.managerUrl ?? ''}/readyz`)).status).toBe(200);
      const chain = new PocketRpcClient({ baseUrl: info.chainRpcUrl });
      const rows = await chain.validators();
      expect(rows.filter((r) => r.unstaking_height < 0)).toHaveLength(1);

      // trigger-view goes through the manager to the chain: its debug endpoint in RPC mode,
      // `p1 Debug TriggerView` (localnet-cli) in CLI mode.
      const before = await chain.height();
      const view = await runCli(['trigger-view'], {
        env: {
          CLUSTER_MANAGER_URL: info.managerUrl ?? '',
          CLUSTER_MANAGER_TOKEN: info.token ?? '',
        },
      });
      expect(view.code, view.stderr).toBe(0);
      expect(await chain.height()).toBe(before + 1);

      const ports = await portsOf(dir);
      expect(ports.length).toBeGreaterThanOrEqual(5);
      cli.child.kill(signal);
      const result = await cli.exited;
      recorded.stop();
      expect(result.code).toBe(0);
      expect(lines(result.stderr).at(-1)).toBe('devnet stopped');
      await expectNothingLeft(recorded.pids, ports);
    },
  );

  it('stops what it had started when interrupted while starting', async () => {
    const dir = await tempDir();
    const { cli, recorded } = startDevnetCli(dir);
    // Interrupt once node processes run, before the devnet is ready.
    await waitFor(
      () => (recorded.pids.size >= 2 ? true : pending(`${recorded.pids.size} processes`)),
      {
        what: 'the node processes to start',
        timeoutMs: 30_000,
        intervalMs: 20,
      },
    );
    expect(cli.stdout).not.toContain('devnet ready');
    cli.child.kill('SIGINT');
    const result = await cli.exited;
    recorded.stop();
    expect(result.code).toBe(1);
    expect(lines(result.stderr).at(-1)).toMatch(
      /^error: devnet did not start: interrupted by SIGINT/,
    );
    await expectNothingLeft(recorded.pids, []);
  });

  it('fails cleanly with exit 1 and one line when the control RPC port is taken', async () => {
    const dir = await tempDir();
    const server: Server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise((resolve) => server.close(() => resolve())));
    const port = (server.address() as { port: number }).port;
    const cli = startCli(['devnet', '--validators', '1', '--dir', dir, '--rpc-port', String(port)]);
    const recorded = recordDescendants(cli.child.pid!);
    const result = await cli.exited;
    recorded.stop();
    expect(result.code).toBe(1);
    expect(lines(result.stderr)).toEqual([
      `error: devnet did not start: port ${port} is in use; pass --rpc-port 0 or another port`,
    ]);
    expect(result.stdout).toBe('');
    for (const pid of recorded.pids) expect(isAlive(pid)).toBe(false);
  });
});
