// Where the manager's memory goes at start: the resident memory of a fresh Node process (the
// image's Node options and allocator settings) after importing one module or set, against bare Node in the same run.
// Each figure is the median of three processes, after two full garbage collections. The manager's
// own modules are measured as the image runs them: with the lean client-node hook (ADR 0019). Every
// process has a compile cache filled beforehand (ADR 0017: the TypeScript stripper is not loaded),
// but the one row that shows what type stripping costs.
// Run alone: `npx node bench/manager-memory.bench.ts`.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { bundle } from '../scripts/bundle.ts';
import { round, runAlone, type BenchResult } from './bench-types.ts';
import { mallocEnv, managerNodeOptions } from './support/manager-rig.ts';

const FOOTPRINT = fileURLToPath(new URL('./support/import-footprint.ts', import.meta.url));
const MANAGER = new URL('../src/manager/run.ts', import.meta.url).href;
const CLIENT_NODE = '@kubernetes/client-node/dist';

interface Case {
  name: string;
  /** Module specifiers, or a function giving them once the bundles are built into `dist`. */
  modules: string[] | ((dist: string) => Promise<string[]>);
  lean?: boolean;
  /** false: no compile cache, so Node strips the types of every .ts file it loads. */
  compileCache?: false;
  notes?: string;
}

const CASES: Case[] = [
  {
    name: '@kubernetes/client-node, its index (every API group and model)',
    modules: ['@kubernetes/client-node'],
  },
  {
    name: '@kubernetes/client-node, what the manager loads (lean hook)',
    modules: [
      `${CLIENT_NODE}/config.js`,
      `${CLIENT_NODE}/watch.js`,
      `${CLIENT_NODE}/cache.js`,
      `${CLIENT_NODE}/gen/apis/CoreV1Api.js`,
      `${CLIENT_NODE}/gen/apis/AppsV1Api.js`,
      `${CLIENT_NODE}/gen/apis/CoordinationV1Api.js`,
    ],
    lean: true,
    notes: 'KubeConfig, Watch, ListWatch and three API groups; still every model class',
  },
  {
    name: "client-node's generated models alone (ObjectSerializer)",
    modules: [`${CLIENT_NODE}/gen/models/ObjectSerializer.js`],
  },
  { name: 'undici (client-node’s HTTP library)', modules: ['undici'] },
  { name: 'fastify + @fastify/swagger', modules: ['fastify', '@fastify/swagger'] },
  { name: 'pino', modules: ['pino'] },
  { name: 'prom-client', modules: ['prom-client'] },
  { name: '@bufbuild/protobuf', modules: ['@bufbuild/protobuf'] },
  { name: '@noble/ed25519 + @noble/hashes', modules: ['@noble/ed25519', '@noble/hashes/sha2.js'] },
  {
    name: "the manager's modules as the image loads them (lean hook, compile cache)",
    modules: [MANAGER],
    lean: true,
  },
  {
    name: "the manager's bundle as the image loads it (ADR 0021, compile cache)",
    modules: async (dist) => {
      const built = await bundle(dist);
      const run = built.lazy['src/manager/run.ts'];
      if (run === undefined) throw new Error('no chunk for src/manager/run.ts in the bundles');
      return [pathToFileURL(run).href];
    },
    notes:
      "src/manager/run.ts's chunk and every chunk it imports, as `cluster-manager run` loads them",
  },
  {
    name: "the manager's modules without the lean hook",
    modules: [MANAGER],
  },
  {
    name: "the manager's modules, lean hook, no compile cache (type stripping)",
    modules: [MANAGER],
    lean: true,
    compileCache: false,
  },
];

async function footprint(
  modules: string[],
  options: { lean?: boolean; cacheDir?: string },
): Promise<number> {
  const nodeOptions = await managerNodeOptions();
  const dockerfile = await readFile(new URL('../Dockerfile', import.meta.url), 'utf8');
  const env: Record<string, string> = {
    ...mallocEnv(dockerfile.slice(dockerfile.indexOf('AS cluster-manager'))),
    PATH: process.env.PATH ?? '',
    NODE_OPTIONS: `${nodeOptions} --expose-gc`.trim(),
    ...(options.cacheDir === undefined ? {} : { NODE_COMPILE_CACHE: options.cacheDir }),
  };
  const args = [FOOTPRINT, ...(options.lean === true ? ['--lean'] : []), ...modules];
  if (options.cacheDir !== undefined) await promisify(execFile)(process.execPath, args, { env });
  const samples: number[] = [];
  for (let i = 0; i < 3; i++) {
    const { stdout } = await promisify(execFile)(process.execPath, args, { env });
    samples.push((JSON.parse(stdout) as { rssMiB: number }).rssMiB);
  }
  return samples.sort((a, b) => a - b)[1] ?? Number.NaN;
}

export async function run(): Promise<BenchResult[]> {
  const dir = await mkdtemp(join(tmpdir(), 'cm-bench-memory-'));
  try {
    const bare = await footprint([], { cacheDir: join(dir, 'cache-bare') });
    const floor = { name: 'bare Node, same options', value: round(bare) };
    const results: BenchResult[] = [];
    for (const [i, c] of CASES.entries()) {
      const modules =
        typeof c.modules === 'function' ? await c.modules(join(dir, `dist-${i}`)) : c.modules;
      const rss = await footprint(modules, {
        ...(c.lean === true ? { lean: true } : {}),
        ...(c.compileCache === false ? {} : { cacheDir: join(dir, `cache-${i}`) }),
      });
      results.push({
        name: `manager memory at import: ${c.name}`,
        value: round(rss),
        unit: 'MiB',
        floor,
        ratio: round(rss / bare, 2),
        notes: `+${round(rss - bare)} MiB over bare Node${c.notes === undefined ? '' : `; ${c.notes}`}`,
      });
    }
    return results;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

await runAlone(run, import.meta);
