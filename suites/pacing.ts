// Keeps a run inside the target's rate limit, from what the target says in X-RateLimit-*:
// once a client's Remaining reaches 0, its next request waits for the window to end. A 429
// nobody planned is an observation, never a failure: the caller waits and retries.
//
// Reset is whole epoch seconds, so waiting until Reset can lose up to a second per window.
// When a window opens (Remaining = Limit - 1), Reset*1000 minus the time the request was sent
// is an upper bound of the window's length, and the time its answer arrived is an upper bound
// of when the window opened; their sum is never before the true end, and much earlier than
// Reset. A 429 that proves it wrong for a
// client (a target whose windows do not open with the first request) turns it off for that client.
import { nonNegativeInteger, rateLimitHeaders } from '../rules/rate-limit-tracker.ts';
import type { Headers } from '../rules/types.ts';

interface Quota {
  remaining: number;
  /** Epoch milliseconds of Reset. */
  resetMs: number;
  /** When the answer that opened the current window arrived (the window opened before). */
  openedAt?: number;
  /** Smallest upper bound seen of the window's length, in ms. */
  windowMs?: number;
  /** The estimate proved wrong once: wait for Reset only. */
  estimateOff?: boolean;
}

/** A little slack past the computed end, for clock and network jitter. */
const SLACK_MS = 25;
/** Without a usable Reset, wait this long after a 429. */
const FALLBACK_WAIT_MS = 1000;
/** Never wait longer than this for one window (a Reset far away is a target's mistake). */
const MAX_WAIT_MS = 65_000;

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export class RateLimitPacer {
  private readonly quotas = new Map<string, Quota>();
  /** Milliseconds spent waiting for windows, for the run summary. */
  waitedMs = 0;

  constructor(private readonly now: () => number = Date.now) {}

  /** When the client's current window ends, as far as the headers tell. */
  private windowEnd(quota: Quota): number {
    const estimated = !quota.estimateOff && quota.openedAt !== undefined && quota.windowMs !== undefined ? quota.openedAt + quota.windowMs : Infinity;
    return Math.min(quota.resetMs, estimated);
  }

  /** How long `client` must wait before its next request. */
  delayFor(client: string): number {
    const quota = this.quotas.get(client);
    if (!quota || quota.remaining > 0) return 0;
    return Math.min(MAX_WAIT_MS, Math.max(0, this.windowEnd(quota) + SLACK_MS - this.now()));
  }

  async beforeRequest(client: string): Promise<void> {
    const delay = this.delayFor(client);
    if (delay > 0) {
      this.waitedMs += delay;
      await sleep(delay);
    }
  }

  /**
   * Learns the client's quota from a response to a request sent at `sentAt`; returns how long
   * to wait before a retry after a 429.
   */
  afterResponse(client: string, status: number, headers: Headers, sentAt: number = this.now()): number {
    const h = rateLimitHeaders(headers);
    const limit = nonNegativeInteger(h.limit);
    const remaining = nonNegativeInteger(h.remaining);
    const reset = nonNegativeInteger(h.reset);
    const previous = this.quotas.get(client);
    if (remaining !== undefined && reset !== undefined) {
      const quota: Quota = { ...previous, remaining: status === 429 ? 0 : remaining, resetMs: reset * 1000 };
      if (status === 429) {
        // Throttled before the estimated end: the estimate does not hold for this target.
        if (previous && previous.remaining <= 0 && sentAt < previous.resetMs) quota.estimateOff = true;
      } else if (limit !== undefined && remaining === limit - 1) {
        quota.openedAt = this.now();
        const bound = reset * 1000 - sentAt;
        if (bound > 0) quota.windowMs = Math.min(previous?.windowMs ?? Infinity, bound);
      }
      this.quotas.set(client, quota);
    } else if (status === 429) {
      this.quotas.set(client, { ...previous, remaining: 0, resetMs: this.now() + FALLBACK_WAIT_MS, estimateOff: true });
    }
    return status === 429 ? Math.max(this.delayFor(client), SLACK_MS) : 0;
  }
}
