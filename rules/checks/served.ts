// Whether the target serves an operation at all. Judged from several requests to the operation
// (the run's preflight sends them), never from one: a 404 to one request may be the operation's
// own answer (an unknown id, or a gateway's JSON 404). A served operation checks its caller, so
// a request without a token gets 401, and a fixture the tenant holds is found; when every
// request is answered "no such route" whatever the id and the credential, nothing there serves
// the operation.
import type { DocumentOperationId, Exchange } from '../types.ts';
import { finding, show, type CheckResult } from './check.ts';

export type ApiOperationId = DocumentOperationId;

/** Each operation's method and path, relative to {base_url}, in the document's words. */
export const OPERATION_ROUTES: Record<ApiOperationId, string> = {
  deleteTokenExchangeProfile: 'DELETE /token-exchange-profiles/{id}',
  updateSession: 'PATCH /sessions/{id}',
  getResourceServer: 'GET /resource-servers/{id}',
};

/** One request the preflight sent to an operation. */
export interface ServedProbe {
  /** What was asked, in words: "without a token, for an unknown id". */
  what: string;
  exchange: Exchange;
}

/**
 * Statuses that say the method and path are not routed anywhere: 404 (no such path) and 405
 * (the path exists, not with this method). An operation that is served never answers them to
 * every caller and every id.
 */
const NO_ROUTE = [404, 405];

/**
 * `[]` when some probe was answered otherwise than 404/405 (the operation is served); one
 * finding when every probe was, whatever the id and the credential; undefined when no probe got
 * an answer.
 */
export function operationIsServed(operation: ApiOperationId, probes: ServedProbe[]): CheckResult {
  const answered = probes.filter((p) => p.exchange.response !== undefined);
  if (answered.length === 0) return undefined;
  if (answered.some((p) => !NO_ROUTE.includes(p.exchange.response!.status))) return [];
  const route = OPERATION_ROUTES[operation];
  const answerOf = (p: ServedProbe) => {
    const response = p.exchange.response!;
    const type = response.headers['content-type']?.split(';')[0]?.trim();
    return `${response.status}${type ? ` ${show(type, 40)}` : ''}`;
  };
  const answers = new Set(answered.map(answerOf));
  const received =
    answers.size === 1
      ? `${[...answers][0]} to every request (${answered.map((p) => p.what).join('; ')})`
      : answered.map((p) => `${answerOf(p)} ${p.what}`).join('; ');
  const notServed = finding('GEN-OPERATION-SERVED', 'implementation', `${route} to be served`, `${route} is not served by the target: ${received}`);
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
