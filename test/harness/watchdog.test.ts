// Nothing a harness started outlives its test process, however that process ends: a vitest file
// with no afterAll whose tests fail and time out (vitest SIGTERMs the worker, then SIGKILLs it; no exit hook
// runs), and a test process killed with SIGKILL. The harness's watchdog stops the devnet's manager
// and node processes (detached: they would run on) and says so in the devnet's folder.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { managersOf, processesInside } from '../../src/devnet/process-record.ts';
import { isAlive, pending, waitFor } from '../../src/harness/index.ts';
import { WATCHDOG_LOG } from '../../src/harness/watchdog.ts';

const FIXTURES = fileURLToPath(new URL('./fixtures/', import.meta.url));
const VITEST = fileURLToPath(new URL('../../node_modules/vitest/vitest.mjs', import.meta.url));

const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) {
    // Whatever a failed check left is stopped here (by its pids, checked), then the folder goes.
    for (const pid of [...managersOf(dir), ...(await processesInside(dir))])
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone meanwhile
      }
    await rm(dir, { recursive: true, force: true });
  }
});

async function devnetDir(name: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), `cm-watchdog-${name}-`));
  dirs.push(dir);
  return dir;
}

/** Waits until none of `pids` runs, nor any manager or process of the folder. */
async function expectAllGone(dir: string, pids: readonly number[]): Promise<void> {
  await waitFor(
    async () => {
      const left = [
        ...new Set([...pids.filter(isAlive), ...managersOf(dir), ...(await processesInside(dir))]),
      ];
      return left.length === 0 || pending(`still running: ${left.join(', ')}`);
    },
    { what: 'every process of the devnet to be stopped by the watchdog', timeoutMs: 20_000 },
  );
}

/** The watchdog's line in the folder (written once it stopped everything). */
async function watchdogLog(dir: string): Promise<string> {
  return waitFor(
    () => existsSync(join(dir, WATCHDOG_LOG)) && readFile(join(dir, WATCHDOG_LOG), 'utf8'),
    { what: `${WATCHDOG_LOG} in the devnet folder`, timeoutMs: 5_000 },
  );
}

describe('the harness watchdog', () => {
  it('stops the devnet of a vitest file whose tests failed and timed out and that never stopped it', async () => {
    const dir = await devnetDir('vitest');
    const run = await new Promise<{ code: number | null; output: string }>((resolve, reject) => {
      const child = spawn(
        process.execPath,
        [VITEST, 'run', '--root', FIXTURES, '--config', 'vitest.fixture.config.ts'],
        {
          cwd: FIXTURES,
          env: { ...process.env, FIXTURE_DEVNET_DIR: dir, CI: 'true' },
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      let output = '';
      child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
      child.once('error', reject);
      child.once('close', (code) => resolve({ code, output }));
    });
    expect(run.output).toMatch(/Test timed out in 500ms/);
    expect(run.output).toMatch(/fails an assertion[\s\S]*no such validator/);
    expect(run.code).toBe(1);
    const pids = JSON.parse(await readFile(join(dir, 'pids.json'), 'utf8')) as number[];
    // The manager and the two nodes (validator and full node) at least.
    expect(pids.length).toBeGreaterThanOrEqual(3);

    await expectAllGone(dir, pids);
    expect(await watchdogLog(dir)).toMatch(
      /ended without stopping this devnet; stopped [1-9]\d* process/,
    );
  });

  it('stops the devnet of a test process killed with SIGKILL', async () => {
    const dir = await devnetDir('sigkill');
    const child = spawn(process.execPath, [join(FIXTURES, 'start-devnet.ts'), dir], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const pids = await new Promise<number[]>((resolve, reject) => {
      let out = '';
      child.stdout.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        if (out.includes('\n')) resolve((JSON.parse(out) as { pids: number[] }).pids);
      });
      child.once('exit', (code) => reject(new Error(`the test process exited (${code})`)));
    });
    expect(pids.length).toBeGreaterThanOrEqual(3);
    expect(pids.every(isAlive)).toBe(true);

    child.kill('SIGKILL');

    await expectAllGone(dir, pids);
    expect(await watchdogLog(dir)).toMatch(/stopped [1-9]\d* process/);
  });
});
