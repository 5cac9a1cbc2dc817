// The rule engine: (exchange, earlier exchanges) → findings. Pure apart from the tracker the
// caller hands in. Suites, proxy and validate all judge through judgeExchange.
import { CHECKS } from './checks/index.ts';
import type { CheckInput, ParsedBody } from './checks/check.ts';
import { matchOperation } from './operations.ts';
import { observationOf, rateLimitClient, RateLimitTracker } from './rate-limit-tracker.ts';
import type { CapturedBody, Exchange, Finding, MatchedOperation } from './types.ts';

export { matchOperation } from './operations.ts';
export { RateLimitTracker } from './rate-limit-tracker.ts';
export { buildExchange, normalizeHeaders } from './exchange.ts';
export { CHECKS } from './checks/index.ts';
export { loadRequirements, requirement } from './requirements.ts';
export type * from './types.ts';

export interface Judgement {
  /** Undefined: the path is not one the document covers; such exchanges are counted, not judged. */
  operation?: MatchedOperation;
  findings: Finding[];
}

function parseBody(body: CapturedBody | undefined): ParsedBody | undefined {
  if (!body || body.truncated) return undefined;
  try {
    return { ok: true, value: JSON.parse(body.text) };
  } catch (error) {
    return { ok: false, error: (error as Error).message };
  }
}

export function judgeExchange(exchange: Exchange, tracker?: RateLimitTracker): Judgement {
  const operation = matchOperation(exchange.request.method, exchange.request.url);
  if (!operation) return { findings: [] };
  const input: CheckInput = { exchange, operation };
  const requestJson = parseBody(exchange.request.body);
  if (requestJson) input.requestJson = requestJson;
  const responseJson = exchange.response?.status === 204 ? undefined : parseBody(exchange.response?.body);
  if (responseJson) input.responseJson = responseJson;
  if (tracker) input.tracker = tracker;

  const findings: Finding[] = [];
  for (const check of CHECKS) {
    if (check.operations.includes(operation.operation)) findings.push(...check.run(input));
  }
  if (tracker) {
    const observation = observationOf(exchange);
    if (observation) tracker.record(rateLimitClient(exchange), observation);
  }
  return { operation, findings };
}
