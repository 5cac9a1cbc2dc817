// One compliance report from several (e.g. the CI suite run plus a day of proxy traffic).
// Pure: reports in, report out. A requirement's status combines its evidence from every source
// (fail > warn > pass > skip), counts are summed, evidence stays bounded with every source
// represented, traffic statistics are added up, and the verdict is taken again at `failOn`.
import { assembleReport } from './assemble.ts';
import { ClientFindingTally } from './client-findings.ts';
import { FailedPlaces } from './failed-places.ts';
import { EVIDENCE_PER_REQUIREMENT, PASSING_EVIDENCE_PER_REQUIREMENT } from './evidence-limits.ts';
import type { FailOn } from './fail-on.ts';
import type { Evidence, OperationTraffic, Report, RequirementResult, Source, TrafficStats } from './model.ts';
import { RATE_LIMIT_POINTS } from './rate-limit-series.ts';
import { NOT_JUDGED_NAMED, OPERATIONS_LISTED, OPERATIONS_OVERFLOW, operationOrder } from './traffic.ts';
import { requirementResult } from './requirement-result.ts';
import { byStatus, worstStatus } from './status.ts';
import { coverageOf, valuesReachedIn } from './coverage.ts';
import { mergedDescription } from './description-coverage.ts';

export interface MergeInput {
  report: Report;
  /** Where the report was read from; kept on its sources. */
  origin?: string;
}

/** One input with its source names made unique within the merged report. */
interface Renamed {
  report: Report;
  rename: (sourceName: string) => string;
  /** Its sources' names in the merged report. */
  names: string[];
}

export function mergeReports(inputs: MergeInput[], { failOn }: { failOn: FailOn }): Report {
  if (inputs.length === 0) throw new Error('mergeReports needs at least one report');
  const sources: Source[] = [];
  const renamed = inputs.map((input) => nameSources(input, sources));

  const times = renamed.flatMap(({ report }) => [report.startedAt, report.finishedAt]).sort((a, b) => Date.parse(a) - Date.parse(b));
  const merged = assembleReport(
    {
      kind: 'merge',
      startedAt: times[0]!,
      finishedAt: times[times.length - 1]!,
      sources,
      requirements: mergeRequirements(renamed),
      tests: renamed.flatMap(({ report, rename }) => report.tests.map((t) => ({ ...t, source: rename(t.source) }))),
      clientFindings: mergeClientFindings(renamed.map((r) => r.report)),
    },
    failOn,
  );
  // One target only when every source judged the same one; otherwise each source names its own.
  const targets = new Set(renamed.map(({ report }) => report.target));
  const [target] = targets;
  if (targets.size === 1 && target !== undefined) merged.target = target;
  const traffic = mergeTraffic(renamed.flatMap(({ report }) => (report.traffic ? [report.traffic] : [])));
  if (traffic) merged.traffic = traffic;
  // What any input examined counts: the requirements and traffic merged above, the values each reached.
  // The description's coverage adds up only over reports of one and the same description.
  const described = mergedDescription(
    renamed.flatMap(({ report }) => (report.coverage?.description ? [report.coverage.description] : [])),
    renamed.flatMap(({ report }) => report.coverage?.descriptionsNotMerged ?? []),
  );
  merged.coverage = coverageOf(merged, new Set(renamed.flatMap(({ report }) => valuesReachedIn(report.coverage))), described.tally);
  if (described.differ) merged.coverage.descriptionsNotMerged = described.differ;
  return merged;
}

/** Adds the input's sources under unique names ("run", "run (2)", ...). */
function nameSources(input: MergeInput, sources: Source[]): Renamed {
  const names = new Map<string, string>();
  for (const source of input.report.sources) {
    let name = source.name;
    for (let n = 2; sources.some((s) => s.name === name); n++) name = `${source.name} (${n})`;
    names.set(source.name, name);
    const copy: Source = { ...source, name };
    if (input.origin !== undefined && copy.origin === undefined) copy.origin = input.origin;
    sources.push(copy);
  }
  return { report: input.report, rename: (sourceName) => names.get(sourceName) ?? sourceName, names: [...names.values()] };
}

function mergeRequirements(inputs: Renamed[]): RequirementResult[] {
  // Catalog order of the first report that has a requirement; a newer catalog's additions follow.
  const byId = new Map<string, Array<{ result: RequirementResult; input: Renamed }>>();
  for (const input of inputs) {
    for (const result of input.report.requirements) {
      const list = byId.get(result.id) ?? [];
      list.push({ result, input });
      byId.set(result.id, list);
    }
  }
  return [...byId.values()].map((parts) => {
    const first = parts[0]!.result;
    const status = worstStatus(parts.map((p) => p.result.status));
    const evidence = parts.map((p) => p.result.evidence.map((e): Evidence => ({ ...e, source: p.input.rename(e.source) })));
    const merged = requirementResult(first, {
      status,
      coverage: {
        checks: unique(parts.flatMap((p) => p.result.coverage.checks)),
        tests: unique(parts.flatMap((p) => p.result.coverage.tests)),
      },
      counts: {
        exchanges: sum(parts.map((p) => p.result.counts.exchanges)),
        tests: sum(parts.map((p) => p.result.counts.tests)),
        findings: sum(parts.map((p) => p.result.counts.findings)),
        clientFindings: sum(parts.map((p) => p.result.counts.clientFindings)),
        security: sum(parts.map((p) => p.result.counts.security ?? 0)),
      },
      evidence: [
        ...roundRobin(
          evidence.map((list) => list.filter((e) => e.status === 'fail' || e.status === 'warn').sort(byStatus)),
          EVIDENCE_PER_REQUIREMENT,
        ),
        ...roundRobin(
          evidence.map((list) => list.filter((e) => e.status === 'pass' || e.status === 'skip')),
          PASSING_EVIDENCE_PER_REQUIREMENT,
        ),
      ],
    });
    if (status === 'skip') merged.reason = skipReason(parts);
    const byOperation = mergeByOperation(parts.map((p) => p.result));
    if (byOperation) merged.byOperation = byOperation;
    mergePlaces(parts.map((p) => p.result)).writeTo(merged);
    return merged;
  });
}

/** Per-operation counts summed; none when no part had them (reports of earlier versions). */
function mergeByOperation(results: RequirementResult[]): RequirementResult['byOperation'] {
  const into: NonNullable<RequirementResult['byOperation']> = {};
  for (const counts of results.map((r) => r.byOperation)) {
    for (const [operation, { exchanges, findings }] of Object.entries(counts ?? {})) {
      const sum = (into[operation] ??= { exchanges: 0, findings: 0 });
      sum.exchanges += exchanges;
      sum.findings += findings;
    }
  }
  return Object.keys(into).length > 0 ? into : undefined;
}

/** The places each operation failed at, in any part, bounded again; with what any part had folded. */
function mergePlaces(results: RequirementResult[]): FailedPlaces {
  const places = new FailedPlaces();
  for (const r of results) {
    for (const [operation, pointers] of Object.entries(r.pointers ?? {})) for (const pointer of pointers) places.add(operation, pointer);
    for (const operation of r.pointersFolded ?? []) places.addFolded(operation);
  }
  return places;
}

/** Every source skipped it: say why, naming the sources when their reasons differ. */
function skipReason(parts: Array<{ result: RequirementResult; input: Renamed }>): string {
  const sourcesByReason = new Map<string, string[]>();
  for (const { result, input } of parts) {
    const reason = result.reason ?? 'no test or exchange examined it';
    sourcesByReason.set(reason, [...(sourcesByReason.get(reason) ?? []), ...input.names]);
  }
  if (sourcesByReason.size === 1) return [...sourcesByReason.keys()][0]!;
  return [...sourcesByReason].map(([reason, names]) => `${names.join(', ')}: ${reason}`).join('; ');
}

/** Takes from each list in turn, so every source is represented before any gets a second item. */
function roundRobin<T>(lists: T[][], limit: number): T[] {
  const out: T[] = [];
  for (let i = 0; out.length < limit && lists.some((list) => i < list.length); i++) {
    for (const list of lists) if (i < list.length && out.length < limit) out.push(list[i]!);
  }
  return out;
}

function mergeClientFindings(reports: Report[]): Report['clientFindings'] {
  const tally = new ClientFindingTally();
  for (const report of reports) {
    for (const finding of report.clientFindings) if (!tally.counted(finding, finding.count)) tally.start(structuredClone(finding));
  }
  return tally.list();
}

function mergeTraffic(all: TrafficStats[]): TrafficStats | undefined {
  if (all.length === 0) return undefined;
  const byOperation: TrafficStats['byOperation'] = {};
  for (const traffic of all) {
    for (const [operation, statuses] of Object.entries(traffic.byOperation)) {
      const target = (byOperation[operation] ??= {});
      for (const [status, count] of Object.entries(statuses)) target[status] = (target[status] ?? 0) + count;
    }
  }
  const series = all.flatMap((t) => t.rateLimitSeries).sort((a, b) => Date.parse(a.t) - Date.parse(b.t));
  // Thinned evenly, like the builder does, so the chart keeps its shape.
  const stride = Math.ceil(series.length / RATE_LIMIT_POINTS);
  const merged: TrafficStats = {
    exchanges: sum(all.map((t) => t.exchanges)),
    notCovered: sum(all.map((t) => t.notCovered)),
    byOperation,
    rateLimitSeries: stride > 1 ? series.filter((_, i) => i % stride === 0) : series,
  };
  const operations = mergeOperations(all);
  if (operations) merged.operations = operations;
  const notJudged = new Map<string, NonNullable<TrafficStats['notJudged']>[number]>();
  for (const tally of all.flatMap((t) => t.notJudged ?? [])) {
    const into = notJudged.get(tally.reason);
    if (!into) notJudged.set(tally.reason, structuredClone(tally));
    else {
      into.count += tally.count;
      into.exchanges = [...into.exchanges, ...tally.exchanges].slice(0, NOT_JUDGED_NAMED);
    }
  }
  if (notJudged.size > 0) merged.notJudged = [...notJudged.values()];
  return merged;
}

const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);
const unique = <T>(values: T[]) => [...new Set(values)];

/** The operations tables summed per operation name, in the builder's order and within its bound. */
function mergeOperations(all: TrafficStats[]): OperationTraffic[] | undefined {
  const byName = new Map<string, OperationTraffic>();
  for (const row of all.flatMap((t) => t.operations ?? [])) {
    const name = byName.has(row.name) || byName.size < OPERATIONS_LISTED ? row.name : OPERATIONS_OVERFLOW;
    const into = byName.get(name);
    if (!into) {
      byName.set(name, { ...structuredClone(row), name });
      continue;
    }
    into.exchanges += row.exchanges;
    for (const [status, count] of Object.entries(row.byStatus)) into.byStatus[status] = (into.byStatus[status] ?? 0) + count;
    into.requirements = [...new Set([...into.requirements, ...row.requirements])].sort();
  }
  return byName.size === 0 ? undefined : [...byName.values()].sort(operationOrder);
}
