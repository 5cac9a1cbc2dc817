// Reports and the console name a suite by its source file, whether the suites ran from their
// TypeScript or compiled from dist/.
import { describe, expect, it } from 'vitest';
import { suiteFileOf, suiteNameOf } from '../suites/suite-files.ts';

describe('a suite module’s name', () => {
  it('is its source file’s, run from the sources or compiled', () => {
    expect(suiteFileOf('/opt/kit/suites/update-session.suite.ts')).toBe('update-session.suite.ts');
    expect(suiteFileOf('/opt/kit/dist/suites/update-session.suite.js')).toBe('update-session.suite.ts');
    expect(suiteFileOf('C:\\kit\\dist\\suites\\rate-limits.suite.js')).toBe('rate-limits.suite.ts');
  });

  it('shows on the console without its extension', () => {
    expect(suiteNameOf('/opt/kit/suites/token-attacks.suite.ts')).toBe('token-attacks');
    expect(suiteNameOf('/opt/kit/dist/suites/token-attacks.suite.js')).toBe('token-attacks');
  });
});
