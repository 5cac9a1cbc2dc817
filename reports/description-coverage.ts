// The coverage of the user's description (--openapi): its operations exercised of those it
// declares, and the statuses it declares seen per operation. The report builder tallies what each
// judgement carries (Judgement.described); a merge unions the tallies of reports of one and the
// same description (the same `identity`: a hash of the operations and statuses it declares, so
// that two descriptions under one title and version never add up).
import { createHash } from 'node:crypto';
import type { DescribedCall, DescriptionFrame } from '../rules/openapi/coverage.ts';
import type { DescriptionCoverage } from './model.ts';

/** What the exchanges exercised of one description. */
export class DescriptionTally {
  private readonly exercised = new Set<string>();
  /** "GET /users/{id} 404" */
  private readonly seen = new Set<string>();

  /** `frame`: known at start (the proxy loads the description), else from the first judgement that carries it. */
  constructor(private frame?: DescriptionFrame) {}

  add(call: DescribedCall): void {
    this.frame ??= call.frame;
    if (call.operation === undefined) return;
    this.exercised.add(call.operation);
    if (call.status !== undefined) this.seen.add(seenKey(call.operation, call.status));
  }

  /** Undefined: no description known (none given, or nothing judged against it yet). */
  coverage(): DescriptionCoverage | undefined {
    return this.frame && descriptionCoverage(this.frame, this.exercised, this.seen);
  }

  /** The tally of a report's description coverage: what a merge adds up. */
  static of(coverage: DescriptionCoverage): DescriptionTally {
    const tally = new DescriptionTally(frameOf(coverage));
    tally.union(coverage);
    return tally;
  }

  /** Adds what another report of the same description exercised. */
  union(coverage: DescriptionCoverage): void {
    for (const o of coverage.byOperation) {
      if (o.exercised) this.exercised.add(o.operation);
      for (const status of o.seen) this.seen.add(seenKey(o.operation, status));
    }
  }
}

const seenKey = (operation: string, status: string) => `${operation} ${status}`;

function descriptionCoverage(frame: DescriptionFrame, exercised: ReadonlySet<string>, seen: ReadonlySet<string>): DescriptionCoverage {
  const byOperation = frame.operations.map(({ operation, operationId, statuses }) => ({
    operation,
    ...(operationId !== undefined ? { operationId } : {}),
    exercised: exercised.has(operation),
    statuses: [...statuses],
    seen: statuses.filter((status) => seen.has(seenKey(operation, status))),
  }));
  return {
    ...(frame.title !== undefined ? { title: frame.title } : {}),
    ...(frame.version !== undefined ? { version: frame.version } : {}),
    identity: identityOf(frame),
    operations: { examined: byOperation.filter((o) => o.exercised).length, applicable: byOperation.length },
    responses: { examined: sum(byOperation.map((o) => o.seen.length)), applicable: sum(byOperation.map((o) => o.statuses.length)) },
    byOperation,
  };
}

/** What a report's description coverage says was declared. */
function frameOf(coverage: DescriptionCoverage): DescriptionFrame {
  return {
    ...(coverage.title !== undefined ? { title: coverage.title } : {}),
    ...(coverage.version !== undefined ? { version: coverage.version } : {}),
    operations: coverage.byOperation.map(({ operation, operationId, statuses }) => ({
      operation,
      ...(operationId !== undefined ? { operationId } : {}),
      statuses,
    })),
  };
}

/** A hash of the operations and the statuses they declare: what the coverage counts, so what tells two descriptions apart. */
function identityOf(frame: DescriptionFrame): string {
  const declared = frame.operations.map((o) => [o.operation, [...o.statuses].sort()]).sort((a, b) => String(a[0]).localeCompare(String(b[0])));
  return createHash('sha256').update(JSON.stringify(declared)).digest('hex').slice(0, 16);
}

const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);

/** "Users API 1.2": how the reports name a description; its identity when it states neither. */
export function descriptionName(coverage: Pick<DescriptionCoverage, 'title' | 'version' | 'identity'>): string {
  const named = [coverage.title, coverage.version].filter((x) => x !== undefined).join(' ');
  return named === '' ? `description ${coverage.identity}` : named;
}

/**
 * The merged description coverage of several reports: the union when all that have one share the
 * identity; `differ`: the names of the descriptions when they do not (then none is merged), those
 * an input merged earlier could not merge (`notMerged`) among them.
 */
export function mergedDescription(
  coverages: readonly DescriptionCoverage[],
  notMerged: readonly string[] = [],
): { tally?: DescriptionTally; differ?: string[] } {
  const identities = new Set(coverages.map((c) => c.identity));
  if (identities.size > 1 || notMerged.length > 0)
    return { differ: [...new Set([...notMerged, ...[...identities].map((id) => descriptionName(coverages.find((c) => c.identity === id)!))])] };
  if (coverages.length === 0) return {};
  const tally = DescriptionTally.of(coverages[0]!);
  for (const c of coverages.slice(1)) tally.union(c);
  return { tally };
}
