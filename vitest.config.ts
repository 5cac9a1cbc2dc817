import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { defineConfig } from 'vitest/config';

// The kit's own tests. The conformance suites in suites/ are not run here directly:
// `tmi-conform run` starts them with their own configuration (see cli/run).
//
// Projects, told apart by what a test file starts: one that starts another process (the
// command line, a browser, the proxy command) is an integration test; every other runs in
// vitest's own workers and is a unit test (`npm run test:unit`, the inner loop). `npm test` runs all.
//
// Files share their workers and loaded modules (isolate: false): a fresh process per file cost
// about as much CPU as the unit tests themselves, and 45 s of a 6-minute run of the integration
// tests (each file's own process loading the kit's modules again). A test file leaves no state
// behind. A file that replaces a module (vi.mock) needs a module registry of its own, so it runs
// isolated, in the project unit-mocks (or integration-mocks, should an integration test mock one).
const STARTS_A_PROCESS = /node:child_process|helpers\/(?:cli|chromium|proxy-command|run-faults)\.ts/;
const MOCKS_A_MODULE = /\bvi\.(?:mock|doMock)\(/;
const testFiles = readdirSync('test').filter((name) => name.endsWith('.test.ts'));
const source = (name: string) => readFileSync(join('test', name), 'utf8');
const startsAProcess = (name: string) => STARTS_A_PROCESS.test(source(name));
const mocksAModule = (name: string) => MOCKS_A_MODULE.test(source(name));
const inTest = (names: string[]) => names.map((name) => `test/${name}`);
const unitFiles = testFiles.filter((name) => !startsAProcess(name));
const integrationFiles = testFiles.filter(startsAProcess);
const isolatedProject = (name: string, files: string[]) => (files.length > 0 ? [{ extends: true as const, test: { name, include: inTest(files) } }] : []);

export default defineConfig({
  test: {
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // Vitest's default on a 2-core machine is one worker (cores - 1): one file at a time, while
    // most integration files wait on other processes and servers.
    maxWorkers: 2,
    projects: [
      { extends: true, test: { name: 'unit', isolate: false, include: inTest(unitFiles.filter((name) => !mocksAModule(name))) } },
      { extends: true, test: { name: 'unit-mocks', include: inTest(unitFiles.filter(mocksAModule)) } },
      { extends: true, test: { name: 'integration', isolate: false, include: inTest(integrationFiles.filter((name) => !mocksAModule(name))) } },
      ...isolatedProject('integration-mocks', integrationFiles.filter(mocksAModule)),
    ],
  },
});
