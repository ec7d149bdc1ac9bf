// The Dockerfile builds what package.json says, the way the issue asks: the official Node image
// of the major in `engines`, `npm ci --omit=dev`, every `bin` entry on PATH as its bundle (ADR
// 0021), entry points through tini, a numeric non-root user, no HEALTHCHECK; and the build context
// is an allow-list.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  DEPLOYABLE,
  kustomizeBuild,
  podSpecOf,
  readRepoFile,
  repoRoot,
  workloads,
} from './support/manifests.ts';
import { noKubectl } from '../support/kubectl-gate.ts';
import { ENTRIES } from '../../scripts/bundle.ts';

interface Instruction {
  keyword: string;
  args: string;
}
interface Stage {
  from: string;
  name: string | undefined;
  instructions: Instruction[];
}

/** Parses a Dockerfile into global ARGs and stages (comments dropped, continuations joined). */
function parseDockerfile(text: string): { args: Instruction[]; stages: Stage[] } {
  const lines = text
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
  const args: Instruction[] = [];
  const stages: Stage[] = [];
  for (const line of lines) {
    const match = /^(\S+)\s*(.*)$/.exec(line);
    const keyword = match?.[1]?.toUpperCase() ?? '';
    const rest = match?.[2] ?? '';
    if (keyword === 'FROM') {
      const from = /^(\S+)(?:\s+AS\s+(\S+))?$/i.exec(rest);
      stages.push({ from: from?.[1] ?? '', name: from?.[2], instructions: [] });
    } else if (stages.length === 0) args.push({ keyword, args: rest });
    else stages.at(-1)!.instructions.push({ keyword, args: rest });
  }
  return { args, stages };
}

const packageJson = JSON.parse(readRepoFile('package.json')) as {
  engines: { node: string };
  bin: Record<string, string>;
  devDependencies: Record<string, string>;
};
const { args, stages } = parseDockerfile(readRepoFile('Dockerfile'));
const stage = (name: string): Stage => {
  const found = stages.find((s) => s.name === name);
  if (found === undefined) throw new Error(`no stage ${name}`);
  return found;
};
const all = (s: Stage, keyword: string): string[] =>
  s.instructions.filter((i) => i.keyword === keyword).map((i) => i.args);

/** Entry points that other parts build in parallel; their files may not exist yet. */
const PENDING_ENTRY_POINTS = new Set(['localnet-node', 'localnet-cli']);

describe('the Dockerfile', () => {
  it('builds on the official Node image of the major package.json requires', () => {
    const engines = /^>=\s*(\d+)/.exec(packageJson.engines.node)?.[1];
    const pinned = /^\^?(\d+)\./.exec(packageJson.devDependencies.node ?? '')?.[1];
    const arg = args.find((a) => a.keyword === 'ARG' && a.args.startsWith('NODE_VERSION='));
    expect(arg?.args).toBe(`NODE_VERSION=${engines}`);
    expect(pinned).toBe(engines);
    for (const s of stages)
      expect(s.from).toMatch(/^(node:\$\{NODE_VERSION\}-[a-z]+-slim|runtime)$/);
  });

  it('bundles the entry points in a build stage with the locked dependencies, and keeps only dist/', () => {
    const build = stage('build');
    expect(all(build, 'COPY')).toEqual([
      'package.json package-lock.json ./',
      'scripts/bundle.ts ./scripts/',
      'src ./src',
    ]);
    expect(all(build, 'RUN')).toEqual([
      'npm ci --ignore-scripts --no-audit --no-fund',
      'node scripts/bundle.ts dist',
    ]);
    expect(all(stage('runtime'), 'COPY')).toContain('--from=build /app/dist ./dist');
    // The bundles are built from package.json's bin entries.
    expect(ENTRIES).toEqual(packageJson.bin);
  });

  it('installs exactly the locked production dependencies with `npm ci --omit=dev`', () => {
    const deps = stage('deps');
    expect(all(deps, 'COPY')).toContain('package.json package-lock.json ./');
    expect(all(deps, 'RUN').some((run) => run.includes('npm ci --omit=dev'))).toBe(true);
    expect(all(deps, 'RUN').join(' ')).not.toMatch(/npm (install|i) /);
    const runtime = stage('runtime');
    expect(all(runtime, 'COPY')).toContain('--from=deps /app/node_modules ./node_modules');
    expect(all(runtime, 'COPY').some((c) => /\bsrc \.\/src$/.test(c))).toBe(true);
  });

  it('puts every package.json bin entry on PATH as its bundle, and each source exists', () => {
    const links = all(stage('runtime'), 'RUN').join(' ');
    for (const [name, path] of Object.entries(packageJson.bin)) {
      expect(links).toContain(`ln -s /app/dist/${name}.mjs /usr/local/bin/${name}`);
      if (!PENDING_ENTRY_POINTS.has(name))
        expect(existsSync(join(repoRoot, path)), path).toBe(true);
    }
  });

  it.skipIf(noKubectl)(
    'has one target per image name the manifests use, each starting its bin entry under tini',
    () => {
      const images = new Set(
        DEPLOYABLE.flatMap((dir) =>
          workloads(kustomizeBuild(dir)).flatMap((w) =>
            podSpecOf(w).containers.map((c) => c.image),
          ),
        )
          .map((image) => image.split(':')[0]!)
          .filter((image) => image in packageJson.bin),
      );
      expect([...images].sort()).toEqual(['cluster-manager', 'localnet-node']);
      for (const image of images) {
        const entrypoint = JSON.parse(all(stage(image), 'ENTRYPOINT')[0] ?? '[]') as string[];
        // Node's own flags (V8 flags NODE_OPTIONS refuses) may come between `node` and the script.
        const flags = entrypoint.slice(3, -1);
        expect(entrypoint).toEqual([
          '/usr/bin/tini',
          '--',
          'node',
          ...flags,
          `/app/dist/${image}.mjs`,
        ]);
        // That this Node accepts them: test/deploy/bundle.test.ts starts the bundle with them.
        for (const flag of flags) expect(flag).toMatch(/^--[a-z][a-z0-9-]*(=\S+)?$/);
        expect(stage(image).from).toBe('runtime');
      }
      expect(stages.at(-1)?.name, 'a plain `docker build` makes the manager').toBe(
        'cluster-manager',
      );
    },
  );

  it.skipIf(noKubectl)('runs as a numeric non-root user and never switches back', () => {
    const users = stages.flatMap((s) => all(s, 'USER'));
    expect(users).toEqual(['1000:1000']);
    const runtimeIndex = stages.indexOf(stage('runtime'));
    expect(all(stage('runtime'), 'USER')).toEqual(['1000:1000']);
    for (const s of stages.slice(runtimeIndex + 1)) expect(all(s, 'USER')).toEqual([]);
    const pods = DEPLOYABLE.flatMap((dir) => workloads(kustomizeBuild(dir)).map(podSpecOf));
    for (const pod of pods) expect(pod.securityContext?.runAsUser).toBe(1000);
  });

  it('fills the compile cache in each target as its user, after its Node options, for a known entry', () => {
    const runtime = stage('runtime');
    expect(all(runtime, 'ENV')).toContain('NODE_COMPILE_CACHE=/app/.compile-cache');
    expect(all(runtime, 'RUN')).toContain(
      'mkdir /app/.compile-cache && chown 1000:1000 /app/.compile-cache',
    );
    for (const name of ['cluster-manager', 'localnet-node']) {
      const steps = stage(name).instructions;
      const warm = steps.findIndex(
        (i) =>
          i.keyword === 'RUN' &&
          i.args === `node /app/src/bin/warm-compile-cache.ts ${name} /app/dist`,
      );
      expect(warm, name).toBeGreaterThanOrEqual(0);
      // The cache is keyed by the Node options: none may change after it is filled.
      const env = steps.findIndex((i, at) => at > warm && i.keyword === 'ENV');
      expect(env, name).toBe(-1);
    }
    expect(existsSync(join(repoRoot, 'src/bin/warm-compile-cache.ts'))).toBe(true);
  });

  it('has no HEALTHCHECK: Kubernetes probes do that', () => {
    expect(stages.flatMap((s) => all(s, 'HEALTHCHECK'))).toEqual([]);
  });

  it('leaves the app owned by root unless a dev build asks otherwise', () => {
    const runtime = stage('runtime');
    expect(all(runtime, 'ARG')).toContain('APP_OWNER=0:0');
    expect(all(runtime, 'COPY')).toContain('--chown=${APP_OWNER} src ./src');
  });
});

describe('the .dockerignore', () => {
  const rules = readRepoFile('.dockerignore')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));

  it("is an allow-list of the package manifest, the lock file, the sources and the bundler's script", () => {
    expect(rules[0]).toBe('*');
    expect(rules.filter((r) => r.startsWith('!')).sort()).toEqual([
      '!package-lock.json',
      '!package.json',
      '!scripts/bundle.ts',
      '!src/',
    ]);
    expect(rules).toContain('src/**/*.test.ts');
    expect(rules).toContain('src/harness/'); // test tooling, not part of the image
  });
});
