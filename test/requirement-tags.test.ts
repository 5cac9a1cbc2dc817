// A suite test declares the requirements it covers as data, its vitest tags: the reporter charges
// its outcome to them and --requirement selects tests by them. Its title shows the ids to the
// reader, and nothing reads them back from there.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runSuites } from '../api/index.ts';
import { ReportBuilder } from '../reports/builder.ts';
import type { Report } from '../reports/model.ts';
import { covers } from '../suites/requirement-tags.ts';
import { SuiteReporter } from '../suites/reporter.ts';
import { runCli } from './helpers/cli.ts';

const dir = mkdtempSync(join(tmpdir(), 'tmi-requirement-tags-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('covers', () => {
  it('declares the ids as the test tags and shows them in its title, of one level only', () => {
    expect(covers('null clears', 'SES-METADATA-CLEARED', 'SES-RESPONSE-SCHEMA')).toEqual([
      'null clears [SES-METADATA-CLEARED SES-RESPONSE-SCHEMA]',
      { tags: ['SES-METADATA-CLEARED', 'SES-RESPONSE-SCHEMA'] },
    ]);
    expect(() => covers('mixed', 'SES-METADATA-CLEARED', 'SES-METADATA-ECHOED')).toThrow(/one level/);
    expect(() => covers('none')).toThrow(/one level/);
    expect(() => covers('unknown', 'NOPE-1')).toThrow(/unknown requirement id NOPE-1/);
  });
});

describe('the reporter reads the requirements a test declared, never its title', () => {
  const module = { moduleId: '/x/update-session.suite.ts', errors: () => [], children: { *allTests() {} } };
  /** The least of vitest's TestCase the reporter reads: a title and the tags the test declared, apart. */
  const testCase = (name: string, tags: string[], result: Record<string, unknown>) => ({
    id: name,
    fullName: `update session > ${name}`,
    name,
    tags,
    module,
    result: () => result,
    diagnostic: () => undefined,
    meta: () => ({}),
  });
  const passed = { state: 'passed' };
  const requirementOf = (report: Report, id: string) => report.requirements.find((r) => r.id === id)!;

  it('a test counts for the requirements its tags declare, with no id in its title; an id in brackets that no tag declares counts nothing', () => {
    const builder = new ReportBuilder({ kind: 'run', source: 'run' });
    const reporter = new SuiteReporter(builder, () => {}, undefined);
    reporter.onTestCaseResult(testCase('sending null removes all session metadata', ['SES-METADATA-CLEARED'], passed) as never);
    reporter.onTestCaseResult(testCase('the session named in the path [SES-ID-MATCHES]', [], passed) as never);
    const report = builder.build({ failOn: 'must' });
    expect(report.tests.map((t) => [t.name, t.requirements])).toEqual([
      ['update session > sending null removes all session metadata', ['SES-METADATA-CLEARED']],
      ['update session > the session named in the path [SES-ID-MATCHES]', []],
    ]);
    expect(requirementOf(report, 'SES-METADATA-CLEARED')).toMatchObject({
      status: 'pass',
      coverage: { tests: ['update session > sending null removes all session metadata'] },
    });
    expect(requirementOf(report, 'SES-ID-MATCHES')).toMatchObject({ status: 'skip', coverage: { tests: [] } });
  });

  it('a failure that charged nothing leaves the declared requirement not examined, with the reason; the title names none', () => {
    const builder = new ReportBuilder({ kind: 'run', source: 'run' });
    const reporter = new SuiteReporter(builder, () => {}, undefined);
    const notExamined = {
      state: 'failed',
      errors: [{ name: 'ConformanceFailure', message: 'not examined: the PATCH answered 404, so no metadata was set to be removed' }],
    };
    reporter.onTestCaseResult(testCase('sending {} removes all session metadata', ['SES-METADATA-CLEARED'], notExamined) as never);
    const report = builder.build({ failOn: 'must' });
    expect(requirementOf(report, 'SES-METADATA-CLEARED')).toMatchObject({
      status: 'skip',
      reason: 'not examined: the PATCH answered 404, so no metadata was set to be removed (test "update session > sending {} removes all session metadata")',
      coverage: { tests: ['update session > sending {} removes all session metadata'] },
    });
  });

  it('--requirement keeps the tests whose tags declare a selected id: any other is skipped, not passed, whatever its title says', () => {
    const builder = new ReportBuilder({ kind: 'run', source: 'run' });
    const notSelected = 'not selected (--requirement SES-METADATA-CLEARED)';
    const reporter = new SuiteReporter(builder, () => {}, { requirements: ['SES-METADATA-CLEARED'], notSelected });
    reporter.onTestCaseResult(testCase('sending {} removes all session metadata', ['SES-METADATA-CLEARED'], { state: 'passed' }) as never);
    reporter.onTestCaseResult(testCase('echoes [SES-METADATA-CLEARED]', ['SES-METADATA-ECHOED'], { state: 'passed' }) as never);
    const report = builder.build({ failOn: 'must' });
    expect(report.tests.map((t) => [t.name, t.status, t.message])).toEqual([
      ['update session > sending {} removes all session metadata', 'pass', undefined],
      ['update session > echoes [SES-METADATA-CLEARED]', 'skip', notSelected],
    ]);
  });
});

describe('--requirement selects by the declared requirements', () => {
  it('the run against the embedded reference runs exactly the tests declaring a selected id; the others are skipped as not selected', {
    timeout: 120_000,
  }, async () => {
    const reportDir = join(dir, 'selected');
    const run = await runCli(['run', '--requirement', 'SES-METADATA-CLEARED', '--requirement', 'AUTH-NON-GLOBAL-401', '--report-dir', reportDir]);
    expect(run.code, run.stdout + run.stderr).toBe(0);
    const report = JSON.parse(readFileSync(join(reportDir, 'report.json'), 'utf8')) as Report;
    const notSelected = 'not selected (--requirement SES-METADATA-CLEARED AUTH-NON-GLOBAL-401)';
    const ran = report.tests.filter((t) => t.message !== notSelected);
    expect(ran.map((t) => [t.name, t.requirements, t.status])).toEqual([
      ['authentication > a client that is not global is refused with 401 when deleting [AUTH-NON-GLOBAL-401]', ['AUTH-NON-GLOBAL-401'], 'pass'],
      ['update session > sending null removes all session metadata [SES-METADATA-CLEARED]', ['SES-METADATA-CLEARED'], 'pass'],
      ['update session > sending {} removes all session metadata [SES-METADATA-CLEARED]', ['SES-METADATA-CLEARED'], 'pass'],
    ]);
    const left = report.tests.filter((t) => t.message === notSelected);
    expect(left.length).toBeGreaterThan(100);
    for (const t of left) {
      expect(t.status, t.name).toBe('skip');
      expect(
        t.requirements.some((id) => id === 'SES-METADATA-CLEARED' || id === 'AUTH-NON-GLOBAL-401'),
        t.name,
      ).toBe(false);
    }
  });

  it('runSuites refuses an id the catalog does not have, before it starts anything', async () => {
    await expect(runSuites({ requirements: ['SES-METADATA-CLEARED', 'NOPE-1'] })).rejects.toThrow(
      /^runSuites: unknown requirement NOPE-1 \(see schemas\/requirements\.yaml\)$/,
    );
  });
});
