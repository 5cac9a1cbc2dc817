// How statuses combine: one rule for the builder, the per-operation groups and `report merge`.
import type { Level } from '../rules/types.ts';
import type { FailOn } from './fail-on.ts';
import type { Report, Status, Summary } from './model.ts';

/** The order in which evidence outweighs evidence: one failure outweighs any number of passes. */
export const STATUS_ORDER: readonly Status[] = ['fail', 'warn', 'pass', 'skip'];

const rank = (status: Status) => STATUS_ORDER.indexOf(status);

/** What failed evidence makes of a requirement: a failed `must` fails, a failed `should` warns. */
export const failureStatus = (level: Level): Status => (level === 'must' ? 'fail' : 'warn');

/** fail > warn > pass > skip; no statuses at all is a skip (nothing examined it). */
export function worstStatus(statuses: Iterable<Status>): Status {
  let worst: Status = 'skip';
  for (const status of statuses) if (rank(status) < rank(worst)) worst = status;
  return worst;
}

/** Sorts failures first, then warnings, passes, skips; stable within a status. */
export const byStatus = (a: { status: Status }, b: { status: Status }) => rank(a.status) - rank(b.status);

export function summarize(items: Iterable<{ status: Status }>): Summary {
  const summary: Summary = { pass: 0, fail: 0, warn: 0, skip: 0 };
  for (const item of items) summary[item.status]++;
  return summary;
}

/** The verdict: no failed `must`, and with --fail-on should no warned `should` either. */
export const verdict = (summary: Summary, failOn: FailOn): boolean => summary.fail === 0 && (failOn === 'must' || summary.warn === 0);

/** What a report concluded: an interrupted one concludes nothing, whatever its requirements say. */
export type Conclusion = 'conforming' | 'not-conforming' | 'interrupted';

export const conclusionOf = (report: Pick<Report, 'passed' | 'interrupted'>): Conclusion =>
  report.interrupted === true ? 'interrupted' : report.passed ? 'conforming' : 'not-conforming';

/** The names of the sources that were interrupted. */
export const interruptedSources = (report: Pick<Report, 'sources'>): string[] => report.sources.filter((s) => s.interrupted === true).map((s) => s.name);

/** The words every renderer says of an interrupted report. */
export const INTERRUPTED_VERDICT = 'interrupted: no verdict';

/** Why a test or requirement of an interrupted run is skipped: the interrupt came before it. */
export const NOT_RUN_INTERRUPTED = 'not run: the run was interrupted';
