// Bearer-JWT authentication: what the caller sends, and how the implementation answers.
import { credentialStateOf, defineCheck, EVERY_OPERATION, finding, isSuccess, securityFinding, show, type CheckInput, type CheckResult } from './check.ts';
import { describeCredential, INVALID_CREDENTIAL_STATES, type CredentialState } from '../credential.ts';

/** A foreign recorder that dropped or masked the credential: nothing about authentication can be judged. */
const notRecorded = ({ exchange }: CheckInput): boolean => exchange.token.recorded === false;

export function requestCarriesBearerToken(input: CheckInput): CheckResult {
  if (notRecorded(input)) return undefined;
  const { exchange } = input;
  const { token } = exchange;
  if (token.wellFormed) return [];
  const received = token.headerPresent ? `Authorization: ${show(redactedScheme(exchange.request.headers['authorization']))}` : 'no Authorization header';
  return [finding('AUTH-BEARER-HEADER', 'client', 'the header "Authorization: Bearer <ACCESS_TOKEN>"', received)];
}

/** Only the scheme word of a malformed header is shown: the rest may be a secret. */
function redactedScheme(value: string | undefined): string {
  const scheme = (value ?? '').trim().split(/\s+/)[0] ?? '';
  return scheme === '' ? '(empty)' : `${scheme.slice(0, 16)} …`;
}

export function bearerTokenIsJwt(input: CheckInput): CheckResult {
  const { token } = input.exchange;
  if (!token.wellFormed || notRecorded(input)) return undefined;
  if (token.claims) return [];
  return [
    finding('AUTH-TOKEN-IS-JWT', 'client', 'a bearer token in JWT format', `a token that does not decode as a JWT (${token.decodeError ?? 'unknown reason'})`),
  ];
}

/** 429 comes before authentication on many services: a throttled request says nothing about these rules. */
const unanswered = (status: number | undefined) => status === undefined || status === 429;

const isDelete = ({ operation }: CheckInput): boolean => operation.operation === 'deleteTokenExchangeProfile';

/** Credentials that prove nobody: none, not a bearer JWT, no signature, or a signature the tenant's keys reject. */
const FORGED_OR_MISSING: ReadonlySet<CredentialState> = new Set(['absent', 'malformed', 'not-jwt', 'unsigned', 'signature-invalid']);

/**
 * A request whose credential is not valid, carried out (2xx). The 401 rules below are broken by
 * the same 2xx and say so too, each as its own security finding. `states`: the credential
 * states this check judges.
 */
function carriedOutWithout(input: CheckInput, states: ReadonlySet<CredentialState>, otherOperations: string): CheckResult {
  const status = input.exchange.response?.status;
  if (unanswered(status)) return undefined;
  const state = credentialStateOf(input);
  if (!states.has(state)) return undefined;
  if (!isSuccess(status!)) return [];
  return [securityFinding(isDelete(input) ? 'AUTH-CREDENTIAL-REQUIRED' : otherOperations, 'a refusal (401)', String(status), carriedOut(input, state))];
}

/** What the target did with a request it should have refused: "the target carried out a DELETE sent with …". */
const carriedOut = (input: CheckInput, state: CredentialState): string =>
  `the target carried out a ${input.exchange.request.method} sent with ${sentWith(state, input.exchange.token)}`;

/** The credential a request was sent with, as the object of "sent with …". */
function sentWith(state: CredentialState, token: CheckInput['exchange']['token']): string {
  if (state === 'absent') return 'no Authorization header';
  if (state === 'malformed') return 'an Authorization header that is not "Bearer <token>"';
  return describeCredential(state, token);
}

export function missingOrForgedCredentialNotCarriedOut(input: CheckInput): CheckResult {
  return carriedOutWithout(input, FORGED_OR_MISSING, 'AUTH-CREDENTIAL-REQUIRED-OTHER');
}

/** Credentials signed by the tenant, perhaps, but not for this request: out of their time, or for another API or issuer. */
const EXPIRED_OR_MISDIRECTED: ReadonlySet<CredentialState> = new Set(['expired', 'not-yet-valid', 'wrong-audience', 'wrong-issuer']);

export function expiredOrMisdirectedTokenNotCarriedOut(input: CheckInput): CheckResult {
  return carriedOutWithout(input, EXPIRED_OR_MISDIRECTED, 'AUTH-TOKEN-VALIDITY-OTHER');
}

/** Credentials a server can refuse without looking at any key: none, a malformed header, not a JWT. */
const MISSING: ReadonlySet<CredentialState> = new Set(['absent', 'malformed', 'not-jwt']);
/** Credentials with no signature, or one the tenant's keys reject. */
const BADLY_SIGNED: ReadonlySet<CredentialState> = new Set(['signature-invalid', 'unsigned']);
const WRONG_AUDIENCE: ReadonlySet<CredentialState> = new Set(['wrong-audience']);
const NOT_YET_VALID: ReadonlySet<CredentialState> = new Set(['not-yet-valid']);

/**
 * A credential in `states` must be refused with 401; `ids` are the delete operation's requirement
 * and the other operations'. A 2xx breaks it as surely as another refusal does, and is a security
 * finding, as it is of missingOrForgedCredentialNotCarriedOut: each requirement the exchange
 * broke is charged with it.
 */
function refusedWith401(input: CheckInput, states: ReadonlySet<CredentialState>, ids: readonly [string, string], note = ''): CheckResult {
  const status = input.exchange.response?.status;
  if (unanswered(status)) return undefined;
  // A path the document does not name, answered 404: perhaps no operation of this tenant at all.
  if (status === 404 && input.operation.operation === 'otherOperation') return undefined;
  const state = credentialStateOf(input);
  if (!states.has(state)) return undefined;
  if (status === 401) return [];
  const id = isDelete(input) ? ids[0] : ids[1];
  const expected = `401 for ${describeCredential(state, input.exchange.token)}`;
  if (isSuccess(status!)) return [securityFinding(id, expected, String(status), carriedOut(input, state))];
  return [finding(id, 'implementation', expected, `${status}${note}`)];
}

export function missingTokenRefused(input: CheckInput): CheckResult {
  // On delete, a 404 reads like an answer about the profile; what was seen is that the caller was not refused
  // (a router or a stub's matcher answers 404 as well, so nothing is said of why).
  const notRefused =
    input.exchange.response?.status === 404 && isDelete(input) ? ' for a request without a valid token: the caller was not refused with 401' : '';
  return refusedWith401(input, MISSING, ['AUTH-MISSING-TOKEN-401', 'AUTH-MISSING-TOKEN-401-OTHER'], notRefused);
}

export function invalidSignatureRefused(input: CheckInput): CheckResult {
  return refusedWith401(input, BADLY_SIGNED, ['AUTH-INVALID-SIGNATURE-401', 'AUTH-INVALID-SIGNATURE-401-OTHER']);
}

/** A token the tenant signed for another of its APIs (its aud does not name /api/v2/): refused with 401 on every operation. */
export function otherAudienceRefused(input: CheckInput): CheckResult {
  return refusedWith401(input, WRONG_AUDIENCE, ['AUTH-AUDIENCE-401', 'AUTH-AUDIENCE-401']);
}

/** A token whose nbf lies ahead (beyond the clock skew): refused with 401 on every operation. */
export function notYetValidRefused(input: CheckInput): CheckResult {
  return refusedWith401(input, NOT_YET_VALID, ['AUTH-NOT-BEFORE-401', 'AUTH-NOT-BEFORE-401']);
}

export function nonGlobalClientRefused(input: CheckInput): CheckResult {
  const status = input.exchange.response?.status;
  const { token } = input.exchange;
  if (unanswered(status) || token.clientGlobal !== false || !token.claims || INVALID_CREDENTIAL_STATES.has(credentialStateOf(input))) return undefined;
  if (status === 401) return [];
  if (isSuccess(status))
    return [
      securityFinding(
        'AUTH-NON-GLOBAL-401',
        '401',
        String(status),
        `the target carried out a ${input.exchange.request.method} for a client that is not global`,
      ),
    ];
  return [finding('AUTH-NON-GLOBAL-401', 'implementation', '401 for a client that is not global', String(status))];
}

/**
 * The target requested the key URL (jku, x5u) the token names, as the driver that serves it saw:
 * anyone can make it send a request wherever a token says, whether the token is then accepted
 * or not (server-side request forgery).
 */
export function keyUrlNotFetched({ exchange }: CheckInput): CheckResult {
  const fetched = exchange.token.keyUrlFetched;
  if (fetched === undefined) return undefined;
  if (!fetched) return [];
  return [
    securityFinding(
      'AUTH-KEY-URL-NOT-FETCHED',
      'no request to the key URL the token names (jku, x5u)',
      'a request to it',
      `the target fetched the key URL a token named, answering a ${exchange.request.method}: it sends requests wherever a token says`,
    ),
  ];
}

/** The audience of a client-credentials token request, from a form or JSON body. */
function tokenRequestParams({ exchange, requestJson }: CheckInput): Record<string, unknown> | undefined {
  const body = exchange.request.body;
  if (!body || body.truncated) return undefined;
  const type = exchange.request.headers['content-type'] ?? '';
  if (/json/i.test(type))
    return requestJson?.ok && typeof requestJson.value === 'object' && requestJson.value !== null ? (requestJson.value as Record<string, unknown>) : undefined;
  return Object.fromEntries(new URLSearchParams(body.text));
}

export function tokenRequestNamesAudience(input: CheckInput): CheckResult {
  const params = tokenRequestParams(input);
  if (params?.['grant_type'] !== 'client_credentials') return undefined;
  const audience = params['audience'];
  if (audience === undefined || audience === '') {
    return [finding('AUTH-TOKEN-AUDIENCE', 'client', 'the form parameter audience set to the API base path /api/v2/', 'no audience')];
  }
  // Tokens for the tenant's other APIs pass by too; only management-API audiences are judged.
  if (typeof audience === 'string' && audience.includes('/api/v2') && !audience.endsWith('/api/v2/')) {
    return [finding('AUTH-TOKEN-AUDIENCE', 'client', 'the audience to end with the API base path /api/v2/', show(audience))];
  }
  return [];
}

export const authenticationChecks = [
  defineCheck(requestCarriesBearerToken, ['AUTH-BEARER-HEADER'], EVERY_OPERATION),
  defineCheck(bearerTokenIsJwt, ['AUTH-TOKEN-IS-JWT'], EVERY_OPERATION),
  defineCheck(missingOrForgedCredentialNotCarriedOut, ['AUTH-CREDENTIAL-REQUIRED', 'AUTH-CREDENTIAL-REQUIRED-OTHER'], EVERY_OPERATION),
  defineCheck(expiredOrMisdirectedTokenNotCarriedOut, ['AUTH-CREDENTIAL-REQUIRED', 'AUTH-TOKEN-VALIDITY-OTHER'], EVERY_OPERATION),
  defineCheck(missingTokenRefused, ['AUTH-MISSING-TOKEN-401', 'AUTH-MISSING-TOKEN-401-OTHER'], EVERY_OPERATION),
  defineCheck(invalidSignatureRefused, ['AUTH-INVALID-SIGNATURE-401', 'AUTH-INVALID-SIGNATURE-401-OTHER'], EVERY_OPERATION),
  defineCheck(otherAudienceRefused, ['AUTH-AUDIENCE-401'], EVERY_OPERATION),
  defineCheck(notYetValidRefused, ['AUTH-NOT-BEFORE-401'], EVERY_OPERATION),
  defineCheck(keyUrlNotFetched, ['AUTH-KEY-URL-NOT-FETCHED'], EVERY_OPERATION),
  defineCheck(nonGlobalClientRefused, ['AUTH-NON-GLOBAL-401'], ['deleteTokenExchangeProfile']),
  defineCheck(tokenRequestNamesAudience, ['AUTH-TOKEN-AUDIENCE'], ['getToken']),
];
