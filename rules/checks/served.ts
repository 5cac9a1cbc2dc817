// Whether the target serves an operation at all. Judged from several requests to the operation
// (the run's preflight sends them), never from one: a 404 to one request may be the operation's
// own answer (an unknown id, a fixture routed by id, a route that needs an optional parameter).
// A served operation checks its caller, so a request without a token gets 401, and a fixture the
// tenant holds is found; only when every request, whatever the id, the credential and the
// documented parameters, got one and the same answer of a router without the route (a 404 or
// 405 that is not the interface's JSON) does nothing there serve the operation.
import type { DocumentOperationId, Exchange } from '../types.ts';
import { finding, isJsonMediaType, show, type CheckResult } from './check.ts';
import { INCLUDE_FIELDS_VALUES } from './resource-servers.ts';

export type ApiOperationId = DocumentOperationId;

/** Each operation's method and path, relative to {base_url}, in the document's words. */
export const OPERATION_ROUTES: Record<ApiOperationId, string> = {
  deleteTokenExchangeProfile: 'DELETE /token-exchange-profiles/{id}',
  updateSession: 'PATCH /sessions/{id}',
  getResourceServer: 'GET /resource-servers/{id}',
};

/**
 * The query strings each operation's optional parameters make, with every value the document
 * allows ("`include_fields`: boolean, optional"): a target may route an operation only with one.
 */
export const OPTIONAL_QUERIES: Record<ApiOperationId, string[]> = {
  deleteTokenExchangeProfile: [],
  updateSession: [],
  getResourceServer: INCLUDE_FIELDS_VALUES.map((value) => `?include_fields=${value}`),
};

/** One request the preflight sent to an operation. */
export interface ServedProbe {
  /** What was asked, in words: "without a token, for an unknown id". */
  what: string;
  exchange: Exchange;
}

/**
 * Statuses that say the method and path are not routed anywhere: 404 (no such path) and 405
 * (the path exists, not with this method).
 */
const NO_ROUTE = [404, 405];

const answered = (probes: ServedProbe[]) => probes.filter((p) => p.exchange.response !== undefined);

/**
 * Some probe was answered, and every answer was 404 or 405, JSON or not: nothing yet tells the
 * operation from a route that is not there (the preflight then tries the fixtures and the
 * documented parameters; for all three operations, base_url is wrong).
 */
export function answeredOnlyNoRoute(probes: ServedProbe[]): boolean {
  const got = answered(probes);
  return got.length > 0 && got.every((p) => NO_ROUTE.includes(p.exchange.response!.status));
}

/** A router's answer for a route it does not have: 404 or 405, and not the interface's JSON. */
export function isRouterAnswer(probe: ServedProbe): boolean {
  const response = probe.exchange.response;
  return response !== undefined && NO_ROUTE.includes(response.status) && !isJsonMediaType(response.headers['content-type']);
}

/** The status and media type of an answer: what a router gives whatever the id (its body may name the path). */
function answerOf(probe: ServedProbe): string {
  const response = probe.exchange.response!;
  const type = response.headers['content-type']?.split(';')[0]?.trim().toLowerCase();
  return `${response.status}${type ? ` ${show(type, 40)}` : ''}`;
}

/**
 * `[]` when some probe was answered otherwise than with one and the same router answer (the
 * operation is served: a 401, a fixture found, a JSON 404, answers that differ by id or
 * parameter); one finding when every probe got it; undefined when no probe got an answer.
 */
export function operationIsServed(operation: ApiOperationId, probes: ServedProbe[]): CheckResult {
  const got = answered(probes);
  if (got.length === 0) return undefined;
  const answers = new Set(got.map(answerOf));
  if (answers.size > 1 || !got.every(isRouterAnswer)) return [];
  const route = OPERATION_ROUTES[operation];
  const received = `${route} is not served by the target: ${[...answers][0]} to every request (${got.map((p) => p.what).join('; ')})`;
  const notServed = finding('GEN-OPERATION-SERVED', 'implementation', `${route} to be served`, received);
  notServed.check = operationIsServed.name;
  return [notServed];
}

/** A check over several exchanges of one operation (the preflight's probes), not one exchange. */
export interface ProbeCheck {
  name: string;
  requirements: string[];
  judge: (operation: ApiOperationId, probes: ServedProbe[]) => CheckResult;
}

export const servedChecks: ProbeCheck[] = [{ name: operationIsServed.name, requirements: ['GEN-OPERATION-SERVED'], judge: operationIsServed }];
