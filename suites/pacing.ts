// Keeps a run inside the target's rate limit, from what the target says in X-RateLimit-*:
// once a client's Remaining reaches 0, its next request waits for the window to end. A 429
// nobody planned is an observation, never a failure: the caller waits and retries.
//
// Reset is whole epoch seconds, so waiting until Reset can lose up to a second per window, and
// a pacer that opens each window just past a whole second keeps losing it. So the pacer learns
// the length W of a client's windows, as bounds lo < W ≤ hi, from each window it sees open
// (Remaining = Limit - 1): the window opened between the request's sending and its answer,
// and ends within the second before Reset; a later window opens after it ends. The current
// window then ends by its opener's answer + hi, often well before Reset.
//
// One such window bounds W within about a second. Windows are most often whole seconds, so
// the pacer then sends the next request as early as a whole-second W allows: accepted, it
// proves W that short; refused (a 429 the pacer risked, counted apart from unplanned ones),
// it proves W longer, and the request is retried once the window surely ended. At most
// MAX_RISKS such 429s per client: none against 1-second windows, rarely one against longer
// whole-second ones. A window a little shorter than a whole second is paced as if it lasted
// that whole second, as Reset alone would. A target whose answers contradict the model (a 429
// after the learned end, bounds that cross) is paced by Reset alone.
import { nonNegativeInteger, rateLimitHeaders } from '../rules/rate-limit-tracker.ts';
import type { Headers } from '../rules/types.ts';

interface Opener {
  sentAt: number;
  receivedAt: number;
  /** The window's Reset, epoch ms: an answer with another Reset is from another window. */
  resetMs: number;
}

interface Quota {
  remaining: number;
  /** Epoch milliseconds of Reset. */
  resetMs: number;
  /** The request that opened the current window, when the pacer saw it. */
  opener?: Opener;
  /** Known bounds of the window length, in ms: lo < W ≤ hi. */
  lo: number;
  hi: number;
  /** 429s the pacer risked so far. */
  risks: number;
  /** The model proved wrong once: wait for Reset only. */
  estimateOff: boolean;
}

/** What an answer tells the caller. */
export interface Paced {
  /** How long to wait before retrying, after a 429. */
  retryInMs: number;
  /** A 429 on a request the pacer sent early on purpose, to learn the window's length. */
  risked: boolean;
}

const SECOND = 1000;
/** A little slack past the computed end, for clock and network jitter. */
const SLACK_MS = 25;
/** Without a usable Reset, wait this long after a 429. */
const FALLBACK_WAIT_MS = 1000;
/** Never wait longer than this for one window (a Reset far away is a target's mistake). */
const MAX_WAIT_MS = 65_000;
/** An early request goes this long after the earliest time the tested length allows (timers may fire early). */
const PROBE_MARGIN_MS = 5;
/** Not worth a risk: an early request that would save less than this. */
const TOLERANCE_MS = 10;
/** 429s risked per client, at most. */
const MAX_RISKS = 2;

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

const fresh = (): Quota => ({ remaining: Infinity, resetMs: 0, lo: 0, hi: Infinity, risks: 0, estimateOff: false });

/** The model applies: the window's opener is known and its length bounded. */
function estimable(quota: Quota): quota is Quota & { opener: Opener } {
  return !quota.estimateOff && quota.opener !== undefined && Number.isFinite(quota.hi);
}

/** When the client's next request is surely in a new window, as far as Reset and the learned length tell. */
function safeTime(quota: Quota): number {
  const end = estimable(quota) ? Math.min(quota.resetMs, quota.opener.receivedAt + quota.hi) : quota.resetMs;
  return end + SLACK_MS;
}

/**
 * When to send early, testing a window length (accepted: W is no longer; refused: W is longer),
 * if the test is worth a risk. While the bounds allow a whole second, the test is the smallest
 * one (two fit only when lo lies within a round trip below one); otherwise it halves the bounds.
 */
function earlyTime(quota: Quota): number | undefined {
  if (!estimable(quota) || quota.risks >= MAX_RISKS) return undefined;
  const { lo, hi } = quota;
  const whole = (Math.floor(lo / SECOND) + 1) * SECOND;
  const length = whole <= hi ? whole : (lo + hi) / 2;
  const at = quota.opener.receivedAt + length + PROBE_MARGIN_MS;
  return at + TOLERANCE_MS < safeTime(quota) ? at : undefined;
}

export class RateLimitPacer {
  private readonly quotas = new Map<string, Quota>();
  /** Milliseconds spent waiting for windows, for the run summary. */
  waitedMs = 0;

  constructor(private readonly now: () => number = Date.now) {}

  /** How long `client` must wait before its next request. */
  delayFor(client: string): number {
    const quota = this.quotas.get(client);
    if (!quota || quota.remaining > 0) return 0;
    const sendAt = earlyTime(quota) ?? safeTime(quota);
    return Math.min(MAX_WAIT_MS, Math.max(0, sendAt - this.now()));
  }

  async beforeRequest(client: string): Promise<void> {
    const delay = this.delayFor(client);
    if (delay > 0) {
      this.waitedMs += delay;
      await sleep(delay);
    }
  }

  /** Learns the client's quota from the answer to a request sent at `sentAt` that arrived at `receivedAt`. */
  afterResponse(client: string, status: number, headers: Headers, sentAt: number = this.now(), receivedAt: number = this.now()): Paced {
    const h = rateLimitHeaders(headers);
    const limit = nonNegativeInteger(h.limit);
    const remaining = nonNegativeInteger(h.remaining);
    const reset = nonNegativeInteger(h.reset);
    const previous = this.quotas.get(client);
    // Sent early on purpose: the pacer's own doing if refused.
    const risked = status === 429 && previous !== undefined && previous.remaining <= 0 && earlyTime(previous) !== undefined && sentAt < safeTime(previous);
    if (remaining !== undefined && reset !== undefined) {
      const quota: Quota = { ...(previous ?? fresh()), remaining: status === 429 ? 0 : remaining, resetMs: reset * 1000 };
      if (risked) quota.risks++;
      if (status !== 429 && limit !== undefined && remaining === limit - 1) {
        openWindow(quota, sentAt, receivedAt);
      } else {
        if (status === 429) learnFrom429(quota, sentAt);
        // Another Reset: a window the pacer did not see open.
        if (quota.opener && quota.opener.resetMs !== quota.resetMs) delete quota.opener;
      }
      if (quota.lo >= quota.hi) quota.estimateOff = true;
      this.quotas.set(client, quota);
    } else if (status === 429) {
      this.quotas.set(client, { ...(previous ?? fresh()), remaining: 0, resetMs: this.now() + FALLBACK_WAIT_MS, estimateOff: true });
    }
    return { retryInMs: status === 429 ? Math.max(this.delayFor(client), SLACK_MS) : 0, risked };
  }
}

/**
 * The request opened a window: it started between sentAt and receivedAt, ends in the second
 * before Reset, and started after the previous window ended.
 */
function openWindow(quota: Quota, sentAt: number, receivedAt: number): void {
  const previous = quota.opener;
  quota.opener = { sentAt, receivedAt, resetMs: quota.resetMs };
  if (previous && previous.resetMs < quota.resetMs) quota.hi = Math.min(quota.hi, receivedAt - previous.sentAt);
  // A Reset already past (seconds to go rather than epoch seconds) says nothing of the length.
  if (quota.resetMs <= sentAt) return;
  quota.hi = Math.min(quota.hi, quota.resetMs - sentAt);
  quota.lo = Math.max(quota.lo, quota.resetMs - SECOND - receivedAt);
}

/** Throttled while the opener's window, by its Reset, may still be open: that window outlasted sentAt. */
function learnFrom429(quota: Quota, sentAt: number): void {
  const opener = quota.opener;
  if (opener && sentAt < opener.resetMs) quota.lo = Math.max(quota.lo, sentAt - opener.receivedAt);
}
