// What a report's evidence examined, as numbers (report.json's `coverage`): computed once from
// what was judged, never by judging again, so every format reads the same figures.
//   document    requirements examined (pass, fail or warn) of those the report holds, `must`
//               and `should` apart, per operation; each one not examined with its skip reason.
//               Every requirement the report holds applies: the document states them for every
//               implementation (the --openapi ones are held only with a description). A missing
//               credential profile, an operation the target does not serve, a requirement left
//               out by --requirement: all leave it "not examined", never "not applicable".
//   responses   the status codes the document names per operation, seen in the traffic; an
//               operation whose codes are "not shown" names none, so none is missing for it.
//   values      the values of the document's enumerations and the edges of its limits that the
//               traffic reached (rules/coverage.ts); the one per-exchange fact, a merge unions it.
//   operations  the document's operations called.
//   description with a user's description (--openapi): its operations exercised of those it
//               declares, and their declared statuses seen (reports/description-coverage.ts).
import { STATUSES_NAMED, valueDimensions, valueKey } from '../rules/coverage.ts';
import { descriptionName } from './description-coverage.ts';
import type { DocumentOperationId } from '../rules/types.ts';
import type { DescriptionTally } from './description-coverage.ts';
import type { Coverage, CoverageCount, Report, RequirementResult } from './model.ts';
import { OPERATIONS, statusOn } from './operations.ts';

const DOCUMENT_OPERATIONS: readonly DocumentOperationId[] = ['deleteTokenExchangeProfile', 'updateSession', 'getResourceServer'];

const routeOf = (operation: string): string => (OPERATIONS.find((o) => o.id === operation)?.route ?? operation).replace('/api/v2', '');

const count = (results: readonly boolean[]): CoverageCount => ({ examined: results.filter(Boolean).length, applicable: results.length });

const examined = (r: RequirementResult): boolean => r.status !== 'skip';

/** The parts of a coverage, as the gate, the figures and the metrics name them; the last two only with a user's description. */
export const COVERAGE_PARTS = ['document', 'responses', 'values', 'operations', 'description', 'description-responses'] as const;
export type CoveragePart = (typeof COVERAGE_PARTS)[number];
/** The document's parts alone: what a command that judges no description can count. */
export const DOCUMENT_COVERAGE_PARTS: readonly CoveragePart[] = COVERAGE_PARTS.filter((part) => !part.startsWith('description'));

/** A part's count; undefined for a description part of a report without a description. */
export function countOf(coverage: Coverage, part: CoveragePart): CoverageCount | undefined {
  if (part === 'description') return coverage.description?.operations;
  if (part === 'description-responses') return coverage.description?.responses;
  return coverage[part];
}

/**
 * The coverage of a report whose requirements and traffic are complete; `reached`: the value keys
 * its exchanges carried ("signing_alg=RS256"); `described`: what they exercised of the user's
 * description, when one was given.
 */
export function coverageOf(
  report: Pick<Report, 'requirements' | 'operations' | 'traffic'>,
  reached: ReadonlySet<string>,
  described?: DescriptionTally,
): Coverage {
  const coverage: Coverage = {
    document: documentCoverage(report),
    responses: responseCoverage(report),
    values: valueCoverage(reached),
    operations: operationCoverage(report),
  };
  const description = described?.coverage();
  if (description) coverage.description = description;
  return coverage;
}

function documentCoverage({ requirements, operations }: Pick<Report, 'requirements' | 'operations'>): Coverage['document'] {
  const byId = new Map(requirements.map((r) => [r.id, r]));
  return {
    ...count(requirements.map(examined)),
    must: count(requirements.filter((r) => r.level === 'must').map(examined)),
    should: count(requirements.filter((r) => r.level === 'should').map(examined)),
    byOperation: operations.map((group) => ({
      operation: group.operation,
      title: group.title,
      ...count(group.requirements.map((id) => statusOn(byId.get(id)!, group.operation) !== 'skip')),
    })),
    notExamined: requirements
      .filter((r) => !examined(r))
      .map((r) => ({ requirement: r.id, level: r.level, operations: [...r.operations], reason: r.reason ?? 'no test or exchange examined it' })),
  };
}

function responseCoverage({ traffic }: Pick<Report, 'traffic'>): Coverage['responses'] {
  const byOperation = DOCUMENT_OPERATIONS.filter((operation) => STATUSES_NAMED[operation].length > 0).map((operation) => {
    const named = STATUSES_NAMED[operation].map(String);
    const got = traffic?.byOperation[operation] ?? {};
    return { operation, route: routeOf(operation), named, seen: named.filter((status) => (got[status] ?? 0) > 0) };
  });
  return { examined: sumOf(byOperation.map((o) => o.seen.length)), applicable: sumOf(byOperation.map((o) => o.named.length)), byOperation };
}

function valueCoverage(reached: ReadonlySet<string>): Coverage['values'] {
  const byName = valueDimensions().map(({ operation, name, in: where, values }) => ({
    operation,
    name,
    in: where,
    values: [...values],
    reached: values.filter((v) => reached.has(valueKey(name, v))),
  }));
  return { examined: sumOf(byName.map((d) => d.reached.length)), applicable: sumOf(byName.map((d) => d.values.length)), byName };
}

function operationCoverage({ traffic }: Pick<Report, 'traffic'>): Coverage['operations'] {
  const called = DOCUMENT_OPERATIONS.filter((operation) => traffic?.byOperation[operation] !== undefined);
  return {
    examined: called.length,
    applicable: DOCUMENT_OPERATIONS.length,
    called: called.map(routeOf),
    notCalled: DOCUMENT_OPERATIONS.filter((o) => !called.includes(o)).map(routeOf),
  };
}

/** The value keys a report's coverage says were reached: what a merge unions. */
export function valuesReachedIn(coverage: Coverage | undefined): string[] {
  return (coverage?.values.byName ?? []).flatMap(({ name, reached }) => reached.map((v) => valueKey(name, v)));
}

/** "47/49 (96 %)": a count with its percentage, rounded down so a gate never passes on rounding. */
export function fraction({ examined, applicable }: CoverageCount): string {
  return `${examined}/${applicable}${applicable > 0 ? ` (${percent({ examined, applicable })} %)` : ''}`;
}

/** The percentage examined, rounded down; 100 when nothing applies. */
export function percent({ examined, applicable }: CoverageCount): number {
  return applicable === 0 ? 100 : Math.floor((examined * 100) / applicable);
}

/** The console's line: "coverage: document 47/49 requirements (95 %), responses 3/4, enum values and limits 9/14, operations 3/3", then the description's figures. */
export function coverageLine(coverage: Coverage): string {
  const { document, responses, values, operations } = coverage;
  return `coverage: document ${document.examined}/${document.applicable} requirements (${percent(document)} %; must ${document.must.examined}/${document.must.applicable}, should ${document.should.examined}/${document.should.applicable}), responses ${responses.examined}/${responses.applicable}, enum values and limits ${values.examined}/${values.applicable}, operations ${operations.examined}/${operations.applicable}${descriptionFigures(coverage)}`;
}

/** "; description Users API 1.2: operations 3/10, declared statuses 5/21", or why none is counted. */
function descriptionFigures({ description, descriptionsNotMerged }: Coverage): string {
  if (descriptionsNotMerged) return `; description: not merged (the reports judged different ones: ${descriptionsNotMerged.join(', ')})`;
  if (!description) return '';
  return `; description ${descriptionName(description)}: operations ${description.operations.examined}/${description.operations.applicable}, declared statuses ${description.responses.examined}/${description.responses.applicable}`;
}

/** Items of a list the console shows, at most; the reports hold all. */
const LISTED = 8;
const listed = (items: string[]) =>
  `${items.slice(0, LISTED).join('; ')}${items.length > LISTED ? `; … and ${items.length - LISTED} more in the reports` : ''}`;

const sumOf = (values: number[]) => values.reduce((a, b) => a + b, 0);

/** The console's coverage: the line, then the responses and values not reached (the requirements not examined are the skip lines). */
export function coverageLines({ coverage }: Pick<Report, 'coverage'>): string[] {
  if (!coverage) return [];
  const out = [coverageLine(coverage)];
  const responses = coverage.responses.byOperation
    .filter((o) => o.seen.length < o.named.length)
    .map((o) => `${o.route} ${o.named.filter((s) => !o.seen.includes(s)).join(', ')}`);
  if (responses.length > 0) out.push(`  responses not seen: ${responses.join('; ')}`);
  const values = coverage.values.byName
    .filter((d) => d.reached.length < d.values.length)
    .map((d) => `${d.name} ${d.values.filter((v) => !d.reached.includes(v)).join(', ')}`);
  if (values.length > 0) out.push(`  values not reached: ${values.join('; ')}`);
  if (coverage.operations.notCalled.length > 0) out.push(`  operations not called: ${coverage.operations.notCalled.join(', ')}`);
  const described = coverage.description?.byOperation ?? [];
  const notExercised = described.filter((o) => !o.exercised).map((o) => o.operation);
  if (notExercised.length > 0) out.push(`  description operations not exercised: ${listed(notExercised)}`);
  const notSeen = described
    .filter((o) => o.exercised && o.seen.length < o.statuses.length)
    .map((o) => `${o.operation} ${o.statuses.filter((s) => !o.seen.includes(s)).join(', ')}`);
  if (notSeen.length > 0) out.push(`  description statuses not seen: ${listed(notSeen)}`);
  return out;
}

/** Each part a report's coverage counts as one item ("response DELETE /token-exchange-profiles/{id} 429"), and whether it was examined: what `report diff` compares. */
export function coverageItems({ requirements, coverage }: Pick<Report, 'requirements'> & { coverage: Coverage }): Map<string, boolean> {
  const items = new Map<string, boolean>();
  for (const r of requirements) items.set(`requirement ${r.id}`, examined(r));
  for (const o of coverage.responses.byOperation) for (const status of o.named) items.set(`response ${o.route} ${status}`, o.seen.includes(status));
  for (const d of coverage.values.byName) for (const value of d.values) items.set(`value ${d.name} ${value}`, d.reached.includes(value));
  for (const route of coverage.operations.called) items.set(`operation ${route}`, true);
  for (const route of coverage.operations.notCalled) items.set(`operation ${route}`, false);
  for (const o of coverage.description?.byOperation ?? []) {
    items.set(`description operation ${o.operation}`, o.exercised);
    for (const status of o.statuses) items.set(`description response ${o.operation} ${status}`, o.seen.includes(status));
  }
  return items;
}

/** "48/48 (100 %) requirements · responses 3/4 · values 11/14 · operations 3/3": a coverage in a table cell. */
export function coverageCell({ document, responses, values, operations, description }: Coverage): string {
  const described = description
    ? ` · description operations ${description.operations.examined}/${description.operations.applicable}, statuses ${description.responses.examined}/${description.responses.applicable}`
    : '';
  return `${fraction(document)} requirements · responses ${responses.examined}/${responses.applicable} · values ${values.examined}/${values.applicable} · operations ${operations.examined}/${operations.applicable}${described}`;
}
