// 429 and the X-RateLimit-* headers.
import { nonNegativeInteger, observationOf, rateLimitClient, rateLimitHeaders } from '../rate-limit-tracker.ts';
import { defineCheck, finding, show, type CheckInput, type CheckResult } from './check.ts';
import type { Finding } from '../types.ts';

const HEADER_NAMES = { limit: 'X-RateLimit-Limit', remaining: 'X-RateLimit-Remaining', reset: 'X-RateLimit-Reset' } as const;

export function rateLimitHeadersOn429({ exchange }: CheckInput): CheckResult {
  const response = exchange.response;
  if (response?.status !== 429) return undefined;
  const present = rateLimitHeaders(response.headers);
  // An empty header carries nothing: it counts as missing.
  const missing = (Object.keys(HEADER_NAMES) as Array<keyof typeof HEADER_NAMES>)
    .filter((k) => (present[k] ?? '').trim() === '')
    .map((k) => HEADER_NAMES[k]);
  if (missing.length === 0) return [];
  return [finding(rateLimitHeadersOn429.name, 'RL-429-HEADERS', 'implementation', 'a 429 with X-RateLimit-Limit, X-RateLimit-Remaining and X-RateLimit-Reset', `a 429 without ${missing.join(', ')}`)];
}

/** A Reset further than this from the response time is not a plausible epoch-seconds instant. */
const RESET_HORIZON_SECONDS = 24 * 3600;

export function rateLimitHeadersWellFormed({ exchange }: CheckInput): CheckResult {
  const response = exchange.response;
  if (!response) return undefined;
  const h = rateLimitHeaders(response.headers);
  if (h.limit === undefined && h.remaining === undefined && h.reset === undefined) return undefined;
  const findings: Finding[] = [];
  const report = (expected: string, received: string) => findings.push(finding(rateLimitHeadersWellFormed.name, 'RL-HEADER-VALUES', 'implementation', expected, received));
  const values: Partial<Record<keyof typeof HEADER_NAMES, number>> = {};
  for (const key of Object.keys(HEADER_NAMES) as Array<keyof typeof HEADER_NAMES>) {
    if (h[key] === undefined) continue;
    const n = nonNegativeInteger(h[key]);
    if (n === undefined) report(`${HEADER_NAMES[key]} as a non-negative integer`, show(h[key]));
    else values[key] = n;
  }
  if (values.limit !== undefined && values.remaining !== undefined && values.remaining > values.limit) {
    report(`X-RateLimit-Remaining not above X-RateLimit-Limit (${values.limit})`, String(values.remaining));
  }
  if (values.reset !== undefined) {
    const now = Date.parse(exchange.startedAt) / 1000;
    if (!Number.isNaN(now) && Math.abs(values.reset - now) > RESET_HORIZON_SECONDS) {
      report('X-RateLimit-Reset as UNIX epoch seconds near the response time', `${values.reset} (${Math.round(values.reset - now)} s from the request)`);
    }
  }
  if (response.status === 429 && values.remaining !== undefined && values.remaining !== 0) {
    report('X-RateLimit-Remaining 0 on a 429', String(values.remaining));
  }
  return findings;
}

export function rateLimitSequenceIsConsistent({ exchange, tracker }: CheckInput): CheckResult {
  const current = tracker && observationOf(exchange);
  if (!tracker || !current) return undefined;
  const previous = tracker.lastFinishedBefore(rateLimitClient(exchange), current.start);
  // Only a finished-before exchange in the same window (same Limit and Reset) is comparable:
  // it was counted before this one, so Remaining can only have gone down since.
  if (!previous || previous.limit !== current.limit || previous.reset !== current.reset) return undefined;
  if (current.remaining <= previous.remaining) return [];
  return [
    finding(
      rateLimitSequenceIsConsistent.name,
      'RL-SEQUENCE',
      'implementation',
      `X-RateLimit-Remaining at most ${previous.remaining} (an earlier request of this client in the same window, reset ${previous.reset})`,
      String(current.remaining),
    ),
  ];
}

export const rateLimitChecks = [
  defineCheck(rateLimitHeadersOn429, ['RL-429-HEADERS']),
  defineCheck(rateLimitHeadersWellFormed, ['RL-HEADER-VALUES']),
  defineCheck(rateLimitSequenceIsConsistent, ['RL-SEQUENCE']),
];
