// Every check's complete findings for an exchange: requirement, check, level, subject, expected,
// received and the place (pointer), and nothing else. test/rules.test.ts proves each check fires;
// these prove what it says, and that it stays silent where it has nothing to judge (a changed
// guard, message or de-duplication key shows up here).
import { describe, expect, it } from 'vitest';
import { buildExchange } from '../rules/exchange.ts';
import { judgeExchange, RateLimitTracker } from '../rules/index.ts';
import type { Exchange, Finding, TokenAttack } from '../rules/types.ts';
import {
  BASE,
  claims,
  deleteExchange,
  errorExchange,
  getExchange,
  jwt,
  rateLimitHeaders,
  resourceServer,
  RESET,
  session,
  STARTED_AT,
  updateExchange,
} from '../fixtures/exchanges.ts';

type Level = Finding['level'];
type Subject = Finding['subject'];

/** A finding as the engine makes it; `security` only on security findings. */
function f(
  check: string,
  requirement: string,
  level: Level,
  subject: Subject,
  expected: string | RegExp,
  received: string | RegExp,
  security?: string,
): Finding {
  const text = (value: string | RegExp) => (typeof value === 'string' ? value : (expect.stringMatching(value) as unknown as string));
  const made: Finding = { requirement, level, subject, check, expected: text(expected), received: text(received) };
  if (security !== undefined) made.security = security;
  return made;
}

/** A finding about one place of the body: its JSON pointer into the documented shape. */
const at = (pointer: string, made: Finding): Finding => ({ ...made, pointer });

/** The exchange's findings are exactly `expected`, in the engine's order. */
function expectFindings(exchange: Exchange, expected: Finding[], tracker?: RateLimitTracker): void {
  expect(judgeExchange(exchange, tracker).findings).toEqual(expected);
}

const examined = (exchange: Exchange): string[] => judgeExchange(exchange).examined;

const bearer = (scope?: string, extra: Record<string, unknown> = {}) => ({ Authorization: `Bearer ${jwt({ ...claims(scope), ...extra })}` });

describe('general checks: complete findings', () => {
  it('responseBodyIsJson: the Content-Type, as received, or its absence', () => {
    const expected = 'Content-Type application/json on a response with a body';
    expectFindings(getExchange(resourceServer(), 'rs_1', { responseHeaders: { 'content-type': 'text/html', ...rateLimitHeaders() } }), [
      f('responseBodyIsJson', 'GEN-JSON-RESPONSE', 'must', 'implementation', expected, '"text/html"'),
    ]);
    expectFindings(getExchange(resourceServer(), 'rs_1', { responseHeaders: rateLimitHeaders() }), [
      f('responseBodyIsJson', 'GEN-JSON-RESPONSE', 'must', 'implementation', expected, 'no Content-Type'),
    ]);
    // The media type is the start of the header, and it is json itself, not a word that begins with json.
    for (const type of ['text/plain; profile=application/json', 'application/jsonx', 'application/json-seq']) {
      expectFindings(getExchange(resourceServer(), 'rs_1', { responseHeaders: { 'content-type': type, ...rateLimitHeaders() } }), [
        f('responseBodyIsJson', 'GEN-JSON-RESPONSE', 'must', 'implementation', expected, JSON.stringify(type)),
      ]);
    }
    for (const type of ['application/json ; charset=utf-8', 'APPLICATION/JSON', 'application/vnd.tenant-api+json', 'application/problem+json;charset=utf-8']) {
      expectFindings(getExchange(resourceServer(), 'rs_1', { responseHeaders: { 'content-type': type, ...rateLimitHeaders() } }), []);
    }
  });

  it('responseBodyIsJson: a body that does not parse, quoted with the parser error', () => {
    expectFindings(getExchange(resourceServer(), 'rs_1', { responseBody: 'not json' }), [
      f('responseBodyIsJson', 'GEN-JSON-RESPONSE', 'must', 'implementation', 'a body that parses as JSON', /^"not json" \(.+\)$/),
    ]);
  });

  it('responseBodyIsJson: a 204 or a 304 is not judged for JSON, whatever it carries', () => {
    expectFindings(deleteExchange({ responseBody: 'deleted' }), [
      f('noContentHasNoBody', 'TEP-DELETE-NO-BODY', 'must', 'implementation', 'a 204 with no body', 'a body of 7 characters: "deleted"'),
    ]);
    expectFindings(getExchange(resourceServer(), 'rs_1', { status: 304, responseHeaders: rateLimitHeaders(), responseBody: 'cached' }), [
      f('statusCodeIsDocumented', 'GEN-STATUS-DOCUMENTED', 'should', 'implementation', 'one of 200, 401, 429, 4XX for getResourceServer', '304'),
    ]);
  });

  it('statusCodeIsDocumented and noServerError: a 5xx is reported once, as a server error, with its body', () => {
    expectFindings(errorExchange(deleteExchange(), 500, { message: 'boom' }), [
      f('noServerError', 'GEN-NO-SERVER-ERROR', 'should', 'implementation', 'no 5xx (the document lists none)', '500 "{\\"message\\":\\"boom\\"}"'),
    ]);
    expectFindings(deleteExchange({ status: 502, responseHeaders: rateLimitHeaders() }), [
      f('noServerError', 'GEN-NO-SERVER-ERROR', 'should', 'implementation', 'no 5xx (the document lists none)', '502 ""'),
    ]);
    expectFindings(errorExchange(deleteExchange(), 418, { message: 'teapot' }), [
      f('statusCodeIsDocumented', 'GEN-STATUS-DOCUMENTED', 'should', 'implementation', 'one of 204, 401, 403, 429 for deleteTokenExchangeProfile', '418'),
    ]);
    expectFindings(errorExchange(updateExchange(), 307, { message: 'elsewhere' }), [
      f('statusCodeIsDocumented', 'GEN-STATUS-DOCUMENTED', 'should', 'implementation', 'one of 200, 401, 429, 4XX for updateSession', '307'),
    ]);
  });

  it('an exchange without a response is not judged by the status or body checks', () => {
    const unanswered = buildExchange({
      startedAt: STARTED_AT,
      method: 'DELETE',
      url: `${BASE}/token-exchange-profiles/tep_1`,
      requestHeaders: bearer(),
      error: 'ECONNRESET',
    });
    expectFindings(unanswered, []);
    expect(examined(unanswered)).toEqual(['AUTH-BEARER-HEADER', 'AUTH-TOKEN-IS-JWT', 'SCOPE-FORMAT', 'SCOPE-IN-CATALOG']);
  });

  it('errorBodyIsObject: a 4xx whose JSON body is not an object; a 2xx body is never judged as an error', () => {
    expectFindings(errorExchange(updateExchange(), 400, ['not', 'an', 'object']), [
      f('errorBodyIsObject', 'GEN-ERROR-BODY', 'should', 'implementation', 'an error body that is a JSON object', '["not","an","object"]'),
    ]);
    expect(examined(errorExchange(updateExchange(), 400, { message: 'bad' }))).toContain('GEN-ERROR-BODY');
    expect(examined(getExchange(['rs_1']))).not.toContain('GEN-ERROR-BODY');
    expect(examined(updateExchange(undefined, undefined, { status: 400, responseBody: '{' }))).not.toContain('GEN-ERROR-BODY');
  });
});

describe('authentication checks: complete findings', () => {
  const BEARER_EXPECTED = 'the header "Authorization: Bearer <ACCESS_TOKEN>"';
  const refusal = (base: Exchange) => errorExchange(base, 401, { statusCode: 401, message: 'Unauthorized' });

  it('requestCarriesBearerToken: no header, or a header of another scheme shown by its scheme word only', () => {
    expectFindings(refusal(deleteExchange({ requestHeaders: {} })), [
      f('requestCarriesBearerToken', 'AUTH-BEARER-HEADER', 'must', 'client', BEARER_EXPECTED, 'no Authorization header'),
    ]);
    expectFindings(refusal(deleteExchange({ requestHeaders: { authorization: 'Basic dXNlcjpzM2NyM3Q=' } })), [
      f('requestCarriesBearerToken', 'AUTH-BEARER-HEADER', 'must', 'client', BEARER_EXPECTED, 'Authorization: "Basic …"'),
    ]);
    expectFindings(refusal(deleteExchange({ requestHeaders: { authorization: '  MyVeryLongSchemeName12345 value' } })), [
      f('requestCarriesBearerToken', 'AUTH-BEARER-HEADER', 'must', 'client', BEARER_EXPECTED, 'Authorization: "MyVeryLongScheme …"'),
    ]);
    expectFindings(refusal(deleteExchange({ requestHeaders: { authorization: '   ' } })), [
      f('requestCarriesBearerToken', 'AUTH-BEARER-HEADER', 'must', 'client', BEARER_EXPECTED, 'Authorization: "(empty)"'),
    ]);
  });

  it('bearerTokenIsJwt: an opaque token, with why it does not decode', () => {
    expectFindings(refusal(deleteExchange({ requestHeaders: { authorization: 'Bearer opaque-token-123' } })), [
      f('bearerTokenIsJwt', 'AUTH-TOKEN-IS-JWT', 'must', 'client', 'a bearer token in JWT format', /^a token that does not decode as a JWT \(.+\)$/),
    ]);
  });

  it('a request without a valid credential carried out: a security finding naming what it was sent with, under the credential rule and under the 401 rule it broke', () => {
    const carried = (state: string, method: string) => `the target carried out a ${method} sent with ${state}`;
    const noHeader = carried('no Authorization header', 'DELETE');
    expectFindings(deleteExchange({ requestHeaders: {} }), [
      f('requestCarriesBearerToken', 'AUTH-BEARER-HEADER', 'must', 'client', BEARER_EXPECTED, 'no Authorization header'),
      f('missingOrForgedCredentialNotCarriedOut', 'AUTH-CREDENTIAL-REQUIRED', 'must', 'implementation', 'a refusal (401)', '204', noHeader),
      f('missingTokenRefused', 'AUTH-MISSING-TOKEN-401', 'must', 'implementation', '401 for a request without an Authorization header', '204', noHeader),
    ]);
    const basic = carried('an Authorization header that is not "Bearer <token>"', 'GET');
    expectFindings(getExchange(resourceServer(), 'rs_1', { requestHeaders: { authorization: 'Basic dXNlcjpzM2NyM3Q=' } }), [
      f('requestCarriesBearerToken', 'AUTH-BEARER-HEADER', 'must', 'client', BEARER_EXPECTED, 'Authorization: "Basic …"'),
      f('missingOrForgedCredentialNotCarriedOut', 'AUTH-CREDENTIAL-REQUIRED-OTHER', 'must', 'implementation', 'a refusal (401)', '200', basic),
      f(
        'missingTokenRefused',
        'AUTH-MISSING-TOKEN-401-OTHER',
        'should',
        'implementation',
        '401 for a request whose Authorization header is not "Bearer <token>"',
        '200',
        basic,
      ),
    ]);
    const opaque = carried('a bearer token that is not a JWT', 'GET');
    expectFindings(getExchange(resourceServer(), 'rs_1', { requestHeaders: { authorization: 'Bearer opaque-token-123' } }), [
      f('bearerTokenIsJwt', 'AUTH-TOKEN-IS-JWT', 'must', 'client', 'a bearer token in JWT format', /^a token that does not decode as a JWT/),
      f('missingOrForgedCredentialNotCarriedOut', 'AUTH-CREDENTIAL-REQUIRED-OTHER', 'must', 'implementation', 'a refusal (401)', '200', opaque),
      f('missingTokenRefused', 'AUTH-MISSING-TOKEN-401-OTHER', 'should', 'implementation', '401 for a bearer token that is not a JWT', '200', opaque),
    ]);
    const forged = "a token whose signature does not verify against the tenant's keys";
    expectFindings(deleteExchange({ tokenFacts: { signatureValid: false } }), [
      f('missingOrForgedCredentialNotCarriedOut', 'AUTH-CREDENTIAL-REQUIRED', 'must', 'implementation', 'a refusal (401)', '204', carried(forged, 'DELETE')),
      f('invalidSignatureRefused', 'AUTH-INVALID-SIGNATURE-401', 'must', 'implementation', `401 for ${forged}`, '204', carried(forged, 'DELETE')),
    ]);
  });

  it('an expired or misdirected token carried out: its own security finding', () => {
    const expired = bearer(undefined, { exp: 1_800_000_000 - 3600 });
    const what = 'a token that had expired (exp 1799996400, more than 60 s before the request)';
    expectFindings(deleteExchange({ requestHeaders: expired }), [
      f(
        'expiredOrMisdirectedTokenNotCarriedOut',
        'AUTH-CREDENTIAL-REQUIRED',
        'must',
        'implementation',
        'a refusal (401)',
        '204',
        `the target carried out a DELETE sent with ${what}`,
      ),
    ]);
    expectFindings(getExchange(resourceServer(), 'rs_1', { requestHeaders: expired }), [
      f(
        'expiredOrMisdirectedTokenNotCarriedOut',
        'AUTH-TOKEN-VALIDITY-OTHER',
        'should',
        'implementation',
        'a refusal (401)',
        '200',
        `the target carried out a GET sent with ${what}`,
      ),
    ]);
    // Refused with a 401, or throttled: nothing to report.
    expectFindings(refusal(deleteExchange({ requestHeaders: expired })), []);
    expectFindings(errorExchange(deleteExchange({ requestHeaders: expired }), 429, { statusCode: 429 }, rateLimitHeaders(0)), []);
  });

  it('a token for another audience or not yet valid: its own 401 rule (should) on every operation, beside the rule against carrying it out', () => {
    const cases: Array<[Record<string, unknown>, string, string, string]> = [
      [
        { aud: 'https://orders.example.com/api' },
        'otherAudienceRefused',
        'AUTH-AUDIENCE-401',
        'a token for another audience (aud "https://orders.example.com/api", not the API base path /api/v2/)',
      ],
      [{ nbf: 1_800_000_000 + 3600 }, 'notYetValidRefused', 'AUTH-NOT-BEFORE-401', 'a token not yet valid (nbf 1800003600, more than 60 s after the request)'],
    ];
    for (const [extra, check, id, what] of cases) {
      const headers = bearer(undefined, extra);
      expectFindings(deleteExchange({ requestHeaders: headers }), [
        f(
          'expiredOrMisdirectedTokenNotCarriedOut',
          'AUTH-CREDENTIAL-REQUIRED',
          'must',
          'implementation',
          'a refusal (401)',
          '204',
          `the target carried out a DELETE sent with ${what}`,
        ),
        f(check, id, 'should', 'implementation', `401 for ${what}`, '204', `the target carried out a DELETE sent with ${what}`),
      ]);
      expectFindings(errorExchange(getExchange(resourceServer(), 'rs_1', { requestHeaders: headers }), 403, { statusCode: 403 }, rateLimitHeaders()), [
        f(check, id, 'should', 'implementation', `401 for ${what}`, '403'),
      ]);
      expectFindings(refusal(deleteExchange({ requestHeaders: headers })), []);
    }
  });

  it('missingTokenRefused: the status received; on delete a 404 says the caller was not refused with 401', () => {
    const expected = '401 for a request without an Authorization header';
    const missing = f('requestCarriesBearerToken', 'AUTH-BEARER-HEADER', 'must', 'client', BEARER_EXPECTED, 'no Authorization header');
    expectFindings(errorExchange(deleteExchange({ requestHeaders: {} }), 404, { message: 'Not found' }), [
      f('statusCodeIsDocumented', 'GEN-STATUS-DOCUMENTED', 'should', 'implementation', 'one of 204, 401, 403, 429 for deleteTokenExchangeProfile', '404'),
      missing,
      f(
        'missingTokenRefused',
        'AUTH-MISSING-TOKEN-401',
        'must',
        'implementation',
        expected,
        '404 for a request without a valid token: the caller was not refused with 401',
      ),
    ]);
    expectFindings(errorExchange(deleteExchange({ requestHeaders: {} }), 403, { message: 'Forbidden delete:token_exchange_profiles' }), [
      missing,
      f('missingTokenRefused', 'AUTH-MISSING-TOKEN-401', 'must', 'implementation', expected, '403'),
    ]);
    expectFindings(errorExchange(getExchange(resourceServer(), 'rs_1', { requestHeaders: {} }), 404, { message: 'Not found' }), [
      missing,
      f('missingTokenRefused', 'AUTH-MISSING-TOKEN-401-OTHER', 'should', 'implementation', expected, '404'),
    ]);
    // Throttled before it was authenticated: the 401 rule is not put to the test.
    const throttled = errorExchange(deleteExchange({ requestHeaders: {} }), 429, { statusCode: 429 }, rateLimitHeaders(0));
    expectFindings(throttled, [missing]);
    expect(examined(throttled)).not.toContain('AUTH-MISSING-TOKEN-401');
    expect(examined(refusal(deleteExchange({ requestHeaders: {} })))).toContain('AUTH-MISSING-TOKEN-401');
  });

  it('a token the kit forged is described by what the kit did, never as a verification it did not make (a run without the JWKS)', () => {
    const made = (attack: TokenAttack) => ({ tokenFacts: { signatureValid: false, attack } });
    expectFindings(deleteExchange(made('corrupted-signature')), [
      f(
        'missingOrForgedCredentialNotCarriedOut',
        'AUTH-CREDENTIAL-REQUIRED',
        'must',
        'implementation',
        'a refusal (401)',
        '204',
        "the target carried out a DELETE sent with a token of the tenant's whose signature the kit corrupted",
      ),
      // Carried out, it broke the 401 rule as well: charged to both.
      f(
        'invalidSignatureRefused',
        'AUTH-INVALID-SIGNATURE-401',
        'must',
        'implementation',
        "401 for a token of the tenant's whose signature the kit corrupted",
        '204',
        "the target carried out a DELETE sent with a token of the tenant's whose signature the kit corrupted",
      ),
    ]);
    expectFindings(getExchange(resourceServer(), 'rs_1', made('foreign-key')), [
      f(
        'missingOrForgedCredentialNotCarriedOut',
        'AUTH-CREDENTIAL-REQUIRED-OTHER',
        'must',
        'implementation',
        'a refusal (401)',
        '200',
        "the target carried out a GET sent with a token the kit signed with a key that is not the tenant's",
      ),
      f(
        'invalidSignatureRefused',
        'AUTH-INVALID-SIGNATURE-401-OTHER',
        'should',
        'implementation',
        "401 for a token the kit signed with a key that is not the tenant's",
        '200',
        "the target carried out a GET sent with a token the kit signed with a key that is not the tenant's",
      ),
    ]);
    expectFindings(errorExchange(getExchange(resourceServer(), 'rs_1', made('tampered-scope')), 400, { message: 'no' }), [
      f(
        'invalidSignatureRefused',
        'AUTH-INVALID-SIGNATURE-401-OTHER',
        'should',
        'implementation',
        "401 for a token of the tenant's whose scope the kit widened after it was signed",
        '400',
      ),
    ]);
    expectFindings(errorExchange(deleteExchange(made('key-confusion')), 403, { message: 'delete:token_exchange_profiles' }), [
      f(
        'invalidSignatureRefused',
        'AUTH-INVALID-SIGNATURE-401',
        'must',
        'implementation',
        "401 for a token the kit signed HS256 with the tenant's public key as the secret",
        '403',
      ),
    ]);
    expectFindings(errorExchange(deleteExchange(made('other-issuer')), 403, { message: 'delete:token_exchange_profiles' }), [
      f(
        'invalidSignatureRefused',
        'AUTH-INVALID-SIGNATURE-401',
        'must',
        'implementation',
        "401 for a token naming another issuer, signed by the kit with a key that is not the tenant's",
        '403',
      ),
    ]);
  });

  it('invalidSignatureRefused: must on delete, should on the others', () => {
    const expected = "401 for a token whose signature does not verify against the tenant's keys";
    expectFindings(errorExchange(deleteExchange({ tokenFacts: { signatureValid: false } }), 403, { message: 'delete:token_exchange_profiles' }), [
      f('invalidSignatureRefused', 'AUTH-INVALID-SIGNATURE-401', 'must', 'implementation', expected, '403'),
    ]);
    expectFindings(errorExchange(getExchange(resourceServer(), 'rs_1', { tokenFacts: { signatureValid: false } }), 400, { message: 'no' }), [
      f('invalidSignatureRefused', 'AUTH-INVALID-SIGNATURE-401-OTHER', 'should', 'implementation', expected, '400'),
    ]);
  });

  it('nonGlobalClientRefused: carried out is a security finding, another refusal than 401 a finding, a 401 or a 429 none', () => {
    const nonGlobal = deleteExchange({ tokenFacts: { clientGlobal: false } });
    expectFindings(nonGlobal, [
      f(
        'nonGlobalClientRefused',
        'AUTH-NON-GLOBAL-401',
        'must',
        'implementation',
        '401',
        '204',
        'the target carried out a DELETE for a client that is not global',
      ),
    ]);
    expectFindings(errorExchange(nonGlobal, 403, { message: 'delete:token_exchange_profiles' }), [
      f('nonGlobalClientRefused', 'AUTH-NON-GLOBAL-401', 'must', 'implementation', '401 for a client that is not global', '403'),
    ]);
    expectFindings(errorExchange(nonGlobal, 401, { message: 'Client is not global' }), []);
    expect(examined(errorExchange(nonGlobal, 401, { message: 'Client is not global' }))).toContain('AUTH-NON-GLOBAL-401');
    expect(examined(errorExchange(nonGlobal, 429, { statusCode: 429 }, rateLimitHeaders(0)))).not.toContain('AUTH-NON-GLOBAL-401');
    // A client of unknown standing, or a credential that is invalid anyway, is not judged by this rule.
    expect(examined(deleteExchange())).not.toContain('AUTH-NON-GLOBAL-401');
    expect(examined(errorExchange(deleteExchange({ tokenFacts: { clientGlobal: false, signatureValid: false } }), 401, {}))).not.toContain(
      'AUTH-NON-GLOBAL-401',
    );
    expect(
      examined(errorExchange(deleteExchange({ requestHeaders: { authorization: 'Bearer opaque-token-123' }, tokenFacts: { clientGlobal: false } }), 401, {})),
    ).not.toContain('AUTH-NON-GLOBAL-401');
  });

  it('tokenRequestNamesAudience: no audience, or one that does not end with /api/v2/', () => {
    const token = (body: string, type?: string) =>
      buildExchange({
        method: 'POST',
        url: 'https://tenant.example.com/oauth/token',
        requestHeaders: type === undefined ? {} : { 'content-type': type },
        requestBody: body,
        status: 200,
        responseBody: '{}',
        responseHeaders: { 'content-type': 'application/json' },
      });
    const none = f(
      'tokenRequestNamesAudience',
      'AUTH-TOKEN-AUDIENCE',
      'must',
      'client',
      'the form parameter audience set to the API base path /api/v2/',
      'no audience',
    );
    expectFindings(token('grant_type=client_credentials&client_id=a'), [none]);
    expectFindings(token('grant_type=client_credentials&audience=', 'application/x-www-form-urlencoded'), [none]);
    expectFindings(
      token(JSON.stringify({ grant_type: 'client_credentials', audience: 'https://tenant.example.com/api/v2' }), 'application/json; charset=utf-8'),
      [
        f(
          'tokenRequestNamesAudience',
          'AUTH-TOKEN-AUDIENCE',
          'must',
          'client',
          'the audience to end with the API base path /api/v2/',
          '"https://tenant.example.com/api/v2"',
        ),
      ],
    );
    expectFindings(token(JSON.stringify({ grant_type: 'client_credentials', audience: 'https://tenant.example.com/api/v2/' }), 'application/json'), []);
    expectFindings(token(JSON.stringify({ grant_type: 'client_credentials', audience: 'https://tenant.example.com/api/v2' }), 'text/plain'), []);
    expectFindings(token('"client_credentials"', 'application/json'), []);
    expectFindings(token('null', 'application/json'), []);
    expectFindings(token('{', 'application/json'), []);
    expectFindings(token('grant_type=password&username=u'), []);
    expectFindings(token({ text: 'grant_type=client_credentials&client_id=a', truncated: true } as unknown as string), []);
    expect(examined(token('grant_type=client_credentials&audience=https%3A%2F%2Ftenant.example.com%2Fapi%2Fv2%2F'))).toEqual(['AUTH-TOKEN-AUDIENCE']);
  });
});

describe('scope checks: complete findings', () => {
  it('tokenScopesAreWellFormed: one finding per malformed or unknown scope, ten of each at most', () => {
    expectFindings(deleteExchange({ requestHeaders: bearer('delete:token_exchange_profiles DeleteEverything read:starships openid') }), [
      f('tokenScopesAreWellFormed', 'SCOPE-FORMAT', 'must', 'client', 'scopes of the form <action>:<resource>', '"DeleteEverything"'),
      f('tokenScopesAreWellFormed', 'SCOPE-IN-CATALOG', 'should', 'client', "scopes from the document's scope catalog", '"read:starships"'),
    ]);
    const letters = 'ABCDEFGHIJK'.split('');
    expectFindings(
      deleteExchange({ requestHeaders: bearer(`delete:token_exchange_profiles ${letters.join(' ')}`) }),
      letters.slice(0, 10).map((l) => f('tokenScopesAreWellFormed', 'SCOPE-FORMAT', 'must', 'client', 'scopes of the form <action>:<resource>', `"${l}"`)),
    );
    const unknown = 'abcdefghijk'.split('').map((l) => `read:${l}`);
    expectFindings(
      deleteExchange({ requestHeaders: bearer(`delete:token_exchange_profiles ${unknown.join(' ')}`) }),
      unknown
        .slice(0, 10)
        .map((scope) => f('tokenScopesAreWellFormed', 'SCOPE-IN-CATALOG', 'should', 'client', "scopes from the document's scope catalog", `"${scope}"`)),
    );
    const long = `read:${'x'.repeat(60)}`;
    expectFindings(deleteExchange({ requestHeaders: bearer(`delete:token_exchange_profiles ${long}`) }), [
      f(
        'tokenScopesAreWellFormed',
        'SCOPE-IN-CATALOG',
        'should',
        'client',
        "scopes from the document's scope catalog",
        `${JSON.stringify(long).slice(0, 40)}…`,
      ),
    ]);
    for (const odd of ['read:Users', '1read:users', 'read:users:all', 'read users', ':users', 'read:']) {
      const scope = `delete:token_exchange_profiles ${odd}`;
      const findings = judgeExchange(deleteExchange({ requestHeaders: bearer(scope) })).findings;
      expect(
        findings.map((x) => x.requirement),
        odd,
      ).toContain('SCOPE-FORMAT');
    }
  });

  it('requiredScopeEnforced: carried out without the scope, with the scopes the token had', () => {
    expectFindings(deleteExchange({ requestHeaders: bearer('read:users') }), [
      f(
        'requiredScopeEnforced',
        'SCOPE-DELETE-REQUIRED',
        'must',
        'implementation',
        'a refusal (403)',
        '204',
        'the target carried out a DELETE for a token without delete:token_exchange_profiles (its scopes: "read:users")',
      ),
    ]);
    expectFindings(getExchange(resourceServer(), 'rs_1', { requestHeaders: bearer('') }), [
      f(
        'requiredScopeEnforced',
        'SCOPE-READ-RESOURCE-SERVER',
        'should',
        'implementation',
        'a refusal (403)',
        '200',
        'the target carried out a GET for a token without read:resource_servers (its scopes: "(none)")',
      ),
    ]);
    expectFindings(getExchange(resourceServer(), 'rs_1', { requestHeaders: bearer(undefined, { scope: undefined }) }), [
      f(
        'requiredScopeEnforced',
        'SCOPE-READ-RESOURCE-SERVER',
        'should',
        'implementation',
        'a refusal (403)',
        '200',
        'the target carried out a GET for a token without read:resource_servers (its scopes: "(none)")',
      ),
    ]);
    // Refused, or throttled: the scope was enforced, or not put to the test.
    expect(examined(errorExchange(deleteExchange({ requestHeaders: bearer('read:users') }), 403, { message: 'delete:token_exchange_profiles' }))).toContain(
      'SCOPE-DELETE-REQUIRED',
    );
    expect(examined(errorExchange(deleteExchange({ requestHeaders: bearer('read:users') }), 429, { statusCode: 429 }, rateLimitHeaders(0)))).not.toContain(
      'SCOPE-DELETE-REQUIRED',
    );
    expect(examined(deleteExchange())).not.toContain('SCOPE-DELETE-REQUIRED');
  });

  it('insufficientScopeNamesExpectedScope: the 403 body as received, or its absence', () => {
    const expected = 'a 403 whose message states the expected scope delete:token_exchange_profiles';
    expectFindings(errorExchange(deleteExchange({ requestHeaders: bearer('read:users') }), 403, { message: 'Insufficient scope' }), [
      f('insufficientScopeNamesExpectedScope', 'SCOPE-DELETE-403', 'must', 'implementation', expected, '"{\\"message\\":\\"Insufficient scope\\"}"'),
    ]);
    expectFindings(deleteExchange({ requestHeaders: bearer('read:users'), status: 403 }), [
      f('insufficientScopeNamesExpectedScope', 'SCOPE-DELETE-403', 'must', 'implementation', expected, 'a 403 with no body'),
    ]);
    expect(
      examined(deleteExchange({ requestHeaders: bearer('read:users'), status: 403, responseBody: { text: '{"message":"Insuff', truncated: true } })),
    ).not.toContain('SCOPE-DELETE-403');
  });
});

describe('delete checks: complete findings', () => {
  it('noContentHasNoBody: the body, its size, or the Content-Length', () => {
    expectFindings(deleteExchange({ responseHeaders: { ...rateLimitHeaders(), 'content-length': '2' } }), [
      f('noContentHasNoBody', 'TEP-DELETE-NO-BODY', 'must', 'implementation', 'a 204 with no body', 'Content-Length 2'),
    ]);
    expectFindings(deleteExchange({ responseHeaders: { ...rateLimitHeaders(), 'content-length': '0' } }), []);
    expectFindings(deleteExchange({ responseBody: { text: '{"a":', truncated: true, overLimit: { bytes: 2_000_000, limit: 1_048_576 } } }), [
      f('noContentHasNoBody', 'TEP-DELETE-NO-BODY', 'must', 'implementation', 'a 204 with no body', /^a body of .+ beginning "\{\\"a\\":"$/),
    ]);
    expect(examined(errorExchange(deleteExchange(), 401, {}))).not.toContain('TEP-DELETE-NO-BODY');
  });

  it('successStatusIsDocumented: the success code each operation answers', () => {
    expectFindings(deleteExchange({ status: 200 }), [
      f('statusCodeIsDocumented', 'GEN-STATUS-DOCUMENTED', 'should', 'implementation', 'one of 204, 401, 403, 429 for deleteTokenExchangeProfile', '200'),
      f('successStatusIsDocumented', 'TEP-DELETE-204', 'must', 'implementation', '204 on success', '200'),
    ]);
    expectFindings(updateExchange(undefined, undefined, { status: 201 }), [
      f('statusCodeIsDocumented', 'GEN-STATUS-DOCUMENTED', 'should', 'implementation', 'one of 200, 401, 429, 4XX for updateSession', '201'),
      f('successStatusIsDocumented', 'SES-SUCCESS-200', 'should', 'implementation', '200 on success', '201'),
    ]);
    expectFindings(getExchange(undefined, undefined, { status: 299 }), [
      f('statusCodeIsDocumented', 'GEN-STATUS-DOCUMENTED', 'should', 'implementation', 'one of 200, 401, 429, 4XX for getResourceServer', '299'),
      f('successStatusIsDocumented', 'RS-SUCCESS-200', 'should', 'implementation', '200 on success', '299'),
    ]);
    expect(examined(errorExchange(deleteExchange(), 300, {}))).not.toContain('TEP-DELETE-204');
    expect(examined(errorExchange(deleteExchange(), 199, {}))).not.toContain('TEP-DELETE-204');
  });
});

describe('schema checks: complete findings', () => {
  it('responseBodyMatchesSchema: two different violations in one body are two findings, each with its requirement', () => {
    expectFindings(getExchange(resourceServer({ signing_alg: 'HS512', token_dialect: 'opaque' })), [
      at(
        '/signing_alg',
        f('responseBodyMatchesSchema', 'RS-SIGNING-ALG', 'must', 'implementation', 'signing_alg to be one of "HS256", "RS256", "RS512", "PS256"', '"HS512"'),
      ),
      at(
        '/token_dialect',
        f(
          'responseBodyMatchesSchema',
          'RS-TOKEN-DIALECT',
          'must',
          'implementation',
          'token_dialect to be one of "access_token", "access_token_authz", "rfc9068_profile", "rfc9068_profile_authz"',
          '"opaque"',
        ),
      ),
    ]);
  });

  it('responseBodyMatchesSchema: one requirement broken in two places is two findings', () => {
    expectFindings(getExchange(resourceServer({ is_system: 'false', token_lifetime: '86400' })), [
      at('/is_system', f('responseBodyMatchesSchema', 'RS-RESPONSE-SCHEMA', 'must', 'implementation', 'is_system must be boolean', '"false"')),
      at('/token_lifetime', f('responseBodyMatchesSchema', 'RS-RESPONSE-SCHEMA', 'must', 'implementation', 'token_lifetime must be integer', '"86400"')),
    ]);
  });

  it('responseBodyMatchesSchema: a secret by its length, a value inside a secret never shown, a body that is no object', () => {
    expectFindings(getExchange(resourceServer({ signing_secret: 'hunter2-secret' })), [
      at(
        '/signing_secret',
        f(
          'responseBodyMatchesSchema',
          'RS-SIGNING-SECRET-LENGTH',
          'must',
          'implementation',
          'signing_secret must NOT have fewer than 16 characters',
          'a secret of 14 characters (redacted)',
        ),
      ),
    ]);
    expectFindings(getExchange(resourceServer({ token_encryption: { format: 'jwe', encryption_key: { pem: 7, name: 'k', kid: '1' } } })), [
      at(
        '/token_encryption/format',
        f('responseBodyMatchesSchema', 'RS-TOKEN-ENCRYPTION', 'must', 'implementation', 'token_encryption.format to be "compact-nested-jwe"', '"jwe"'),
      ),
      at(
        '/token_encryption/encryption_key/pem',
        f(
          'responseBodyMatchesSchema',
          'RS-TOKEN-ENCRYPTION',
          'must',
          'implementation',
          'token_encryption.encryption_key.pem must be string',
          'a secret (redacted)',
        ),
      ),
    ]);
    expectFindings(getExchange(['rs_1']), [
      at('', f('responseBodyMatchesSchema', 'RS-RESPONSE-SCHEMA', 'must', 'implementation', 'the body must be object', '["rs_1"]')),
    ]);
  });

  it('responseBodyMatchesSchema: a success without a body', () => {
    expectFindings(getExchange(undefined, 'rs_1', { responseBody: '' }), [
      f('responseBodyMatchesSchema', 'RS-RESPONSE-SCHEMA', 'must', 'implementation', 'the resource server as the body of a 200', 'no body'),
    ]);
    expectFindings(updateExchange(undefined, undefined, { responseBody: '' }), [
      f('responseBodyMatchesSchema', 'SES-RESPONSE-SCHEMA', 'must', 'implementation', 'the session as the body of a 200', 'no body'),
    ]);
    expect(examined(getExchange(undefined, 'rs_1', { responseBody: { text: '{"id":', truncated: true } }))).not.toContain('RS-RESPONSE-SCHEMA');
    expect(examined(errorExchange(getExchange(), 404, { message: 'no' }))).not.toContain('RS-RESPONSE-SCHEMA');
  });

  it('updateRequestMatchesSchema and invalidUpdateRefused: the client finding, and the update accepted', () => {
    const tooMany = Object.fromEntries(Array.from({ length: 26 }, (_, i) => [`k${i}`, 'v']));
    const shownTooMany = `${JSON.stringify(tooMany).slice(0, 80)}…`;
    const tooManyFinding = at(
      '/session_metadata',
      f('updateRequestMatchesSchema', 'SES-METADATA-MAX-PROPERTIES', 'must', 'client', 'session_metadata must NOT have more than 25 properties', shownTooMany),
    );
    expectFindings(updateExchange({ session_metadata: tooMany }, session(tooMany)), [
      at(
        '/session_metadata',
        f(
          'responseBodyMatchesSchema',
          'SES-METADATA-MAX-PROPERTIES',
          'must',
          'implementation',
          'session_metadata must NOT have more than 25 properties',
          shownTooMany,
        ),
      ),
      tooManyFinding,
      f(
        'invalidUpdateRefused',
        'SES-INVALID-UPDATE-REFUSED',
        'must',
        'implementation',
        'a 4xx refusal of a body that breaks the rules (SES-METADATA-MAX-PROPERTIES: expected session_metadata must NOT have more than 25 properties)',
        '200, the update was accepted',
      ),
    ]);
    // Four errors: each is a finding; the refusal names the first three.
    const long = 'x'.repeat(256);
    const broken = { a: 1, b: { c: 'd' }, e: long, g: [1] };
    expectFindings(updateExchange({ session_metadata: broken }, session(null)), [
      at('/session_metadata/*', f('updateRequestMatchesSchema', 'SES-METADATA-VALUE-LENGTH', 'must', 'client', 'session_metadata.a must be string', '1')),
      at(
        '/session_metadata/*',
        f('updateRequestMatchesSchema', 'SES-METADATA-VALUE-LENGTH', 'must', 'client', 'session_metadata.b must be string', '{"c":"d"}'),
      ),
      at(
        '/session_metadata/*',
        f(
          'updateRequestMatchesSchema',
          'SES-METADATA-VALUE-LENGTH',
          'must',
          'client',
          'session_metadata.e must NOT have more than 255 characters',
          `${JSON.stringify(long).slice(0, 80)}…`,
        ),
      ),
      at('/session_metadata/*', f('updateRequestMatchesSchema', 'SES-METADATA-VALUE-LENGTH', 'must', 'client', 'session_metadata.g must be string', '[1]')),
      f(
        'invalidUpdateRefused',
        'SES-INVALID-UPDATE-REFUSED',
        'must',
        'implementation',
        'a 4xx refusal of a body that breaks the rules (SES-METADATA-VALUE-LENGTH: expected session_metadata.a must be string | SES-METADATA-VALUE-LENGTH: expected session_metadata.b must be string | SES-METADATA-VALUE-LENGTH: expected session_metadata.e must NOT have more than 255 characters)',
        '200, the update was accepted',
      ),
      at(
        '/session_metadata',
        f(
          'sessionMetadataEchoed',
          'SES-METADATA-ECHOED',
          'should',
          'implementation',
          `session_metadata ${JSON.stringify(broken).slice(0, 120)}… as sent`,
          'null',
        ),
      ),
    ]);
    // Refused, or throttled: the client's finding only.
    expectFindings(updateExchange({ session_metadata: tooMany }, { statusCode: 400, message: 'Too many properties' }, { status: 400 }), [tooManyFinding]);
    expectFindings(errorExchange(updateExchange({ session_metadata: tooMany }), 429, { statusCode: 429 }, rateLimitHeaders(0)), [tooManyFinding]);
    expect(examined(errorExchange(updateExchange({ session_metadata: tooMany }), 429, { statusCode: 429 }, rateLimitHeaders(0)))).not.toContain(
      'SES-INVALID-UPDATE-REFUSED',
    );
    expect(examined(errorExchange(updateExchange({ session_metadata: tooMany }), 400, { statusCode: 400 }))).toContain('SES-INVALID-UPDATE-REFUSED');
    expect(examined(updateExchange())).not.toContain('SES-INVALID-UPDATE-REFUSED');
  });

  it('updateRequestMatchesSchema: no body, or a body that is not JSON', () => {
    expectFindings(updateExchange(undefined, undefined, { requestBody: undefined, status: 400, responseBody: '{"statusCode":400}' }), [
      f('updateRequestMatchesSchema', 'SES-REQUEST-BODY', 'must', 'client', 'a JSON body with session_metadata', 'no body'),
    ]);
    expectFindings(updateExchange(undefined, undefined, { requestBody: '{"session_metadata":', status: 400, responseBody: '{"statusCode":400}' }), [
      f('updateRequestMatchesSchema', 'SES-REQUEST-BODY', 'must', 'client', 'a JSON body', /^"\{\\"session_metadata\\":" \(.+\)$/),
    ]);
    expectFindings(
      updateExchange(undefined, undefined, { requestBody: { text: '{"session_metadata":', truncated: true }, status: 400, responseBody: '{"statusCode":400}' }),
      [],
    );
  });
});

describe('update session checks: complete findings', () => {
  it('sessionMetadataCleared: what was sent, and what was left', () => {
    for (const sent of [null, {}]) {
      expectFindings(updateExchange({ session_metadata: sent }, session({ a: 'b' })), [
        at(
          '/session_metadata',
          f(
            'sessionMetadataCleared',
            'SES-METADATA-CLEARED',
            'must',
            'implementation',
            `no session metadata left after sending ${JSON.stringify(sent)}`,
            'session_metadata {"a":"b"}',
          ),
        ),
      ]);
      expectFindings(updateExchange({ session_metadata: sent }, session({})), []);
    }
    expect(examined(updateExchange({ session_metadata: { a: 'b' } }))).not.toContain('SES-METADATA-CLEARED');
    expect(examined(updateExchange({ session_metadata: [] }, session(null)))).not.toContain('SES-METADATA-CLEARED');
    expect(examined(updateExchange({ other: 1 }, session({ a: 'b' })))).not.toContain('SES-METADATA-CLEARED');
  });

  it('sessionMetadataEchoed: metadata that comes back different, missing or null', () => {
    const expected = 'session_metadata {"plan":"gold"} as sent';
    const echoed = (returned: unknown) => updateExchange({ session_metadata: { plan: 'gold' } }, session(returned));
    expectFindings(echoed({ plan: 'silver' }), [
      at('/session_metadata', f('sessionMetadataEchoed', 'SES-METADATA-ECHOED', 'should', 'implementation', expected, '{"plan":"silver"}')),
    ]);
    expectFindings(echoed({ plan: 'gold', old: 'kept' }), [
      at('/session_metadata', f('sessionMetadataEchoed', 'SES-METADATA-ECHOED', 'should', 'implementation', expected, '{"plan":"gold","old":"kept"}')),
    ]);
    expectFindings(echoed({ other: 'gold' }), [
      at('/session_metadata', f('sessionMetadataEchoed', 'SES-METADATA-ECHOED', 'should', 'implementation', expected, '{"other":"gold"}')),
    ]);
    expectFindings(echoed(null), [at('/session_metadata', f('sessionMetadataEchoed', 'SES-METADATA-ECHOED', 'should', 'implementation', expected, 'null'))]);
    expectFindings(updateExchange({ session_metadata: { plan: 'gold' } }, (({ session_metadata: _m, ...rest }) => rest)(session())), [
      at('/session_metadata', f('sessionMetadataEchoed', 'SES-METADATA-ECHOED', 'should', 'implementation', expected, 'nothing')),
    ]);
    expectFindings(echoed('gold'), [
      at(
        '/session_metadata',
        f('responseBodyMatchesSchema', 'SES-RESPONSE-SCHEMA', 'must', 'implementation', 'session_metadata must be object,null', '"gold"'),
      ),
      at('/session_metadata', f('sessionMetadataEchoed', 'SES-METADATA-ECHOED', 'should', 'implementation', expected, '"gold"')),
    ]);
    expectFindings(echoed({ plan: 'gold' }), []);
  });

  it('sessionIdMatchesPath: the id in the path and the id returned', () => {
    expectFindings(updateExchange(undefined, session({ plan: 'gold' }, 'sess_2')), [
      at('/id', f('sessionIdMatchesPath', 'SES-ID-MATCHES', 'should', 'implementation', 'the session "sess_1" named in the path', 'id "sess_2"')),
    ]);
    expect(examined(updateExchange(undefined, { ...session(), id: 7 }))).not.toContain('SES-ID-MATCHES');
  });

  it('updateRequestIsJson: the Content-Type sent, or its absence', () => {
    const sentAs = (type?: string) =>
      updateExchange(undefined, undefined, { requestHeaders: { ...bearer(), ...(type === undefined ? {} : { 'content-type': type }) } });
    expectFindings(sentAs(), [f('updateRequestIsJson', 'SES-REQUEST-CONTENT-TYPE', 'must', 'client', 'Content-Type: application/json', 'no Content-Type')]);
    for (const type of ['text/plain', 'application/jsonp', 'x-application/json', 'application/merge-patch+json']) {
      expectFindings(sentAs(type), [
        f('updateRequestIsJson', 'SES-REQUEST-CONTENT-TYPE', 'must', 'client', 'Content-Type: application/json', JSON.stringify(type)),
      ]);
    }
    for (const type of ['application/json', 'Application/JSON; charset=utf-8', 'application/json ;charset=utf-8']) expectFindings(sentAs(type), []);
  });
});

describe('resource server checks: complete findings', () => {
  it('tokenLifetimeForWebWithinTokenLifetime: the two lifetimes', () => {
    expectFindings(getExchange(resourceServer({ token_lifetime_for_web: 86401 })), [
      at(
        '/token_lifetime_for_web',
        f(
          'tokenLifetimeForWebWithinTokenLifetime',
          'RS-TOKEN-LIFETIME-FOR-WEB',
          'must',
          'implementation',
          'token_lifetime_for_web not greater than token_lifetime (86400)',
          '86401',
        ),
      ),
    ]);
    expectFindings(getExchange(resourceServer({ token_lifetime_for_web: 86400 })), []);
  });

  it('resourceServerMatchesLookup: the id asked for and the server returned', () => {
    expectFindings(getExchange(resourceServer(), 'rs_2'), [
      f(
        'resourceServerMatchesLookup',
        'RS-LOOKUP-BY-ID-OR-AUDIENCE',
        'must',
        'implementation',
        'the resource server whose id or identifier is "rs_2"',
        'id "rs_1", identifier "https://api.example.com/orders/"',
      ),
    ]);
    // Either the id or the identifier may be what was asked for.
    expectFindings(getExchange(resourceServer({ id: 'rs_9' }), encodeURIComponent('https://api.example.com/orders/')), []);
    expectFindings(getExchange(resourceServer({ identifier: 'https://api.example.com/other/' }), 'rs_1'), []);
    expect(examined(getExchange({ id: 'rs_2', name: 'x' }, 'rs_1'))).not.toContain('RS-LOOKUP-BY-ID-OR-AUDIENCE');
    expect(examined(getExchange({ identifier: 'https://x/', name: 'x' }, 'rs_1'))).not.toContain('RS-LOOKUP-BY-ID-OR-AUDIENCE');
  });

  it('includeFieldsIsBoolean: the value sent', () => {
    expectFindings(getExchange(resourceServer(), 'rs_1?include_fields=yes'), [
      f('includeFieldsIsBoolean', 'RS-INCLUDE-FIELDS-BOOLEAN', 'must', 'client', 'include_fields=true or include_fields=false', 'include_fields="yes"'),
    ]);
  });
});

describe('rate-limit checks: complete findings', () => {
  const throttled = (headers: Record<string, string>) => {
    const base = errorExchange(deleteExchange(), 429, { statusCode: 429 });
    return { ...base, response: { ...base.response!, headers: { 'content-type': 'application/json', ...headers } } };
  };

  it('rateLimitHeadersOn429: the headers missing, as the document names them', () => {
    const { 'x-ratelimit-remaining': _r, ...withoutRemaining } = rateLimitHeaders(0);
    expectFindings(throttled(withoutRemaining), [
      f(
        'rateLimitHeadersOn429',
        'RL-429-HEADERS',
        'must',
        'implementation',
        'a 429 with X-RateLimit-Limit, X-RateLimit-Remaining and X-RateLimit-Reset',
        'a 429 without X-RateLimit-Remaining',
      ),
    ]);
    expectFindings(throttled({}), [
      f(
        'rateLimitHeadersOn429',
        'RL-429-HEADERS',
        'must',
        'implementation',
        'a 429 with X-RateLimit-Limit, X-RateLimit-Remaining and X-RateLimit-Reset',
        'a 429 without X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset',
      ),
    ]);
  });

  it('rateLimitHeadersWellFormed: each value that is wrong, with what it was', () => {
    expectFindings(deleteExchange({ responseHeaders: rateLimitHeaders(-1, 100, '30s') }), [
      f('rateLimitHeadersWellFormed', 'RL-HEADER-VALUES', 'should', 'implementation', 'X-RateLimit-Remaining as a non-negative integer', '"-1"'),
      f('rateLimitHeadersWellFormed', 'RL-HEADER-VALUES', 'should', 'implementation', 'X-RateLimit-Reset as a non-negative integer', '"30s"'),
    ]);
    expectFindings(deleteExchange({ responseHeaders: rateLimitHeaders(101, 100) }), [
      f('rateLimitHeadersWellFormed', 'RL-HEADER-VALUES', 'should', 'implementation', 'X-RateLimit-Remaining not above X-RateLimit-Limit (100)', '101'),
    ]);
    expectFindings(deleteExchange({ responseHeaders: rateLimitHeaders(100, 100) }), []);
    expectFindings(deleteExchange({ responseHeaders: rateLimitHeaders(99, 100, '30') }), [
      f(
        'rateLimitHeadersWellFormed',
        'RL-HEADER-VALUES',
        'should',
        'implementation',
        'X-RateLimit-Reset as UNIX epoch seconds near the response time',
        '30 (-1799999970 s from the request)',
      ),
    ]);
    expectFindings(errorExchange(deleteExchange(), 429, {}, rateLimitHeaders(5)), [
      f('rateLimitHeadersWellFormed', 'RL-HEADER-VALUES', 'should', 'implementation', 'X-RateLimit-Remaining 0 on a 429', '5'),
    ]);
    const start = Date.parse(STARTED_AT) / 1000;
    expectFindings(deleteExchange({ responseHeaders: rateLimitHeaders(99, 100, String(start + 24 * 3600)) }), []);
    expectFindings(deleteExchange({ responseHeaders: rateLimitHeaders(99, 100, String(start - 24 * 3600)) }), []);
    expectFindings(deleteExchange({ responseHeaders: rateLimitHeaders(99, 100, String(start + 24 * 3600 + 1)) }), [
      f(
        'rateLimitHeadersWellFormed',
        'RL-HEADER-VALUES',
        'should',
        'implementation',
        'X-RateLimit-Reset as UNIX epoch seconds near the response time',
        '1800086401 (86401 s from the request)',
      ),
    ]);
    expect(examined(deleteExchange({ responseHeaders: {} }))).not.toContain('RL-HEADER-VALUES');
    expect(examined(deleteExchange({ responseHeaders: { 'x-ratelimit-reset': RESET } }))).toContain('RL-HEADER-VALUES');
  });

  it('rateLimitSequenceIsConsistent and throttledRequestAnswered429: what the earlier answer said', () => {
    const at = (offsetMs: number, parts: Parameters<typeof deleteExchange>[0]) =>
      deleteExchange({ startedAt: new Date(Date.parse(STARTED_AT) + offsetMs).toISOString(), durationMs: 10, ...parts });
    const tracker = new RateLimitTracker();
    expectFindings(at(0, { responseHeaders: rateLimitHeaders(5) }), [], tracker);
    expectFindings(
      at(20, { responseHeaders: rateLimitHeaders(6) }),
      [
        f(
          'rateLimitSequenceIsConsistent',
          'RL-SEQUENCE',
          'should',
          'implementation',
          'X-RateLimit-Remaining at most 5 (an earlier request of this client in the same window, reset 1800000030)',
          '6',
        ),
      ],
      tracker,
    );
    const spent = new RateLimitTracker();
    expectFindings(at(0, { responseHeaders: rateLimitHeaders(0) }), [], spent);
    // A refusal that is not a 429 and names no window: placed in the window last heard of, which was spent.
    const refused = at(20, {
      status: 403,
      responseHeaders: { 'content-type': 'application/json' },
      responseBody: '{"message":"delete:token_exchange_profiles"}',
    });
    expectFindings(
      refused,
      [
        f(
          'throttledRequestAnswered429',
          'RL-THROTTLED-429',
          'must',
          'implementation',
          '429 for a request over the rate limit (an earlier request of this client had X-RateLimit-Remaining 0, window resetting at 1800000030)',
          '403',
        ),
      ],
      spent,
    );
  });
});
