import { defineConfig } from 'vitest/config';

// The kit's own tests. The conformance suites in suites/ are not run here directly:
// `tmi-conform run` starts them with their own configuration (see cli/run).
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
  },
});
