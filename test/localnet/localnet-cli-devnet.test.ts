// localnet-cli next to a devnet: with no --remote_cli_url and no POCKET_REMOTE_CLI_URL it talks
// to the chain named in .devnet/devnet.json of its working folder (or --devnet DIR), and
// ScaleActor to the devnet's manager with its token; `npx localnet-cli` in the project folder
// runs on the project's Node 24 even when the system's `node` is older.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeDevnetLock } from '../support/devnet-lock-fixture.ts';

const CLI = fileURLToPath(new URL('../../src/bin/localnet-cli.ts', import.meta.url));
const REPO = fileURLToPath(new URL('../..', import.meta.url));
let dir: string;
let chain: Server;
let chainUrl: string;
const scaleCalls: { auth: string | undefined; body: string }[] = [];

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function run(
  command: string,
  args: string[],
  options: { cwd: string; env?: Record<string, string> },
): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: { PATH: process.env.PATH ?? '', HOME: dir, ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

const cli = (args: string[], cwd: string, env?: Record<string, string>) =>
  run(process.execPath, [CLI, ...args], { cwd, ...(env === undefined ? {} : { env }) });

/** A folder with `.devnet/devnet.json`, of a devnet that runs (its lock: this process) or not. */
function devnetFolder(
  name: string,
  info: Record<string, unknown>,
  holder: 'running' | 'gone' | 'stopped' = 'running',
): string {
  const folder = join(dir, name);
  mkdirSync(join(folder, '.devnet'), { recursive: true });
  const written = holder === 'stopped' ? {} : writeDevnetLock(join(folder, '.devnet'), holder);
  writeFileSync(join(folder, '.devnet', 'devnet.json'), JSON.stringify({ ...written, ...info }));
  return folder;
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'localnet-cli-devnet-'));
  chain = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      if (req.url === '/v1/scale') {
        scaleCalls.push({ auth: req.headers.authorization, body });
        res.writeHead(202, { 'content-type': 'application/json' }).end('{"accepted":true}');
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"height":7}\n');
    });
  });
  await new Promise<void>((resolve) => chain.listen(0, '127.0.0.1', resolve));
  chainUrl = `http://127.0.0.1:${(chain.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((resolve) => chain.close(resolve));
  rmSync(dir, { recursive: true, force: true });
});

describe('localnet-cli finds the devnet', () => {
  it('queries the chain of ./.devnet/devnet.json when no URL is given, in both modes', async () => {
    const folder = devnetFolder('here', { chainRpcUrl: chainUrl, managerUrl: null, token: null });
    expect(await cli(['Query', 'Height'], folder)).toEqual({
      code: 0,
      stdout: '{"height":7}\n\n',
      stderr: '',
    });
    const v1 = await cli(['Query', 'Height'], folder, { LOCALNET_FIDELITY: 'v1' });
    // A debug-built p1 logs its keybase line first on every call (as localnet-cli-v1.test.ts pins).
    expect(v1.code).toBe(0);
    expect(v1.stdout).toMatch(
      /^\{"level":"debug","time":"[^"]+","message":"Debug keybase initializing\.\.\. [^"]*"\}\n\{"height":7\}\n\n$/,
    );
    // An explicit URL still wins: V1's order, flag > env > the devnet > the default.
    const env = await cli(['Query', 'Height'], folder, {
      POCKET_REMOTE_CLI_URL: 'http://127.0.0.1:1',
    });
    expect(env.stdout).toContain('❌ Unable to connect to the RPC @ \u001b[1mhttp://127.0.0.1:1');
  });

  it('takes --devnet DIR, and names the file when that folder has none', async () => {
    devnetFolder('elsewhere', { chainRpcUrl: chainUrl });
    const away = join(dir, 'away');
    mkdirSync(away);
    expect(
      await cli(['--devnet', join(dir, 'elsewhere', '.devnet'), 'Query', 'Height'], away),
    ).toMatchObject({ code: 0, stdout: '{"height":7}\n\n' });
    const missing = await cli(['--devnet', 'nowhere', 'Query', 'Height'], away);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toBe(
      `Error: --devnet nowhere: cannot read ${join(away, 'nowhere', 'devnet.json')} (ENOENT)\n`,
    );
    // Without a devnet, V1's default.
    const none = await cli(['Query', 'Height'], away);
    expect(none.stdout).toContain('@ \u001b[1mhttp://localhost:50832');
  });

  it('scales through the devnet’s manager with its token', async () => {
    const folder = devnetFolder('managed', {
      chainRpcUrl: chainUrl,
      managerUrl: chainUrl,
      token: 'devnet-token-0123456789',
    });
    const result = await cli(['Debug', 'ScaleActor', 'validators', '5'], folder);
    expect(result).toMatchObject({ code: 0, stdout: '{"accepted":true}\n' });
    expect(scaleCalls.at(-1)).toEqual({
      auth: 'Bearer devnet-token-0123456789',
      body: '{"replicas":5}',
    });
  });

  it('never sends the token of a devnet that does not run, nor to CLUSTER_MANAGER_URL', async () => {
    const calls = scaleCalls.length;
    // Killed (its lock left, its process gone); a stopped one is the same case (cli-views.unit).
    for (const holder of ['gone'] as const) {
      const folder = devnetFolder(
        `not-${holder}`,
        {
          chainRpcUrl: chainUrl,
          managerUrl: chainUrl,
          token: 'old-token-0123456789',
        },
        holder,
      );
      const result = await cli(['Debug', 'ScaleActor', 'validators', '5'], folder);
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(
        new RegExp(`^Error: the devnet in ${join(folder, '.devnet')} is not running`),
      );
    }
    expect(scaleCalls.length).toBe(calls);
    // A running devnet's token goes to its own manager only: not to CLUSTER_MANAGER_URL.
    const folder = devnetFolder('env-url', {
      chainRpcUrl: chainUrl,
      managerUrl: 'http://127.0.0.1:1',
      token: 'own-token-0123456789',
    });
    const result = await cli(['Debug', 'ScaleActor', 'validators', '5'], folder, {
      CLUSTER_MANAGER_URL: chainUrl,
    });
    expect(result.code).toBe(0);
    expect(scaleCalls.at(-1)?.auth).toBeUndefined();
  });
});

describe('npx localnet-cli', () => {
  const npx = ['/usr/bin/npx', '/usr/local/bin/npx'].find((path) => existsSync(path));
  const systemNode = spawnSync('/usr/bin/env', ['node', '--version'], {
    env: { PATH: '/usr/local/bin:/usr/bin:/bin' },
    encoding: 'utf8',
  }).stdout.trim();

  it.skipIf(npx === undefined)(
    `runs from the project folder on the project’s Node 24 (system node: ${systemNode || 'none'})`,
    async () => {
      devnetFolder('npx', { chainRpcUrl: chainUrl });
      const result = await run(
        npx!,
        [
          '--no-install',
          'localnet-cli',
          '--devnet',
          join(dir, 'npx', '.devnet'),
          'Query',
          'Height',
        ],
        {
          cwd: REPO,
          env: { PATH: '/usr/local/bin:/usr/bin:/bin', npm_config_update_notifier: 'false' },
        },
      );
      // On an older Node the .ts entry point would not even load (ERR_UNKNOWN_FILE_EXTENSION).
      expect(result).toMatchObject({ code: 0, stdout: '{"height":7}\n\n' });
    },
  );
});
