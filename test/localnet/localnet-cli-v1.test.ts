// localnet-cli in its v1 mode prints what V1's debug-built p1 prints (app/client/cli at 58c9b650,
// cobra v1.6.0): the debug keybase's line first on every call, help from cobra's templates,
// `Error: …` then the usage on stderr and main's fatal log line on stdout with exit 1, `HTTP
// status code: N` with exit 0, and `Debug TriggerView` that needs CONFIG_PATH and GENESIS_PATH,
// fails to create its P2P module on the chart's config (`p2p.hostname: ""`) unless
// POCKET_P2P_HOSTNAME is set, and reaches each validator with a debug message — against four
// validators in the v1 profile.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pending, waitFor } from '../../src/harness/wait.ts';
import { v1ChartConfigJson } from '../../src/localnet/cli/chart-config.ts';
import type { RunningNode } from '../../src/localnet/server.ts';
import { generateKeys, PocketRpcClient } from '../../src/pocket/index.ts';
import { compileCacheEnv } from '../support/compile-cache-env.ts';
import { startInProcessNet, type InProcessNet } from './support/in-process-net.ts';

const CLI = fileURLToPath(new URL('../../src/bin/localnet-cli.ts', import.meta.url));
const keys = generateKeys({ count: 5, seed: 'localnet-cli-v1' });
const validator = keys.get('001')!;
const other = keys.get('005')!;
let dir: string;
let net: InProcessNet;
let node: RunningNode;
let rpc: PocketRpcClient;
/** The chart's config and the genesis; `POCKET_P2P_HOSTNAME` as V1's cli-client sets it. */
let files: { CONFIG_PATH: string; GENESIS_PATH: string; POCKET_P2P_HOSTNAME: string };
let fake: Server;
let fakeUrl: string;

interface Run {
  code: number | null;
  /** stdout after the debug keybase's line, which every call prints first (checked here). */
  stdout: string;
  stderr: string;
}

/** app/client/keybase/debug/keystore.go:61, logged at debug by the global logger in `init()`. */
const KEYBASE_LINE =
  /^\{"level":"debug","time":"[^"]+","message":"Debug keybase initializing\.\.\. Restoring from the embedded backup file\.\.\."\}\n/;

function p1(
  args: string[],
  env: Record<string, string> = {},
  bin = CLI,
  fidelity: 'v1' | 'unset' = 'v1',
): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, ...args], {
      cwd: dir,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: dir,
        ...compileCacheEnv(),
        ...(fidelity === 'unset' ? {} : { LOCALNET_FIDELITY: fidelity }),
        ...env,
      },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.stdin.end('');
    child.on('error', reject);
    child.on('close', (code) => {
      const v1 = fidelity === 'v1' || bin !== CLI;
      if (v1) expect(stdout, 'the debug keybase line first').toMatch(KEYBASE_LINE);
      resolve({ code, stdout: v1 ? stdout.replace(KEYBASE_LINE, '') : stdout, stderr });
    });
  });
}

/** `p1 Debug TriggerView` (with the config, genesis and hostname) until the validators commit. */
async function triggerUntilBlock(args: string[] = []): Promise<number> {
  const before = node.node.chain.height;
  return waitFor(
    async () => {
      const heights = net.nodes.map((n) => n.node.chain.height);
      if (heights.every((h) => h > before)) return Math.min(...heights);
      if (heights.every((h) => h === before)) {
        const run = await p1(
          [...args, '--remote_cli_url', node.rpcUrl, 'Debug', 'TriggerView'],
          files,
        );
        expect(run.code, run.stdout).toBe(0);
      }
      return pending(`heights ${heights.join(',')}`);
    },
    { what: `block ${before + 1}`, timeoutMs: 30_000, intervalMs: 300 },
  );
}

/** main.go:21-23: the one JSON line p1's global zerolog logger writes before exit 1. */
function fatalLine(stdout: string): { level: string; error?: string; message: string } {
  const line = stdout.trim().split('\n').at(-1) ?? '';
  const parsed = JSON.parse(line) as {
    level: string;
    error?: string;
    time: string;
    message: string;
  };
  expect(Object.keys(parsed)).toEqual(
    parsed.error === undefined
      ? ['level', 'time', 'message']
      : ['level', 'error', 'time', 'message'],
  );
  expect(parsed.time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(Z|[+-]\d\d:\d\d)$/);
  return parsed;
}

const GO_LOG = /^\d{4}\/\d\d\/\d\d \d\d:\d\d:\d\d /;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'localnet-cli-v1-'));
  net = await startInProcessNet({ keys, fidelity: 'v1' });
  node = net.nodes[0]!;
  rpc = new PocketRpcClient({ baseUrl: node.rpcUrl });
  files = {
    CONFIG_PATH: join(dir, 'config.json'),
    GENESIS_PATH: join(dir, 'genesis.json'),
    POCKET_P2P_HOSTNAME: '127.0.0.1',
  };
  writeFileSync(files.CONFIG_PATH, v1ChartConfigJson());
  writeFileSync(files.GENESIS_PATH, JSON.stringify(node.node.genesis));
  fake = createServer((req, res) => {
    req.resume();
    req.on('end', () =>
      res
        .writeHead(500, { 'content-type': 'text/plain; charset=UTF-8' })
        .end('CODE: 35, ERROR: the transaction is already found in the mempool'),
    );
  });
  await new Promise<void>((resolve) => fake.listen(0, '127.0.0.1', resolve));
  fakeUrl = `http://127.0.0.1:${(fake.address() as AddressInfo).port}`;
  const keyFile = join(dir, 'key');
  writeFileSync(keyFile, validator.exportPrivateKeyHex(), { mode: 0o600 });
  const imported = await p1([
    '--non_interactive=true',
    'Keys',
    'Import',
    '--input_file',
    keyFile,
    '--import_format',
    'raw',
  ]);
  expect(imported).toMatchObject({ code: 0, stdout: `Key imported 📥: ${validator.address}\n` });
});

afterAll(async () => {
  await net.stop();
  await new Promise((resolve) => fake.close(resolve));
  rmSync(dir, { recursive: true, force: true });
});

describe('localnet-cli v1 mode: help and failures as p1', () => {
  it('prints cobra’s help for `help`, `Validator help` and `Query help`, exit 0 (V1’s e2e)', async () => {
    const root = await p1(['help']);
    expect(root.code).toBe(0);
    expect(root.stdout).toBe(
      [
        'The CLI is meant to be an user but also a machine friendly way for interacting with Pocket Network.',
        '',
        'Usage:',
        '  p1 [command]',
        '',
        'Available Commands:',
        '  Account     Account specific commands',
        '  Application Application actor specific commands',
        '  Consensus   Consensus specific commands',
        '  Debug       Debug utility for rapid development',
        '  DebugUI     Debug utility with an interactive UI for development purposes',
        '  Fisherman   Fisherman actor specific commands',
        '  Governance  Governance specific commands',
        '  Keys        Key specific commands',
        '  Node        Commands related to node management and operations',
        "  Query       Commands related to querying on-chain data via the node's RPC server",
        '  Servicer    Servicer specific commands',
        '  System      Commands related to health and troubleshooting of the node instance',
        '  Validator   Validator actor specific commands',
        '  completion  Generate the autocompletion script for the specified shell',
        '  help        Help about any command',
        '',
        'Flags:',
        '      --config string           Path to config',
        `      --data_dir string         Path to store pocket related data (keybase etc.) (default "${dir}/.pocket")`,
        '  -h, --help                    help for p1',
        '      --non_interactive         if true skips the interactive prompts wherever possible (useful for scripting & automation)',
        '      --remote_cli_url string   takes a remote endpoint in the form of <protocol>://<host>:<port> (uses RPC Port) (default "http://localhost:50832")',
        '      --verbose                 Show verbose output',
        '',
        'Use "p1 [command] --help" for more information about a command.',
        '',
      ].join('\n'),
    );
    for (const group of ['Validator', 'Query']) {
      const run = await p1([group, 'help']);
      expect(run).toMatchObject({ code: 0, stderr: '' });
      expect(run.stdout).toContain('Available Commands');
      expect(run.stdout).toContain(`Use "p1 ${group} [command] --help"`);
    }
    expect((await p1(['--help'])).stdout).toBe(root.stdout);
  });

  it('fails like cobra: `Error: …` then the usage on stderr, main’s fatal line on stdout, exit 1', async () => {
    const run = await p1(['Validator', 'Stake', validator.address, '1']);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(
      /^Error: accepts 4 arg\(s\), received 2\nUsage:\n {2}p1 Validator Stake <fromAddr> <amount> <relayChainIDs> <serviceURI> \[flags\]\n\nFlags:\n/,
    );
    expect(run.stderr).toContain('\nGlobal Flags:\n');
    expect(fatalLine(run.stdout)).toMatchObject({
      level: 'fatal',
      error: 'accepts 4 arg(s), received 2',
      message: 'failed to execute command',
    });
    const unknown = await p1(['Validatr']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toBe(
      'Error: unknown command "Validatr" for "p1"\n\nDid you mean this?\n\tValidator\n\nRun \'p1 --help\' for usage.\n',
    );
    const flag = await p1(['Query', 'Height', '--bogus']);
    expect(flag.stderr).toMatch(
      /^Error: unknown flag: --bogus\nUsage:\n {2}p1 Query Height \[flags\]/,
    );
  });

  it('asks for a passphrase without --non_interactive, and fails on a stdin that is no terminal', async () => {
    const run = await p1(['Validator', 'Unstake', validator.address]);
    expect(run.code).toBe(1);
    expect(run.stdout.startsWith('Enter Passphrase: \n')).toBe(true);
    expect(fatalLine(run.stdout)).toMatchObject({ message: 'failed to read password' });
  });

  it('fails Debug TriggerView without the config and genesis files, as p1 does', async () => {
    const none = await p1(['--remote_cli_url', node.rpcUrl, 'Debug', 'TriggerView']);
    expect(none.code).toBe(1);
    expect(none.stdout).toBe('');
    expect(none.stderr).toMatch(GO_LOG);
    expect(none.stderr.replace(GO_LOG, '')).toBe(
      '[ERROR] fatal error reading config file open build/config/config.validator1.json: no such file or directory\n',
    );
    const noGenesis = await p1(['--remote_cli_url', node.rpcUrl, 'Debug', 'TriggerView'], {
      CONFIG_PATH: files.CONFIG_PATH,
      POCKET_P2P_HOSTNAME: '127.0.0.1',
    });
    expect(noGenesis.code).toBe(1);
    expect(noGenesis.stderr.replace(GO_LOG, '')).toBe(
      '[ERROR] Failed to initialize runtime builder: error reading genesis file build/config/genesis.json: open build/config/genesis.json: no such file or directory\n',
    );
    expect(node.node.chain.height).toBe(0);
  });

  it('fails Debug TriggerView on the chart’s config without POCKET_P2P_HOSTNAME: "Failed to create p2p module", exit 1', async () => {
    // The chart's `p2p.hostname: ""` (values.yaml:98) becomes the P2P module's listen address even
    // in client debug mode; Go's resolver refuses the empty name (p2p/module.go:106-112,
    // p2p/utils/url_conversion.go:132-147) and zerolog's Fatal exits 1 from PersistentPreRunE
    // (helpers/setup.go:90-95): nothing on stderr, cobra never prints.
    const { POCKET_P2P_HOSTNAME: _hostname, ...withoutHostname } = files;
    const run = await p1(
      ['--remote_cli_url', node.rpcUrl, 'Debug', 'TriggerView'],
      withoutHostname,
    );
    expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 1, stderr: '' });
    const lines = run.stdout
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, string>);
    expect(lines.map(({ time: _time, ...rest }) => rest)).toEqual([
      { level: 'debug', message: 'Creating P2P module' },
      { level: 'debug', module: 'p2p', message: 'setupPeerstoreProvider' },
      { level: 'debug', module: 'p2p', message: 'loaded peerstore provider...' },
      {
        level: 'fatal',
        error:
          'parsing multiaddr from config: resolving peer IP for hostname: : resolving peer IP for hostname: , lookup : no such host',
        message: 'Failed to create p2p module',
      },
    ]);
    expect(Object.keys(lines[3]!)).toEqual(['level', 'error', 'time', 'message']);
    // The variable counts only where the config names the key (viper's AutomaticEnv).
    writeFileSync(join(dir, 'empty.json'), '{}');
    const bare = await p1(['--remote_cli_url', node.rpcUrl, 'Debug', 'TriggerView'], {
      ...files,
      CONFIG_PATH: join(dir, 'empty.json'),
    });
    expect(bare.code).toBe(1);
    expect(fatalLine(bare.stdout).message).toBe('Failed to create p2p module');
    expect(node.node.chain.height).toBe(0);
  });
});

describe('localnet-cli v1 mode against a v1 node', () => {
  it('triggers a view with the config, the genesis and POCKET_P2P_HOSTNAME: a debug message to each validator', async () => {
    const run = await p1(['--remote_cli_url', node.rpcUrl, 'Debug', 'TriggerView'], files);
    expect(run.code).toBe(0);
    expect(run.stderr).toBe('');
    // The P2P module's debug lines (module.go:70, 291, 308); V1's P2P start logs more, not copied.
    expect(
      run.stdout
        .trimEnd()
        .split('\n')
        .map((l) => (JSON.parse(l) as { message: string }).message),
    ).toEqual(['Creating P2P module', 'setupPeerstoreProvider', 'loaded peerstore provider...']);
    expect(await triggerUntilBlock()).toBeGreaterThanOrEqual(1);
  });

  it('stakes, sends and queries with p1’s output (V1’s e2e steps)', async () => {
    const args = ['--non_interactive=true', `--remote_cli_url=${node.rpcUrl}`];
    const stake = await p1([
      ...args,
      'Validator',
      'Stake',
      validator.address,
      '150000000001',
      '0001',
      'validator-001-pocket:42069',
    ]);
    expect(stake).toEqual({ code: 0, stdout: 'HTTP status code: 200\n\n', stderr: '' });
    const send = await p1([
      ...args,
      'Account',
      'Send',
      validator.address,
      other.address,
      '150000000',
    ]);
    expect(send).toEqual({ code: 0, stdout: 'HTTP status code: 200\n\n', stderr: '' });
    await waitFor(() => net.nodes.every((n) => n.node.mempool.size === 2), {
      what: 'both transactions in every validator’s mempool',
    });
    const before = node.node.chain.height;
    await triggerUntilBlock(['--non_interactive=true']);
    // A debug message that reached a validator after the block committed starts the next height
    // there (consensus/debugging.go:60-74), so the transactions are in the first block after.
    const included = before + 1;
    await waitFor(
      () =>
        net.nodes.every(
          (n) =>
            n.node.consensusState().step === 1 && n.node.chain.height === node.node.chain.height,
        ),
      { what: 'every validator waiting for its next trigger' },
    );
    expect(node.node.chain.block(included)?.block.txs).toHaveLength(2);
    const block = await p1([...args, 'Query', 'Block', '--height', String(included)]);
    expect(block.code).toBe(0);
    expect(block.stdout).toContain('state_hash');
    const txs = (
      JSON.parse(block.stdout) as { transactions: { result_code: number; message_type: string }[] }
    ).transactions;
    // V1 answers 60 to a stake of a validator that exists (tx_message_handler.go:92-96).
    expect(txs.map((t) => [t.message_type, t.result_code])).toEqual([
      ['MessageStake', 60],
      ['MessageSend', 0],
    ]);
    expect(await p1([...args, 'Query', 'Height'])).toEqual({
      code: 0,
      stdout: `{"height":${node.node.chain.height}}\n\n`,
      stderr: '',
    });
    expect((await rpc.account(other.address)).coins[0]?.amount).not.toBe('0');
  });

  it('prints an HTTP error with exit 0, and the node’s 135 as p1 prints any unhealthy answer', async () => {
    const args = ['--non_interactive=true', `--remote_cli_url=${fakeUrl}`];
    const run = await p1([...args, 'Validator', 'Unstake', validator.address]);
    expect(run).toEqual({
      code: 0,
      stdout:
        'HTTP status code: 500\nCODE: 35, ERROR: the transaction is already found in the mempool\n',
      stderr: '',
    });
    const query = await p1([...args, 'Query', 'UnconfirmedTxs']);
    expect(query.code).toBe(0);
    expect(query.stdout).toContain('❌ RPC reporting unhealthy status HTTP 500 @ ');
  });

  it('runs in v1 mode when invoked as p1', async () => {
    const link = join(dir, 'p1');
    symlinkSync(CLI, link);
    const run = await p1(['help'], {}, link, 'unset');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('Available Commands:\n  Account     Account specific commands');
    const intended = await p1(['help'], {}, CLI, 'unset');
    expect(intended.stdout).not.toContain('Available Commands:');
  });
});
