// The rule engine: (exchange, earlier exchanges) → findings. Pure apart from the tracker the
// caller hands in. Suites, proxy and validate all judge through judgeExchange.
import { CHECKS } from './checks/index.ts';
import type { Check, CheckInput, ParsedBody } from './checks/check.ts';
import { matchOperation } from './operations.ts';
import { requirement } from './requirements.ts';
import { observationOf, rateLimitClient, RateLimitTracker } from './rate-limit-tracker.ts';
import type { CapturedBody, Exchange, Finding, MatchedOperation, OperationId } from './types.ts';

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
  /**
   * Requirements this exchange put to the test (a check had something to examine), found
   * or not. A report calls a requirement "pass" only when some exchange or test examined it.
   */
  examined: string[];
}

function parseBody(body: CapturedBody | undefined): ParsedBody | undefined {
  if (!body || body.truncated) return undefined;
  try {
    return { ok: true, value: JSON.parse(body.text) };
  } catch (error) {
    return { ok: false, error: (error as Error).message };
  }
}

/** A check names several requirements; each concerns only the operations the catalog lists for it. */
const examinedBy = new Map<Check, Map<OperationId, string[]>>();
function requirementsExamined(check: Check, operation: OperationId): string[] {
  let byOperation = examinedBy.get(check);
  if (!byOperation) examinedBy.set(check, (byOperation = new Map()));
  let ids = byOperation.get(operation);
  if (!ids) {
    ids = check.requirements.filter((id) => {
      const { operations } = requirement(id);
      return operations.includes('all') || operations.includes(operation);
    });
    byOperation.set(operation, ids);
  }
  return ids;
}

export function judgeExchange(exchange: Exchange, tracker?: RateLimitTracker): Judgement {
  const operation = matchOperation(exchange.request.method, exchange.request.url);
  if (!operation) return { findings: [], examined: [] };
  const input: CheckInput = { exchange, operation };
  const requestJson = parseBody(exchange.request.body);
  if (requestJson) input.requestJson = requestJson;
  const responseJson = exchange.response?.status === 204 ? undefined : parseBody(exchange.response?.body);
  if (responseJson) input.responseJson = responseJson;
  if (tracker) input.tracker = tracker;

  const findings: Finding[] = [];
  const examined = new Set<string>();
  for (const check of CHECKS) {
    if (!check.operations.includes(operation.operation)) continue;
    const result = check.run(input);
    if (!result) continue;
    findings.push(...result);
    for (const id of requirementsExamined(check, operation.operation)) examined.add(id);
  }
  if (tracker) {
    const observation = observationOf(exchange);
    if (observation) tracker.record(rateLimitClient(exchange), observation);
  }
  return { operation, findings, examined: [...examined] };
}
