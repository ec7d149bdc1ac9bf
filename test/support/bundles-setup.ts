// globalSetup of the `system` project: builds the bundles the image runs (scripts/bundle.ts,
// ADR 0021) once per run and points CLUSTER_MANAGER_BUNDLES at them, so that the devnets' pods,
// hooks and managers and `startNet`'s nodes start from them: 68–77 busy CPU s instead of 85–92 for
// three devnet files (docs/testing.md, "How `npm test` is scheduled"). Built from the sources of
// this run, so never stale. `CLUSTER_MANAGER_BUNDLES= npx vitest run …` (set and empty) runs the
// sources instead. The tests' own CLI calls (test/rpc/support/cli.ts) and `cluster-manager devnet`
// in the e2e files run the sources either way.
//
// Where: node_modules/.cache/cluster-manager-bundles/<hash of the bundles>. The same sources give
// the same folder, so Node's compile cache (keyed by path) serves the next run instead of growing
// by a new folder's entries every run; the five most recently used folders are kept. A build goes
// to a fresh folder beside them (the same depth: the bundles name the sources by relative URLs)
// and is renamed into place; a run that finds the folder already there uses it.
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readdir, readFile, rename, rm, stat, utimes } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundle } from '../../scripts/bundle.ts';

const ROOT = fileURLToPath(
  new URL('../../node_modules/.cache/cluster-manager-bundles/', import.meta.url),
);
const KEEP = 5;

export default async function setup(): Promise<void> {
  if (process.env.CLUSTER_MANAGER_BUNDLES === '') return;
  await mkdir(ROOT, { recursive: true });
  const building = await mkdtemp(join(ROOT, 'build-'));
  try {
    await bundle(building);
    const folder = join(ROOT, await hashOf(building));
    await rename(building, folder).catch(async () => {
      // Built before with the same sources (or by a run beside this one): use that one.
      await stat(join(folder, 'cluster-manager.mjs'));
    });
    const now = new Date();
    await utimes(folder, now, now);
    process.env.CLUSTER_MANAGER_BUNDLES = folder;
    await prune();
  } finally {
    await rm(building, { recursive: true, force: true });
  }
}

/** A hash of every file the build wrote (names and contents). */
async function hashOf(folder: string): Promise<string> {
  const hash = createHash('sha256');
  for (const name of (await readdir(folder)).sort()) {
    hash.update(`${name}\0`);
    hash.update(await readFile(join(folder, name)));
  }
  return hash.digest('hex').slice(0, 16);
}

/** Removes all but the KEEP most recently used bundle folders (and builds older than an hour). */
async function prune(): Promise<void> {
  const folders: { path: string; used: number; building: boolean }[] = [];
  for (const name of await readdir(ROOT)) {
    const info = await stat(join(ROOT, name)).catch(() => undefined);
    if (info?.isDirectory() === true)
      folders.push({
        path: join(ROOT, name),
        used: info.mtimeMs,
        building: name.startsWith('build-'),
      });
  }
  const built = folders.filter((f) => !f.building).sort((a, b) => b.used - a.used);
  const stale = folders.filter((f) => f.building && f.used < Date.now() - 3_600_000);
  for (const folder of [...built.slice(KEEP), ...stale])
    await rm(folder.path, { recursive: true, force: true });
}
