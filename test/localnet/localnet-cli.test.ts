// localnet-cli against real nodes: keybase import from a file, stake and unstake with p1's output
// and exit codes, queries, debug actions and ScaleActor; no key in argv or output.
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateKeys } from '../../src/pocket/index.ts';
import { buildGenesis } from '../../src/localnet/genesis.ts';
import { startNode, type RunningNode } from '../../src/localnet/server.ts';
import { client, inEveryMempool, triggerView } from './support/chain.ts';
import { compileCacheEnv } from '../support/compile-cache-env.ts';
import { ownedPort, refusedPort, type RefusedPort } from '../support/owned-ports.ts';

const CLI = fileURLToPath(new URL('../../src/bin/localnet-cli.ts', import.meta.url));
const keys = generateKeys({ count: 3, seed: 'localnet-cli' });
const validator = keys.get('001')!;
const joiner = keys.get('002')!;
const secrets = [...keys.values()].map((k) => k.exportPrivateKeyHex());

let dir: string;
/** A loopback URL where nothing listens. */
let closed: string;
let refused: RefusedPort;
let first: RunningNode;
let second: RunningNode;
const servers: Server[] = [];

interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
  args: string[];
}

const runs: CliRun[] = [];

function cli(
  args: string[],
  options?: { env?: Record<string, string>; input?: string },
): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      env: { PATH: process.env.PATH ?? '', ...compileCacheEnv(), HOME: dir, ...options?.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.stdin.end(options?.input ?? '');
    child.on('error', reject);
    child.on('close', (code) => {
      const run = { code, stdout, stderr, args };
      runs.push(run);
      resolve(run);
    });
  });
}

async function fakeServer(
  answer: (req: IncomingMessage, body: string) => { status: number; body: string },
): Promise<string> {
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      const reply = answer(req, body);
      res.writeHead(reply.status, { 'content-type': 'text/plain' }).end(reply.body);
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'localnet-cli-test-'));
  refused = await refusedPort();
  closed = `http://127.0.0.1:${refused.port}`;
  // Listening already: the genesis names the first node's p2p port, which must stay its own.
  const [p2pFirst, p2pSecond] = [await ownedPort(), await ownedPort()];
  const genesis = buildGenesis({
    keys,
    validators: 1,
    serviceUrl: `127.0.0.1:${p2pFirst.port}`,
    unstakingBlocks: 1,
  });
  const common = {
    debugRoutes: true,
    genesis,
    host: '127.0.0.1',
    rpcPort: 0,
    roundTimeoutMs: 300,
    logger: pino({ level: 'silent' }),
  };
  first = await startNode({ ...common, key: validator, p2pPort: p2pFirst.server });
  second = await startNode({
    ...common,
    key: joiner,
    p2pPort: p2pSecond.server,
    peers: [`127.0.0.1:${p2pFirst.port}`],
  });
});

afterAll(async () => {
  await Promise.all([first.stop(), second.stop(), refused.release()]);
  for (const server of servers) server.close();
  rmSync(dir, { recursive: true, force: true });
  // No key ever reached a command line or a command's output.
  for (const run of runs) {
    for (const secret of secrets) {
      expect(run.args.join(' ')).not.toContain(secret);
      expect(run.stdout + run.stderr).not.toContain(secret);
      expect(run.stdout + run.stderr).not.toContain(secret.slice(0, 64));
    }
  }
});

describe('localnet-cli', () => {
  it('imports a key from a file into a private keybase under the data dir, as p1 reports it', async () => {
    const file = join(dir, 'joiner.key');
    writeFileSync(file, `${joiner.exportPrivateKeyHex()}\n`, { mode: 0o600 });
    const run = await cli([
      '--data_dir',
      join(dir, 'pocket'),
      'Keys',
      'Import',
      '--input_file',
      file,
    ]);
    expect(run).toMatchObject({
      code: 0,
      stdout: `Key imported 📥: ${joiner.address}\n`,
      stderr: '',
    });
    const keybase = join(dir, 'pocket', 'keys');
    expect(statSync(keybase).mode & 0o777).toBe(0o700);
    expect(readdirSync(keybase)).toEqual([`${joiner.address}.json`]);
    expect(statSync(join(keybase, `${joiner.address}.json`)).mode & 0o777).toBe(0o600);
    // Also from stdin, into $HOME/.pocket by default.
    const piped = await cli(['Keys', 'Import', '--input_file', '-'], {
      input: validator.exportPrivateKeyHex(),
    });
    expect(piped.stdout).toBe(`Key imported 📥: ${validator.address}\n`);
    expect(readdirSync(join(dir, '.pocket', 'keys'))).toEqual([`${validator.address}.json`]);
  });

  it('refuses a key on the command line and reports bad input like cobra', async () => {
    const positional = await cli(['Keys', 'Import', 'abcd']);
    expect(positional.code).toBe(1);
    expect(positional.stderr).toMatch(/^Error: a private key argument would be visible/);
    const badArgs = await cli(['Validator', 'Stake', joiner.address, '1']);
    expect(badArgs).toMatchObject({ code: 1, stderr: 'Error: accepts 4 arg(s), received 2\n' });
    const missing = await cli([
      '--non_interactive=true',
      `--remote_cli_url=${first.rpcUrl}`,
      '--data_dir',
      join(dir, 'pocket'),
      'Validator',
      'Unstake',
      keys.get('003')!.address,
    ]);
    expect(missing).toMatchObject({
      code: 1,
      stdout: '',
      stderr: `Error: no key found with address: ${keys.get('003')!.address}\n`,
    });
  });

  it('stakes through the keybase; the chain shows the validator active and voting', async () => {
    const run = await cli(
      [
        '--non_interactive=true',
        '--data_dir',
        join(dir, 'pocket'),
        'Validator',
        'Stake',
        joiner.address,
        '15100000001',
        '0001',
        second.p2pAddress,
      ],
      { env: { POCKET_REMOTE_CLI_URL: first.rpcUrl } },
    );
    expect(run).toEqual(
      expect.objectContaining({ code: 0, stdout: 'HTTP status code: 200\n\n', stderr: '' }),
    );
    const staked = await triggerView(first.rpcUrl);
    expect(await client(first.rpcUrl).validator(joiner.address)).toMatchObject({
      staked_amount: '15100000001',
      unstaking_height: -1,
      service_url: second.p2pAddress,
    });
    // Two validators now: the next block needs both, so it proves the joiner votes.
    const next = await triggerView(first.rpcUrl);
    expect(next).toEqual({ status: 200, height: staked.height + 1 });
    const block = await client(first.rpcUrl).block(next.height);
    expect(
      block.block_header.quorum_cert.threshold_sig.signatures?.map((s) => s.address),
    ).toContain(joiner.address);
  });

  it('unstakes through the keybase; the validator leaves the set', async () => {
    const run = await cli([
      '--non_interactive',
      `--remote_cli_url=${second.rpcUrl}`,
      '--data_dir',
      join(dir, 'pocket'),
      'Validator',
      'Unstake',
      joiner.address,
    ]);
    expect(run).toMatchObject({ code: 0, stdout: 'HTTP status code: 200\n\n' });
    const [pending] = await client(second.rpcUrl).unconfirmedTransactions();
    await inEveryMempool([first.rpcUrl, second.rpcUrl], pending!.tx.hash);
    const { height } = await triggerView(second.rpcUrl);
    expect(await client(first.rpcUrl).validator(joiner.address)).toMatchObject({
      unstaking_height: height + 1,
    });
    const book = await client(first.rpcUrl).addressBook({ actorType: 'validator' });
    expect(book.actors?.map((a) => a.address)).toEqual([validator.address]);
    expect((await triggerView(first.rpcUrl)).status).toBe(200);
  });

  it('prints HTTP errors from the node with exit 0, as p1 does', async () => {
    const rejecting = await fakeServer(() => ({
      status: 500,
      body: 'CODE: 35, ERROR: the transaction is already found in the mempool',
    }));
    const run = await cli([
      `--remote_cli_url=${rejecting}`,
      '--data_dir',
      join(dir, 'pocket'),
      'Validator',
      'Unstake',
      joiner.address,
    ]);
    expect(run).toMatchObject({
      code: 0,
      stdout:
        'HTTP status code: 500\nCODE: 35, ERROR: the transaction is already found in the mempool\n',
    });
    const unreachable = await cli([
      `--remote_cli_url=${closed}`,
      '--data_dir',
      join(dir, 'pocket'),
      'Validator',
      'Unstake',
      joiner.address,
    ]);
    expect(unreachable).toMatchObject({
      code: 1,
      stdout: '',
      stderr: `Error: Post "${closed}/v1/client/broadcast_tx_sync": dial tcp ${closed.slice(7)}: connect: connection refused\n`,
    });
  });

  it("asks p1's y/n question below 15,100 POKT and aborts at end of input", async () => {
    const args = [
      '--non_interactive',
      `--remote_cli_url=${first.rpcUrl}`,
      '--data_dir',
      join(dir, 'pocket'),
    ];
    const stake = ['Validator', 'Stake', joiner.address, '15000000000', '0001', second.p2pAddress];
    const aborted = await cli([...args, ...stake]);
    expect(aborted).toMatchObject({
      code: 1,
      stdout:
        'The amount you are staking for is below the recommendation of 15100 POKT, would you still like to continue? y|n\nyes | no\nError reading string:  EOF\n',
      stderr: 'Error: aborted\n',
    });
    const confirmed = await cli([...args, ...stake], { input: 'maybe\ny\n' });
    expect(confirmed.code).toBe(0);
    expect(confirmed.stdout.endsWith('yes | no\nyes | no\nHTTP status code: 200\n\n')).toBe(true);
  });

  it('queries height and validators, printing the raw body', async () => {
    const height = await client(first.rpcUrl).height();
    const run = await cli([`--remote_cli_url=${first.rpcUrl}`, 'Query', 'Height']);
    expect(run).toMatchObject({ code: 0, stdout: `{"height":${height}}\n\n` });
    const validators = await cli([`--remote_cli_url=${first.rpcUrl}`, 'query', 'validators']);
    expect(JSON.parse(validators.stdout)).toMatchObject({ total_validators: 2 });
    const down = await cli([`--remote_cli_url=${closed}`, 'Query', 'Height']);
    expect(down.code).toBe(0);
    expect(down.stdout).toContain('❌ Unable to connect to the RPC @ ');
    expect(down.stdout).toContain(`\n\nError: Get "${closed}/v1/query/height": dial tcp`);
  });

  it('triggers a view silently, like p1 Debug TriggerView', async () => {
    const before = await client(first.rpcUrl).height();
    const run = await cli([`--remote_cli_url=${first.rpcUrl}`, 'Debug', 'TriggerView', '--wait']);
    expect(run).toMatchObject({ code: 0, stdout: `{"height":${before + 1}}\n` });
    const silent = await cli([`--remote_cli_url=${first.rpcUrl}`, 'Debug', 'TriggerView']);
    expect(silent).toMatchObject({ code: 0, stdout: '', stderr: '' });
  });

  it("scales validators through the cluster-manager's control RPC", async () => {
    const seen: { path?: string; auth?: string; body?: string } = {};
    const manager = await fakeServer((req, body) => {
      Object.assign(seen, { path: req.url, auth: req.headers.authorization, body });
      return { status: 202, body: '{"replicas":5,"accepted":true}' };
    });
    const env = { CLUSTER_MANAGER_URL: manager, CLUSTER_MANAGER_TOKEN: 'sekret' };
    const run = await cli(['Debug', 'ScaleActor', 'validators', '5'], { env });
    expect(run).toMatchObject({ code: 0, stdout: '{"replicas":5,"accepted":true}\n' });
    expect(seen).toEqual({ path: '/v1/scale', auth: 'Bearer sekret', body: '{"replicas":5}' });
    const servicers = await cli(['Debug', 'ScaleActor', 'servicers', '2'], { env });
    expect(servicers.code).toBe(1);
    expect(servicers.stderr).toMatch(/^Error: ScaleActor servicers is not supported/);
    const bogus = await cli(['d', 'scale', 'wizards', '2'], { env });
    expect(bogus).toMatchObject({ code: 1, stderr: 'Error: Invalid actor type provided\n' });
  });
});
