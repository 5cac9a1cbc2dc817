// The X-RateLimit-* readings over time, per client, for the report's chart: bounded in size,
// thinned evenly so the chart keeps its shape however long the traffic ran.
import { clientNamedByToken, rateLimitClient, type RateLimitObservation } from '../rules/rate-limit-tracker.ts';
import type { Exchange } from '../rules/types.ts';
import type { TrafficStats } from './model.ts';

/** Points of the rate-limit chart: more than its width (reports/rate-limit-chart.ts) can show apart, few enough to keep report.json and report.html small. */
export const RATE_LIMIT_POINTS = 2000;
/** At the limit every other point is dropped and from then on one reading in twice as many is kept: the points stay evenly spread. */
const THINNING = 2;

/**
 * Whose line a reading joins: the client the rules attribute it to; a token that names a client
 * without being trusted (forged or tampered, and refused) gets a line of its own, so that its
 * readings never pass for that client's.
 */
function chartedClient(exchange: Exchange): string {
  const client = rateLimitClient(exchange);
  if (client !== undefined) return client;
  const named = clientNamedByToken(exchange.token);
  return named === undefined ? '(no token)' : `${named} (untrusted token)`;
}

export class RateLimitSeries {
  points: TrafficStats['rateLimitSeries'] = [];
  /** Keep one reading in this many. */
  private stride = 1;
  private seen = 0;

  record(exchange: Exchange, observation: RateLimitObservation | null | undefined): void {
    if (!observation) return;
    if (this.seen++ % this.stride !== 0) return;
    this.points.push({
      t: exchange.startedAt,
      client: chartedClient(exchange),
      status: observation.status,
      limit: observation.limit,
      remaining: observation.remaining,
      reset: observation.reset,
    });
    if (this.points.length >= RATE_LIMIT_POINTS) {
      this.points = this.points.filter((_, i) => i % THINNING === 0);
      this.stride *= THINNING;
    }
  }
}
