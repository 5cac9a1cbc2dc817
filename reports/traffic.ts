// The traffic a report counts: every exchange, those to paths the document does not cover
// (counted, never judged), the status codes each operation answered, and the rate-limit series.
import type { RateLimitObservation } from '../rules/rate-limit-tracker.ts';
import type { Exchange } from '../rules/types.ts';
import type { TrafficStats } from './model.ts';
import { RateLimitSeries } from './rate-limit-series.ts';

export class TrafficTally {
  private exchanges = 0;
  private notCovered = 0;
  private readonly byOperation: TrafficStats['byOperation'] = {};
  private readonly rateLimits = new RateLimitSeries();

  notCoveredExchange(): void {
    this.exchanges++;
    this.notCovered++;
  }

  coveredExchange(exchange: Exchange, operation: string, rateLimit: RateLimitObservation | null | undefined): void {
    this.exchanges++;
    const byStatus = (this.byOperation[operation] ??= {});
    const status = exchange.response ? String(exchange.response.status) : 'error';
    byStatus[status] = (byStatus[status] ?? 0) + 1;
    this.rateLimits.record(exchange, rateLimit);
  }

  /** A copy of the statistics, or undefined when no exchange was seen (a suite run without traffic). */
  stats(): TrafficStats | undefined {
    if (this.exchanges === 0) return undefined;
    return structuredClone({ exchanges: this.exchanges, notCovered: this.notCovered, byOperation: this.byOperation, rateLimitSeries: this.rateLimits.points });
  }
}
