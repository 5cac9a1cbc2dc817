// The credential classifier and the checks built on it (a request carried out without a valid
// credential, the 401 rules), and the rule that a throttled request gets 429: each proven to
// fire on a violating exchange and to stay silent on a conforming one.
import { describe, expect, it } from 'vitest';
import { credentialState, CLOCK_SKEW_SECONDS, audienceNamesApi } from '../rules/credential.ts';
import { buildExchange } from '../rules/exchange.ts';
import { judgeExchange, RateLimitTracker } from '../rules/index.ts';
import { findingMessage } from '../rules/message.ts';
import type { Exchange, Finding } from '../rules/types.ts';
import {
  BASE,
  claims,
  deleteExchange,
  errorExchange,
  getExchange,
  jwt,
  rateLimitHeaders,
  resourceServer,
  STARTED_AT,
  updateExchange,
} from '../fixtures/exchanges.ts';

const b64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
const token = (header: Record<string, unknown>, body: Record<string, unknown>, signature = 'c2lnbmF0dXJl') => `${b64url(header)}.${b64url(body)}.${signature}`;
const bearer = (t: string) => ({ Authorization: `Bearer ${t}` });
const at = Date.parse(STARTED_AT) / 1000;

const implementationFindings = (exchange: Exchange, tracker?: RateLimitTracker): Finding[] =>
  judgeExchange(exchange, tracker).findings.filter((f) => f.subject === 'implementation');
const ids = (findings: Finding[]) => findings.map((f) => f.requirement);

/** One exchange per operation with these request headers and token facts, answered with success (204/200) or `status`. */
function onEveryOperation(
  requestHeaders: Record<string, string>,
  status: number | 'success',
  tokenFacts: { signatureValid?: boolean } = {},
): Record<string, Exchange> {
  const overrides = { requestHeaders, tokenFacts };
  const bases = {
    deleteTokenExchangeProfile: deleteExchange(overrides),
    updateSession: updateExchange(undefined, undefined, { ...overrides, requestHeaders: { ...requestHeaders, 'Content-Type': 'application/json' } }),
    getResourceServer: getExchange(resourceServer(), 'rs_1', overrides),
  };
  if (status === 'success') return bases;
  return Object.fromEntries(Object.entries(bases).map(([operation, base]) => [operation, errorExchange(base, status, { statusCode: status })]));
}

describe('credentialState', () => {
  const state = (headers: Record<string, string>, facts: { signatureValid?: boolean } = {}, startedAt = STARTED_AT) =>
    credentialState(deleteExchange({ requestHeaders: headers, tokenFacts: facts, startedAt }));

  it('tells every kind of credential apart', () => {
    expect(state({})).toBe('absent');
    expect(state({ Authorization: 'Bearer' })).toBe('malformed');
    expect(state({ Authorization: 'Basic dXNlcjpwYXNz' })).toBe('malformed');
    expect(state({ Authorization: 'Bearer opaque-token-123' })).toBe('not-jwt');
    expect(state(bearer(token({ alg: 'none', typ: 'JWT' }, claims(), '')))).toBe('unsigned');
    expect(state(bearer(token({ alg: 'None' }, claims(), '')))).toBe('unsigned');
    expect(state(bearer(token({ alg: 'RS256' }, claims(), '')))).toBe('unsigned');
    expect(state(bearer(token({ alg: 'dir' }, claims())))).toBe('unsigned');
    expect(state(bearer(jwt(claims())), { signatureValid: false })).toBe('signature-invalid');
    expect(state(bearer(jwt({ ...claims(), exp: at - CLOCK_SKEW_SECONDS - 1 })))).toBe('expired');
    expect(state(bearer(jwt({ ...claims(), nbf: at + CLOCK_SKEW_SECONDS + 1 })))).toBe('not-yet-valid');
    expect(state(bearer(jwt({ ...claims(), aud: 'https://api.example.com/orders/' })))).toBe('wrong-audience');
    expect(state(bearer(jwt({ ...claims(), aud: undefined })))).toBe('wrong-audience');
    expect(state(bearer(jwt(claims())))).toBe('unverified');
    expect(state(bearer(jwt(claims())), { signatureValid: true })).toBe('valid');
  });

  it('allows clock skew of a minute either way', () => {
    expect(state(bearer(jwt({ ...claims(), exp: at - CLOCK_SKEW_SECONDS + 1 })))).toBe('unverified');
    expect(state(bearer(jwt({ ...claims(), nbf: at + CLOCK_SKEW_SECONDS - 1 })))).toBe('unverified');
  });

  it('reads the audience leniently: a path or a URL, with or without the last slash, one entry of an array', () => {
    for (const aud of ['/api/v2/', '/api/v2', 'https://tenant.auth0.com/api/v2/', 'https://tenant.auth0.com/api/v2', 'http://127.0.0.1:4010/api/v2/'])
      expect(audienceNamesApi(aud), aud).toBe(true);
    for (const aud of ['https://api.example.com/orders/', 'https://tenant.auth0.com/userinfo', '/api/v2/users', 'api', 42])
      expect(audienceNamesApi(aud), String(aud)).toBe(false);
    const exchange = deleteExchange({
      requestHeaders: bearer(jwt({ ...claims(), aud: ['https://tenant.auth0.com/userinfo', 'https://tenant.auth0.com/api/v2/'] })),
    });
    expect(credentialState(exchange)).toBe('unverified');
  });

  it('judges the issuer only when the driver knows it, by host', () => {
    const exchange = deleteExchange({ requestHeaders: bearer(jwt(claims())) });
    expect(credentialState(exchange)).toBe('unverified');
    exchange.token.issuerExpected = 'https://TENANT.example.com';
    expect(credentialState(exchange)).toBe('unverified');
    exchange.token.issuerExpected = 'https://other.example.com/';
    expect(credentialState(exchange)).toBe('wrong-issuer');
  });

  it('is "not-recorded" when the recording does not show the credential', () => {
    const exchange = deleteExchange({ requestHeaders: {} });
    exchange.token.recorded = false;
    expect(credentialState(exchange)).toBe('not-recorded');
  });
});

describe('a request without a valid credential is never carried out', () => {
  /** The 401 rule each credential's refusal is judged by: the delete's (must) and the other operations' (should). */
  const MISSING = ['AUTH-MISSING-TOKEN-401', 'AUTH-MISSING-TOKEN-401-OTHER', 'missingTokenRefused'] as const;
  const BADLY_SIGNED = ['AUTH-INVALID-SIGNATURE-401', 'AUTH-INVALID-SIGNATURE-401-OTHER', 'invalidSignatureRefused'] as const;
  const forged: Array<[string, Record<string, string>, { signatureValid?: boolean }, readonly [string, string, string]]> = [
    ['no Authorization header', {}, {}, MISSING],
    ['Bearer with nothing after it', { Authorization: 'Bearer ' }, {}, MISSING],
    ['another scheme', { Authorization: 'Basic dXNlcjpwYXNz' }, {}, MISSING],
    ['a token that is not a JWT', { Authorization: 'Bearer opaque' }, {}, MISSING],
    ['alg none, empty signature', bearer(token({ alg: 'none' }, claims(), '')), {}, BADLY_SIGNED],
    ['a signature that does not verify', bearer(jwt(claims())), { signatureValid: false }, BADLY_SIGNED],
  ];

  it.each(forged)(
    '%s, carried out: must on every operation, marked security, and its 401 rule broken too',
    (_name, headers, facts, [deleteRule, otherRule, refusedCheck]) => {
      for (const [operation, exchange] of Object.entries(onEveryOperation(headers, 'success', facts))) {
        const onDelete = operation === 'deleteTokenExchangeProfile';
        const findings = implementationFindings(exchange).filter((f) => f.requirement.startsWith('AUTH-'));
        expect(ids(findings), operation).toEqual(onDelete ? ['AUTH-CREDENTIAL-REQUIRED', deleteRule] : ['AUTH-CREDENTIAL-REQUIRED-OTHER', otherRule]);
        const [carried, refusal] = findings as [Finding, Finding];
        expect(carried.level).toBe('must');
        expect(carried.check).toBe('missingOrForgedCredentialNotCarriedOut');
        expect(carried.security).toMatch(/^the target carried out a (DELETE|PATCH|GET) sent with /);
        expect(findingMessage(carried)).toMatch(/: security: the target carried out a .* \(expected a refusal \(401\), received 2\d\d\)$/);
        // The 2xx is no refusal at all: the 401 rule is broken, and says it as the same security finding.
        expect(refusal.level).toBe(onDelete ? 'must' : 'should');
        expect(refusal.check).toBe(refusedCheck);
        expect(refusal.security).toBe(carried.security);
        expect(findingMessage(refusal)).toMatch(/: security: the target carried out a .* \(expected 401 for .*, received 2\d\d\)$/);
      }
    },
  );

  it.each(forged)('%s, refused with 401: no finding on any operation', (_name, headers, facts) => {
    for (const exchange of Object.values(onEveryOperation(headers, 401, facts))) expect(implementationFindings(exchange)).toEqual([]);
  });

  // Beside the rule against carrying it out, the claim's own 401 rule (a security warning on
  // every operation); an expired token has none of its own.
  const stale: Array<[string, Record<string, unknown>, string[]]> = [
    ['expired', { ...claims(), exp: at - 3600 }, []],
    ['not yet valid', { ...claims(), nbf: at + 3600 }, ['AUTH-NOT-BEFORE-401']],
    ['for another audience', { ...claims(), aud: 'https://api.example.com/orders/' }, ['AUTH-AUDIENCE-401']],
  ];

  it.each(stale)('a token %s, carried out: must on delete, a security warning on the others', (_name, body, claimRule) => {
    const headers = bearer(jwt(body));
    const del = implementationFindings(deleteExchange({ requestHeaders: headers })).filter((f) => f.requirement.startsWith('AUTH-'));
    expect(ids(del)).toEqual(['AUTH-CREDENTIAL-REQUIRED', ...claimRule]);
    expect(del[0]!.check).toBe('expiredOrMisdirectedTokenNotCarriedOut');
    for (const exchange of [
      getExchange(resourceServer(), 'rs_1', { requestHeaders: headers }),
      updateExchange(undefined, undefined, { requestHeaders: { ...headers, 'Content-Type': 'application/json' } }),
    ]) {
      const other = implementationFindings(exchange).filter((f) => f.requirement.startsWith('AUTH-'));
      expect(ids(other)).toEqual(['AUTH-TOKEN-VALIDITY-OTHER', ...claimRule]);
      for (const found of other) {
        expect(found.level).toBe('should');
        expect(findingMessage(found)).toContain('security');
      }
    }
    for (const exchange of Object.values(onEveryOperation(headers, 401))) expect(implementationFindings(exchange)).toEqual([]);
  });

  const claimRules: Array<[string, Record<string, unknown>, string, string]> = [
    ['not yet valid', { ...claims(), nbf: at + 3600 }, 'AUTH-NOT-BEFORE-401', 'notYetValidRefused'],
    ['for another audience', { ...claims(), aud: 'https://api.example.com/orders/' }, 'AUTH-AUDIENCE-401', 'otherAudienceRefused'],
  ];

  it.each(claimRules)('a token %s refused otherwise than with 401: a warning of its own rule on every operation; its 401 none', (_name, body, rule, check) => {
    const headers = bearer(jwt(body));
    for (const [operation, exchange] of Object.entries(onEveryOperation(headers, 403))) {
      const found = implementationFindings(exchange).filter((f) => f.requirement === rule);
      expect(found, operation).toHaveLength(1);
      expect(found[0]).toMatchObject({ level: 'should', check, received: '403' });
      expect(found[0]!.security).toBeUndefined();
      expect(found[0]!.expected).toMatch(/^401 for a token (not yet valid \(nbf|for another audience \(aud)/);
    }
    for (const exchange of Object.values(onEveryOperation(headers, 401))) expect(judgeExchange(exchange).examined).toContain(rule);
  });

  it('a valid or unverified token, carried out: no authentication finding', () => {
    for (const facts of [{}, { signatureValid: true }]) {
      for (const exchange of [deleteExchange({ tokenFacts: facts }), getExchange(resourceServer(), 'rs_1', { tokenFacts: facts })]) {
        expect(implementationFindings(exchange)).toEqual([]);
      }
    }
  });

  it('an unsigned token refused with 403 is judged by the 401 rule, not as carried out', () => {
    const exchange = errorExchange(deleteExchange({ requestHeaders: bearer(token({ alg: 'none' }, claims(), '')) }), 403, {});
    expect(ids(implementationFindings(exchange))).toContain('AUTH-INVALID-SIGNATURE-401');
    expect(ids(implementationFindings(exchange))).not.toContain('AUTH-CREDENTIAL-REQUIRED');
  });

  it('a non-global client with a forged token that gets its delete is reported as a forged credential: its claims say nothing of the client', () => {
    const exchange = deleteExchange({ tokenFacts: { signatureValid: false, clientGlobal: false } });
    expect(ids(implementationFindings(exchange))).toEqual(['AUTH-CREDENTIAL-REQUIRED', 'AUTH-INVALID-SIGNATURE-401']);
  });

  it('a recording that does not show the credential gives no authentication finding of either subject', () => {
    const exchange = deleteExchange({ requestHeaders: {} });
    exchange.token.recorded = false;
    expect(judgeExchange(exchange).findings.filter((f) => f.requirement.startsWith('AUTH-'))).toEqual([]);
    const refused = errorExchange(deleteExchange({ requestHeaders: {} }), 404, {});
    refused.token.recorded = false;
    expect(judgeExchange(refused).findings.filter((f) => f.requirement.startsWith('AUTH-'))).toEqual([]);
  });
});

describe('throttledRequestAnswered429', () => {
  const reset = String(at + 30);
  /** A delete of the full client, starting `offsetMs` after STARTED_AT, taking 10 ms. */
  const call = (offsetMs: number, status: number, headers: Record<string, string> | undefined, azp = 'client-full') =>
    buildExchange({
      startedAt: new Date(Date.parse(STARTED_AT) + offsetMs).toISOString(),
      durationMs: 10,
      method: 'DELETE',
      url: `${BASE}/token-exchange-profiles/tep_1`,
      requestHeaders: bearer(jwt(claims(undefined, azp))),
      status,
      responseHeaders: headers ?? {},
      responseBody: status === 204 ? '' : JSON.stringify({ statusCode: status }),
    });
  const throttledFindings = (...exchanges: Exchange[]) => {
    const tracker = new RateLimitTracker();
    return exchanges
      .map((e) => judgeExchange(e, tracker))
      .map((j) => ({ findings: j.findings.filter((f) => f.requirement === 'RL-THROTTLED-429'), examined: j.examined.includes('RL-THROTTLED-429') }));
  };

  it('fires when a request after the quota was spent gets 503, 500 or 403 in the same window', () => {
    for (const status of [503, 500, 403]) {
      const [, judged] = throttledFindings(call(0, 204, rateLimitHeaders(0, 10, reset)), call(100, status, rateLimitHeaders(0, 10, reset)));
      expect(judged!.findings).toHaveLength(1);
      expect(judged!.findings[0]!.level).toBe('must');
      expect(findingMessage(judged!.findings[0]!)).toContain(`received ${status}`);
    }
    // A gateway's 503 without rate-limit headers is over the limit too.
    const [, bare] = throttledFindings(call(0, 204, rateLimitHeaders(0, 10, reset)), call(100, 503, undefined));
    expect(bare!.findings).toHaveLength(1);
  });

  it('stays silent on a 429, on the last allowed request (2xx with Remaining 0), and on answers that judge the request itself', () => {
    const [last, limited] = throttledFindings(call(0, 204, rateLimitHeaders(0, 10, reset)), call(100, 429, rateLimitHeaders(0, 10, reset)));
    expect(last!.findings).toEqual([]);
    expect(limited!.findings).toEqual([]);
    expect(limited!.examined).toBe(true);
    for (const status of [404, 401, 400])
      expect(throttledFindings(call(0, 204, rateLimitHeaders(0, 10, reset)), call(100, status, rateLimitHeaders(0, 10, reset)))[1]!.findings).toEqual([]);
  });

  it('is not judged on an answer whose recording kept none of its headers: whether it still reported quota left is not known', () => {
    const tracker = new RateLimitTracker();
    judgeExchange(call(0, 204, rateLimitHeaders(0, 10, reset)), tracker);
    const unrecorded = call(100, 503, undefined);
    unrecorded.response!.headersRecorded = false;
    const judgement = judgeExchange(unrecorded, tracker);
    expect(judgement.findings.filter((f) => f.requirement === 'RL-THROTTLED-429')).toEqual([]);
    expect(judgement.examined).not.toContain('RL-THROTTLED-429');
    expect(judgement.responseHeadersNotRecorded).toEqual(['RL-THROTTLED-429']);
    // A 429 needs no header to be the right answer.
    const limited = call(200, 429, undefined);
    limited.response!.headersRecorded = false;
    expect(judgeExchange(limited, tracker).examined).toContain('RL-THROTTLED-429');
  });

  it('compares only requests that did not overlap, of the same client, in a window that has not reset', () => {
    // Overlapping: the second started before the first finished.
    expect(throttledFindings(call(0, 204, rateLimitHeaders(0, 10, reset)), call(5, 503, rateLimitHeaders(0, 10, reset)))[1]!.findings).toEqual([]);
    // Another client.
    expect(
      throttledFindings(call(0, 204, rateLimitHeaders(0, 10, reset)), call(100, 503, rateLimitHeaders(0, 10, reset), 'client-other'))[1]!.findings,
    ).toEqual([]);
    // The window reset before the request (Reset in the past), or the response names a new window.
    expect(throttledFindings(call(0, 204, rateLimitHeaders(0, 10, reset)), call(31_000, 503, undefined))[1]!.findings).toEqual([]);
    expect(throttledFindings(call(0, 204, rateLimitHeaders(0, 10, reset)), call(100, 503, rateLimitHeaders(9, 10, String(at + 90))))[1]!.findings).toEqual([]);
    // Quota not spent: a 503 is a server error, not a throttle.
    expect(throttledFindings(call(0, 204, rateLimitHeaders(1, 10, reset)), call(100, 503, rateLimitHeaders(0, 10, reset)))[1]!.findings).toEqual([]);
  });
});
