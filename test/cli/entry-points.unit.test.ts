// Which files devnets and `startNet` run (src/cli/entry-points.ts): the sources, or the bundles of
// CLUSTER_MANAGER_BUNDLES, refused with a named error when a bundle is not there.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BundlesMissing, checkEntryPoints, entryPoints } from '../../src/cli/entry-points.ts';

describe('entry points', () => {
  it.each([undefined, ''])('are the sources when CLUSTER_MANAGER_BUNDLES is %j', (value) => {
    const entries = entryPoints(value);
    expect(entries.bundles).toBeUndefined();
    expect(entries.clusterManager).toMatch(/\/src\/bin\/cluster-manager\.ts$/);
    expect(entries.localnetNode).toMatch(/\/src\/bin\/localnet-node\.ts$/);
    expect(entries.localnetCli).toMatch(/\/src\/bin\/localnet-cli\.ts$/);
    expect(() => checkEntryPoints(entries)).not.toThrow();
  });

  it('are the bundles of the folder named, checked before use', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'entry-points-'));
    try {
      const entries = entryPoints(`${dir}/`);
      expect(entries).toEqual({
        clusterManager: join(dir, 'cluster-manager.mjs'),
        localnetNode: join(dir, 'localnet-node.mjs'),
        localnetCli: join(dir, 'localnet-cli.mjs'),
        bundles: dir,
      });
      await writeFile(entries.localnetNode, '');
      expect(() => checkEntryPoints(entries)).toThrow(BundlesMissing);
      expect(() => checkEntryPoints(entries)).toThrow(
        `CLUSTER_MANAGER_BUNDLES=${dir}: cluster-manager.mjs, localnet-cli.mjs not there`,
      );
      await writeFile(entries.clusterManager, '');
      await writeFile(entries.localnetCli, '');
      expect(() => checkEntryPoints(entries)).not.toThrow();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
