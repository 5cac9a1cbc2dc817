// The traffic a report counts: every exchange, those to paths the document does not cover
// (counted, never judged), the status codes each operation answered, and the rate-limit series.
import type { RateLimitObservation } from '../rules/rate-limit-tracker.ts';
import type { Exchange } from '../rules/types.ts';
import type { NotJudgedTally, TrafficStats } from './model.ts';
import type { Judgement } from '../rules/index.ts';
import { describeBytes } from '../core/body-limit.ts';

/** Exchanges named per reason an exchange was not judged: enough to find them, few enough to read. */
export const NOT_JUDGED_NAMED = 5;
import { RateLimitSeries } from './rate-limit-series.ts';

export class TrafficTally {
  private exchanges = 0;
  private notCovered = 0;
  private readonly byOperation: TrafficStats['byOperation'] = {};
  private readonly rateLimits = new RateLimitSeries();
  private readonly notJudged = new Map<string, NotJudgedTally>();

  notCoveredExchange(): void {
    this.exchanges++;
    this.notCovered++;
  }

  coveredExchange(exchange: Exchange, operation: string, judgement: Judgement, rateLimit: RateLimitObservation | null | undefined): void {
    this.exchanges++;
    if (judgement.notJudged !== undefined) this.notJudgedExchange(judgement.notJudged, exchange.id ?? '(no id)');
    for (const over of judgement.bodiesOverLimit ?? []) this.notJudgedExchange(`${over.body} body over the ${describeBytes(over.limit)} body limit (its content)`, exchange.id ?? '(no id)');
    const byStatus = (this.byOperation[operation] ??= {});
    const status = exchange.response ? String(exchange.response.status) : 'error';
    byStatus[status] = (byStatus[status] ?? 0) + 1;
    this.rateLimits.record(exchange, rateLimit);
  }

  private notJudgedExchange(reason: string, id: string): void {
    let tally = this.notJudged.get(reason);
    if (!tally) this.notJudged.set(reason, (tally = { reason, count: 0, exchanges: [] }));
    tally.count++;
    if (tally.exchanges.length < NOT_JUDGED_NAMED) tally.exchanges.push(id);
  }

  /** A copy of the statistics, or undefined when no exchange was seen (a suite run without traffic). */
  stats(): TrafficStats | undefined {
    if (this.exchanges === 0) return undefined;
    const stats: TrafficStats = { exchanges: this.exchanges, notCovered: this.notCovered, byOperation: this.byOperation, rateLimitSeries: this.rateLimits.points };
    if (this.notJudged.size > 0) stats.notJudged = [...this.notJudged.values()];
    return structuredClone(stats);
  }
}
