// The suites' worker loads the kit's modules through Node (compiled from dist/, or the sources
// through tsx), and only the suite files and their setup file through vitest: which files are
// which, whatever characters the install path has.
import { describe, expect, it } from 'vitest';
import { kitModulesOutsideSuites } from '../suites/runner.ts';

describe('the modules the suites worker loads through Node', () => {
  const pattern = kitModulesOutsideSuites('/opt/ci+cache/tmi-conform (1)');
  const root = '/opt/ci+cache/tmi-conform (1)';

  it('are the kit’s own TypeScript modules, the suites’ helpers among them', () => {
    for (const path of ['judging/session.ts', 'rules/checks/sessions.ts', 'suites/api.ts', 'suites/context.ts'])
      expect(pattern.test(`${root}/${path}`), path).toBe(true);
  });

  it('leave out the suite files and the setup file (vitest runs them), node_modules, other files and other roots', () => {
    for (const path of ['suites/setup.ts', 'suites/token-attacks.suite.ts', 'suites/rate-limits.suite.ts', 'node_modules/tsx/dist/x.ts', 'bin/tmi-conform.js'])
      expect(pattern.test(`${root}/${path}`), path).toBe(false);
    expect(pattern.test('/opt/ci+cache/tmi-conform (2)/judging/session.ts')).toBe(false);
    expect(pattern.test('/opt/cixcache/tmi-conform (1)/judging/session.ts')).toBe(false);
  });

  it('take a Windows path with forward slashes, as vite names modules', () => {
    expect(kitModulesOutsideSuites('C:\\work\\kit').test('C:/work/kit/rules/index.ts')).toBe(true);
  });

  it('in the compiled kit, are the JavaScript modules in dist/, but for its suite files and setup file', () => {
    const compiled = kitModulesOutsideSuites(root, true);
    for (const path of ['dist/judging/session.js', 'dist/suites/context.js', 'dist/rules/checks/sessions.js'])
      expect(compiled.test(`${root}/${path}`), path).toBe(true);
    for (const path of ['dist/suites/setup.js', 'dist/suites/rate-limits.suite.js', 'judging/session.ts', 'judging/session.js', 'dist/node_modules/x/y.js'])
      expect(compiled.test(`${root}/${path}`), path).toBe(false);
  });
});
