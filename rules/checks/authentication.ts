// Bearer-JWT authentication: what the caller sends, and how the implementation answers.
import { defineCheck, finding, isSuccess, show, type CheckInput, type CheckResult } from './check.ts';
import type { Finding } from '../types.ts';

export function requestCarriesBearerToken({ exchange }: CheckInput): CheckResult {
  const { token } = exchange;
  if (token.wellFormed) return [];
  const received = token.headerPresent ? `Authorization: ${show(redactedScheme(exchange.request.headers['authorization']))}` : 'no Authorization header';
  return [finding(requestCarriesBearerToken.name, 'AUTH-BEARER-HEADER', 'client', 'the header "Authorization: Bearer <ACCESS_TOKEN>"', received)];
}

/** Only the scheme word of a malformed header is shown: the rest may be a secret. */
function redactedScheme(value: string | undefined): string {
  const scheme = (value ?? '').trim().split(/\s+/)[0] ?? '';
  return scheme === '' ? '(empty)' : `${scheme.slice(0, 16)} …`;
}

export function bearerTokenIsJwt({ exchange }: CheckInput): CheckResult {
  const { token } = exchange;
  if (!token.wellFormed) return undefined;
  if (token.claims) return [];
  return [finding(bearerTokenIsJwt.name, 'AUTH-TOKEN-IS-JWT', 'client', 'a bearer token in JWT format', `a token that does not decode as a JWT (${token.decodeError ?? 'unknown reason'})`)];
}

/** 429 comes before authentication on many services: a throttled request says nothing about these rules. */
const unanswered = (status: number | undefined) => status === undefined || status === 429;

export function missingTokenRefused({ exchange }: CheckInput): CheckResult {
  const status = exchange.response?.status;
  if (unanswered(status) || exchange.token.claims) return undefined;
  if (status === 401) return [];
  const what = !exchange.token.headerPresent ? 'without an Authorization header' : !exchange.token.wellFormed ? 'with a malformed Authorization header' : 'with a bearer token that is not a JWT';
  return [finding(missingTokenRefused.name, 'AUTH-MISSING-TOKEN-401', 'implementation', `401 for a request ${what}`, String(status))];
}

export function invalidSignatureRefused({ exchange, operation }: CheckInput): CheckResult {
  const status = exchange.response?.status;
  if (unanswered(status) || exchange.token.signatureValid !== false || !exchange.token.claims) return undefined;
  if (status === 401) return [];
  const id = operation.operation === 'deleteTokenExchangeProfile' ? 'AUTH-INVALID-SIGNATURE-401' : 'AUTH-INVALID-SIGNATURE-401-OTHER';
  const security = isSuccess(status) ? ' (security: the request was carried out)' : '';
  return [finding(invalidSignatureRefused.name, id, 'implementation', '401 for a token whose signature is invalid', `${status}${security}`)];
}

export function nonGlobalClientRefused({ exchange }: CheckInput): CheckResult {
  const status = exchange.response?.status;
  const { token } = exchange;
  if (unanswered(status) || token.clientGlobal !== false || token.signatureValid === false || !token.claims) return undefined;
  if (status === 401) return [];
  const security = isSuccess(status) ? ' (security: the profile was deleted)' : '';
  return [finding(nonGlobalClientRefused.name, 'AUTH-NON-GLOBAL-401', 'implementation', '401 for a client that is not global', `${status}${security}`)];
}

/** The audience of a client-credentials token request, from a form or JSON body. */
function tokenRequestParams({ exchange, requestJson }: CheckInput): Record<string, unknown> | undefined {
  const body = exchange.request.body;
  if (!body || body.truncated) return undefined;
  const type = exchange.request.headers['content-type'] ?? '';
  if (/json/i.test(type)) return requestJson?.ok && typeof requestJson.value === 'object' && requestJson.value !== null ? (requestJson.value as Record<string, unknown>) : undefined;
  return Object.fromEntries(new URLSearchParams(body.text));
}

export function tokenRequestNamesAudience(input: CheckInput): CheckResult {
  const params = tokenRequestParams(input);
  if (!params || params['grant_type'] !== 'client_credentials') return undefined;
  const audience = params['audience'];
  if (audience === undefined || audience === '') {
    return [finding(tokenRequestNamesAudience.name, 'AUTH-TOKEN-AUDIENCE', 'client', 'the form parameter audience set to the API base path /api/v2/', 'no audience')];
  }
  // Tokens for the tenant's other APIs pass by too; only management-API audiences are judged.
  if (typeof audience === 'string' && audience.includes('/api/v2') && !audience.endsWith('/api/v2/')) {
    return [finding(tokenRequestNamesAudience.name, 'AUTH-TOKEN-AUDIENCE', 'client', 'the audience to end with the API base path /api/v2/', show(audience))];
  }
  return [];
}

export const authenticationChecks = [
  defineCheck(requestCarriesBearerToken, ['AUTH-BEARER-HEADER']),
  defineCheck(bearerTokenIsJwt, ['AUTH-TOKEN-IS-JWT']),
  defineCheck(missingTokenRefused, ['AUTH-MISSING-TOKEN-401']),
  defineCheck(invalidSignatureRefused, ['AUTH-INVALID-SIGNATURE-401', 'AUTH-INVALID-SIGNATURE-401-OTHER']),
  defineCheck(nonGlobalClientRefused, ['AUTH-NON-GLOBAL-401'], ['deleteTokenExchangeProfile']),
  defineCheck(tokenRequestNamesAudience, ['AUTH-TOKEN-AUDIENCE'], ['getToken']),
];
