// 429 and the X-RateLimit-* headers.
import { nonNegativeInteger, rateLimitClient, rateLimitHeaders, timingOf } from '../rate-limit-tracker.ts';
import {
  defineCheck,
  EVERY_OPERATION,
  finding,
  rateLimitObservationOf,
  RESPONSE_HEADERS_NOT_RECORDED,
  responseHeadersRecorded,
  show,
  type CheckInput,
  type CheckResult,
  type NotRecorded,
} from './check.ts';
import type { Finding } from '../types.ts';

const HEADER_NAMES = { limit: 'X-RateLimit-Limit', remaining: 'X-RateLimit-Remaining', reset: 'X-RateLimit-Reset' } as const;
type HeaderKey = keyof typeof HEADER_NAMES;
const HEADER_KEYS = Object.keys(HEADER_NAMES) as HeaderKey[];

export function rateLimitHeadersOn429(input: CheckInput): CheckResult | NotRecorded {
  const response = input.exchange.response;
  if (response?.status !== 429) return undefined;
  if (!responseHeadersRecorded(input)) return RESPONSE_HEADERS_NOT_RECORDED;
  const present = rateLimitHeaders(response.headers);
  // An empty header carries nothing: it counts as missing.
  const missing: string[] = [];
  for (const key of HEADER_KEYS) if ((present[key] ?? '').trim() === '') missing.push(HEADER_NAMES[key]);
  if (missing.length === 0) return [];
  return [
    finding(
      'RL-429-HEADERS',
      'implementation',
      'a 429 with X-RateLimit-Limit, X-RateLimit-Remaining and X-RateLimit-Reset',
      `a 429 without ${missing.join(', ')}`,
    ),
  ];
}

/** A Reset further than this from the response time is not a plausible epoch-seconds instant. */
const RESET_HORIZON_SECONDS = 24 * 3600;

function headerValueFinding(expected: string, received: string): Finding {
  return finding('RL-HEADER-VALUES', 'implementation', expected, received);
}

export function rateLimitHeadersWellFormed(input: CheckInput): CheckResult {
  const response = input.exchange.response;
  if (!response) return undefined;
  const h = rateLimitHeaders(response.headers);
  if (h.limit === undefined && h.remaining === undefined && h.reset === undefined) return undefined;
  const findings: Finding[] = [];
  const values = { limit: nonNegativeInteger(h.limit), remaining: nonNegativeInteger(h.remaining), reset: nonNegativeInteger(h.reset) };
  for (const key of HEADER_KEYS) {
    if (h[key] !== undefined && values[key] === undefined) findings.push(headerValueFinding(`${HEADER_NAMES[key]} as a non-negative integer`, show(h[key])));
  }
  const { limit, remaining, reset } = values;
  if (limit !== undefined && remaining !== undefined && remaining > limit) {
    findings.push(headerValueFinding(`X-RateLimit-Remaining not above X-RateLimit-Limit (${limit})`, String(remaining)));
  }
  if (reset !== undefined) {
    const startMs = rateLimitObservationOf(input)?.start ?? Date.parse(input.exchange.startedAt);
    const now = startMs / 1000;
    if (!Number.isNaN(now) && Math.abs(reset - now) > RESET_HORIZON_SECONDS) {
      findings.push(
        headerValueFinding('X-RateLimit-Reset as UNIX epoch seconds near the response time', `${reset} (${Math.round(reset - now)} s from the request)`),
      );
    }
  }
  if (response.status === 429 && remaining !== undefined && remaining !== 0) {
    findings.push(headerValueFinding('X-RateLimit-Remaining 0 on a 429', String(remaining)));
  }
  return findings;
}

export function rateLimitSequenceIsConsistent(input: CheckInput): CheckResult {
  const { exchange, tracker } = input;
  const current = tracker && rateLimitObservationOf(input);
  if (!tracker || !current) return undefined;
  const client = rateLimitClient(exchange);
  if (client === undefined) return undefined;
  // Only exchanges answered before this one was sent, in the same window (same Limit and
  // Reset), are comparable: they were counted before it, so Remaining can only have gone down.
  const previous = tracker.lowestAnsweredBefore(client, current, current.limit, current.reset);
  if (!previous) return undefined;
  if (current.remaining <= previous.remaining) return [];
  return [
    finding(
      'RL-SEQUENCE',
      'implementation',
      `X-RateLimit-Remaining at most ${previous.remaining} (an earlier request of this client in the same window, reset ${previous.reset})`,
      String(current.remaining),
    ),
  ];
}

/**
 * Statuses with which a server refuses a request without judging what it asks for: what a
 * throttled request gets from a server that does not answer 429. A 400, 401 or 404 answers the
 * request itself (the server handled it), and a 2xx carried it out: neither is judged here.
 */
const isBareRefusal = (status: number): boolean => status === 403 || status === 420 || status >= 500;

export function throttledRequestAnswered429(input: CheckInput): CheckResult | NotRecorded {
  const { exchange, tracker } = input;
  const status = exchange.response?.status;
  if (!tracker || status === undefined) return undefined;
  const client = rateLimitClient(exchange);
  if (client === undefined) return undefined;
  const current = rateLimitObservationOf(input);
  const timing = current ?? timingOf(exchange);
  if (!timing) return undefined;
  // The client's quota was spent when this request was sent: an answer of its own, received
  // before this request went out, said Remaining 0, and the window it named had not reset.
  // A response naming its window is compared with answers in that window only; one that still
  // reports quota left (Remaining above 0) was counted before that 0 reached the client: not
  // over the limit. A response naming none is placed in the window last heard of.
  const window = current ?? tracker.latestAnsweredBefore(client, timing);
  const previous = window && tracker.lowestAnsweredBefore(client, timing, window.limit, window.reset);
  if (previous?.remaining !== 0 || timing.start / 1000 >= previous.reset) return undefined;
  if (current && current.remaining > 0) return undefined;
  if (status === 429) return [];
  if (!isBareRefusal(status)) return undefined;
  // Whether this answer still reported quota left is in headers the recording did not keep.
  if (!current && !responseHeadersRecorded(input)) return RESPONSE_HEADERS_NOT_RECORDED;
  return [
    finding(
      'RL-THROTTLED-429',
      'implementation',
      `429 for a request over the rate limit (an earlier request of this client had X-RateLimit-Remaining 0, window resetting at ${previous.reset})`,
      `${status}`,
    ),
  ];
}

export const rateLimitChecks = [
  defineCheck(rateLimitHeadersOn429, ['RL-429-HEADERS'], EVERY_OPERATION),
  defineCheck(rateLimitHeadersWellFormed, ['RL-HEADER-VALUES'], EVERY_OPERATION),
  defineCheck(rateLimitSequenceIsConsistent, ['RL-SEQUENCE'], EVERY_OPERATION),
  defineCheck(throttledRequestAnswered429, ['RL-THROTTLED-429'], EVERY_OPERATION),
];
