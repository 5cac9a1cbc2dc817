// What changed between two reports (a pull request's run against its base branch's): the
// requirements that fail now and did not, those fixed, those still failing, the warnings that
// came and went, each with the exchange behind a new failure. Requirements only one side knows
// (a newer or older kit) are said so, never counted as a regression.
import type { Evidence, Report, RequirementResult, Status } from './model.ts';
import { coverageCell, coverageItems } from './coverage.ts';

export interface DiffEntry {
  requirement: string;
  level: RequirementResult['level'];
  title: string;
  before: Status;
  after: Status;
  /** A new failure or warning: what the first evidence against it said, and its exchange. */
  message?: string;
  exchange?: string;
}

export interface ReportDiff {
  before: { finishedAt: string; target?: string; passed: boolean };
  after: { finishedAt: string; target?: string; passed: boolean };
  /** Failed now, not before: the regression a pull request brings. */
  newFailures: DiffEntry[];
  /** Failed or warned before, pass now. */
  fixed: DiffEntry[];
  stillFailing: DiffEntry[];
  newWarnings: DiffEntry[];
  goneWarnings: DiffEntry[];
  /** Requirements only the later report has (a newer kit), and only the earlier one. */
  added: string[];
  removed: string[];
  /** What the later report examined that the earlier did not, and the other way round; absent when either has no coverage (an earlier version). */
  coverage?: { before: string; after: string; gained: string[]; lost: string[] };
}

const failing = (s: Status) => s === 'fail' || s === 'warn';

function evidenceOf(r: RequirementResult): Pick<DiffEntry, 'message' | 'exchange'> {
  const e: Evidence | undefined = r.evidence.find((x) => x.status === r.status);
  const out: Pick<DiffEntry, 'message' | 'exchange'> = {};
  const message = e?.message?.split('\n', 1)[0];
  if (message) out.message = message;
  if (e?.exchange)
    out.exchange = `${e.exchange.request.method} ${e.exchange.request.url} → ${e.exchange.response?.status ?? e.exchange.error ?? 'no response'}`;
  return out;
}

export function diffReports(before: Report, after: Report): ReportDiff {
  const earlier = new Map(before.requirements.map((r) => [r.id, r]));
  const later = new Set(after.requirements.map((r) => r.id));
  const diff: ReportDiff = {
    before: { finishedAt: before.finishedAt, ...(before.target ? { target: before.target } : {}), passed: before.passed },
    after: { finishedAt: after.finishedAt, ...(after.target ? { target: after.target } : {}), passed: after.passed },
    newFailures: [],
    fixed: [],
    stillFailing: [],
    newWarnings: [],
    goneWarnings: [],
    added: after.requirements.filter((r) => !earlier.has(r.id)).map((r) => r.id),
    removed: before.requirements.filter((r) => !later.has(r.id)).map((r) => r.id),
  };
  for (const r of after.requirements) {
    const was = earlier.get(r.id);
    if (!was) continue;
    const entry: DiffEntry = { requirement: r.id, level: r.level, title: r.title, before: was.status, after: r.status };
    if (r.status === 'fail' && was.status !== 'fail') diff.newFailures.push({ ...entry, ...evidenceOf(r) });
    else if (r.status === 'fail') diff.stillFailing.push(entry);
    else if (r.status === 'pass' && failing(was.status)) diff.fixed.push(entry);
    if (r.status === 'warn' && was.status !== 'warn') diff.newWarnings.push({ ...entry, ...evidenceOf(r) });
    if (was.status === 'warn' && r.status !== 'warn' && r.status !== 'pass') diff.goneWarnings.push(entry);
  }
  const coverage = coverageDiff(before, after);
  if (coverage) diff.coverage = coverage;
  return diff;
}

/**
 * Coverage gained and lost: each part (a requirement, a named status, a value, an operation)
 * examined on one side only.
 */
function coverageDiff(before: Report, after: Report): ReportDiff['coverage'] {
  if (!before.coverage || !after.coverage) return undefined;
  const earlier = coverageItems({ requirements: before.requirements, coverage: before.coverage });
  const later = coverageItems({ requirements: after.requirements, coverage: after.coverage });
  // Only parts both reports count: one only a newer kit knows is no gain.
  const both = [...later.keys()].filter((item) => earlier.has(item));
  return {
    before: coverageCell(before.coverage),
    after: coverageCell(after.coverage),
    gained: both.filter((item) => !earlier.get(item) && later.get(item)),
    lost: both.filter((item) => earlier.get(item) && !later.get(item)),
  };
}

/** A new failed `must` makes `report diff` exit 1. */
export const bringsNewFailure = (diff: ReportDiff): boolean => diff.newFailures.some((e) => e.level === 'must');

/** The console's lines, and report.md's with `markdown`: short enough for a pull-request comment. */
export function renderDiff(diff: ReportDiff, markdown = false): string[] {
  const id = (e: DiffEntry) => (markdown ? `**${e.requirement}**` : e.requirement);
  const line = (e: DiffEntry, extra = '') => `${markdown ? '- ' : '  '}${id(e)} (${e.level}, ${e.before} → ${e.after})${extra}`;
  const said = (e: DiffEntry) => `${e.message ? `: ${e.message.slice(0, 300)}` : ''}${e.exchange ? ` [${e.exchange.slice(0, 300)}]` : ''}`;
  const out = [
    `${markdown ? '## ' : ''}tmi-conform report diff: ${diff.newFailures.length} new failure(s), ${diff.fixed.length} fixed, ${diff.stillFailing.length} still failing, ${diff.newWarnings.length} new warning(s)`,
  ];
  if (markdown) out.push('');
  const section = (title: string, entries: DiffEntry[], extra: (e: DiffEntry) => string = () => '') => {
    if (entries.length === 0) return;
    out.push(markdown ? `### ${title}` : `${title}:`);
    if (markdown) out.push('');
    for (const e of entries) out.push(line(e, extra(e)));
    if (markdown) out.push('');
  };
  section('New failures', diff.newFailures, said);
  section('New warnings', diff.newWarnings, said);
  section('Fixed', diff.fixed);
  section('Still failing', diff.stillFailing);
  section('Warnings gone', diff.goneWarnings);
  if (diff.added.length > 0) out.push(`${markdown ? '' : '  '}requirements new in the later report (not regressions): ${diff.added.join(', ')}`);
  if (diff.removed.length > 0) out.push(`${markdown ? '' : '  '}requirements only the earlier report has: ${diff.removed.join(', ')}`);
  out.push(...coverageDiffLines(diff, markdown));
  return out;
}

/** Coverage before and after, and each part gained or lost. */
function coverageDiffLines(diff: ReportDiff, markdown: boolean): string[] {
  const c = diff.coverage;
  if (!c) return [];
  const lead = markdown ? '- ' : '  ';
  const out = [markdown ? '### Coverage' : 'coverage:', ...(markdown ? [''] : []), `${lead}before: ${c.before}`, `${lead}after: ${c.after}`];
  if (c.gained.length > 0) out.push(`${lead}gained: ${c.gained.join(', ')}`);
  if (c.lost.length > 0) out.push(`${lead}lost: ${c.lost.join(', ')}`);
  if (c.gained.length === 0 && c.lost.length === 0) out.push(`${lead}the same parts examined`);
  if (markdown) out.push('');
  return out;
}
