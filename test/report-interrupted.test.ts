// An interrupted run's report: no verdict in the model, in `report merge` and under a baseline,
// and every format says so. Built the way `run` builds it: the real builder, fed one judged
// exchange and suite test outcomes, then told the run was interrupted.
import { describe, expect, it } from 'vitest';
import { deleteExchange } from '../fixtures/exchanges.ts';
import { applyBaseline } from '../reports/baseline.ts';
import { ReportBuilder } from '../reports/builder.ts';
import { renderSummary } from '../reports/console.ts';
import { renderHtml } from '../reports/html.ts';
import { renderJunit } from '../reports/junit.ts';
import { renderMarkdown } from '../reports/markdown.ts';
import { buildMatrix, renderMatrixConsole } from '../reports/matrix.ts';
import { mergeReports } from '../reports/merge.ts';
import type { Report } from '../reports/model.ts';
import { renderSarif } from '../reports/sarif.ts';
import { reportSchemaError } from '../reports/schema.ts';
import { judgeExchange, RateLimitTracker } from '../rules/index.ts';

const NOT_RUN = 'not run: the run was interrupted';

/** A run that passed all it reached: one conforming DELETE and one passing test, then (or not) the interrupt. */
function runReport(interrupted: boolean): Report {
  const builder = new ReportBuilder({ kind: 'run', source: 'run', target: 'https://tenant.example.com/api/v2' });
  const exchange = deleteExchange();
  builder.addExchange(exchange, judgeExchange(exchange, new RateLimitTracker()), 'delete > answers 204');
  builder.addTest({ name: 'delete > answers 204 [TEP-DELETE-204]', requirements: ['TEP-DELETE-204'], status: 'pass', durationMs: 40 });
  builder.addTest({
    name: 'update session > sending null removes all session metadata [SES-METADATA-CLEARED]',
    requirements: ['SES-METADATA-CLEARED'],
    status: 'skip',
    message: NOT_RUN,
  });
  if (interrupted) builder.interrupted();
  return builder.build({ failOn: 'must' });
}

const byId = (report: Report, id: string) => report.requirements.find((r) => r.id === id)!;

describe('an interrupted run', () => {
  const complete = runReport(false);
  const report = runReport(true);

  it('the same evidence passes when the run ended on its own', () => {
    expect(complete.passed).toBe(true);
    expect(complete.interrupted).toBeUndefined();
    expect(complete.sources[0]!.interrupted).toBeUndefined();
  });

  it('has no verdict: interrupted, passed false, valid against the schema', () => {
    expect(report).toMatchObject({ interrupted: true, passed: false, summary: { fail: 0, warn: 0 } });
    expect(report.sources[0]).toMatchObject({ name: 'run', interrupted: true });
    expect(reportSchemaError(JSON.parse(JSON.stringify(report)))).toBeUndefined();
  });

  it('skips a requirement nothing examined as not run, and keeps what was examined', () => {
    expect(byId(report, 'TEP-DELETE-204').status).toBe('pass');
    expect(byId(report, 'SES-METADATA-CLEARED')).toMatchObject({ status: 'skip', reason: NOT_RUN });
    // Named by no test and examined by no exchange: not run either, not "no test examined it".
    expect(byId(report, 'RL-THROTTLED-429')).toMatchObject({ status: 'skip', reason: NOT_RUN });
    expect(byId(complete, 'RL-THROTTLED-429').reason).toBe('no test or exchange examined it');
  });

  it('stays interrupted when merged with a report that passed, and under a baseline', () => {
    const merged = mergeReports([{ report: complete }, { report }], { failOn: 'must' });
    expect(merged).toMatchObject({ kind: 'merge', interrupted: true, passed: false });
    expect(merged.sources.map((s) => s.interrupted)).toEqual([undefined, true]);
    expect(reportSchemaError(JSON.parse(JSON.stringify(merged)))).toBeUndefined();
    expect(mergeReports([{ report: complete }, { report: complete }], { failOn: 'must' })).toMatchObject({ passed: true });
    expect(mergeReports([{ report: complete }, { report: complete }], { failOn: 'must' }).interrupted).toBeUndefined();
    expect(applyBaseline(report, { source: 'baseline.yaml', entries: [] }).passed).toBe(false);
  });

  it('every format says interrupted, none says conforming', () => {
    const console = renderSummary(report, { detail: 'failures' });
    expect(console.at(-1)).toBe('interrupted: no verdict');
    expect(renderSummary(complete, { detail: 'failures' }).at(-1)).toBe('verdict: conforming');

    const markdown = renderMarkdown(report);
    expect(markdown).toContain('## tmi-conform run: ⏹ interrupted: no verdict');
    expect(markdown).toContain('**Interrupted** (run)');
    expect(markdown).not.toContain('conforming');

    const html = renderHtml(report);
    expect(html).toContain('<div class="verdict interrupted">Interrupted: no verdict</div>');
    expect(html).not.toMatch(/class="verdict ok"|Conforming/);

    const junit = renderJunit(report);
    expect(junit).toMatch(/<testsuites [^>]*errors="1"/);
    expect(junit).toContain('<testsuite name="interrupted" tests="1" failures="0" errors="1" skipped="0"');
    expect(junit).toContain('<error message="interrupted: no verdict: run stopped before it ended" type="interrupted">');
    expect(renderJunit(complete)).not.toContain('<error');

    const sarif = JSON.parse(renderSarif(report));
    expect(sarif.runs[0].invocations[0]).toMatchObject({
      executionSuccessful: false,
      toolExecutionNotifications: [{ level: 'error', message: { text: expect.stringContaining('interrupted: no verdict') } }],
    });
    expect(sarif.runs[0].properties).toMatchObject({ interrupted: true, passed: false });
    expect(JSON.parse(renderSarif(complete)).runs[0].invocations[0].executionSuccessful).toBe(true);

    const matrix = renderMatrixConsole(
      buildMatrix([
        { report, origin: 'a' },
        { report: complete, origin: 'b' },
      ]),
    );
    expect(matrix[0]).toMatch(/: interrupted: no verdict$/);
    expect(matrix[1]).toMatch(/: conforming$/);
  });
});
