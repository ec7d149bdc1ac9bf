// globalSetup of the `system` project: builds the bundles the image runs (scripts/bundle.ts,
// ADR 0021) once per run into a temporary folder and points CLUSTER_MANAGER_BUNDLES at it, so that
// the devnets' pods, hooks and managers and `startNet`'s nodes start from them: about a fifth less
// CPU in a devnet file (docs/testing.md, "Timings"). Built from the sources of this run, never
// stale; removed at the end. `CLUSTER_MANAGER_BUNDLES= npx vitest run …` (set and empty) runs the
// sources instead. The tests' own CLI calls (test/support/run-bin.ts) and `cluster-manager devnet`
// in the e2e files that unset it run the sources either way.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bundle } from '../../scripts/bundle.ts';

export default async function setup(): Promise<(() => Promise<void>) | undefined> {
  if (process.env.CLUSTER_MANAGER_BUNDLES === '') return undefined;
  const dir = await mkdtemp(join(tmpdir(), 'cm-bundles-'));
  await bundle(dir);
  process.env.CLUSTER_MANAGER_BUNDLES = dir;
  return async () => {
    delete process.env.CLUSTER_MANAGER_BUNDLES;
    await rm(dir, { recursive: true, force: true });
  };
}
