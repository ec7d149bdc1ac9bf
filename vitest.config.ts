// Test runner configuration: every layer runs in `npm test`; slow end-to-end files are
// marked by their folder so they can be run alone (`npx vitest run test/e2e`).
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    teardownTimeout: 20_000,
    reporters: process.env.CI ? ['default'] : ['default'],
  },
});
