// `cluster-manager devnet` as a user runs it: it prints `devnet ready` once the validators are
// Ready and staked and the manager is synced, and it leaves no process and no port behind —
// after SIGINT, after SIGTERM, when interrupted while starting, and when it cannot start.
import { spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { createServer as createHttpServer } from 'node:http';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { BIN, type DevnetInfo } from '../../src/devnet/devnet.ts';
import { readyHints } from '../../src/devnet/hints.ts';
import { PocketRpcClient } from '../../src/pocket/index.ts';
import { pending, waitFor } from '../../src/harness/wait.ts';
import { lines, runCli, startCli, type CliProcess } from '../rpc/support/cli.ts';
import { isAlive, isListening, recordDescendants } from './support/processes.ts';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function tempDir(list = cleanups): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'devnet-lifecycle-'));
  list.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/**
 * Starts `cluster-manager devnet` with one validator; it is killed at the end whatever happens.
 * `list`: where its cleanup goes (a describe whose tests share one devnet keeps its own).
 * `ownCompileCache`: run without the test run's compile cache, so the devnet keeps its own in its
 * folder, as a user's does — for the tests of what `devnet reset` removes and `--resume` keeps
 * (src/devnet/cleanup.ts). The others share the run's: a start then costs about 4 CPU s less.
 */
function startDevnetCli(
  dir: string,
  extra: string[] = [],
  list = cleanups,
  ownCompileCache = false,
) {
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
    { timeoutMs: 600_000, compileCache: !ownCompileCache },
  );
  const pid = cli.child.pid!;
  const recorded = recordDescendants(pid);
  list.push(async () => {
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
  // The devnet's API is HTTPS with a token (RBAC enforced): read it with its kubeconfig.
  const kc = new KubeConfig();
  kc.loadFromFile(info.kubeconfig);
  const pods = await kc.makeApiClient(CoreV1Api).listNamespacedPod({ namespace: 'devnet' });
  for (const pod of pods.items) {
    const published = pod.metadata?.annotations?.['kube-emulator.dev/host-ports'];
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
        /^devnet ready kube=https:\/\/127\.0\.0\.1:\d+ kubeconfig=\S+ chain=http:\/\/127\.0\.0\.1:\d+ manager=http:\/\/127\.0\.0\.1:\d+ info=\S+devnet\.json$/,
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

      // The hints under the ready line are the ones that work here (see test/devnet/hints).
      const tries = lines(cli.stderr)
        .filter((l) => /^ {2}(try:| {4}) /.test(l))
        .map((l) => l.slice(7));
      expect(tries).toEqual(
        readyHints(info, process.cwd(), { node: process.execPath, entry: BIN.clusterManager }),
      );
      expect(tries[0]).toBe(`npx cluster-manager --devnet ${dir} scale 3 --wait active --drive`);

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

describe('a devnet owns its folder', () => {
  let dir: string;
  let first: ReturnType<typeof startDevnetCli>;
  // These tests share the devnets they start: cleaned up after the last one.
  const shared: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const cleanup of shared.splice(0).reverse()) await cleanup();
  });

  it('a second start on the folder is refused at once, naming the running devnet, and touches nothing', async () => {
    dir = await tempDir(shared);
    first = startDevnetCli(dir, [], shared, true);
    await untilReady(first.cli);
    const info = JSON.parse(await readFile(join(dir, 'devnet.json'), 'utf8')) as DevnetInfo;
    // Paused: the next devnet on this folder must not inherit it (item 1).
    expect((await runCli(['--devnet', dir, 'pause'])).code).toBe(0);
    const before = await snapshot(dir);

    const started = performance.now();
    const second = await runCli(['devnet', '--validators', '1', '--dir', dir, '--rpc-port', '0']);
    expect(performance.now() - started).toBeLessThan(15_000);
    expect(second.code).toBe(1);
    expect(lines(second.stderr)).toEqual([
      `error: devnet did not start: ${dir} is in use by a running devnet (pid ${first.pid}, started ${info.startedAt ?? '?'}, ` +
        `manager ${info.managerUrl ?? '?'}, chain ${info.chainRpcUrl}, kube ${info.kubeApi}); ` +
        'stop it first (Ctrl-C in its terminal) or start this one with --dir <another folder>',
    ]);
    expect(await snapshot(dir)).toEqual(before);
    // The running one is unharmed.
    const view = await runCli(['--devnet', dir, 'trigger-view']);
    expect(view.code, view.stderr).toBe(0);
  });

  it('restarts a manager killed with SIGKILL, saying so with its log, and the CLI reaches the new one', async () => {
    // As the review found it: the manager's pid from processes.json, kill -9.
    const record = JSON.parse(await readFile(join(dir, 'processes.json'), 'utf8')) as {
      processes: { pid: number; command: string }[];
    };
    const manager = record.processes.find(
      (p) => / run$/.test(p.command) && p.command.includes('cluster-manager'),
    );
    expect(manager, JSON.stringify(record)).toBeDefined();
    process.kill(manager!.pid, 'SIGKILL');
    const restarted = await waitFor(
      () =>
        lines(first.cli.stderr).find(
          (l) => l.startsWith('manager ') && l.includes(' restarted (pid '),
        ) ?? pending(`stderr so far: ${first.cli.stderr}`),
      { what: 'the devnet to restart its manager', timeoutMs: 60_000 },
    );
    expect(first.cli.stderr).toContain(
      `the manager (pid ${manager!.pid}) exited by itself (signal SIGKILL); its log: ${join(dir, 'manager.log')}; restarting it in 1 s (restart 1 of at most 5 in a row)`,
    );
    expect(restarted).toMatch(/ restarted \(pid \d+\), resuming from its journal$/);
    const status = await runCli(['--devnet', dir, 'status']);
    expect(status.code, status.stderr).toBe(0);
    // From its journal: the pause of the first test is still there.
    expect(lines(status.stdout)[0]).toMatch(/ · PAUSED: /);
  });

  it('a start on the folder of a devnet killed with SIGKILL stops what it left and begins fresh (no pause carried over)', async () => {
    first.cli.child.kill('SIGKILL');
    await first.cli.exited;
    first.recorded.stop();
    const left = [...first.recorded.pids].filter(isAlive);
    expect(left.length).toBeGreaterThanOrEqual(2); // the manager and the node

    const next = startDevnetCli(dir, [], shared, true);
    await untilReady(next.cli);
    expect(next.cli.stderr).toContain(
      `${dir} was left by a devnet that is gone (pid ${first.pid}); stopped ${left.length} process(es) it left running`,
    );
    for (const pid of left) expect(isAlive(pid), `leftover ${pid}`).toBe(false);
    const status = await runCli(['--devnet', dir, 'status']);
    expect(status.code, status.stderr).toBe(0);
    expect(lines(status.stdout)[0]).toMatch(/ · manager acting$/);
    first = next;
  });

  it('`devnet reset` stops what a killed devnet left — only the processes still as recorded — and removes its files', async () => {
    first.cli.child.kill('SIGKILL');
    await first.cli.exited;
    first.recorded.stop();
    const left = [...first.recorded.pids].filter(isAlive);
    expect(left.length).toBeGreaterThanOrEqual(2);
    // A recorded pid that is now another process (same pid, other start time) is not signalled.
    const bystander = spawn('sleep', ['60'], { stdio: 'ignore' });
    shared.push(async () => void bystander.kill('SIGKILL'));
    const record = JSON.parse(await readFile(join(dir, 'processes.json'), 'utf8')) as {
      processes: { pid: number; startTime: string; command: string }[];
    };
    record.processes.push({ pid: bystander.pid!, startTime: '1', command: 'sleep 60' });
    await writeFile(join(dir, 'processes.json'), JSON.stringify(record));

    const reset = await runCli(['devnet', 'reset', '--dir', dir]);
    expect(reset.code, reset.stderr).toBe(0);
    expect(reset.stdout).toMatch(
      new RegExp(
        `^the devnet that held ${dir} \\(pid ${first.pid}\\) is gone; stopped ${left.length} process\\(es\\) \\([\\d, ]+\\); removed devnet\\.json, .*emulator`,
      ),
    );
    for (const pid of left) expect(isAlive(pid), `leftover ${pid}`).toBe(false);
    expect(isAlive(bystander.pid!)).toBe(true);
    await expect(readdir(dir)).rejects.toThrow(/ENOENT/);
  });
});

describe('--resume', () => {
  let dir: string;
  const shared: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const cleanup of shared.splice(0).reverse()) await cleanup();
  });

  async function stopWithSigint(devnet: ReturnType<typeof startDevnetCli>): Promise<void> {
    devnet.cli.child.kill('SIGINT');
    expect((await devnet.cli.exited).code).toBe(0);
  }

  /** Stakes and unstakes committed in blocks 1…now, per signer address. */
  async function committed(chain: PocketRpcClient): Promise<Map<string, string[]>> {
    const seen = new Map<string, string[]>();
    for (let h = 1; h <= (await chain.height()); h++)
      for (const tx of (await chain.block(h)).transactions ?? [])
        if (tx.message_type === 'MessageStake' || tx.message_type === 'MessageUnstake')
          seen.set(tx.signer_addr, [...(seen.get(tx.signer_addr) ?? []), tx.message_type]);
    return seen;
  }

  it('Ctrl-C, then --resume: the same cluster, keys, ports and journal; the same active set goes on past its height; nothing doubled, not even the --hooks-file post-stake hook that ran for 005', async () => {
    dir = await tempDir(shared);
    // With a post-stake command hook given with --hooks-file: it runs for 005, once.
    const work = await tempDir(shared);
    const log = join(work, 'hooks.log');
    const hook = join(work, 'record.sh');
    await writeFile(
      hook,
      `#!/bin/sh\necho "$CM_HOOK_PHASE $CM_HOOK_NAME $CM_VALIDATOR_ID" >> ${log}\n`,
      { mode: 0o755 },
    );
    const hooks = join(work, 'hooks.yaml');
    await writeFile(hooks, `hooks:\n  - { name: signed, on: post-stake, command: ['${hook}'] }\n`, {
      mode: 0o600,
    });
    const first = startDevnetCli(dir, ['--validators', '4', '--hooks-file', hooks], shared);
    await untilReady(first.cli);
    expect(first.cli.stderr).toContain(`hooks: 1 from ${hooks} (--hooks-file)`);
    expect(await readFile(join(dir, 'manager.env'), 'utf8')).toContain(`CM_HOOKS_FILE=${hooks}\n`);
    const before = JSON.parse(await readFile(join(dir, 'devnet.json'), 'utf8')) as DevnetInfo;
    const scale = await runCli(['--devnet', dir, 'scale', '5', '--wait', 'active', '--drive'], {
      timeoutMs: 180_000,
    });
    expect(scale.code, scale.stderr).toBe(0);
    // The hook runs once the manager sees 005 sign (phase active).
    expect(
      await waitFor(
        async () => (await readFile(log, 'utf8').catch(() => '')) || pending('no hook run yet'),
        { what: "the post-stake hook's run for 005", timeoutMs: 60_000, intervalMs: 200 },
      ),
    ).toBe('post-stake signed 005\n');
    const chain = new PocketRpcClient({ baseUrl: before.chainRpcUrl });
    const rows = await chain.validators();
    expect(rows.filter((r) => r.unstaking_height < 0)).toHaveLength(5);
    expect((await runCli(['--devnet', dir, 'pause'])).code).toBe(0);
    const stoppedAt = await chain.height();
    await stopWithSigint(first);
    await expectTokenNeverSent(dir, before);

    const again = startDevnetCli(dir, ['--resume', '--hooks-file', hooks], shared);
    await untilReady(again.cli);
    expect(again.cli.stderr).toContain('5 validator(s) and a full node resuming at height');
    const after = JSON.parse(await readFile(join(dir, 'devnet.json'), 'utf8')) as DevnetInfo;
    expect([after.chainRpcUrl, after.managerUrl]).toEqual([before.chainRpcUrl, before.managerUrl]);
    // The same validators, service URLs (their ports) and stakes: the chain came back whole.
    expect((await chain.validators()).map((r) => [r.address, r.service_url])).toEqual(
      rows.map((r) => [r.address, r.service_url]),
    );
    expect(await chain.height()).toBeGreaterThanOrEqual(stoppedAt);
    // The journal came back: still paused; resumed, the manager sees all five active.
    const status = await runCli(['--devnet', dir, 'status']);
    expect(lines(status.stdout)[0]).toMatch(/ · PAUSED: /);
    expect((await runCli(['--devnet', dir, 'resume'])).code).toBe(0);
    const phases = async (): Promise<string[]> => {
      const answer = await fetch(`${after.managerUrl ?? ''}/v1/validators`, {
        headers: { authorization: `Bearer ${after.token ?? ''}` },
      });
      const body = (await answer.json()) as { validators: { id: string; phase: string }[] };
      return body.validators.map((v) => `${v.id}:${v.phase}`);
    };
    const five = await waitFor(
      async () => {
        // One block (the manual pacemaker), as trigger-view asks it of the full node.
        await fetch(`${after.chainRpcUrl}/v1/debug/trigger_view?wait=true`, {
          method: 'POST',
          signal: AbortSignal.timeout(15_000),
        }).then((r) => r.arrayBuffer());
        const height = await chain.height();
        const signers = (await chain.block(height)).block_header.quorum_cert.threshold_sig
          .signatures;
        const now = await phases();
        return height > stoppedAt + 2 && now.filter((p) => p.endsWith(':active')).length === 5
          ? { height, signers: signers?.length ?? 0 }
          : pending(`height ${height} (stopped at ${stoppedAt}); ${now.join(' ')}`);
      },
      {
        what: 'the five to sign on past the height it stopped at',
        timeoutMs: 60_000,
        intervalMs: 200,
      },
    );
    expect(five.signers).toBeGreaterThanOrEqual(4); // a quorum of five
    // Nothing doubled: one stake for 005 (and none for the genesis four), no unstake; one journal entry.
    const txs = await committed(chain);
    expect([...txs.values()]).toEqual([['MessageStake']]);
    const actions = JSON.parse((await runCli(['--devnet', dir, 'actions', '--json'])).stdout) as {
      actions: { validatorId: string; kind: string }[];
    };
    expect(actions.actions.map((a) => `${a.validatorId} ${a.kind}`)).toEqual(['005 stake']);
    expect(await readFile(log, 'utf8')).toBe('post-stake signed 005\n'); // not run again
    await stopWithSigint(again);

    // A folder whose cluster was not kept cannot be resumed: said at once, nothing started.
    await rm(join(dir, 'emulator', 'objects.json'));
    const lost = startDevnetCli(dir, ['--resume'], shared);
    const result = await lost.cli.exited;
    lost.recorded.stop();
    expect(result.code).toBe(1);
    expect(lines(result.stderr).at(-1)).toBe(
      `error: devnet did not start: --resume: ${dir} holds the chain but not the cluster of its last run (${join(dir, 'emulator', 'objects.json')} is missing: a devnet of an older version, or one killed before it wrote it); start without --resume for a fresh devnet`,
    );
    for (const pid of lost.recorded.pids) expect(isAlive(pid)).toBe(false);
    // Refused before anything was touched: the chain and the journal are still there.
    expect((await readdir(dir)).sort()).toEqual(
      expect.arrayContaining(['chain', 'journal.sqlite']),
    );
  }, 300_000);
});

describe('the shell of a devnet', () => {
  it('refuses a CM_* variable of the shell that the devnet would not pass on, naming it and the flag', async () => {
    const dir = join(await tempDir(), 'never');
    const result = await runCli(['devnet', '--dir', dir, '--rpc-port', '0'], {
      env: { CM_TX_MODE: 'cli' },
    });
    expect(result.code).toBe(2);
    expect(lines(result.stderr)).toEqual([
      "error: devnet did not start: the devnet writes its manager's environment itself, so CM_TX_MODE exported in this shell would reach nothing; unset it (unset CM_TX_MODE) and use the devnet's flags (CM_TX_MODE → --tx-mode), or start a manager of your own with --no-manager (docs/devnet.md)",
    ]);
    expect(await stat(dir).catch(() => undefined)).toBeUndefined();
  });
});

describe('a devnet without a manager', () => {
  it('prints a line that runs a manager of your own; the CLI finds it, and SIGTERM stops it with nothing left', async () => {
    const dir = await tempDir();
    const { cli } = startDevnetCli(dir, ['--no-manager']);
    await untilReady(cli);
    // The hints go to stderr right after `devnet ready` on stdout: two pipes, read apart.
    const line = await waitFor(
      () =>
        lines(cli.stderr).find((l) => l.includes('--env-file=')) ??
        pending(`stderr so far: ${cli.stderr}`),
      { what: 'the hint that runs a manager of your own', timeoutMs: 10_000 },
    );
    const argv = shellWords(line.replace(/^\s*(try:)?\s*/, '').replace(/\s+#.*$/, ''));
    const own = spawn(argv[0]!, argv.slice(1), { stdio: 'ignore', cwd: process.cwd() });
    const exited = new Promise<number | null>((resolve) =>
      own.once('exit', (code) => resolve(code)),
    );
    const recorded = recordDescendants(own.pid!);
    cleanups.push(async () => {
      recorded.stop();
      if (own.exitCode === null && own.signalCode === null) own.kill('SIGKILL');
    });
    await waitFor(
      async () => {
        const status = await runCli(['--devnet', dir, 'status']);
        return status.code === 0 || pending(status.stderr);
      },
      { what: 'the own manager to answer the CLI', timeoutMs: 60_000, intervalMs: 500 },
    );
    const info = JSON.parse(await readFile(join(dir, 'devnet.json'), 'utf8')) as DevnetInfo;
    expect(info.managerUrl).toBeNull();
    const port = Number(new URL(info.managerRpcUrl ?? '').port);
    own.kill('SIGTERM');
    expect(await exited).toBe(0);
    recorded.stop();
    expect(await isListening(port)).toBe(false);
    for (const pid of [own.pid!, ...recorded.pids]) expect(isAlive(pid)).toBe(false);
  });
});

/**
 * A stopped devnet's token goes nowhere: its devnet.json no longer holds it, and even the file a
 * killed devnet leaves (token kept, put back here) is not used — a server now on the manager's
 * port hears nothing from the CLI or `devnet env` prints it, which name the stopped folder.
 */
async function expectTokenNeverSent(dir: string, running: DevnetInfo): Promise<void> {
  const stopped = JSON.parse(await readFile(join(dir, 'devnet.json'), 'utf8')) as DevnetInfo;
  expect([stopped.token, typeof stopped.stoppedAt]).toEqual([null, 'string']);
  await writeFile(join(dir, 'devnet.json'), JSON.stringify(running));
  const heard: (string | undefined)[] = [];
  const server = createHttpServer((req, res) => {
    heard.push(req.headers.authorization);
    res.writeHead(401).end('{"error":"UNAUTHORIZED"}');
  });
  const port = Number(new URL(running.managerUrl ?? '').port);
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  try {
    const status = await runCli(['--devnet', dir, 'status']);
    expect(status.code).toBe(1);
    expect(lines(status.stderr)).toEqual([
      `error: the devnet in ${dir} is not running (it was stopped); \`npx cluster-manager devnet --dir ${dir}\` starts one (\`--resume\` tries to bring its chain back); pass --server to ask another manager`,
    ]);
    const env = await runCli(['devnet', 'env', '--dir', dir]);
    expect(env.code).toBe(1);
    expect(env.stdout).toBe('');
    expect(heard).toEqual([]);
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
}

/** Every file of a folder with its size and modification time. */
async function snapshot(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    // What the running devnet itself writes as it runs: the journal, the logs, and the emulator's
    // objects (kube-emulator/persistence.ts writes them behind every write, a Lease renewal too,
    // to `objects.json.<8 hex>` beside it, then renamed: listed here, such a file could be gone
    // by its stat — ENOENT, seen on a loaded machine).
    if (
      !entry.isFile() ||
      entry.name.startsWith('journal.sqlite') ||
      entry.name.endsWith('.log') ||
      (/^objects\.json(\.[0-9a-f]{8})?$/.test(entry.name) && entry.parentPath.endsWith('emulator'))
    )
      continue;
    const path = join(entry.parentPath, entry.name);
    const info = await stat(path);
    out[path] = `${info.size}:${info.mtimeMs}`;
  }
  return out;
}

/** Splits a POSIX shell line into words (single quotes and plain words: what the hints print). */
function shellWords(line: string): string[] {
  const words: string[] = [];
  for (const match of line.matchAll(/'((?:[^']|'\\'')*)'|(\S+)/g))
    words.push(match[1] === undefined ? (match[2] ?? '') : match[1].replace(/'\\''/g, "'"));
  return words;
}
