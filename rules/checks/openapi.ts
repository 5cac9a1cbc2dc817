// The user's own OpenAPI description (--openapi), for the operations the document does not
// detail: the status declared, the response body against its schema, the request body against
// its schema. The document's rules keep precedence: these run on other operations only, and only
// where the description matched the exchange (input.openapi).
import { defineCheck, finding, partNotJudged, show, type CheckInput, type CheckResult } from './check.ts';

const problemsText = (problems: readonly string[]): string => show(problems.join('; '), 300);

export function statusDeclaredInOpenApi({ exchange, openapi }: CheckInput): CheckResult {
  const status = exchange.response?.status;
  // A 5xx is GEN-NO-SERVER-ERROR's, whatever a description declares; 401 (no or an invalid credential)
  // and 429 (too many requests) the document states for every operation, declared or not.
  if (!openapi || status === undefined || status >= 500 || status === 401 || status === 429) return undefined;
  const declared = openapi.statusDeclared(status);
  if (declared === undefined) return undefined;
  if (declared) return [];
  return [finding('OAS-STATUS-DECLARED', 'implementation', `a status the OpenAPI description declares for ${openapi.name}`, String(status))];
}

export function responseBodyMatchesOpenApi(input: CheckInput): CheckResult {
  const { exchange, openapi, responseJson } = input;
  const response = exchange.response;
  if (!openapi || !response || !responseJson?.ok) return undefined;
  const problems = openapi.responseBodyProblems(response.status, response.headers['content-type'], responseJson.value);
  if (problems === undefined) return undefined;
  if (!Array.isArray(problems)) return partNotJudged(input, 'OAS-RESPONSE-SCHEMA', 'its response body against the OpenAPI description', problems.notJudged);
  if (problems.length === 0) return [];
  return [
    finding(
      'OAS-RESPONSE-SCHEMA',
      'implementation',
      `a ${response.status} body matching the OpenAPI description's schema for ${openapi.name}`,
      problemsText(problems),
    ),
  ];
}

export function requestBodyMatchesOpenApi(input: CheckInput): CheckResult {
  const { exchange, openapi, requestJson } = input;
  if (!openapi || !requestJson?.ok) return undefined;
  const problems = openapi.requestBodyProblems(exchange.request.headers['content-type'], requestJson.value);
  if (problems === undefined) return undefined;
  if (!Array.isArray(problems)) return partNotJudged(input, 'OAS-REQUEST-SCHEMA', 'its request body against the OpenAPI description', problems.notJudged);
  if (problems.length === 0) return [];
  return [finding('OAS-REQUEST-SCHEMA', 'client', `a request body matching the OpenAPI description's schema for ${openapi.name}`, problemsText(problems))];
}

export const openApiChecks = [
  defineCheck(statusDeclaredInOpenApi, ['OAS-STATUS-DECLARED'], ['otherOperation']),
  defineCheck(responseBodyMatchesOpenApi, ['OAS-RESPONSE-SCHEMA'], ['otherOperation']),
  defineCheck(requestBodyMatchesOpenApi, ['OAS-REQUEST-SCHEMA'], ['otherOperation']),
];

/** The requirements judged against a user's OpenAPI description: a report holds them only when one was given. */
export const OPENAPI_REQUIREMENTS: ReadonlySet<string> = new Set(openApiChecks.flatMap((check) => check.requirements));
