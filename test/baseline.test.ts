// Baselines: failures a team has accepted stay visible but leave the verdict; a new failure on
// top, or an acceptance past its date, fails the run again; a baselined requirement that now
// passes is said fixed, with the entry to remove. Read from YAML or from an earlier report.json.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { UsageError } from '../core/errors.ts';
import { applyBaseline, baselineYaml, loadBaseline } from '../reports/baseline.ts';
import { ReportBuilder } from '../reports/builder.ts';
import { renderSummary } from '../reports/console.ts';
import { renderJunit } from '../reports/junit.ts';
import { renderMarkdown } from '../reports/markdown.ts';
import { reportSchemaError } from '../reports/schema.ts';
import { getExchange } from '../fixtures/exchanges.ts';
import { reportOfRead } from './helpers/reports.ts';
import { judgeExchange } from '../rules/index.ts';

const BIN = fileURLToPath(new URL('../bin/tmi-conform.js', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'tmi-baseline-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const file = (name: string, text: string): string => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};

describe('loadBaseline', () => {
  it('reads a YAML list: requirement, reason, an optional until date', async () => {
    const path = file(
      'ok.yaml',
      'accepted:\n  - requirement: RS-SIGNING-ALG\n    reason: the vendor signs with HS512 until its next release\n    until: 2099-12-31\n  - requirement: TEP-DELETE-204\n    reason: "200, ticket #12"\n',
    );
    expect(await loadBaseline(path)).toEqual({
      source: path,
      entries: [
        { requirement: 'RS-SIGNING-ALG', reason: 'the vendor signs with HS512 until its next release', until: '2099-12-31' },
        { requirement: 'TEP-DELETE-204', reason: '200, ticket #12' },
      ],
    });
  });

  it('reads an earlier report.json: what failed or warned in it', async () => {
    const path = file('report.json', JSON.stringify(reportOfRead({ signing_alg: 'HS512' })));
    const { entries } = await loadBaseline(path);
    expect(entries.map((e) => e.requirement)).toEqual(['RS-SIGNING-ALG']);
    expect(entries[0]!.reason).toMatch(/^failed in the baseline report of \d{4}-/);
  });

  it.each([
    ['unknown.yaml', 'accepted:\n  - requirement: NOT-A-REQUIREMENT\n    reason: x\n', 'unknown requirement NOT-A-REQUIREMENT'],
    ['no-reason.yaml', 'accepted:\n  - requirement: RS-SIGNING-ALG\n', 'entry 1 (RS-SIGNING-ALG) has no reason'],
    ['bad-date.yaml', 'accepted:\n  - requirement: RS-SIGNING-ALG\n    reason: x\n    until: next year\n', 'until is not a date YYYY-MM-DD'],
    ['no-list.yaml', 'requirements: []\n', 'no "accepted:" list'],
    ['not-yaml.yaml', 'accepted: [\n', 'not valid JSON or YAML'],
  ])('%s is a usage error (exit 2) of one line naming the file and the cause', async (name, text, cause) => {
    const path = file(name, text);
    const error = await loadBaseline(path).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UsageError);
    expect((error as UsageError).exitCode).toBe(2);
    expect((error as Error).message).toContain(path);
    expect((error as Error).message).toContain(cause);
    expect((error as Error).message).not.toContain('\n');
  });
});

describe('applyBaseline', () => {
  const now = new Date('2027-01-15T12:00:00Z');
  const accept = (until?: string) => ({
    source: 'b.yaml',
    entries: [{ requirement: 'RS-SIGNING-ALG', reason: 'HS512 until the vendor moves', ...(until ? { until } : {}) }],
  });

  it('accepts the failure: marked with its reason, left out of the verdict, the report still valid', () => {
    const report = applyBaseline(reportOfRead({ signing_alg: 'HS512' }), accept('2027-01-15'), now);
    expect(report.passed).toBe(true);
    const alg = report.requirements.find((r) => r.id === 'RS-SIGNING-ALG')!;
    expect(alg.status).toBe('fail');
    expect(alg.accepted).toEqual({ reason: 'HS512 until the vendor moves', until: '2027-01-15' });
    expect(report.baseline).toEqual({
      source: 'b.yaml',
      accepted: [{ requirement: 'RS-SIGNING-ALG', reason: 'HS512 until the vendor moves', until: '2027-01-15' }],
      fixed: [],
      expired: [],
    });
    expect(reportSchemaError(report)).toBeUndefined();
  });

  it('past its until date, the failure counts again', () => {
    const report = applyBaseline(reportOfRead({ signing_alg: 'HS512' }), accept('2027-01-14'), now);
    expect(report.passed).toBe(false);
    expect(report.baseline!.expired.map((e) => e.requirement)).toEqual(['RS-SIGNING-ALG']);
    expect(report.requirements.find((r) => r.id === 'RS-SIGNING-ALG')!.accepted).toBeUndefined();
  });

  it('a baselined requirement that passes now is fixed, with the entry to remove', () => {
    const builder = new ReportBuilder({ kind: 'validate', source: 'test' });
    const exchange = getExchange();
    builder.addExchange(exchange, judgeExchange(exchange));
    const report = applyBaseline(builder.build({ failOn: 'must' }), accept(), now);
    expect(report.baseline!.fixed).toEqual([
      { requirement: 'RS-SIGNING-ALG', reason: 'HS512 until the vendor moves', remove: '- requirement: RS-SIGNING-ALG' },
    ]);
  });

  it('a reason holding a secret is masked, as everything else in a report', () => {
    const token = `eyJhbGciOiJIUzI1NiJ9.${Buffer.from('{"sub":"x"}').toString('base64url')}.c2lnbmF0dXJl`;
    const report = applyBaseline(
      reportOfRead({ signing_alg: 'HS512' }),
      { source: 'b.yaml', entries: [{ requirement: 'RS-SIGNING-ALG', reason: `seen with ${token}` }] },
      now,
    );
    expect(JSON.stringify(report)).not.toContain(token);
  });

  it('every format says what was accepted and why; JUnit skips it, so its failure count agrees with the exit code', () => {
    const report = applyBaseline(reportOfRead({ signing_alg: 'HS512' }), accept(), now);
    expect(renderSummary(report, { detail: 'failures' })).toEqual(
      expect.arrayContaining(['baseline b.yaml: 1 failure(s) accepted, 0 fixed, 0 expired', '  accepted: RS-SIGNING-ALG: HS512 until the vendor moves']),
    );
    expect(renderSummary(report, { detail: 'failures' }).some((line) => line.includes('FAIL RS-SIGNING-ALG'))).toBe(false);
    expect(renderMarkdown(report)).toContain('- accepted: **RS-SIGNING-ALG**: HS512 until the vendor moves');
    const junit = renderJunit(report);
    expect(junit).toContain('<skipped message="accepted: HS512 until the vendor moves;');
    expect(junit).toMatch(/<testsuite name="requirements" tests="\d+" failures="0"/);
  });

  it('report baseline writes a file that --baseline reads back', async () => {
    const path = file('written.yaml', baselineYaml(reportOfRead({ signing_alg: 'HS512' })));
    expect((await loadBaseline(path)).entries).toEqual([{ requirement: 'RS-SIGNING-ALG', reason: expect.stringMatching(/^fails since \d{4}-\d{2}-\d{2}: /) }]);
  });
});

describe('tmi-conform run --baseline, against the embedded reference', () => {
  const run = (...args: string[]) => {
    const result = spawnSync(
      process.execPath,
      [BIN, 'run', '--property-runs', '2', '--requirement', 'TEP-DELETE-204', '--requirement', 'RS-SIGNING-ALG', ...args],
      { encoding: 'utf8', env: { ...process.env, GITHUB_STEP_SUMMARY: '' } },
    );
    return { code: result.status, stdout: result.stdout, stderr: result.stderr };
  };
  const baseline = (until?: string) =>
    file(
      `accept-${until ?? 'always'}.yaml`,
      `accepted:\n  - requirement: TEP-DELETE-204\n    reason: the vendor answers 200 until ticket 12 ships\n${until ? `    until: ${until}\n` : ''}`,
    );

  it('accepted: exit 0, the reports say why; without the baseline: exit 1; a second fault on top: exit 1 naming only it; expired: exit 1', () => {
    const accepted = run('--fault', 'delete-returns-200', '--baseline', baseline(), '--report-dir', join(dir, 'accepted'));
    expect(accepted.code, accepted.stdout + accepted.stderr).toBe(0);
    expect(accepted.stdout).toContain('accepted: TEP-DELETE-204: the vendor answers 200 until ticket 12 ships');
    expect(readFileSync(join(dir, 'accepted', 'report.md'), 'utf8')).toContain('accepted: **TEP-DELETE-204**: the vendor answers 200 until ticket 12 ships');

    expect(run('--fault', 'delete-returns-200', '--report-dir', join(dir, 'without')).code).toBe(1);

    const onTop = run('--fault', 'delete-returns-200', '--fault', 'rs-signing-alg-invalid', '--baseline', baseline(), '--report-dir', join(dir, 'on-top'));
    expect(onTop.code).toBe(1);
    const failLines = onTop.stdout.split('\n').filter((line) => /^\s+FAIL /.test(line));
    expect(failLines).toEqual([expect.stringContaining('FAIL RS-SIGNING-ALG')]);

    const expired = run('--fault', 'delete-returns-200', '--baseline', baseline('2020-01-01'), '--report-dir', join(dir, 'expired'));
    expect(expired.code).toBe(1);
    expect(expired.stdout).toContain('expired: TEP-DELETE-204 (until 2020-01-01): counts again');
  }, 120_000);

  it('a baseline naming an unknown requirement: exit 2 before anything runs', () => {
    const bad = run('--baseline', file('unknown-run.yaml', 'accepted:\n  - requirement: NOPE-1\n    reason: x\n'), '--report-dir', join(dir, 'bad'));
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('unknown requirement NOPE-1');
  });
});
