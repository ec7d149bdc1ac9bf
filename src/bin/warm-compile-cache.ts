// Fills Node's compile cache (NODE_COMPILE_CACHE) with the modules an entry point loads, so that
// its processes start without compiling or type-stripping them again (the image runs this at
// build time as its user and with its NODE_OPTIONS: the cache is keyed by both; docs/adr/0017).
// Usage: node src/bin/warm-compile-cache.ts cluster-manager|localnet-node [<bundles folder>]
// With a bundles folder (`npm run build`, ADR 0021; the image's /app/dist), the cache is filled
// for the bundles instead of the sources: every chunk, then the entry itself.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { flushCompileCache, getCompileCacheDir } from 'node:module';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { entryPoints } from '../cli/entry-points.ts';
import { registerLeanClientNode } from '../manager/kube/lean-client-node.ts';

const MODULES: Record<string, readonly string[]> = {
  // The program, then what `run` loads lazily (the manager itself) and what `keys` and `tx` do.
  'cluster-manager': [
    './cluster-manager-program.ts',
    '../manager/run.ts',
    '../manager/chain/pocket/cli/keys-actions.ts',
    '../manager/chain/pocket/cli/tx-actions.ts',
  ],
  'localnet-node': ['../localnet/cli/node-program.ts', '../localnet/node.ts'],
};

const entry = process.argv[2] ?? '';
const bundles = process.argv[3] === undefined ? undefined : resolve(process.argv[3]);
const files = entryPoints(bundles);
const modules = MODULES[entry];
if (modules === undefined) {
  process.stderr.write(
    `usage: warm-compile-cache ${Object.keys(MODULES).join('|')} [<bundles folder>]\n`,
  );
  process.exit(2);
}
if (getCompileCacheDir() === undefined) {
  process.stderr.write('warm-compile-cache: NODE_COMPILE_CACHE is not set (or not usable)\n');
  process.exit(1);
}
if (bundles === undefined) {
  // The modules the entry point loads: the manager's entry registers the lean client-node hook
  // first (ADR 0019), so its cache holds client-node's small modules, not its index.
  if (entry === 'cluster-manager') registerLeanClientNode();
  for (const path of modules) await import(new URL(path, import.meta.url).href);
} else {
  // Every chunk but the entry points (importing one runs its program). Chunks have no side
  // effects at import: they define functions and classes (test/deploy/bundle.test.ts).
  const entries = new Set([files.clusterManager, files.localnetNode, files.localnetCli]);
  for (const file of readdirSync(bundles).sort())
    if (file.endsWith('.mjs') && !entries.has(join(bundles, file)))
      await import(pathToFileURL(join(bundles, file)).href);
}
flushCompileCache();
// The entry point itself (a source entry is a .ts file too: one uncached file loads the whole
// stripper), by running it once with --help in a process of the same options.
const help = spawnSync(
  process.execPath,
  [entry === 'cluster-manager' ? files.clusterManager : files.localnetNode, '--help'],
  { stdio: 'ignore' },
);
if (help.status !== 0) {
  process.stderr.write(`warm-compile-cache: ${entry} --help exited with ${String(help.status)}\n`);
  process.exit(1);
}
process.stdout.write(`compile cache for ${entry} in ${getCompileCacheDir() ?? ''}\n`);
