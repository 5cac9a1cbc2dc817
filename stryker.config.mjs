// Mutation testing of the rule engine's checks and of redaction: `npm run mutation`.
// One file at a time: `npx stryker run --mutate rules/checks/schema.ts`.
/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: 'vitest',
  vitest: { configFile: 'vitest.mutation.config.ts', related: false },
  plugins: ['@stryker-mutator/vitest-runner'],
  coverageAnalysis: 'perTest',
  // Mutants of module-level constants (lists, expressions, caches made at import) run once, when
  // the module loads, before any mutant is switched on: only a fresh process per mutant could
  // judge them (hours). They are left out of the score, and a test per list entry keeps them.
  ignoreStatic: true,
  mutate: ['rules/checks/**/*.ts', 'core/redact.ts'],
  reporters: ['html', 'clear-text', 'json', 'progress'],
  htmlReporter: { fileName: 'reports/mutation/index.html' },
  jsonReporter: { fileName: 'reports/mutation/mutation.json' },
  clearTextReporter: { allowEmojis: false, logTests: false },
  // The machine is shared: one test process unless STRYKER_CONCURRENCY says otherwise.
  concurrency: Number(process.env.STRYKER_CONCURRENCY ?? 1),
  // --incremental keeps earlier results here; a run reuses those of unchanged mutants and tests.
  incrementalFile: 'reports/mutation/stryker-incremental.json',
  tempDirName: '.stryker-tmp',
  // Another run's sandboxes (a second run with --tempDirName) are not part of the project.
  ignorePatterns: ['/.stryker-tmp*'],
  cleanTempDir: true,
  timeoutMS: 20_000,
};
