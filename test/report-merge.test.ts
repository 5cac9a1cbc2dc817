// `report merge`: one compliance report from reports that disagree. The pure merge on Report
// objects, then the command with its exit codes.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ReportBuilder } from '../reports/builder.ts';
import { mergeReports } from '../reports/merge.ts';
import type { Report } from '../reports/model.ts';
import { reportSchemaError } from '../reports/schema.ts';
import { writeReports } from '../reports/write.ts';
import { disagreeingReport, sampleReport } from './report-fixtures.ts';

const BIN = fileURLToPath(new URL('../bin/tmi-conform.js', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'tmi-report-merge-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const requirement = (report: Report, id: string) => report.requirements.find((r) => r.id === id)!;

describe('mergeReports', () => {
  const ci = sampleReport();
  const proxy = disagreeingReport();
  const merged = mergeReports(
    [
      { report: ci, origin: 'reports/ci' },
      { report: proxy, origin: 'reports/proxy' },
    ],
    { failOn: 'must' },
  );

  it('the two inputs disagree in the ways the merge must settle', () => {
    expect(requirement(ci, 'RS-SIGNING-ALG').status).toBe('fail');
    expect(requirement(proxy, 'RS-SIGNING-ALG').status).toBe('pass');
    expect(requirement(ci, 'RL-429-HEADERS').status).toBe('pass');
    expect(requirement(proxy, 'RL-429-HEADERS').status).toBe('fail');
    expect(requirement(ci, 'AUTH-TOKEN-AUDIENCE').status).toBe('skip');
    expect(requirement(proxy, 'AUTH-TOKEN-AUDIENCE').status).toBe('pass');
  });

  it('a failure in either source fails the requirement; a skip and a pass make a pass; skips in both stay a skip', () => {
    expect(requirement(merged, 'RS-SIGNING-ALG').status).toBe('fail');
    expect(requirement(merged, 'RL-429-HEADERS').status).toBe('fail');
    expect(requirement(merged, 'AUTH-TOKEN-AUDIENCE').status).toBe('pass');
    expect(requirement(merged, 'AUTH-TOKEN-AUDIENCE').reason).toBeUndefined();
    expect(requirement(merged, 'GEN-STATUS-DOCUMENTED').status).toBe('warn');
    const bothSkipped = merged.requirements.find((r) => requirement(ci, r.id).status === 'skip' && requirement(proxy, r.id).status === 'skip')!;
    expect(bothSkipped.status).toBe('skip');
    expect(bothSkipped.reason).toBeTruthy();
    expect(merged.summary).toEqual({
      pass: merged.requirements.filter((r) => r.status === 'pass').length,
      fail: merged.requirements.filter((r) => r.status === 'fail').length,
      warn: merged.requirements.filter((r) => r.status === 'warn').length,
      skip: merged.requirements.filter((r) => r.status === 'skip').length,
    });
    expect(merged.passed).toBe(false);
  });

  it('names every source, with where it was read from, and is a valid report of kind merge', () => {
    expect(merged.kind).toBe('merge');
    expect(merged.sources.map((s) => [s.name, s.kind, s.origin])).toEqual([
      ['run', 'run', 'reports/ci'],
      ['proxy', 'proxy', 'reports/proxy'],
    ]);
    expect(reportSchemaError(merged)).toBeUndefined();
    expect(merged.target).toBe(ci.target); // both judged the same target
  });

  it('sums counts, keeps evidence from both sources within the bound, and merges traffic', () => {
    const alg = requirement(merged, 'RS-SIGNING-ALG');
    const a = requirement(ci, 'RS-SIGNING-ALG');
    const b = requirement(proxy, 'RS-SIGNING-ALG');
    expect(alg.counts).toEqual({ exchanges: a.counts.exchanges + b.counts.exchanges, tests: 0, findings: a.counts.findings, clientFindings: 0, security: 0 });
    const limits = requirement(merged, 'RL-429-HEADERS');
    expect(new Set(limits.evidence.map((e) => e.source))).toEqual(new Set(['run', 'proxy']));
    expect(limits.evidence[0]).toMatchObject({ source: 'proxy', status: 'fail' });
    for (const r of merged.requirements) expect(r.evidence.length, r.id).toBeLessThanOrEqual(12);
    expect(merged.traffic!.exchanges).toBe(ci.traffic!.exchanges + proxy.traffic!.exchanges);
    expect(merged.traffic!.byOperation['getResourceServer']!['200']).toBe(
      ci.traffic!.byOperation['getResourceServer']!['200']! + proxy.traffic!.byOperation['getResourceServer']!['200']!,
    );
    const times = merged.traffic!.rateLimitSeries.map((p) => Date.parse(p.t));
    expect(times).toEqual([...times].sort((x, y) => x - y));
    expect(merged.traffic!.rateLimitSeries).toHaveLength(ci.traffic!.rateLimitSeries.length + proxy.traffic!.rateLimitSeries.length);
    expect(merged.tests.map((t) => t.source)).toEqual([...ci.tests.map(() => 'run'), 'proxy']);
    expect(merged.startedAt <= merged.finishedAt).toBe(true);
  });

  it('evidence stays bounded however many reports are merged, and same-named sources are told apart', () => {
    const many = mergeReports(
      Array.from({ length: 6 }, () => ({ report: sampleReport() })),
      { failOn: 'must' },
    );
    expect(many.sources.map((s) => s.name)).toEqual(['run', 'run (2)', 'run (3)', 'run (4)', 'run (5)', 'run (6)']);
    for (const r of many.requirements) expect(r.evidence.length, r.id).toBeLessThanOrEqual(12);
    const names = new Set(many.sources.map((s) => s.name));
    for (const r of many.requirements) for (const e of r.evidence) expect(names.has(e.source), e.source).toBe(true);
    // Each source failed it twice: the 8 kept failures come from all 6 sources, not the first 4.
    const failures = requirement(many, 'RS-NAME-CHARACTERS').evidence.filter((e) => e.status === 'fail');
    expect(failures).toHaveLength(8);
    expect(new Set(failures.map((e) => e.source)).size).toBe(6);
  });

  it('--fail-on should also fails on warnings; targets that differ are left to the sources', () => {
    const onlyWarnings = new ReportBuilder({ kind: 'validate', source: 'validate:a.har', target: 'https://a.example.com/api/v2' });
    onlyWarnings.addTest({ name: 'answers 200', requirements: ['SES-SUCCESS-200'], status: 'fail', message: 'received 201' });
    const other = new ReportBuilder({ kind: 'validate', source: 'validate:b.har', target: 'https://b.example.com/api/v2' }).build({ failOn: 'must' });
    const inputs = [{ report: onlyWarnings.build({ failOn: 'must' }) }, { report: other }];
    expect(mergeReports(inputs, { failOn: 'must' }).passed).toBe(true);
    const strict = mergeReports(inputs, { failOn: 'should' });
    expect(strict.passed).toBe(false);
    expect(strict.target).toBeUndefined();
    expect(strict.sources.map((s) => s.target)).toEqual(['https://a.example.com/api/v2', 'https://b.example.com/api/v2']);
  });
});

describe('tmi-conform report merge', () => {
  const ciDir = join(dir, 'ci');
  const proxyDir = join(dir, 'proxy');
  const passingDir = join(dir, 'passing');
  beforeAll(async () => {
    await writeReports(sampleReport(), ciDir);
    await writeReports(disagreeingReport(), proxyDir);
    const passing = new ReportBuilder({ kind: 'run', source: 'run' });
    passing.addTest({ name: 'answers 204', requirements: ['TEP-DELETE-204'], status: 'pass' });
    passing.addTest({ name: 'answers 200', requirements: ['SES-SUCCESS-200'], status: 'fail', message: 'received 201' });
    await writeReports(passing.build({ failOn: 'must' }), passingDir);
  });

  function merge(...args: string[]) {
    const result = spawnSync(process.execPath, [BIN, 'report', 'merge', ...args], { encoding: 'utf8', env: { ...process.env, GITHUB_STEP_SUMMARY: '' } });
    return { code: result.status, stdout: result.stdout, stderr: result.stderr };
  }

  it('merges report directories and report.json files into --out, exit 1 when a must failed', () => {
    const out = join(dir, 'merged');
    const { code, stdout, stderr } = merge(ciDir, join(proxyDir, 'report.json'), '--out', out);
    expect(stderr).toBe('');
    expect(code).toBe(1);
    expect(stdout).toContain('merged 2 source(s): run, proxy');
    expect(stdout).toContain('verdict: NOT conforming (fail-on must)');
    const report = JSON.parse(readFileSync(join(out, 'report.json'), 'utf8')) as Report;
    expect(report.kind).toBe('merge');
    expect(report.sources.map((s) => s.origin)).toEqual([ciDir, join(proxyDir, 'report.json')]);
    expect(requirement(report, 'RS-SIGNING-ALG').status).toBe('fail');
    expect(readFileSync(join(out, 'junit.xml'), 'utf8')).toContain('<testsuite name="tests (proxy)"');
    expect(readFileSync(join(out, 'report.md'), 'utf8')).toMatch(/^## tmi-conform merge: ❌ NOT conforming/);
    expect(readFileSync(join(out, 'report.html'), 'utf8')).toContain('<title>tmi-conform merge report');
  });

  it('--fail-on decides the exit code', () => {
    expect(merge(passingDir, '--out', join(dir, 'm1')).code).toBe(0);
    expect(merge(passingDir, '--out', join(dir, 'm2'), '--fail-on', 'should').code).toBe(1);
  });

  it('unreadable or invalid input, or bad usage: exit 2, one line naming the problem, nothing written', () => {
    const notJson = join(dir, 'not-json.json');
    writeFileSync(notJson, '{"schemaVersion": 1,');
    const notReport = join(dir, 'not-report.json');
    writeFileSync(notReport, JSON.stringify({ ...sampleReport(), requirements: 'none' }));
    const cases: Array<[string[], string]> = [
      [[ciDir, join(dir, 'missing'), '--out', join(dir, 'x')], 'missing'],
      [[dir, '--out', join(dir, 'x')], join(dir, 'report.json')],
      [[notJson, '--out', join(dir, 'x')], 'not-json.json'],
      [[ciDir, notReport, '--out', join(dir, 'x')], 'not-report.json'],
      [[ciDir], '--out'],
      [['--out', join(dir, 'x')], 'at least one'],
      [[ciDir, '--out', join(dir, 'x'), '--fail-on', 'sometimes'], '--fail-on'],
    ];
    for (const [args, named] of cases) {
      const { code, stderr } = merge(...args);
      expect(code, args.join(' ')).toBe(2);
      expect(stderr.trim().split('\n'), stderr).toHaveLength(1);
      expect(stderr).toContain(named);
      expect(stderr).not.toMatch(/\n\s+at /);
    }
    expect(() => readFileSync(join(dir, 'x', 'report.json'))).toThrow();
  });
});
