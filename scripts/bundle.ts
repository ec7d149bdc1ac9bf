// Builds the image's entry points (`npm run build` → dist/): cluster-manager, localnet-node and
// localnet-cli, each one ES module plus chunks for what they import lazily, minified, with the
// dependencies inside (ADR 0021). Why: a process that loads ~1,850 modules keeps each one's
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
// The folder is written only when it is empty or holds an earlier build (its `.bundles` file
// lists what that build wrote, and only those files are replaced): `npm run build -- .` must not
// wipe a checkout.
//
// Usage: node scripts/bundle.ts [outDir]   (default: dist)
import { realpathSync } from 'node:fs';
import { chmod, mkdir, readdir, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import { relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Plugin } from 'rolldown';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
/** ROOT with symlinks resolved: module ids are compared with it and made relative to it. */
const REAL_ROOT = realpathSync(ROOT);

/** The file that marks a folder as bundles of ours and lists the files of that build. */
export const MARKER = '.bundles';

/** Thrown when the output folder holds files that are not an earlier build's. */
export class BundleFolderNotEmpty extends Error {
  override readonly name = 'BundleFolderNotEmpty';
}

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

/**
 * Node's ESM facade of node:http reads every export once, and the WebSocket, CloseEvent and
 * MessageEvent getters load Node's own copy of undici: 13 MiB of a bare process's RSS (58 against
 * 45 with `process.getBuiltinModule`). Our sources avoid it (eslint.config.js); this does the
 * same for the ESM imports of our dependencies (client-node's config.js and watch.js): they get
 * a module that takes node:http(s) from `process.getBuiltinModule` and re-exports what those
 * getters do not touch. A `require()` is left alone: it does not build the facade.
 */
const HTTP_BUILTINS = new Set(['node:http', 'http', 'node:https', 'https']);
const UNDICI_GETTERS = new Set(['WebSocket', 'CloseEvent', 'MessageEvent']);
const BUILTIN_PREFIX = '\0builtin-without-facade:';
const builtinsWithoutFacade: Plugin = {
  name: 'builtins-without-facade',
  resolveId(source, _importer, options) {
    if (!HTTP_BUILTINS.has(source)) return null;
    if (options.kind !== 'import-statement' && options.kind !== 'dynamic-import') return null;
    return `${BUILTIN_PREFIX}${source.startsWith('node:') ? source : `node:${source}`}`;
  },
  load(id) {
    if (!id.startsWith(BUILTIN_PREFIX)) return null;
    const name = id.slice(BUILTIN_PREFIX.length);
    const module = process.getBuiltinModule(name) as Record<string, unknown>;
    // Every export but the three getters that load undici (read once here, like the facade
    // does; `globalAgent` and `maxHeaderSize` are getters too, and cheap).
    const names = Object.keys(Object.getOwnPropertyDescriptors(module)).filter(
      (key) => !UNDICI_GETTERS.has(key) && /^[A-Za-z_$][\w$]*$/.test(key),
    );
    return [
      `const m = process.getBuiltinModule(${JSON.stringify(name)});`,
      'export default m;',
      `export const { ${names.join(', ')} } = m;`,
    ].join('\n');
  },
};

/**
 * Each of our modules keeps its own `import.meta.url`, relative to the chunk it ends up in (both
 * paths real, symlinks resolved; each segment URL-encoded, so `#`, `?` or `%` in a folder name
 * stay part of the path). `import.meta.dirname` and `import.meta.filename` would name dist/: a
 * module of ours using them fails the build.
 */
function sourceUrls(realOut: string): Plugin {
  const src = resolve(REAL_ROOT, 'src');
  return {
    name: 'source-urls',
    transform(code, id) {
      // Virtual modules (rolldown's runtime: "\0rolldown/…") and dependencies are not ours.
      if (!id.startsWith('/')) return null;
      const real = realpathSync(id);
      if (!real.startsWith(`${src}/`)) return null;
      if (/import\.meta\.(dirname|filename)\b/.test(code))
        throw new Error(
          `${relative(REAL_ROOT, real)}: import.meta.dirname and import.meta.filename would name the bundle's folder in a bundle; use new URL(…, import.meta.url)`,
        );
      if (!code.includes('import.meta.url')) return null;
      const path = relative(realOut, real).split(sep).map(encodeURIComponent).join('/');
      return code.replaceAll(
        'import.meta.url',
        `new URL(${JSON.stringify(path)}, import.meta.url).href`,
      );
    },
  };
}

/**
 * Node reads a module's source into a V8 string that stays in the heap (functions are compiled
 * lazily from it), and one non-ASCII character makes that string two bytes per character: the
 * client-node and manager chunks held 6 MiB instead of 3 in the idle manager's heap (heap
 * snapshot). The minifier escapes code (`asciiOnly`); what it keeps as written is a license
 * comment (`/*! … *\/`), where this escapes the rest, and a tagged template's raw text, which must
 * stay as it is (reported, not changed).
 */
const asciiChunks: Plugin = {
  name: 'ascii-chunks',
  generateBundle(_options, output) {
    for (const file of Object.values(output)) {
      if (file.type !== 'chunk' || !/[^\p{ASCII}]/u.test(file.code)) continue;
      file.code = file.code.replace(/\/\*![\s\S]*?\*\//g, (comment) =>
        comment.replace(/[^\p{ASCII}]/gu, (c) => `\\u{${(c.codePointAt(0) ?? 0).toString(16)}}`),
      );
      const at = file.code.search(/[^\p{ASCII}]/u);
      if (at >= 0)
        this.warn(
          `${file.fileName}: non-ASCII text at ${at} (held as a two-byte string): ${JSON.stringify(file.code.slice(Math.max(0, at - 40), at + 10))}`,
        );
    }
  },
};

/**
 * Makes `out` ready for a build: created if absent; an earlier build's files (listed in its
 * MARKER) removed; anything else refuses (BundleFolderNotEmpty). Returns the folder's real path.
 */
async function prepareFolder(out: string): Promise<string> {
  await mkdir(out, { recursive: true });
  const entries = await readdir(out);
  if (entries.length > 0) {
    const listed = await readFile(resolve(out, MARKER), 'utf8').then(
      (text) => (JSON.parse(text) as { files: string[] }).files,
      () => undefined,
    );
    if (listed === undefined)
      throw new BundleFolderNotEmpty(
        `${out} holds files that are not bundles of an earlier build (no ${MARKER} file): give an empty or new folder`,
      );
    for (const file of [...listed, MARKER])
      if (!file.includes('/') && !file.includes(sep)) await rm(resolve(out, file), { force: true });
  }
  return realpath(out);
}

/**
 * Writes the bundles into `outDir` (created if absent; it must be empty or hold an earlier
 * build); returns the path of each entry's file, and in `lazy` the chunk each lazily imported
 * source became (by its path in the repository, e.g. `src/manager/run.ts`).
 */
export async function bundle(
  outDir: string,
): Promise<Record<Entry, string> & { lazy: Record<string, string> }> {
  const out = await prepareFolder(resolve(outDir));
  // Imported here, so that reading ENTRIES does not load the bundler.
  const { rolldown } = await import('rolldown');
  const build = await rolldown({
    input: Object.fromEntries(
      Object.entries(ENTRIES).map(([name, path]) => [name, resolve(ROOT, path)]),
    ),
    platform: 'node',
    logLevel: 'warn',
    plugins: [leanClientNode, builtinsWithoutFacade, sourceUrls(out), asciiChunks],
  });
  let written: string[];
  const lazy: Record<string, string> = {};
  try {
    const output = await build.write({
      dir: out,
      format: 'esm',
      entryFileNames: '[name].mjs',
      chunkFileNames: '[name]-[hash].mjs',
      // asciiOnly: a chunk with one character above U+00FF is held by V8 as a two-byte string
      // (its source stays in memory for lazy compilation): the client-node and manager chunks
      // took 6 MiB of the idle heap instead of 3.
      minify: {
        compress: true,
        mangle: true,
        codegen: { removeWhitespace: true, asciiOnly: true },
      },
      keepNames: true,
    });
    written = output.output.map((file) => file.fileName);
    for (const file of output.output)
      if (file.type === 'chunk' && file.isDynamicEntry && file.facadeModuleId !== null)
        lazy[relative(REAL_ROOT, realpathSync(file.facadeModuleId))] = resolve(out, file.fileName);
  } finally {
    await build.close();
  }
  await writeFile(resolve(out, MARKER), `${JSON.stringify({ files: written.sort() }, null, 2)}\n`);
  const files = Object.fromEntries(
    Object.keys(ENTRIES).map((name) => [name, resolve(out, `${name}.mjs`)]),
  ) as Record<Entry, string>;
  // Executable, as the sources are: each starts with `#!/usr/bin/env node`, and the manager in
  // CLI mode (CM_POCKET_V1_CLI_PATH), the image's links on PATH and kubectl exec run them by path.
  for (const file of Object.values(files)) await chmod(file, 0o755);
  return { ...files, lazy };
}

if (import.meta.main) {
  const outDir = process.argv[2] ?? resolve(ROOT, 'dist');
  const started = performance.now();
  await bundle(outDir);
  process.stdout.write(
    `bundles in ${relative(process.cwd(), outDir) || '.'} (${Math.round(performance.now() - started)} ms)\n`,
  );
}
