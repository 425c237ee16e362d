import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Redis-backed and multi-process suites share one server; each test uses its own key prefix.
    testTimeout: 20_000,
    hookTimeout: 20_000,
  },
});
