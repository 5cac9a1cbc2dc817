// report.md: the verdict, a summary table, every failed or warned requirement with its quote
// and evidence; short enough for a CI job summary, and appended to it when GITHUB_STEP_SUMMARY
// is set. writeReports writes all five files.
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { ReportBuilder } from '../reports/builder.ts';
import { code, inline, renderMarkdown } from '../reports/markdown.ts';
import type { OperationTraffic } from '../reports/model.ts';
import { operationsCalled } from '../reports/operations.ts';
import { writeReports } from '../reports/write.ts';
import { LEAKED_TOKEN, sampleReport, XSS } from './report-fixtures.ts';

const dir = mkdtempSync(join(tmpdir(), 'tmi-report-md-'));
const summaryBefore = process.env['GITHUB_STEP_SUMMARY'];
afterEach(() => {
  if (summaryBefore === undefined) delete process.env['GITHUB_STEP_SUMMARY'];
  else process.env['GITHUB_STEP_SUMMARY'] = summaryBefore;
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The lines of the "### Requirements not met" section, up to the next section or fold. */
function sectionsOf(md: string): Map<string, string> {
  const sections = new Map<string, string>();
  for (const block of md.split(/^#### /m).slice(1)) {
    const id = /^\S+ ([A-Z0-9-]+) /.exec(block)?.[1];
    if (id) sections.set(id, block.split(/^(?:### |<details>)/m)[0]!);
  }
  return sections;
}

describe('report.md', () => {
  it('starts with the verdict and a summary table that matches the report', () => {
    const report = sampleReport();
    const md = renderMarkdown(report);
    const lines = md.split('\n');
    expect(lines[0]).toBe('## tmi-conform run: ❌ NOT conforming (fail-on must)');
    const header = lines.indexOf('| pass | fail | warn | skip |');
    expect(header).toBeGreaterThan(0);
    expect(lines[header + 2]).toBe(`| ${report.summary.pass} | ${report.summary.fail} | ${report.summary.warn} | ${report.summary.skip} |`);
    expect(md).toContain('Suite tests: 5 (2 passed, 1 failed, 1 warned, 1 skipped).');
    expect(renderMarkdown(new ReportBuilder({ kind: 'validate', source: 'validate' }).build({ failOn: 'must' })).split('\n')[0]).toBe(
      '## tmi-conform validate: ✅ conforming',
    );
  });

  it('has a row per operation with its requirement counts and its traffic', () => {
    const md = renderMarkdown(sampleReport());
    const row = md.split('\n').find((l) => l.startsWith('| Get a resource server '))!;
    expect(row).toMatch(/\| ❌ fail \| \d+ \| 3 \| \d+ \| \d+ \| .*200: \d+.*302: 1/);
    expect(md.split('\n').filter((l) => /^\| (Every operation|Delete|Update|Get)/.test(l))).toHaveLength(5);
  });

  it('lists every failed or warned requirement, failures first, each with its quote and evidence', () => {
    const report = sampleReport();
    const md = renderMarkdown(report);
    const sections = sectionsOf(md);
    const problems = report.requirements.filter((r) => r.status === 'fail' || r.status === 'warn');
    expect([...sections.keys()].sort()).toEqual(problems.map((r) => r.id).sort());
    const order = [...sections.keys()].map((id) => report.requirements.find((r) => r.id === id)!.status);
    expect(order).toEqual([...order].sort((a, b) => (a === b ? 0 : a === 'fail' ? -1 : 1)));
    const alg = sections.get('RS-SIGNING-ALG')!;
    expect(alg).toContain('❌ RS-SIGNING-ALG (must)');
    expect(alg).toContain(`> ${report.requirements.find((r) => r.id === 'RS-SIGNING-ALG')!.quote}`);
    expect(alg).toMatch(/- `GET https:\/\/tenant\.example\.com\/api\/v2\/resource-servers\/rs_1` → 200 \(run, test "traffic replay"\): .*HS512/);
    const cleared = sections.get('SES-METADATA-CLEARED')!;
    expect(cleared).toContain('test "updateSession > clears metadata with null or {}"');
    expect(cleared).toContain('counterexample: `');
    expect(sections.get('GEN-STATUS-DOCUMENTED')).toMatch(/⚠️ GEN-STATUS-DOCUMENTED \(should\)[\s\S]*Inferred: /);
    // Skipped requirements are folded away with their reasons, not listed as problems.
    expect(md).toMatch(
      /<details><summary>Skipped requirements \(\d+\)<\/summary>[\s\S]*\| AUTH-NON-GLOBAL-401 \| must \| no "non\\_global" credential profile in the config \|/,
    );
  });

  it('escapes hostile text: no raw HTML, no broken table or fold, no secret', () => {
    const md = renderMarkdown(sampleReport());
    for (const payload of Object.values(XSS)) expect(md).not.toContain(payload);
    expect(md).not.toMatch(/<(script|img|svg)/i);
    expect(md).not.toContain(LEAKED_TOKEN);
    expect(md.match(/<details>/g)?.length).toBe(md.match(/<\/details>/g)?.length);
    expect(inline('a | b </details> *c* [x](y)')).toBe('a \\| b &lt;/details> \\*c\\* \\[x\\](y)');
    expect(code('GET /x?a=1')).toBe('`GET /x?a=1`');
    expect(code('GET /x?a="><svg>|`')).toBe('<code>GET /x?a="&gt;&lt;svg&gt;&#124;`</code>');
  });

  it('stays short enough for a job summary however much fails', () => {
    const builder = new ReportBuilder({ kind: 'run', source: 'run' });
    const requirements = sampleReport().requirements.map((r) => r.id);
    for (let i = 0; i < 500; i++) {
      builder.addTest({ name: `test ${i} ${'x'.repeat(500)}`, requirements, status: 'fail', message: 'm'.repeat(5000), counterexample: 'c'.repeat(5000) });
    }
    const md = renderMarkdown(builder.build({ failOn: 'must' }));
    expect(md).toMatch(/… and \d+ more in report\.html and report\.json\./);
    expect(md).toContain('- … and 480 more in junit.xml');
    expect(Buffer.byteLength(md)).toBeLessThan(100_000);
  });
});

describe('operations called', () => {
  const row = (name: string, operation: OperationTraffic['operation']): OperationTraffic => ({
    name,
    operation,
    exchanges: 1,
    byStatus: { '200': 1 },
    requirements: [],
  });

  it('counts the token endpoint apart from the three operations the document specifies', () => {
    const rows = [
      row('DELETE /token-exchange-profiles/{id}', 'deleteTokenExchangeProfile'),
      row('PATCH /sessions/{id}', 'updateSession'),
      row('GET /resource-servers/{id}', 'getResourceServer'),
      row('POST /oauth/token', 'getToken'),
    ];
    expect(operationsCalled(rows)).toBe("3 of the document's operations and its token endpoint, 0 others");
    expect(operationsCalled([rows[2]!, row('GET /users/{id}', 'otherOperation')])).toBe("1 of the document's operations, 1 other");
  });
});

describe('writeReports', () => {
  it('writes the five files, no temporary file left behind', async () => {
    delete process.env['GITHUB_STEP_SUMMARY'];
    const out = join(dir, 'five');
    const written = await writeReports(sampleReport(), out);
    expect(written.map((p) => p.slice(out.length + 1))).toEqual(['report.json', 'junit.xml', 'report.md', 'report.html', 'report.sarif']);
    expect(readdirSync(out).sort()).toEqual(['junit.xml', 'report.html', 'report.json', 'report.md', 'report.sarif']);
  });

  it('appends report.md to the GitHub job summary when GITHUB_STEP_SUMMARY is set', async () => {
    const summary = join(dir, 'step-summary.md');
    writeFileSync(summary, '# earlier step\n');
    process.env['GITHUB_STEP_SUMMARY'] = summary;
    const out = join(dir, 'summary');
    await writeReports(sampleReport(), out);
    await writeReports(sampleReport({ failOn: 'should' }), join(dir, 'summary-2'));
    const text = readFileSync(summary, 'utf8');
    const first = readFileSync(join(out, 'report.md'), 'utf8');
    expect(text.startsWith(`# earlier step\n${first}`)).toBe(true);
    expect(text.endsWith(readFileSync(join(dir, 'summary-2', 'report.md'), 'utf8'))).toBe(true);
  });
});
