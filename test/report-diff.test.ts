// report diff: what changed between two runs, per requirement. A regression is a requirement that
// fails now and did not; requirements only one side knows (another kit version) are named and
// never counted; exit 1 only for a new failed must. And report matrix: several targets' reports
// side by side.
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { reportOfRead } from './helpers/reports.ts';
import { bringsNewFailure, diffReports, renderDiff, type ReportDiff } from '../reports/diff.ts';
import { buildMatrix, renderMatrixMarkdown, type Matrix } from '../reports/matrix.ts';

const BIN = fileURLToPath(new URL('../bin/tmi-conform.js', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'tmi-report-diff-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const ids = (entries: ReportDiff['newFailures']) => entries.map((e) => e.requirement);

describe('diffReports', () => {
  it('a new failure, with its message and exchange; fixed; still failing', () => {
    const conforming = reportOfRead({});
    const faulty = reportOfRead({ signing_alg: 'HS512' });
    const regression = diffReports(conforming, faulty);
    expect(ids(regression.newFailures)).toEqual(['RS-SIGNING-ALG']);
    expect(regression.newFailures[0]).toMatchObject({
      level: 'must',
      before: 'pass',
      after: 'fail',
      message: expect.stringContaining('received "HS512"'),
      exchange: 'GET https://tenant.example.com/api/v2/resource-servers/rs_1 → 200',
    });
    expect(bringsNewFailure(regression)).toBe(true);
    expect(ids(diffReports(faulty, conforming).fixed)).toEqual(['RS-SIGNING-ALG']);
    expect(bringsNewFailure(diffReports(faulty, conforming))).toBe(false);
    const same = diffReports(faulty, faulty);
    expect(ids(same.stillFailing)).toEqual(['RS-SIGNING-ALG']);
    expect(same.newFailures).toEqual([]);
  });

  it('a requirement only one side knows is named, not counted as a regression', () => {
    const older = reportOfRead({});
    const newer = reportOfRead({ signing_alg: 'HS512' });
    const trimmed = { ...older, requirements: older.requirements.filter((r) => r.id !== 'RS-SIGNING-ALG') };
    const diff = diffReports(trimmed, newer);
    expect(diff.added).toEqual(['RS-SIGNING-ALG']);
    expect(diff.newFailures).toEqual([]);
    expect(bringsNewFailure(diff)).toBe(false);
    expect(renderDiff(diff)).toContain('  requirements new in the later report (not regressions): RS-SIGNING-ALG');
  });

  it('the Markdown of every requirement turned failing fits a pull-request comment', () => {
    const conforming = reportOfRead({});
    const everything = {
      ...conforming,
      requirements: conforming.requirements.map((r) => ({
        ...r,
        status: 'fail' as const,
        evidence: [{ source: 's', kind: 'exchange' as const, status: 'fail' as const, message: `${r.id}: ${'x'.repeat(2000)}` }],
      })),
    };
    expect(renderDiff(diffReports(conforming, everything), true).join('\n').length).toBeLessThan(65_000);
  });
});

describe('buildMatrix', () => {
  it('every requirement × 10 targets fits a pull-request comment in Markdown; a requirement one report lacks is a dot', () => {
    const one = reportOfRead({ signing_alg: 'HS512' });
    const reports = Array.from({ length: 10 }, (_, i) => ({ report: { ...one, target: `https://tenant-${i}.example.com/api/v2` }, origin: `reports/t${i}` }));
    reports[9]!.report = { ...reports[9]!.report, requirements: reports[9]!.report.requirements.filter((r) => r.id !== 'RS-SIGNING-ALG') };
    const matrix = buildMatrix(reports);
    // Named by the target's host, not its whole URL.
    expect(matrix.targets.map((t) => t.name)).toEqual(reports.map((_, i) => `tenant-${i}.example.com`));
    expect(matrix.rows.find((r) => r.requirement === 'RS-SIGNING-ALG')!.cells.map((c) => c?.status)).toEqual([...Array(9).fill('fail'), undefined]);
    const markdown = renderMatrixMarkdown(matrix);
    expect(markdown.length).toBeLessThan(65_000);
    expect(markdown).toContain('| `RS-SIGNING-ALG` must | ❌ | ❌ | ❌ | ❌ | ❌ | ❌ | ❌ | ❌ | ❌ | · |');
  });
});

describe('tmi-conform report diff and matrix, of two reference runs', () => {
  const run = (name: string, ...faults: string[]) => {
    const reportDir = join(dir, name);
    const result = spawnSync(
      process.execPath,
      [
        BIN,
        'run',
        '--property-runs',
        '2',
        '--requirement',
        'TEP-DELETE-204',
        '--requirement',
        'RS-SIGNING-ALG',
        ...faults.flatMap((f) => ['--fault', f]),
        '--report-dir',
        reportDir,
      ],
      { encoding: 'utf8', env: { ...process.env, GITHUB_STEP_SUMMARY: '' } },
    );
    expect(result.status, result.stdout + result.stderr).toBe(faults.length > 0 ? 1 : 0);
    return reportDir;
  };

  it('lists exactly the faulty requirement as new, exits 1; the other way round it is fixed, exit 0', () => {
    const conforming = run('conforming');
    const faulty = run('faulty', 'delete-returns-200');
    const out = join(dir, 'diff');
    const diff = spawnSync(process.execPath, [BIN, 'report', 'diff', conforming, faulty, '--out', out], { encoding: 'utf8' });
    expect(diff.status, diff.stderr).toBe(1);
    expect(diff.stdout).toContain('tmi-conform report diff: 1 new failure(s), 0 fixed, 0 still failing');
    const written = JSON.parse(readFileSync(join(out, 'diff.json'), 'utf8')) as ReportDiff;
    expect(ids(written.newFailures)).toEqual(['TEP-DELETE-204']);
    expect(ids(written.newWarnings)).toEqual(['GEN-STATUS-DOCUMENTED']);
    expect(written.newFailures[0]!.exchange).toMatch(/^DELETE .*\/api\/v2\/token-exchange-profiles\/.* → 200$/);
    expect(readFileSync(join(out, 'diff.md'), 'utf8')).toContain('- **TEP-DELETE-204** (must, pass → fail)');
    const back = spawnSync(process.execPath, [BIN, 'report', 'diff', join(faulty, 'report.json'), conforming], { encoding: 'utf8' });
    expect(back.status).toBe(0);
    // The fault's 200 also broke the inferred status rule (a warning): both are fixed.
    expect(back.stdout).toContain('0 new failure(s), 2 fixed');
    expect(back.stdout).toContain('  TEP-DELETE-204 (must, fail → pass)');
    expect(back.stdout).toContain('  GEN-STATUS-DOCUMENTED (should, warn → pass)');

    // The same two runs as two targets of a matrix.
    const matrixDir = join(dir, 'matrix');
    const matrix = spawnSync(process.execPath, [BIN, 'report', 'matrix', `conforming=${conforming}`, `faulty=${faulty}`, '--out', matrixDir], {
      encoding: 'utf8',
    });
    expect(matrix.status, matrix.stderr).toBe(0);
    const table = JSON.parse(readFileSync(join(matrixDir, 'matrix.json'), 'utf8')) as Matrix;
    expect(table.targets.map((t) => t.passed)).toEqual([true, false]);
    const row = (id: string) => table.rows.find((r) => r.requirement === id)!.cells.map((c) => c?.status);
    expect(row('TEP-DELETE-204')).toEqual(['pass', 'fail']);
    expect(row('RS-SIGNING-ALG')).toEqual(['pass', 'pass']);
    expect(matrix.stdout).toMatch(/ +conforming +faulty/);
    expect(matrix.stdout).toMatch(/TEP-DELETE-204 +pass +fail/);
    expect(readFileSync(join(matrixDir, 'matrix.md'), 'utf8')).toContain('| requirement | conforming | faulty |');
    // The folder uploaded alone: every link of matrix.html leads to a file inside it.
    const alone = join(dir, 'uploaded-matrix');
    cpSync(matrixDir, alone, { recursive: true });
    const html = readFileSync(join(alone, 'matrix.html'), 'utf8');
    expect(html).toContain('href="faulty/report.html#req-TEP-DELETE-204"');
    const hrefs = [...html.matchAll(/href="([^"#]+)/g)].map((m) => m[1]!);
    expect(hrefs.length).toBeGreaterThan(2);
    for (const href of new Set(hrefs)) expect(existsSync(join(alone, decodeURIComponent(href))), href).toBe(true);
    expect(readFileSync(join(alone, 'faulty', 'report.html'), 'utf8')).toContain('id="req-TEP-DELETE-204"');
  }, 120_000);
});
