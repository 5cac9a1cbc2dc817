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
//
// Several requests of a client may be in flight at once (admit, release): one goes while the
// Remaining last heard, less the client's requests still unanswered, is above 0, so that a
// window never gets more requests than Remaining allowed, whatever order the answers come back
// in. As many go at once as the rate and the round trip call for (Limit ÷ window length × round
// trip, at most MAX_IN_FLIGHT), and one alone while nothing is known of the client's quota, as
// the first of a new window, or sent early to learn the window's length. Answers may come back
// in any order: within one window the lowest Remaining holds, and an answer from a window the
// pacer has already seen end says nothing of the current one.
import { nonNegativeInteger, rateLimitHeaders } from '../rules/rate-limit-tracker.ts';
import type { Headers } from '../rules/types.ts';

interface Opener {
  sentAt: number;
  receivedAt: number;
  /** The window's Reset, epoch ms: an answer with another Reset is from another window. */
  resetMs: number;
}

interface Quota {
  /** X-RateLimit-Limit, once an answer said it. */
  limit?: number;
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
  /** When the request whose answer set `remaining` was sent. */
  sentAt: number;
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
/** Requests of one client in flight at once, at most, however high its rate and long the round trip. */
export const MAX_IN_FLIGHT = 8;
/** Weight of the latest round trip in the running estimate. */
const ROUND_TRIP_WEIGHT = 0.25;

/** Waits `ms`; an abort of `signal` ends the wait at once, rejecting with its reason. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

const fresh = (): Quota => ({ remaining: Infinity, resetMs: 0, lo: 0, hi: Infinity, risks: 0, estimateOff: false, sentAt: -Infinity });

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

/** A request the pacer let go. */
export interface Admission {
  /** Sent early on purpose, to learn the window's length: a 429 to it is the pacer's own doing. */
  early: boolean;
}

/** What a client's next request must do: go now, wait so many milliseconds, or wait for an answer of the client's. */
export type Step = { go: true; early: boolean } | { waitMs: number } | { waitForAnswer: true };

/** What the pacer holds now, for the run's progress line: the rate last heard, and how long requests still wait. */
export interface PacerState {
  /** X-RateLimit-Limit of the client heard last. */
  limit?: number;
  /** The longest its window may be, as learned (ms). */
  windowMs?: number;
  /** How long the longest wait under way still lasts (ms); 0: none. */
  waitMs: number;
}

export class RateLimitPacer {
  private readonly quotas = new Map<string, Quota>();
  /** Requests admitted and not yet released, per client. */
  private readonly inFlight = new Map<string, number>();
  /** Requests waiting for an answer of their client, per client. */
  private readonly waiting = new Map<string, Array<() => void>>();
  /** Running estimate of the round trip, in ms; undefined until an answer came back. */
  private roundTripMs: number | undefined;
  /** Milliseconds spent waiting for windows, for the run summary. */
  waitedMs = 0;
  /** When the longest wait under way ends (epoch ms), and the client whose quota was heard last: for state(). */
  private waitingUntil = 0;
  private heardLast: string | undefined;

  constructor(
    private readonly now: () => number = Date.now,
    private readonly wait: (ms: number, signal?: AbortSignal) => Promise<void> = sleep,
  ) {}

  /** The Remaining the pacer holds for `client` (the lowest heard in its current window); undefined before any. */
  remainingOf(client: string): number | undefined {
    const remaining = this.quotas.get(client)?.remaining;
    return remaining === undefined || !Number.isFinite(remaining) ? undefined : remaining;
  }

  /** The rate last heard and the wait under way. */
  state(): PacerState {
    const quota = this.heardLast === undefined ? undefined : this.quotas.get(this.heardLast);
    return {
      ...(quota?.limit !== undefined ? { limit: quota.limit } : {}),
      ...(quota !== undefined && Number.isFinite(quota.hi) ? { windowMs: quota.hi } : {}),
      waitMs: Math.max(0, this.waitingUntil - this.now()),
    };
  }

  /** A wait of `ms` begins (for a window, or after a 429): counted in waitedMs and said by state(); an abort of `signal` ends it at once. */
  async waitFor(ms: number, signal?: AbortSignal): Promise<void> {
    this.waitedMs += ms;
    this.waitingUntil = Math.max(this.waitingUntil, this.now() + ms);
    await this.wait(ms, signal);
  }

  /** Requests of `client` admitted and not yet released. */
  inFlightOf(client: string): number {
    return this.inFlight.get(client) ?? 0;
  }

  /**
   * Requests of `client` that may be in flight at once: the learned rate (Limit over the
   * window's length, or the time left to Reset while the length is not known) times the round
   * trip, rounded up, between 1 and MAX_IN_FLIGHT; 1 while the quota or the round trip is not known.
   */
  maxInFlight(client: string): number {
    const quota = this.quotas.get(client);
    if (!quota || quota.limit === undefined || !Number.isFinite(quota.remaining) || this.roundTripMs === undefined) return 1;
    const windowMs = Number.isFinite(quota.hi) ? quota.hi : Math.max(SECOND, quota.resetMs - this.now());
    const wanted = Math.ceil((quota.limit / windowMs) * this.roundTripMs);
    return Math.min(MAX_IN_FLIGHT, Math.max(1, wanted));
  }

  /** The most requests maxInFlight lets any one client have in flight: how many independent requests are worth starting at once. */
  widestMaxInFlight(): number {
    let widest = 1;
    for (const client of this.quotas.keys()) widest = Math.max(widest, this.maxInFlight(client));
    return widest;
  }

  /**
   * What `client`'s next request must do. It goes while the Remaining last heard, less the
   * client's requests in flight, is above 0 and fewer than maxInFlight are in flight; `alone`
   * (a request whose order matters, such as a token request) only with none in flight. With
   * Remaining spent it waits for the answers in flight, then for the window to end (or the
   * moment to send early), and goes alone.
   */
  next(client: string, alone = false): Step {
    const inFlight = this.inFlightOf(client);
    const quota = this.quotas.get(client);
    if (inFlight > 0 && (alone || inFlight >= this.maxInFlight(client))) return { waitForAnswer: true };
    if (!quota || quota.remaining - inFlight > 0) return { go: true, early: false };
    if (inFlight > 0) return { waitForAnswer: true };
    const waitMs = this.delayFor(client);
    if (waitMs > 0) return { waitMs };
    return { go: true, early: quota.remaining <= 0 && earlyTime(quota) !== undefined && this.now() < safeTime(quota) };
  }

  /**
   * Waits until `client`'s next request may go, and counts it in flight: release it once
   * answered (or failed). An abort of `signal` (the run interrupted) ends the wait at once,
   * rejecting with its reason.
   */
  async admit(client: string, alone = false, signal?: AbortSignal): Promise<Admission> {
    for (;;) {
      signal?.throwIfAborted();
      const step = this.next(client, alone);
      if ('go' in step) {
        this.inFlight.set(client, this.inFlightOf(client) + 1);
        return { early: step.early };
      }
      if ('waitMs' in step) await this.waitFor(step.waitMs, signal);
      else {
        await this.nextAnswer(client, signal);
      }
    }
  }

  /** An admitted request of `client` is done (answered, learned from, or failed): the next may go. */
  release(client: string): void {
    const left = this.inFlightOf(client) - 1;
    if (left > 0) this.inFlight.set(client, left);
    else this.inFlight.delete(client);
    const waiters = this.waiting.get(client) ?? [];
    this.waiting.delete(client);
    // Every waiter looks again; those that still may not go wait for the next answer.
    for (const wake of waiters) wake();
  }

  /** Until an answer of `client` comes (release), or `signal` aborts. */
  private nextAnswer(client: string, signal: AbortSignal | undefined): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const onAbort = () => reject(signal!.reason);
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waitersOf(client).push(() => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      });
    });
  }

  private waitersOf(client: string): Array<() => void> {
    let list = this.waiting.get(client);
    if (!list) {
      list = [];
      this.waiting.set(client, list);
    }
    return list;
  }

  /** How long `client` must wait before its next request. */
  delayFor(client: string): number {
    const quota = this.quotas.get(client);
    if (!quota || quota.remaining > 0) return 0;
    const sendAt = earlyTime(quota) ?? safeTime(quota);
    return Math.min(MAX_WAIT_MS, Math.max(0, sendAt - this.now()));
  }

  /**
   * Learns the client's quota from the answer to a request sent at `sentAt` that arrived at
   * `receivedAt`. `early`: what admit said of the request (without it, judged from what the
   * pacer knows now, as when one request at a time is in flight).
   */
  afterResponse(client: string, status: number, headers: Headers, sentAt: number = this.now(), receivedAt: number = this.now(), early?: boolean): Paced {
    const h = rateLimitHeaders(headers);
    const limit = nonNegativeInteger(h.limit);
    const remaining = nonNegativeInteger(h.remaining);
    const reset = nonNegativeInteger(h.reset);
    const previous = this.quotas.get(client);
    // The round trip as the caller lives it, from sending to learning from the answer (judging included).
    const roundTrip = this.now() - sentAt;
    if (roundTrip >= 0) this.roundTripMs = this.roundTripMs === undefined ? roundTrip : this.roundTripMs + ROUND_TRIP_WEIGHT * (roundTrip - this.roundTripMs);
    // Sent early on purpose: the pacer's own doing if refused.
    const risked =
      status === 429 && (early ?? (previous !== undefined && previous.remaining <= 0 && earlyTime(previous) !== undefined && sentAt < safeTime(previous)));
    if (remaining !== undefined && reset !== undefined) {
      const resetMs = reset * 1000;
      // One window: the same Reset, still ahead when the request went (a Reset already past
      // names no window). Within it Remaining only goes down, whichever answer comes back first.
      const sameWindow = previous !== undefined && resetMs === previous.resetMs && resetMs > sentAt;
      // Overtaken by the answer to a request sent after it, from another window (or none): nothing to learn.
      if (previous && sentAt < previous.sentAt && !sameWindow) return { retryInMs: status === 429 ? Math.max(this.delayFor(client), SLACK_MS) : 0, risked };
      const heard = status === 429 ? 0 : remaining;
      const quota: Quota = {
        ...(previous ?? fresh()),
        remaining: sameWindow ? Math.min(previous.remaining, heard) : heard,
        resetMs,
        sentAt: Math.max(sentAt, previous?.sentAt ?? -Infinity),
      };
      if (limit !== undefined) quota.limit = limit;
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
      this.heardLast = client;
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
