// Per-client memory of X-RateLimit-* observations, for the sequence check. One tracker per
// run, proxy session or validated recording. Bounded: a few observations per client, and a
// capped number of clients (oldest forgotten first).
import type { BearerToken, Exchange, Headers } from './types.ts';

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

export interface RateLimitObservation {
  exchangeId?: string;
  /** Epoch milliseconds. */
  start: number;
  end: number;
  status: number;
  limit: number;
  remaining: number;
  reset: number;
}

/** Whose quota an exchange spends: the token's authorized party, else its subject. */
export function rateLimitClient(exchange: Exchange): string {
  return rateLimitClientOfToken(exchange.token);
}

export function rateLimitClientOfToken(token: BearerToken): string {
  const claims = token.claims;
  const azp = claims?.['azp'] ?? claims?.['client_id'] ?? claims?.['sub'];
  return typeof azp === 'string' ? azp : '(no token)';
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
  if (exchange.id !== undefined) observation.exchangeId = exchange.id;
  return observation;
}

const PER_CLIENT = 16;
const MAX_CLIENTS = 10_000;

export class RateLimitTracker {
  private readonly byClient = new Map<string, RateLimitObservation[]>();

  /** The latest observation of `client` that had finished by `before` (epoch ms). */
  lastFinishedBefore(client: string, before: number): RateLimitObservation | undefined {
    let best: RateLimitObservation | undefined;
    const list = this.byClient.get(client);
    if (!list) return undefined;
    for (const o of list) if (o.end <= before && (!best || o.end > best.end)) best = o;
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
