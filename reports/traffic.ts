// The traffic a report counts: every exchange, those to paths outside the API (counted, never
// judged), each operation called with its status codes and the requirements judged on it, and the
// rate-limit series.
import type { RateLimitObservation } from '../rules/rate-limit-tracker.ts';
import type { Exchange } from '../rules/types.ts';
import type { NotJudgedTally, OperationTraffic, TrafficStats } from './model.ts';
import type { Judgement } from '../rules/index.ts';
import { describeBytes } from '../core/body-limit.ts';
import { CORS_PREFLIGHT } from '../rules/operations.ts';

import { RateLimitSeries } from './rate-limit-series.ts';

/** Exchanges named per reason an exchange was not judged: enough to find them, few enough to read. */
export const NOT_JUDGED_NAMED = 5;

/**
 * Operations the table lists: a tenant's interface has a few hundred. Paths at places no known path
 * names (templatePath) could make more; their exchanges are counted in one row.
 */
export const OPERATIONS_LISTED = 1000;
export const OPERATIONS_OVERFLOW = '(operations beyond the first 1000)';

/** What of an exchange was not judged because its recording did not keep it, and why: one reason each. */
export function notRecordedReasons(judgement: Judgement): string[] {
  const reasons: string[] = [];
  const headers = judgement.responseHeadersNotRecorded;
  if (headers) reasons.push(`its response headers (${headers.join(', ')}): the recording kept no response header but Content-Type`);
  if (judgement.responseBodyNotRecorded) reasons.push('its response body: the recording kept its size, not its content');
  return reasons;
}

/** Why an exchange outside the API was not judged, when its judgement does not say (the rule engine's names the base path). */
export const OUTSIDE_API = 'outside the API base path (not an operation of the interface)';

/** Why an exchange the kit failed on (a bug) is not among the judged ones. */
export const INTERNAL_ERROR = 'an internal error of the kit while judging or recording it';

/** Why an exchange on a covered path was not judged, in whole or in part, as the reports say it: [] when it was judged in whole. */
export function notJudgedReasons(judgement: Judgement): string[] {
  const reasons: string[] = [];
  if (judgement.notJudged !== undefined) reasons.push(judgement.notJudged);
  for (const over of judgement.bodiesOverLimit ?? []) reasons.push(`${over.body} body over the ${describeBytes(over.limit)} body limit (its content)`);
  reasons.push(...notRecordedReasons(judgement));
  if (judgement.partsNotJudged) reasons.push(...judgement.partsNotJudged);
  return reasons;
}

/** The requirements judged on one exchange: those examined, and those found broken. */
function judgedRequirements(judgement: Judgement): string[] {
  if (judgement.findings.length === 0) return judgement.examined;
  return [...new Set([...judgement.examined, ...judgement.findings.map((f) => f.requirement)])];
}

/** Document's operations first, then the most called, then by name. */
export function operationOrder(a: OperationTraffic, b: OperationTraffic): number {
  const documented = (o: OperationTraffic) => (o.operation === 'otherOperation' ? 1 : 0);
  return documented(a) - documented(b) || b.exchanges - a.exchanges || a.name.localeCompare(b.name);
}

export class TrafficTally {
  private exchanges = 0;
  private notCovered = 0;
  private readonly byOperation: TrafficStats['byOperation'] = {};
  private readonly rateLimits = new RateLimitSeries();
  private readonly notJudged = new Map<string, NotJudgedTally>();
  private readonly operations = new Map<string, { row: OperationTraffic; requirements: Set<string> }>();

  /** `reason`: the judgement's notCovered. */
  notCoveredExchange(exchange: Exchange, reason?: string): void {
    this.exchanges++;
    this.notCovered++;
    this.notJudgedExchange(reason ?? (exchange.request.method.toUpperCase() === 'OPTIONS' ? CORS_PREFLIGHT : OUTSIDE_API), exchange.id ?? '(no id)');
  }

  coveredExchange(exchange: Exchange, operation: string, judgement: Judgement, rateLimit: RateLimitObservation | null | undefined): void {
    this.exchanges++;
    for (const reason of notJudgedReasons(judgement)) this.notJudgedExchange(reason, exchange.id ?? '(no id)');
    const byStatus = (this.byOperation[operation] ??= {});
    const status = exchange.response ? String(exchange.response.status) : 'error';
    byStatus[status] = (byStatus[status] ?? 0) + 1;
    this.operationExchange(judgement, status);
    this.rateLimits.record(exchange, rateLimit);
  }

  private operationExchange(judgement: Judgement, status: string): void {
    const { name: called, operation } = judgement.operation!;
    const name = this.operations.has(called) || this.operations.size < OPERATIONS_LISTED ? called : OPERATIONS_OVERFLOW;
    let entry = this.operations.get(name);
    if (!entry) this.operations.set(name, (entry = { row: { name, operation, exchanges: 0, byStatus: {}, requirements: [] }, requirements: new Set() }));
    entry.row.exchanges++;
    entry.row.byStatus[status] = (entry.row.byStatus[status] ?? 0) + 1;
    for (const id of judgedRequirements(judgement)) entry.requirements.add(id);
  }

  /** Exchanges a driver did not hand to the engine (a recording's line cut short, a file read once through its journal): `ids` names the first few. */
  notJudgedElsewhere(reason: string, count: number, ids: readonly string[]): void {
    let tally = this.notJudged.get(reason);
    if (!tally) this.notJudged.set(reason, (tally = { reason, count: 0, exchanges: [] }));
    tally.count += count;
    for (const id of ids) if (tally.exchanges.length < NOT_JUDGED_NAMED) tally.exchanges.push(id);
  }

  private notJudgedExchange(reason: string, id: string): void {
    this.notJudgedElsewhere(reason, 1, [id]);
  }

  /** A copy of the statistics, or undefined when no exchange was seen (a suite run without traffic). */
  stats(): TrafficStats | undefined {
    if (this.exchanges === 0 && this.notJudged.size === 0) return undefined;
    const stats: TrafficStats = {
      exchanges: this.exchanges,
      notCovered: this.notCovered,
      byOperation: this.byOperation,
      rateLimitSeries: this.rateLimits.points,
    };
    if (this.operations.size > 0)
      stats.operations = [...this.operations.values()]
        .map(({ row, requirements }) => ({ ...row, requirements: [...requirements].sort() }))
        .sort(operationOrder);
    if (this.notJudged.size > 0) stats.notJudged = [...this.notJudged.values()];
    return structuredClone(stats);
  }
}
