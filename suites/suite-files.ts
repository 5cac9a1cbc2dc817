// The suite files by name, whichever form runs: the TypeScript sources, or their compiled
// JavaScript in dist/ (scripts/compiled.mjs). Reports and the console name the source file.

/** The suites, in the order they run. */
export const SUITE_FILES = [
  'authentication.suite.ts',
  'token-attacks.suite.ts',
  'delete-token-exchange-profile.suite.ts',
  'update-session.suite.ts',
  'get-resource-server.suite.ts',
  'rate-limits.suite.ts',
];

/** The source file a suite module was compiled from, or is: `update-session.suite.ts` for …/dist/suites/update-session.suite.js. */
export function suiteFileOf(moduleId: string): string {
  return moduleId.replace(/^.*[\\/]/, '').replace(/\.js$/, '.ts');
}

/** A suite's name as the console shows it: `update-session`. */
export function suiteNameOf(moduleId: string): string {
  return suiteFileOf(moduleId).replace(/\.suite\.ts$/, '');
}
