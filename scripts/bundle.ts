// Builds the image's entry points (`npm run build` → dist/): cluster-manager, localnet-node and
// localnet-cli, each one ES module plus chunks for what they import lazily, minified, with the
// dependencies inside (ADR 0021). Why: a process that loads ~1,800 modules keeps each one's
// record and source; one bundle takes the manager's modules from 133 to 86 MiB and its import
// from about 1 s to 0.35 s of CPU (docs/benchmarks.md).
//
// The bundle behaves as the sources do:
// - client-node's `config.js` gets the two names it needs without the index of every API group,
//   as the lean hook does at run time (ADR 0019; src/manager/kube/lean-client-node.ts);
// - `import.meta.url` of each module is still that module's source URL, so that the files it
//   names beside itself (the emulator's JSON, the node's own entry point for `net`) are found:
//   dist/ must sit beside src/, as it does in the repository and in the image (/app);
// - names of functions and classes are kept (pino's `err.type`, error names in messages).
//
// Usage: node scripts/bundle.ts [outDir]   (default: dist)
import { chmod, rm } from 'node:fs/promises';
import { relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Plugin } from 'rolldown';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** The entry points, by the name of their file in the output. */
export const ENTRIES = {
  'cluster-manager': 'src/bin/cluster-manager.ts',
  'localnet-node': 'src/bin/localnet-node.ts',
  'localnet-cli': 'src/bin/localnet-cli.ts',
} as const;

export type Entry = keyof typeof ENTRIES;

const CLIENT_NODE_CONFIG = '/@kubernetes/client-node/dist/config.js';
const LEAN_CONFIGURATION = resolve(ROOT, 'src/manager/kube/client-node-configuration.ts');

/** The lean client-node hook of ADR 0019, applied when bundling instead of at run time. */
const leanClientNode: Plugin = {
  name: 'lean-client-node',
  resolveId(source, importer) {
    if (source === './gen/index.js' && importer?.endsWith(CLIENT_NODE_CONFIG) === true)
      return LEAN_CONFIGURATION;
    return null;
  },
};

/** Each of our modules keeps its own `import.meta.url`, relative to the chunk it ends up in. */
function sourceUrls(outDir: string): Plugin {
  const src = resolve(ROOT, 'src');
  return {
    name: 'source-urls',
    transform(code, id) {
      if (!id.startsWith(`${src}/`) || !code.includes('import.meta.url')) return null;
      const path = JSON.stringify(relative(outDir, id));
      return code.replaceAll('import.meta.url', `new URL(${path}, import.meta.url).href`);
    },
  };
}

/** Writes the bundles into `outDir` (emptied first); returns the path of each entry's file. */
export async function bundle(outDir: string): Promise<Record<Entry, string>> {
  const out = resolve(outDir);
  await rm(out, { recursive: true, force: true });
  // Imported here, so that reading ENTRIES does not load the bundler.
  const { rolldown } = await import('rolldown');
  const build = await rolldown({
    input: Object.fromEntries(
      Object.entries(ENTRIES).map(([name, path]) => [name, resolve(ROOT, path)]),
    ),
    platform: 'node',
    logLevel: 'warn',
    plugins: [leanClientNode, sourceUrls(out)],
  });
  try {
    await build.write({
      dir: out,
      format: 'esm',
      entryFileNames: '[name].mjs',
      chunkFileNames: '[name]-[hash].mjs',
      minify: true,
      keepNames: true,
    });
  } finally {
    await build.close();
  }
  const files = Object.fromEntries(
    Object.keys(ENTRIES).map((name) => [name, resolve(out, `${name}.mjs`)]),
  ) as Record<Entry, string>;
  // Executable, as the sources are: each starts with `#!/usr/bin/env node`, and the manager in
  // CLI mode (CM_CLI_PATH), the image's links on PATH and kubectl exec run them by path.
  for (const file of Object.values(files)) await chmod(file, 0o755);
  return files;
}

if (import.meta.main) {
  const outDir = process.argv[2] ?? resolve(ROOT, 'dist');
  const started = performance.now();
  await bundle(outDir);
  process.stdout.write(
    `bundles in ${relative(process.cwd(), outDir) || '.'} (${Math.round(performance.now() - started)} ms)\n`,
  );
}
