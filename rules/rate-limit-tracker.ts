// Per-client memory of X-RateLimit-* observations, for the sequence check. One tracker per
// run, proxy session or validated recording. Bounded: a few observations per client, and a
// capped number of clients (oldest forgotten first).
import type { BearerToken, Exchange, ExchangeOrder, Headers } from './types.ts';

export interface RateLimitHeaders {
  limit?: string;
  remaining?: string;
  reset?: string;
}

export function rateLimitHeaders(headers: Headers): RateLimitHeaders {
  const out: RateLimitHeaders = {};
  if (headers['x-ratelimit-limit'] !== undefined) out.limit = headers['x-ratelimit-limit'];
  if (headers['x-ratelimit-remaining'] !== undefined) out.remaining = headers['x-ratelimit-remaining'];
  if (headers['x-ratelimit-reset'] !== undefined) out.reset = headers['x-ratelimit-reset'];
  return out;
}

/** A header value as a non-negative integer, or undefined when it is not one. */
const NON_NEGATIVE_INTEGER = /^\s*\d{1,15}\s*$/;
const isDigit = (code: number): boolean => code >= 48 && code <= 57;

export function nonNegativeInteger(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  // Plain digits (what every response carries) are read without a regular expression.
  let plain = value.length > 0 && value.length <= 15;
  for (let i = 0; plain && i < value.length; i++) plain = isDigit(value.charCodeAt(i));
  if (!plain && !NON_NEGATIVE_INTEGER.test(value)) return undefined;
  return Number(value);
}

/** When an exchange's request went out and its answer was back, as far as its driver can tell. */
export interface ExchangeTiming {
  /** Epoch milliseconds, as precise as the driver or the recording timed it (usually whole milliseconds). */
  start: number;
  end: number;
  /** The driver's finer ordering (Exchange.order), when it has one. */
  order?: ExchangeOrder;
}

export interface RateLimitObservation extends ExchangeTiming {
  exchangeId?: string;
  status: number;
  limit: number;
  remaining: number;
  reset: number;
}

/**
 * Recorded timestamps have whole milliseconds (ISO 8601 times, HAR's startedDateTime): two
 * events in the same millisecond, or rounded into it, may have happened in either order.
 */
export const TIMESTAMP_RESOLUTION_MS = 1;

/**
 * Whether `earlier`'s answer had certainly arrived before `later`'s request was sent: only then
 * did the target count `earlier` first. On the driver's own clock when both carry the same one;
 * else by the timestamps, at least a whole millisecond apart. Anything else (overlapping, in the
 * same millisecond, unknown) is concurrent: not ordered, so not compared.
 */
export function answeredBeforeSent(earlier: ExchangeTiming, later: ExchangeTiming): boolean {
  if (earlier.order && later.order && earlier.order.clock === later.order.clock) return earlier.order.received < later.order.sent;
  return earlier.end + TIMESTAMP_RESOLUTION_MS <= later.start;
}

/** The exchange's timing; undefined when its start is not a time. */
export function timingOf(exchange: Exchange): ExchangeTiming | undefined {
  const start = Date.parse(exchange.startedAt);
  if (Number.isNaN(start)) return undefined;
  const timing: ExchangeTiming = { start, end: start + (exchange.durationMs ?? 0) };
  if (exchange.order) timing.order = exchange.order;
  return timing;
}

/**
 * The client a token's claims name (azp, else client_id, else sub), verified or not; undefined
 * when they name none. What a gateway that counts before it verifies keys its limit by: good
 * for scheduling the kit's own requests, never enough to attribute an answer (rateLimitClient).
 */
export function clientNamedByToken(token: BearerToken): string | undefined {
  const claims = token.claims;
  const client = claims?.['azp'] ?? claims?.['client_id'] ?? claims?.['sub'];
  return typeof client === 'string' ? client : undefined;
}

/**
 * Whose quota an exchange spent, for the rate-limit rules: the client its token names, but only
 * through a credential worth trusting: the kit's own, one whose signature verified, or one the
 * target accepted (it answered other than 401). Claims anyone could have written (a forged or
 * tampered token the target refused) prove nothing about how the target keyed its limit: such
 * an exchange is attributed to nobody (undefined), and neither tracked nor judged by sequence.
 */
export function rateLimitClient(exchange: Exchange): string | undefined {
  const client = clientNamedByToken(exchange.token);
  if (client === undefined) return undefined;
  const { token, response } = exchange;
  const trusted = token.heldByKit === true || token.signatureValid === true || (response !== undefined && response.status !== 401);
  return trusted ? client : undefined;
}

export function observationOf(exchange: Exchange): RateLimitObservation | undefined {
  const response = exchange.response;
  if (!response) return undefined;
  const h = rateLimitHeaders(response.headers);
  const limit = nonNegativeInteger(h.limit);
  const remaining = nonNegativeInteger(h.remaining);
  const reset = nonNegativeInteger(h.reset);
  if (limit === undefined || remaining === undefined || reset === undefined) return undefined;
  const start = Date.parse(exchange.startedAt);
  if (Number.isNaN(start)) return undefined;
  const observation: RateLimitObservation = { start, end: start + (exchange.durationMs ?? 0), status: response.status, limit, remaining, reset };
  if (exchange.order) observation.order = exchange.order;
  if (exchange.id !== undefined) observation.exchangeId = exchange.id;
  return observation;
}

const PER_CLIENT = 16;
const MAX_CLIENTS = 10_000;

export class RateLimitTracker {
  private readonly byClient = new Map<string, RateLimitObservation[]>();

  /** The latest-answered observation of `client` that was answered before `later` was sent. */
  latestAnsweredBefore(client: string, later: ExchangeTiming): RateLimitObservation | undefined {
    let best: RateLimitObservation | undefined;
    const list = this.byClient.get(client);
    if (!list) return undefined;
    for (const o of list) if (answeredBeforeSent(o, later) && (!best || o.end > best.end)) best = o;
    return best;
  }

  /**
   * Of the observations of `client` answered before `later` was sent, in the window named by
   * `limit` and `reset`, the one with the lowest Remaining: all were counted before `later`.
   */
  lowestAnsweredBefore(client: string, later: ExchangeTiming, limit: number, reset: number): RateLimitObservation | undefined {
    let best: RateLimitObservation | undefined;
    const list = this.byClient.get(client);
    if (!list) return undefined;
    for (const o of list) {
      if (o.limit !== limit || o.reset !== reset || !answeredBeforeSent(o, later)) continue;
      if (!best || o.remaining < best.remaining) best = o;
    }
    return best;
  }
  record(client: string, observation: RateLimitObservation): void {
    let list = this.byClient.get(client);
    if (!list) {
      if (this.byClient.size >= MAX_CLIENTS) this.byClient.delete(this.byClient.keys().next().value as string);
      list = [];
      this.byClient.set(client, list);
    }
    list.push(observation);
    if (list.length > PER_CLIENT) list.shift();
  }
}
