// Test layers as vitest projects (docs/testing.md). `npm test` runs all three;
// `npm run test:unit` only the fast one.
//   unit         `*.unit.test.ts`: no sockets, no child processes, no devnet (lint enforces the
//                imports); fake clocks and in-memory fakes of ports.
//   conformance  `test/conformance/`: the emulator and nodes driven by clients nobody here wrote
//                (kubectl 1.27–1.33, the Python client, buf); skipped with a printed reason when
//                the client is absent.
//   system       every other `*.test.ts`: the emulator, node processes, devnets.
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { LongestFirstSequencer } from './test/support/longest-first-sequencer.ts';

const shared = {
  testTimeout: 60_000,
  hookTimeout: 60_000,
  pool: 'forks' as const,
  // One module cache per worker in every layer, not one per file: a system file's fork spent about
  // a second of CPU importing vitest, client-node, fastify and the harness again (66 of the suite's
  // ~1190 CPU s). Files leave no global state behind: each stops what it starts (servers,
  // devnets, timers) and puts back any env variable it sets. A file that mocks a module
  // (`vi.mock`) must be the only file importing the module it mocks — today
  // test/kube-emulator/auth.unit.test.ts and src/kube-emulator/auth/auth.ts.
  isolate: false,
  teardownTimeout: 20_000,
  env: {
    // One Node compile cache for every process the tests start (nodes, managers, CLI calls, the
    // devnets of every file): after the first start of an entry point the others skip compiling
    // and type-stripping our sources again, about 40 % of a start's CPU (docs/testing.md,
    // "Timings"). Node keys it by file content and Node version, so it is never stale.
    NODE_COMPILE_CACHE:
      process.env.NODE_COMPILE_CACHE ??
      fileURLToPath(new URL('node_modules/.cache/node-compile-cache', import.meta.url)),
  },
};

export default defineConfig({
  test: {
    // Two files at a time on the 2-core machine (vitest's default in `run` would be CPUs − 1 = 1):
    // a devnet file waits on blocks and pods much of its time, so two keep both cores busy — 720
    // s instead of about 1250 s for the whole suite on a quiet machine (docs/testing.md, "How
    // `npm test` is scheduled"). On a machine loaded by other work (load 14–25) devnet starts
    // outlasted their 90 s: `VITEST_MAX_WORKERS=1` runs one at a time. The longest files start
    // first.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    sequence: { sequencer: LongestFirstSequencer },
    projects: [
      {
        test: {
          ...shared,
          name: 'unit',
          include: ['src/**/*.unit.test.ts', 'test/**/*.unit.test.ts'],
        },
      },
      {
        test: {
          ...shared,
          name: 'conformance',
          include: ['test/conformance/**/*.test.ts'],
        },
      },
      {
        test: {
          ...shared,
          name: 'system',
          // The image's bundles, built once for the run: the devnets and nodes start from them.
          globalSetup: ['test/support/bundles-setup.ts'],
          include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
          exclude: ['**/*.unit.test.ts', 'test/conformance/**', '**/node_modules/**'],
        },
      },
    ],
  },
});
