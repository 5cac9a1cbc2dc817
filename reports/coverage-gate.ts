// The coverage gate (--min-coverage, the run config's `coverage:`): the least share of each part
// of the coverage a command must reach, else it exits 1 with one line naming the number and the
// largest part missing. "90" is the document's requirements; "document=90,responses=75,values=50,
// operations=100" names each part; "description=80,description-responses=50": the user's
// description's operations exercised and its declared statuses seen (--openapi; a report without
// a description is below any such gate, and the line says why). A baseline accepts a known gap (`gap:` entries, a reason and
// an optional until:), which then counts as examined for the gate, never in the figures.
import { UsageError } from '../core/errors.ts';
import { COVERAGE_PARTS, type CoveragePart, countOf, coverageItems, fraction } from './coverage.ts';
import type { BaselineGap, Coverage, CoverageCount, Report } from './model.ts';

export type CoverageGate = Partial<Record<CoveragePart, number>>;

/** The item prefix (reports/coverage.ts coverageItems) of each part. */
const ITEM_OF: Record<CoveragePart, string> = {
  document: 'requirement ',
  responses: 'response ',
  values: 'value ',
  operations: 'operation ',
  description: 'description operation ',
  'description-responses': 'description response ',
};

const PERCENT = /^(100(\.0+)?|\d{1,2}(\.\d+)?)$/;

/**
 * Reads "90" or "document=90,operations=100" (a number from the file too); `where` names the flag or
 * key in the one-line error; `parts`: those the command can count (run judges no description).
 */
export function parseMinCoverage(given: string | number, where: string, parts: readonly CoveragePart[] = COVERAGE_PARTS): CoverageGate {
  const bad = (): never => {
    throw new UsageError(`${where}: ${JSON.stringify(given)} is not a percentage (0 to 100) or PART=N,… with PART one of ${parts.join(', ')}`);
  };
  const text = String(given).trim();
  const gate: CoverageGate = {};
  for (const piece of text.split(',').map((p) => p.trim())) {
    const [part, value] = piece.includes('=') ? (piece.split('=', 2).map((s) => s.trim()) as [string, string]) : ['document', piece];
    if (!(parts as readonly string[]).includes(part) || !PERCENT.test(value) || part in gate) bad();
    gate[part as CoveragePart] = Number(value);
  }
  return gate;
}

const expired = (gap: BaselineGap, now: Date) => gap.until !== undefined && now.toISOString().slice(0, 10) > gap.until;

/** The gaps a baseline accepts that the report has (not examined, not expired). */
export function acceptedGaps(report: Pick<Report, 'requirements'> & { coverage: Coverage }, gaps: readonly BaselineGap[], now = new Date()): BaselineGap[] {
  const items = coverageItems(report);
  return gaps.filter((g) => items.get(g.gap) === false && !expired(g, now));
}

/** The part's count for the gate: what was examined, and the accepted gaps of that part. */
function gatedCount(count: CoverageCount, part: CoveragePart, accepted: readonly BaselineGap[]): CoverageCount {
  return { examined: count.examined + accepted.filter((g) => g.gap.startsWith(ITEM_OF[part])).length, applicable: count.applicable };
}

/** The one line when the report is below the gate (undefined: it reaches it); the accepted gaps are read from the report. */
export function belowCoverageGate(report: Pick<Report, 'requirements' | 'coverage'>, gate: CoverageGate): string | undefined {
  const coverage = report.coverage;
  if (!coverage) return `coverage: the report has none (an earlier version): --min-coverage cannot be checked`;
  const accepted = coverage.accepted ?? [];
  for (const part of COVERAGE_PARTS) {
    const min = gate[part];
    if (min === undefined) continue;
    const counted = countOf(coverage, part);
    if (!counted)
      return `coverage below --min-coverage: ${part} < ${min} %: ${coverage.descriptionsNotMerged ? `the merged reports judged different OpenAPI descriptions (${coverage.descriptionsNotMerged.join(', ')}), so none is counted` : 'the report judged no OpenAPI description (--openapi)'}`;
    const count = gatedCount(counted, part, accepted);
    if (count.examined * 100 >= min * count.applicable) continue;
    const acceptedNote = count.examined > counted.examined ? ` with ${count.examined - counted.examined} accepted gap(s)` : '';
    return `coverage below --min-coverage: ${part} ${fraction(count)}${acceptedNote} < ${min} %; largest gap: ${largestGap(coverage, part, accepted)}`;
  }
  return undefined;
}

/** The biggest missing piece of a part, in words, accepted gaps left out. */
function largestGap(coverage: Coverage, part: CoveragePart, accepted: readonly BaselineGap[]): string {
  const isAccepted = (item: string) => accepted.some((g) => g.gap === item);
  switch (part) {
    case 'document': {
      const byReason = new Map<string, string[]>();
      for (const n of coverage.document.notExamined.filter((x) => !isAccepted(`requirement ${x.requirement}`)))
        byReason.set(n.reason, [...(byReason.get(n.reason) ?? []), n.requirement]);
      const [reason, ids] = [...byReason].sort((a, b) => b[1].length - a[1].length)[0]!;
      return `${ids.length} requirement(s) not examined (${ids.slice(0, 3).join(', ')}${ids.length > 3 ? ', …' : ''}): ${reason.length > 200 ? `${reason.slice(0, 200)}…` : reason}`;
    }
    case 'responses': {
      const missing = coverage.responses.byOperation.map((o) => ({
        route: o.route,
        statuses: o.named.filter((s) => !o.seen.includes(s) && !isAccepted(`response ${o.route} ${s}`)),
      }));
      const top = missing.sort((a, b) => b.statuses.length - a.statuses.length)[0]!;
      return `${top.route}: ${top.statuses.join(', ')} not seen`;
    }
    case 'values': {
      const missing = coverage.values.byName.map((d) => ({
        name: d.name,
        values: d.values.filter((v) => !d.reached.includes(v) && !isAccepted(`value ${d.name} ${v}`)),
      }));
      const top = missing.sort((a, b) => b.values.length - a.values.length)[0]!;
      return `${top.name}: ${top.values.join(', ')} not reached`;
    }
    case 'operations':
      return `${coverage.operations.notCalled.filter((route) => !isAccepted(`operation ${route}`)).join(', ')} not called`;
    case 'description': {
      const missing = coverage
        .description!.byOperation.filter((o) => !o.exercised && !isAccepted(`description operation ${o.operation}`))
        .map((o) => o.operation);
      return `${missing.length} operation(s) of the description not exercised (${missing.slice(0, 3).join(', ')}${missing.length > 3 ? ', …' : ''})`;
    }
    case 'description-responses': {
      const missing = coverage.description!.byOperation.map((o) => ({
        operation: o.operation,
        statuses: o.statuses.filter((s) => !o.seen.includes(s) && !isAccepted(`description response ${o.operation} ${s}`)),
      }));
      const top = missing.sort((a, b) => b.statuses.length - a.statuses.length)[0]!;
      return `${top.operation}: ${top.statuses.join(', ')} not seen`;
    }
  }
}
