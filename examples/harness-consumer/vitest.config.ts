import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Each devnet runs nodes and a manager as processes: one file at a time is plenty for a laptop.
    fileParallelism: false,
  },
});
