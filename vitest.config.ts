import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { defineConfig } from 'vitest/config';

// The kit's own tests. The conformance suites in suites/ are not run here directly:
// `tmi-conform run` starts them with their own configuration (see cli/run).
//
// Two projects, told apart by what a test file starts: one that starts another process (the
// command line, a browser, the proxy command) is an integration test; every other runs in
// vitest's own workers and is a unit test (`npm run test:unit`, the inner loop). `npm test` runs both.
const STARTS_A_PROCESS = /node:child_process|helpers\/(?:cli|chromium|proxy-command|run-faults)\.ts/;
const testFiles = readdirSync('test').filter((name) => name.endsWith('.test.ts'));
const startsAProcess = (name: string) => STARTS_A_PROCESS.test(readFileSync(join('test', name), 'utf8'));
const inTest = (names: string[]) => names.map((name) => `test/${name}`);

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    projects: [
      { extends: true, test: { name: 'unit', include: inTest(testFiles.filter((name) => !startsAProcess(name))) } },
      { extends: true, test: { name: 'integration', include: inTest(testFiles.filter(startsAProcess)) } },
    ],
  },
});
