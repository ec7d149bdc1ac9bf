// The files a devnet runs for its pods, their hooks and `p1`, and its manager: the TypeScript
// sources (the default), or the bundles `npm run build` writes (ADR 0021) when
// CLUSTER_MANAGER_BUNDLES names their folder. The bundles are what the image runs; a process
// started from one loads a few modules instead of about 1,850 (the manager's start: about 0.7 CPU s
// less). The test suite builds them once per run (test/support/bundles-setup.ts). Read by the
// devnet (its pods, hooks and manager) and by `startNet` (its node processes).
import { existsSync } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface EntryPoints {
  clusterManager: string;
  localnetNode: string;
  localnetCli: string;
  /** The bundles' folder, or undefined for the sources. */
  bundles: string | undefined;
}

const here = dirname(fileURLToPath(import.meta.url));

/** The entry points of the sources, or of the bundles in `bundles`. */
export function entryPoints(bundles: string | undefined): EntryPoints {
  if (bundles === undefined || bundles === '')
    return {
      clusterManager: resolve(here, '../bin/cluster-manager.ts'),
      localnetNode: resolve(here, '../bin/localnet-node.ts'),
      localnetCli: resolve(here, '../bin/localnet-cli.ts'),
      bundles: undefined,
    };
  const dir = resolve(bundles);
  return {
    clusterManager: resolve(dir, 'cluster-manager.mjs'),
    localnetNode: resolve(dir, 'localnet-node.mjs'),
    localnetCli: resolve(dir, 'localnet-cli.mjs'),
    bundles: dir,
  };
}

/** Thrown before a devnet starts when CLUSTER_MANAGER_BUNDLES names a folder without them. */
export class BundlesMissing extends Error {
  override readonly name = 'BundlesMissing';
}

/** Fails with BundlesMissing unless every bundle is there (the sources always are). */
export function checkEntryPoints(entries: EntryPoints): void {
  const dir = entries.bundles;
  if (dir === undefined) return;
  const missing = [entries.clusterManager, entries.localnetNode, entries.localnetCli]
    .filter((path) => !existsSync(path))
    .map((path) => basename(path));
  if (missing.length > 0)
    throw new BundlesMissing(
      `CLUSTER_MANAGER_BUNDLES=${dir}: ${missing.join(', ')} not there; \`npm run build -- ${dir}\` writes them (into an empty or new folder), or unset it to run the sources`,
    );
}
