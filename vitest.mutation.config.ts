import { defineConfig } from 'vitest/config';

// The tests a mutation run (stryker.config.mjs) uses: the in-process unit tests that exercise
// rules/checks/ and core/redact.ts. Tests that spawn the CLI or start servers are left out: a
// mutant lives in the test process only, so a child process never sees it, and they are slow.
export default defineConfig({
  test: {
    include: [
      'test/rules.test.ts',
      'test/findings.test.ts',
      'test/credential.test.ts',
      'test/requirements.test.ts',
      'test/scopes.test.ts',
      'test/proxy-redact.test.ts',
      'test/report-redaction.test.ts',
      'test/checks-complete.test.ts',
      'test/checks-parts.test.ts',
      'test/redact-unit.test.ts',
    ],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Modules stay loaded between mutants (several times faster than isolating each run); the price:
    // mutants in module-level constants and in cached computations are not tested afresh.
    isolate: false,
  },
});
