// Test layers as vitest projects (docs/testing.md). `npm test` runs all three;
// `npm run test:unit` only the fast one.
//   unit         `*.unit.test.ts`: no sockets, no child processes, no devnet (lint enforces the
//                imports); fake clocks and in-memory fakes of ports.
//   conformance  `test/conformance/`: the emulator and nodes driven by clients nobody here wrote
//                (kubectl 1.27–1.33, the Python client, buf); skipped with a printed reason when
//                the client is absent.
//   system       every other `*.test.ts`: the emulator, node processes, devnets.
import { defineConfig } from 'vitest/config';

const shared = {
  testTimeout: 60_000,
  hookTimeout: 60_000,
  pool: 'forks' as const,
  teardownTimeout: 20_000,
};

export default defineConfig({
  test: {
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
