// Test layers as vitest projects (docs/testing.md). `npm test` runs all three;
// `npm run test:unit` only the fast one.
//   unit         `*.unit.test.ts`: no sockets, no child processes, no devnet (lint enforces the
//                imports); fake clocks and in-memory fakes of ports.
//   conformance  `test/conformance/`: the emulator and nodes driven by clients nobody here wrote
//                (kubectl 1.27–1.33, the Python client, buf); skipped with a printed reason when
//                the client is absent.
//   system       every other `*.test.ts`: the emulator, node processes, devnets.
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { LongestFirstSequencer } from './test/support/longest-first-sequencer.ts';

const shared = {
  testTimeout: 60_000,
  hookTimeout: 60_000,
  pool: 'forks' as const,
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
    // Files run one at a time on the 2-core machine (vitest's default in `run`: CPUs − 1). Two at a
    // time (`VITEST_MAX_WORKERS=2`) was tried: at load 14–25 devnet starts then outlasted their 90 s
    // (docs/testing.md, "How `npm test` is scheduled"). The longest files start first.
    sequence: { sequencer: LongestFirstSequencer },
    projects: [
      {
        test: {
          ...shared,
          name: 'unit',
          include: ['src/**/*.unit.test.ts', 'test/**/*.unit.test.ts'],
          // One module cache per worker instead of one per file: importing client-node, fastify
          // and the rest again for each of ~55 files was 40 % of the layer's time (docs/testing.md,
          // "Timings"). Unit tests leave no global state behind; a file that mocks a module
          // (`vi.mock`) must be the only unit file importing the module it mocks — today
          // test/kube-emulator/auth.unit.test.ts and src/kube-emulator/auth.ts.
          isolate: false,
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
          include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
          exclude: ['**/*.unit.test.ts', 'test/conformance/**', '**/node_modules/**'],
        },
      },
    ],
  },
});
