// The CLI chain adapter's failures name their cause (a CLI that cannot be run at all).
import { spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  CLI_PROCESSES,
  CliChainAdapter,
  ownTempFolderPrefix,
} from '../../src/manager/chain/pocket/cli-adapter.ts';
import { isManagerError } from '../../src/manager/errors.ts';
import { ActionKind } from '../../src/manager/model.ts';
import type { SendOutcome } from '../../src/manager/chain/adapter.ts';
import { generateKeys, type ValidatorKey } from '../../src/pocket/index.ts';
import { pocketStake } from '../../src/manager/chain/pocket/pocket-stake.ts';

/** The adapter on the fake CLI at `cliPath`, its chain RPC unreachable. */
function adapterOn(cliPath: string, timeoutMs: number): CliChainAdapter {
  return new CliChainAdapter({ cliPath, rpcUrl: 'http://127.0.0.1:9', timeoutMs });
}

/** Sends an unstake of `key` (what the fake CLI answers is each test's business). */
function sendUnstake(
  adapter: CliChainAdapter,
  key: ValidatorKey,
  signal = new AbortController().signal,
): Promise<SendOutcome> {
  const request = {
    kind: ActionKind.unstake,
    key,
    stake: pocketStake('1', ['0001']),
    serviceUrl: '',
  };
  return adapter.send(request, adapter.prepare(request), signal);
}

describe('CliChainAdapter', () => {
  let dir: string | undefined;
  afterEach(async () => {
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  it.each([
    ['not executable', 'EACCES', 0o644],
    ['missing', 'ENOENT', undefined],
  ] as const)('reports a CLI that is %s with the reason (%s)', async (_what, code, mode) => {
    dir = await mkdtemp(join(tmpdir(), 'cli-adapter-'));
    const cliPath = join(dir, 'p1');
    if (mode !== undefined) await writeFile(cliPath, '#!/bin/sh\nexit 0\n', { mode });
    const [key] = generateKeys({ count: 1, seed: 'cli-adapter' }).values();
    if (key === undefined) throw new Error('no key');
    const failure = await sendUnstake(adapterOn(cliPath, 5_000), key).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(isManagerError(failure) && failure.code).toBe('CLI_FAILED');
    expect((failure as Error).message).toContain(code);
  });
});

describe('CLI processes at once', () => {
  let dir: string | undefined;
  afterEach(async () => {
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  it(`are at most CLI_PROCESSES (${CLI_PROCESSES}) whatever the manager's concurrency, no key on disk while a call waits`, async () => {
    dir = await mkdtemp(join(tmpdir(), 'cli-adapter-limit-'));
    const running = join(dir, 'running');
    const log = join(dir, 'log');
    const keybases = join(dir, 'keybases');
    await mkdir(running);
    // Each process marks itself running, notes how many are, and stays a moment.
    const cliPath = join(dir, 'p1');
    await writeFile(
      cliPath,
      `#!/bin/sh\n: > ${running}/$$\nls ${running} | wc -l >> ${log}\nls ${tmpdir()} | grep -c '^${ownTempFolderPrefix('keybase')}' >> ${keybases}\nsleep 0.2\nrm -f ${running}/$$\necho 'HTTP status code: 200'\n`,
      { mode: 0o755 },
    );
    const adapter = adapterOn(cliPath, 10_000);
    const keys = [...generateKeys({ count: 3 * CLI_PROCESSES, seed: 'cli-limit' }).values()];
    await Promise.allSettled(keys.map((key) => sendUnstake(adapter, key)));
    const counts = (await readFile(log, 'utf8')).trim().split('\n').map(Number);
    expect(counts.length).toBeGreaterThanOrEqual(keys.length);
    expect(Math.max(...counts)).toBeLessThanOrEqual(CLI_PROCESSES);
    expect(Math.max(...counts)).toBeGreaterThan(1);
    // Keybases (each holding a key until its import ran) exist only for calls holding a slot.
    const folders = (await readFile(keybases, 'utf8')).trim().split('\n').map(Number);
    expect(Math.max(...folders)).toBeLessThanOrEqual(CLI_PROCESSES);
  });

  it('a call waiting for a slot and cancelled fails as CANCELLED and starts no process', async () => {
    dir = await mkdtemp(join(tmpdir(), 'cli-adapter-cancel-'));
    const log = join(dir, 'log');
    const cliPath = join(dir, 'p1');
    await writeFile(
      cliPath,
      `#!/bin/sh\necho run >> ${log}\nsleep 0.5\necho 'HTTP status code: 200'\n`,
      { mode: 0o755 },
    );
    const adapter = adapterOn(cliPath, 10_000);
    const keys = [...generateKeys({ count: CLI_PROCESSES + 1, seed: 'cli-cancel' }).values()];
    const busy = keys.slice(0, CLI_PROCESSES).map((key) => sendUnstake(adapter, key));
    const controller = new AbortController();
    const last = keys.at(-1);
    if (last === undefined) throw new Error('no key');
    const waiting = sendUnstake(adapter, last, controller.signal).then(
      () => undefined,
      (error: unknown) => error,
    );
    await new Promise((resolve) => setTimeout(resolve, 100));
    controller.abort();
    const failure = await waiting;
    expect(isManagerError(failure) && failure.code).toBe('CANCELLED');
    await Promise.allSettled(busy);
    // Each busy call ran its two processes (import, unstake); the cancelled one none, and it
    // wrote no key: no keybase folder of this process is left either.
    const runs = (await readFile(log, 'utf8')).trim().split('\n').length;
    expect(runs).toBe(2 * CLI_PROCESSES);
    const left = (await readdir(tmpdir())).filter((f) =>
      f.startsWith(ownTempFolderPrefix('keybase')),
    );
    expect(left).toEqual([]);
  });
});

describe('the environment of a CLI call', () => {
  let dir: string | undefined;
  afterEach(async () => {
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  it("is HOME, PATH, the manager's NODE_COMPILE_CACHE and POCKET_P2P_HOSTNAME; nothing else of the manager's env", async () => {
    dir = await mkdtemp(join(tmpdir(), 'cli-adapter-env-'));
    const cliPath = join(dir, 'p1');
    const envFile = join(dir, 'env.txt');
    await writeFile(cliPath, `#!/bin/sh\nenv > '${envFile}'\n`, { mode: 0o755 });
    // vi.stubEnv, not an assignment to process.env: the worker runs other files after this one.
    vi.stubEnv('NODE_COMPILE_CACHE', join(dir, 'cache'));
    vi.stubEnv('CM_RPC_TOKEN', 'not-for-the-cli');
    try {
      await adapterOn(cliPath, 5_000).triggerView(new AbortController().signal);
    } finally {
      vi.unstubAllEnvs();
    }
    const names = (await readFile(envFile, 'utf8'))
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => line.slice(0, line.indexOf('=')))
      .filter((name) => !['PWD', 'SHLVL', '_', 'OLDPWD'].includes(name));
    expect(names.sort()).toEqual(['HOME', 'NODE_COMPILE_CACHE', 'PATH', 'POCKET_P2P_HOSTNAME']);
    // V1's cli-client's value (build/localnet/manifests/cli-client.yaml:84-86).
    expect(await readFile(envFile, 'utf8')).toContain('POCKET_P2P_HOSTNAME=127.0.0.1\n');
  });
});

describe('CliChainAdapter.removeLeftovers', () => {
  let root: string | undefined;
  afterEach(async () => {
    if (root !== undefined) await rm(root, { recursive: true, force: true });
  });

  it("removes the keybases of dead managers and of this pid's earlier life, keeps live owners' and others' folders", async () => {
    const folder = await mkdtemp(join(tmpdir(), 'cli-adapter-sweep-'));
    root = folder;
    // A pid that no process has: a short-lived child that has exited.
    const { pid: deadPid } = spawnSync(process.execPath, ['-e', '0']);
    const dead = join(folder, `cm-keybase-${deadPid}-0badf00d-abc123`);
    const deadCli = join(folder, `cm-cli-${deadPid}-0badf00d-abc123`);
    // A restarted container: the new manager has the pid of the killed one, not its tag.
    const earlierLife = join(folder, `cm-keybase-${process.pid}-00000000-abc123`);
    const mine = join(folder, `${ownTempFolderPrefix('keybase')}def456`);
    const parent = join(folder, `cm-keybase-${process.ppid}-0badf00d-ghi789`);
    const unrelated = join(folder, 'cm-keybase-legacy');
    for (const folder of [dead, deadCli, earlierLife, mine, parent, unrelated]) {
      await mkdir(join(folder, '.pocket', 'keys'), { recursive: true });
      await writeFile(join(folder, '.pocket', 'keys', 'a.json'), '{}');
    }
    const adapter = new CliChainAdapter({
      cliPath: '/bin/true',
      rpcUrl: 'http://127.0.0.1:9',
      timeoutMs: 1_000,
      tempRoot: folder,
    });
    expect(await adapter.removeLeftovers()).toBe(3);
    expect((await readdir(folder)).sort()).toEqual(
      [mine, parent, unrelated].map((path) => path.slice(folder.length + 1)).sort(),
    );
  });
});
