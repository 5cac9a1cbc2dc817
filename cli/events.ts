// The --json events (README, "--json events"): a run's `test` and `progress` as they come, and at
// a report's end, for run, validate and proxy alike, one `finding` per failed or warned
// requirement, then the `verdict`.
import type { Report } from '../reports/model.ts';
import type { RunEvents, SuiteProgress } from '../suites/progress.ts';
import type { Terminal } from './terminal.ts';

/** What the evidence says of a failed or warned requirement: its own line of the first such message. */
function messageOf(report: Report['requirements'][number]): string | undefined {
  const lines = report.evidence.find((e) => e.status === report.status && e.message !== undefined)?.message?.split('\n');
  if (!lines) return undefined;
  return (lines.find((line) => line.startsWith(`${report.id}: `)) ?? lines[0]!).replace(`${report.id}: `, '').slice(0, 1000);
}

/** One event per failed or warned requirement, accepted ones (--baseline) included and marked. */
export function findingEvents(report: Report): Array<Record<string, unknown> & { event: 'finding' }> {
  return report.requirements
    .filter((r) => r.status === 'fail' || r.status === 'warn')
    .map((r) => {
      const message = messageOf(r);
      return {
        event: 'finding' as const,
        requirement: r.id,
        level: r.level,
        status: r.status,
        exchanges: r.counts.findings,
        ...(r.counts.security ? { security: r.counts.security } : {}),
        ...(r.accepted ? { accepted: true } : {}),
        ...(message !== undefined ? { message } : {}),
      };
    });
}

/**
 * The report's end: its human lines (stdout, or stderr with --json), and with --json a finding
 * event per failed or warned requirement and the verdict event. `passed` null: no verdict
 * (input that could not be read).
 */
export function sayReportEnd(
  terminal: Terminal,
  report: Report,
  lines: readonly string[],
  end: { written: string[]; passed?: boolean | null; more?: Record<string, unknown> },
): void {
  terminal.lines(lines);
  for (const event of findingEvents(report)) terminal.event(event);
  terminal.event({
    event: 'verdict',
    passed: end.passed === undefined ? report.passed : end.passed,
    failOn: report.failOn,
    requirements: report.summary,
    reports: end.written,
    ...end.more,
  });
}

/** "… token-attacks: 5 of 14 tests finished; 212 requests sent; pacer: 5 per 1.0 s, waiting 0.8 s" */
export function progressLine(p: SuiteProgress): string {
  const { limit, windowMs, waitMs } = p.pacer ?? { waitMs: 0 };
  const rate =
    limit === undefined
      ? 'no rate limit heard yet'
      : windowMs === undefined
        ? `limit ${limit}, window not yet learned`
        : `${limit} per ${(windowMs / 1000).toFixed(1)} s`;
  const wait = waitMs > 0 ? `, waiting ${(waitMs / 1000).toFixed(1)} s` : '';
  return `  … ${p.suite}: ${p.finished} of ${p.planned ?? '?'} tests finished; ${p.requests} requests sent; pacer: ${rate}${wait}`;
}

/** A run's events, told on the terminal: each test as a --json event, progress as a line or an event. */
export function runEvents(terminal: Terminal): RunEvents {
  return {
    test: (test) => terminal.event({ event: 'test', ...test }),
    progress: (p) =>
      terminal.progress(progressLine(p), {
        suite: p.suite,
        tests: { finished: p.finished, planned: p.planned ?? null },
        requests: p.requests,
        pacer: p.pacer ?? { waitMs: 0 },
      }),
  };
}
