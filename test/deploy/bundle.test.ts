// The bundles the image runs (scripts/bundle.ts, ADR 0021): each entry point starts and behaves as
// its source, error names survive minification, and every `import.meta.url` of ours still names
// the module's own source file (the emulator's JSON, the node entry `net` spawns). The system
// project's globalSetup built them for this run (CLUSTER_MANAGER_BUNDLES); with the sources
// asked for (set and empty), this file builds its own.
import { execFile } from 'node:child_process';
import { constants, existsSync } from 'node:fs';
import { access, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import packageJson from '../../package.json' with { type: 'json' };
import { bundle } from '../../scripts/bundle.ts';

const run = promisify(execFile);
let dir: string;
let own: string | undefined;

beforeAll(async () => {
  const built = process.env.CLUSTER_MANAGER_BUNDLES;
  if (built !== undefined && built !== '') dir = built;
  else {
    own = await mkdtemp(join(tmpdir(), 'bundle-test-'));
    await bundle(own);
    dir = own;
  }
});

afterAll(async () => {
  if (own !== undefined) await rm(own, { recursive: true, force: true });
});

/** Runs a bundle with a bare env; resolves with its exit code and output, whatever the code. */
async function runBundle(
  name: string,
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [join(dir, `${name}.mjs`), ...args], {
      env: { PATH: process.env.PATH ?? '', HOME: tmpdir(), ...env },
      timeout: 30_000,
    });
    return { code: 0, stdout, stderr };
  } catch (error: unknown) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

describe('the bundles', () => {
  it('start as their sources do: versions and help', async () => {
    expect((await runBundle('cluster-manager', ['--version'])).stdout).toBe(
      `${packageJson.version}\n`,
    );
    const node = await runBundle('localnet-node', ['--help']);
    expect(node.code, node.stderr).toBe(0);
    expect(node.stdout).toContain('run');
    const cli = await runBundle('localnet-cli', ['--help']);
    expect(cli.code, cli.stderr).toBe(0);
  });

  it('are executables: run by path (CM_CLI_PATH, the links on PATH) through their #! line', async () => {
    for (const name of ['cluster-manager', 'localnet-node', 'localnet-cli']) {
      const path = join(dir, `${name}.mjs`);
      expect((await readFile(path, 'utf8')).startsWith('#!/usr/bin/env node\n'), name).toBe(true);
      await access(path, constants.X_OK);
    }
    const { stdout } = await run(join(dir, 'cluster-manager.mjs'), ['--version'], {
      env: { PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ''}` },
    });
    expect(stdout).toBe(`${packageJson.version}\n`);
  });

  it('keep the names of error classes: a failed start names its error and exits 1', async () => {
    const failed = await runBundle('cluster-manager', ['run'], {
      CM_CHAIN_RPC_URL: 'http://127.0.0.1:9',
      CM_RPC_PORT: '0',
      CM_JOURNAL_PATH: join(dir, 'journal-of-a-failed-start.sqlite'),
      KUBECONFIG: join(dir, 'no-such-kubeconfig'),
    });
    expect(failed.code).toBe(1);
    expect(failed.stderr).toMatch(/^error: unexpected ManagerError/m);
  });

  it("rewrite every `import.meta.url` to the module's own source file", async () => {
    const src = resolve(import.meta.dirname, '../../src');
    const rewritten: string[] = [];
    // rolldown's runtime chunk makes a `require` for CommonJS dependencies at the chunk's own URL.
    const chunks = (await readdir(dir)).filter(
      (f) => f.endsWith('.mjs') && !f.startsWith('rolldown-runtime-'),
    );
    for (const file of chunks) {
      const text = await readFile(join(dir, file), 'utf8');
      const all = text.split('import.meta.url').length - 1;
      const ours = [...text.matchAll(/new URL\((["`])([^"`]+)\1,\s*import\.meta\.url\)/g)];
      // Every use is one of ours, wrapped.
      expect(ours.length, file).toBe(all);
      for (const match of ours) rewritten.push(resolve(dir, match[2] ?? ''));
    }
    expect(rewritten.length).toBeGreaterThan(0);
    for (const path of rewritten) {
      expect(path.startsWith(`${src}/`), path).toBe(true);
      expect(existsSync(path), path).toBe(true);
    }
  });
});
