// The rule engine: (exchange, earlier exchanges) → findings. Pure apart from the tracker the
// caller hands in. Suites, proxy and validate all judge through judgeExchange.
import { CHECKS } from './checks/index.ts';
import type { Check, CheckInput, ParsedBody } from './checks/check.ts';
import { type ApiLayout, documentLayout } from './api-layout.ts';
import { outsideApiBase } from './api-base.ts';
import { CORS_PREFLIGHT } from './operations.ts';
import { requirement } from './requirements.ts';
import { rateLimitClient, type RateLimitTracker, type RateLimitObservation } from './rate-limit-tracker.ts';
import { credentialStateOf, rateLimitObservationOf } from './checks/check.ts';
import { CREDENTIAL_NOT_RECORDED } from './credential.ts';
import { valuesReached } from './coverage.ts';
import type { CapturedBody, Exchange, Finding, MatchedOperation, OperationId } from './types.ts';
import { jsonNestsDeeperThan, MAX_JSON_DEPTH, valueNestsDeeperThan } from '../core/json-depth.ts';
import { perFrozenObject, perKey } from '../core/memo.ts';
import type { OverLimit } from './types.ts';
import type { OpenApiOperation } from './openapi/description.ts';
import type { DescribedCall } from './openapi/coverage.ts';

export { matchOperation } from './operations.ts';
export { ApiLayout } from './api-layout.ts';
export { RateLimitTracker } from './rate-limit-tracker.ts';
export { buildExchange } from './exchange.ts';
export { loadRequirements } from './requirements.ts';
export type * from './types.ts';

export interface Judgement {
  /** Undefined: the exchange calls no operation (notCovered says why); such exchanges are counted, not judged. */
  operation?: MatchedOperation;
  /** Why an exchange calls no operation: a CORS preflight, or a path outside the API base path (naming it). */
  notCovered?: string;
  findings: Finding[];
  /**
   * Requirements this exchange put to the test (a check had something to examine), found
   * or not. A report calls a requirement "pass" only when some exchange or test examined it.
   */
  examined: string[];
  /** The response's X-RateLimit-* reading (null: none), for the report's rate-limit chart. */
  rateLimit?: RateLimitObservation | null;
  /**
   * The values of the document's enumerations and the edges of its limits this exchange carried
   * ("signing_alg=RS256", "session_metadata=25 properties": rules/coverage.ts), for the reports'
   * coverage; absent: none.
   */
  reached?: readonly string[];
  /**
   * With a user's description (--openapi): the operation of it the exchange called, whichever
   * operation of the document it is too, and the declared status its response selected, with what
   * the description declares (rules/openapi/coverage.ts), for the reports' coverage.
   */
  described?: DescribedCall;
  /**
   * Set when the exchange, on a path the document covers, was not judged at all, and why: "response
   * body nested deeper than 64 levels" (core/json-depth.ts). Nothing is found or examined then.
   */
  notJudged?: string;
  /**
   * Bodies over the body limit (core/body-limit.ts): kept as their size, hash and first bytes, so
   * what they hold is not judged; the status, headers and credential still are.
   */
  bodiesOverLimit?: BodyOverLimit[];
  /**
   * What the checks had to examine but could not judge, one line each: "its response body against
   * the OpenAPI description (OAS-RESPONSE-SCHEMA): get_user response 200 application/json: schema
   * not compiled (…)". The rest of the exchange was judged.
   */
  partsNotJudged?: string[];
  /**
   * Requirements not judged because the recording did not keep this response's headers
   * (Exchange.response.headersRecorded): a check had something to examine in them.
   */
  responseHeadersNotRecorded?: string[];
  /** The recording said the response had a body but did not keep it (CapturedBody.notRecorded): nothing in it was judged. */
  responseBodyNotRecorded?: true;
}

export interface BodyOverLimit extends OverLimit {
  body: 'request' | 'response';
}

function bodiesOverLimit(exchange: Exchange): BodyOverLimit[] | undefined {
  const request = exchange.request.body?.overLimit;
  const response = exchange.response?.body?.overLimit;
  if (!request && !response) return undefined;
  const over: BodyOverLimit[] = [];
  if (request) over.push({ body: 'request', ...request });
  if (response) over.push({ body: 'response', ...response });
  return over;
}

function parseBody(body: CapturedBody | undefined): ParsedBody | undefined {
  if (!body || body.truncated) return undefined;
  try {
    return { ok: true, value: JSON.parse(body.text) };
  } catch (error) {
    return { ok: false, error: (error as Error).message };
  }
}

/** A body the checks would parse (not cut short) whose nesting is too deep to walk. */
const nestsTooDeep = (body: CapturedBody | undefined): boolean => body !== undefined && !body.truncated && jsonNestsDeeperThan(body.text);

/** A token's claims (decoded JSON too) nest too deep: worked out once per shared, frozen claims object. */
const claimsNestTooDeep = perFrozenObject((claims: Record<string, unknown>): boolean => valueNestsDeeperThan(claims));

/** Why the exchange cannot be judged safely (a body or the token's claims nested too deep), or undefined. */
function unjudgeable(exchange: Exchange): string | undefined {
  const tooDeep = (which: string) => `${which} nested deeper than ${MAX_JSON_DEPTH} levels`;
  if (nestsTooDeep(exchange.request.body)) return tooDeep('request body');
  if (exchange.response?.status !== 204 && nestsTooDeep(exchange.response?.body)) return tooDeep('response body');
  if (exchange.token.claims && claimsNestTooDeep(exchange.token.claims)) return tooDeep("the bearer token's claims");
  return undefined;
}

/** A check as it runs for one operation, with the requirements its verdict puts to the test there. */
interface PlannedCheck {
  check: Check;
  /** A check names several requirements; each concerns only the operations the catalog lists for it. */
  examines: string[];
}

/** The checks that apply to each operation, worked out once: judging is the hot path. */
const planFor = perKey(Number.POSITIVE_INFINITY, (operation: OperationId): PlannedCheck[] => {
  const plan: PlannedCheck[] = [];
  for (const check of CHECKS) {
    if (!check.operations.includes(operation)) continue;
    const examines = check.requirements.filter((id) => {
      const { operations } = requirement(id);
      return operations.includes('all') || operations.includes(operation);
    });
    plan.push({ check, examines });
  }
  return plan;
});

/** Why an exchange is no call of an operation. */
function notCoveredReason(exchange: Exchange, layout: ApiLayout): string {
  return exchange.request.method.toUpperCase() === 'OPTIONS' ? CORS_PREFLIGHT : outsideApiBase(layout.base);
}

/**
 * The operation an exchange calls; an other operation that the user's OpenAPI description
 * (--openapi) describes is named by it: "GET /users/{id} (get_user)".
 */
function operationOf(exchange: Exchange, layout: ApiLayout): { operation: MatchedOperation; described?: OpenApiOperation } | undefined {
  const operation = layout.match(exchange.request.method, exchange.request.url);
  if (!operation) return undefined;
  const { openapi } = layout;
  if (!openapi) return { operation };
  // Matched for every operation (the coverage counts the document's too, when the description declares them); only the others are named and judged by it.
  const described = openapi.match(exchange.request.method, exchange.request.url);
  if (!described) return { operation };
  if (operation.operation !== 'otherOperation') return { operation, described };
  const name = `${described.method} ${described.pathTemplate}${described.operationId !== undefined ? ` (${described.operationId})` : ''}`;
  return { operation: { ...operation, name }, described };
}

/**
 * The findings of one exchange. `tracker`: the earlier exchanges of the run or recording (rate
 * limits); `layout`: the driver's API base path and the user's description of the operations the
 * document does not detail (rules/api-layout.ts; default: the document's alone).
 */
export function judgeExchange(exchange: Exchange, tracker?: RateLimitTracker, layout: ApiLayout = documentLayout()): Judgement {
  const matched = operationOf(exchange, layout);
  if (!matched) return { findings: [], examined: [], notCovered: notCoveredReason(exchange, layout) };
  const { operation, described } = matched;
  const call = layout.openapi?.calledWith(described, exchange.response?.status);
  // Checks quote and validate bodies recursively: a body nested thousands deep would exhaust the stack.
  const notJudged = unjudgeable(exchange);
  if (notJudged !== undefined) return { operation, findings: [], examined: [], notJudged, ...(call ? { described: call } : {}) };
  // Every field is set, present or not: one object shape for every exchange keeps the checks'
  // property reads monomorphic (shapes that vary by exchange deoptimised them all at once).
  const input: CheckInput = {
    exchange,
    operation,
    requestJson: parseBody(exchange.request.body),
    responseJson: exchange.response?.status === 204 ? undefined : parseBody(exchange.response?.body),
    tracker,
    rateLimitObservation: undefined,
    credential: undefined,
    openapi: operation.operation === 'otherOperation' ? described : undefined,
    partsNotJudged: undefined,
  };

  const findings: Finding[] = [];
  const examined: string[] = [];
  const headersNotRecorded: string[] = [];
  for (const { check, examines } of planFor(operation.operation)) {
    const result = check.run(input);
    if (!result) continue;
    if (!Array.isArray(result)) {
      // RESPONSE_HEADERS_NOT_RECORDED: something to examine, in headers the recording did not keep.
      for (let i = 0; i < examines.length; i++) if (!headersNotRecorded.includes(examines[i]!)) headersNotRecorded.push(examines[i]!);
      continue;
    }
    for (let i = 0; i < result.length; i++) findings.push(result[i]!);
    for (let i = 0; i < examines.length; i++) if (!examined.includes(examines[i]!)) examined.push(examines[i]!);
  }
  // The authentication checks examine nothing then: said, as what a check could not judge is.
  if (credentialStateOf(input) === 'not-recorded') (input.partsNotJudged ??= []).push(CREDENTIAL_NOT_RECORDED);
  const rateLimit = rateLimitObservationOf(input) ?? null;
  if (tracker && rateLimit) {
    // Only exchanges attributed through a trusted credential join a client's history.
    const client = rateLimitClient(exchange);
    if (client !== undefined) tracker.record(client, rateLimit);
  }
  // `reached` always set (a shared empty list for none): one judgement shape for the report's reads.
  const judgement: Judgement = {
    operation,
    findings,
    examined,
    rateLimit,
    reached: valuesReached(operation.operation, exchange.response?.status, input.requestJson, input.responseJson),
  };
  const overLimit = bodiesOverLimit(exchange);
  if (overLimit) judgement.bodiesOverLimit = overLimit;
  if (headersNotRecorded.length > 0) judgement.responseHeadersNotRecorded = headersNotRecorded;
  if (exchange.response?.body?.notRecorded) judgement.responseBodyNotRecorded = true;
  if (input.partsNotJudged) judgement.partsNotJudged = input.partsNotJudged;
  if (call) judgement.described = call;
  return judgement;
}
