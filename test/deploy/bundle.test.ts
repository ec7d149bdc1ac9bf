// The bundles the image runs (scripts/bundle.ts, ADR 0021): each entry point starts and behaves as
// its source, error names survive minification, and every `import.meta.url` of ours still names
// the module's own source file (the emulator's JSON, the node entry `net` spawns). The system
// project's globalSetup built them for this run (CLUSTER_MANAGER_BUNDLES); with the sources
// asked for (set and empty), this file builds its own.
import { execFile } from 'node:child_process';
import { constants, existsSync } from 'node:fs';
import {
  access,
  copyFile,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  realpath,
  rm,
  symlink,
  writeFile,
} from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import packageJson from '../../package.json' with { type: 'json' };
import { bundle, BundleFolderNotEmpty, MARKER } from '../../scripts/bundle.ts';

const run = promisify(execFile);
const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
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

  it("start under the image's Node flags: the manager's ENTRYPOINT flags and NODE_OPTIONS", async () => {
    // A flag this Node refused would stop the container before the manager ran.
    const dockerfile = await readFile(join(repoRoot, 'Dockerfile'), 'utf8');
    const stage = dockerfile.slice(dockerfile.indexOf('AS cluster-manager'));
    const entrypoint = JSON.parse(/^ENTRYPOINT (\[.*\])$/m.exec(stage)?.[1] ?? '[]') as string[];
    const flags = entrypoint.slice(entrypoint.indexOf('node') + 1, -1);
    const nodeOptions = /^ENV NODE_OPTIONS="([^"]*)"/m.exec(stage)?.[1] ?? '';
    expect(flags.length + nodeOptions.length).toBeGreaterThan(0);
    const { stdout, stderr } = await run(
      process.execPath,
      [...flags, join(dir, 'cluster-manager.mjs'), '--version'],
      { env: { PATH: process.env.PATH ?? '', HOME: tmpdir(), NODE_OPTIONS: nodeOptions } },
    );
    expect(stderr).toBe('');
    expect(stdout).toBe(`${packageJson.version}\n`);
  });

  // A start that fails with a ManagerError is told by `instanceof` (cli/run-command.ts): in a bundle
  // that split ManagerError into two copies, or renamed it, the failure would be `unexpected …`.
  it('keep the error classes: a failed start names its error code and exits 1', async () => {
    const failed = await runBundle('cluster-manager', ['run'], {
      CM_CHAIN_RPC_URL: 'http://127.0.0.1:9',
      CM_RPC_PORT: '0',
      CM_JOURNAL_PATH: join(tmpdir(), `cm-bundle-test-${process.pid}.sqlite`),
      KUBECONFIG: join(dir, 'no-such-kubeconfig'),
    });
    expect(failed.code).toBe(1);
    expect(failed.stderr).toMatch(
      /^error: the manager could not start: CONFIG_INVALID: cannot load the Kubernetes configuration/m,
    );
  });

  it("rewrite every `import.meta.url` to the module's own source file", async () => {
    const rewritten = await rewrittenUrls(dir);
    expect(rewritten.length).toBeGreaterThan(0);
    for (const path of rewritten) {
      expect(path.startsWith(`${SRC}/`), path).toBe(true);
      expect(existsSync(path), path).toBe(true);
    }
  });

  it('are ASCII: V8 holds a module source with one wider character at two bytes a character', async () => {
    const files = (await readdir(dir)).filter((file) => file.endsWith('.mjs'));
    expect(files.length).toBeGreaterThan(3);
    for (const file of files) {
      const text = await readFile(join(dir, file), 'utf8');
      const at = text.search(/[^\p{ASCII}]/u);
      expect(at < 0 ? '' : `${file} at ${at}: ${text.slice(Math.max(0, at - 40), at + 10)}`).toBe(
        '',
      );
    }
  });

  it("load no ESM facade of node:http: the manager's modules leave Node's own undici unloaded", async () => {
    // Every chunk but the entries (they run a program) and the stand-ins the image does not run.
    const chunks = (await readdir(dir)).filter(
      (file) =>
        file.endsWith('.mjs') && !/^(cluster-manager|localnet-|emulator-|devnet-)/.test(file),
    );
    expect(chunks.length).toBeGreaterThan(3);
    const { stdout } = await run(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `for (const file of process.argv.slice(1)) await import(file);
         console.log(JSON.stringify(process.moduleLoadList.filter((m) => m.includes('undici'))));`,
        ...chunks.map((file) => pathToFileURL(join(dir, file)).href),
      ],
      { env: { PATH: process.env.PATH ?? '' }, timeout: 30_000 },
    );
    expect(JSON.parse(stdout)).toEqual([]);
  });
});

// Each case builds the bundles once or twice (about 10 s of CPU each on a quiet machine); on a
// machine at load 17 two builds outlasted the default 60 s, so a build gets 90 s here.
describe('the build', { timeout: 180_000 }, () => {
  it('refuses a folder holding anything but an earlier build, and deletes nothing', async () => {
    const folder = await mkdtemp(join(tmpdir(), 'bundle-refused-'));
    try {
      await writeFile(join(folder, 'notes.txt'), 'mine');
      await expect(bundle(folder)).rejects.toThrow(BundleFolderNotEmpty);
      await expect(bundle(folder)).rejects.toThrow(/holds files that are not bundles/);
      expect(await readdir(folder)).toEqual(['notes.txt']);
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  });

  // One build here, not two (a build is about 7 CPU s): the earlier build in the folder is a copy of
  // this run's (`dir`, with its marker), and the rebuild is the build that writes through the
  // link — its URLs are the ones checked.
  it('writes through a symlinked folder with URLs that still reach the sources, and replaces only its own files on a rebuild', async () => {
    const root = await mkdtemp(join(tmpdir(), 'bundle-link-'));
    try {
      // The link sits at another depth than the folder it names (macOS's /tmp is such a link).
      await mkdir(join(root, 'a', 'b', 'c'), { recursive: true });
      await symlink(join(root, 'a', 'b', 'c'), join(root, 'out'));
      const out = join(root, 'out');
      for (const file of await readdir(dir)) await copyFile(join(dir, file), join(out, file));
      const first = JSON.parse(await readFile(join(out, MARKER), 'utf8')) as { files: string[] };
      expect(first.files).toContain('cluster-manager.mjs');
      await writeFile(join(out, 'kept.txt'), 'not ours');
      await bundle(out);
      for (const path of await rewrittenUrls(out)) expect(existsSync(path), path).toBe(true);
      const second = JSON.parse(await readFile(join(out, MARKER), 'utf8')) as { files: string[] };
      expect(second.files).toContain('cluster-manager.mjs');
      expect(await readFile(join(out, 'kept.txt'), 'utf8')).toBe('not ours');
      // The copy's chunks are gone (their names differ: the rewritten URLs depend on the folder's
      // depth, and so do the chunks' hashes), the rebuild's are there, and nothing else.
      expect((await readdir(out)).sort()).toEqual([...second.files, MARKER, 'kept.txt'].sort());
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
});

const SRC = resolve(import.meta.dirname, '../../src');

/** The file each wrapped `import.meta.url` of the bundles in `folder` names; every use wrapped. */
async function rewrittenUrls(folder: string): Promise<string[]> {
  const rewritten: string[] = [];
  // rolldown's runtime chunk makes a `require` for CommonJS dependencies at the chunk's own URL.
  const chunks = (await readdir(folder)).filter(
    (f) => f.endsWith('.mjs') && !f.startsWith('rolldown-runtime-'),
  );
  for (const file of chunks) {
    const text = await readFile(join(folder, file), 'utf8');
    const all = text.split('import.meta.url').length - 1;
    const ours = [...text.matchAll(/new URL\((["`])([^"`]+)\1,\s*import\.meta\.url\)/g)];
    // Every use is one of ours, wrapped.
    expect(ours.length, file).toBe(all);
    const base = pathToFileURL(`${await realpath(folder)}/`);
    for (const match of ours) rewritten.push(fileURLToPath(new URL(match[2] ?? '', base)));
  }
  return rewritten;
}
