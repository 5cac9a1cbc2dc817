// Every check proven both ways: conforming exchanges give no finding; each violation gives
// the expected finding, from the expected check, naming the expected requirement.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { parse } from 'yaml';
import { schemasDir } from '../core/paths.ts';
import { describe, expect, it } from 'vitest';
import { buildExchange } from '../rules/exchange.ts';
import { ApiLayout, judgeExchange, RateLimitTracker } from '../rules/index.ts';
import { apiBaseAt } from '../rules/api-base.ts';
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
  RESET,
  session,
  STARTED_AT,
  updateExchange,
} from '../fixtures/exchanges.ts';

const findingsOf = (exchange: Exchange, tracker?: RateLimitTracker): Finding[] => judgeExchange(exchange, tracker).findings;

function expectFinding(exchange: Exchange, check: string, requirement: string): Finding {
  const findings = findingsOf(exchange);
  const found = findings.find((f) => f.check === check && f.requirement === requirement);
  expect(found, `expected ${check} → ${requirement}, got ${JSON.stringify(findings.map((f) => `${f.check}:${f.requirement}`))}`).toBeDefined();
  // A security finding says first what the target carried out; the others what was expected.
  if (found!.security === undefined) {
    expect(findingMessage(found!).startsWith(`${requirement}: expected `)).toBe(true);
    expect(findingMessage(found!)).toContain('; received ');
  } else {
    expect(findingMessage(found!)).toBe(`${requirement}: security: ${found!.security} (expected ${found!.expected}, received ${found!.received})`);
  }
  return found!;
}

const runs = { numRuns: 60 };

describe('conforming exchanges', () => {
  it.each([
    ['delete 204', deleteExchange()],
    ['update with metadata', updateExchange()],
    ['update clearing with null', updateExchange({ session_metadata: null }, session(null))],
    ['update clearing with {} (metadata omitted in reply)', updateExchange({ session_metadata: {} }, (({ session_metadata: _m, ...rest }) => rest)(session()))],
    ['get by id', getExchange()],
    ['get by audience, encoded once', getExchange(resourceServer(), encodeURIComponent('https://api.example.com/orders/'))],
    ['get by audience, encoded twice', getExchange(resourceServer(), encodeURIComponent(encodeURIComponent('https://api.example.com/orders/')))],
    ['get with fields', getExchange({ id: 'rs_1', name: 'Orders API' }, 'rs_1?fields=id,name&include_fields=true')],
    ['get with fields excluded', getExchange((({ signing_secret: _s, ...rest }) => rest)(resourceServer()), 'rs_1?fields=signing_secret&include_fields=false')],
    // The parameter naming the fields is "not shown": an answer that ignores `fields` breaks nothing stated.
    ['get with fields=… ignored (include_fields=true)', getExchange(resourceServer(), 'rs_1?fields=id,name&include_fields=true')],
    ['get with fields=… ignored (include_fields=false)', getExchange(resourceServer(), 'rs_1?fields=signing_secret&include_fields=false')],
    ['get with undocumented extra fields', getExchange(resourceServer({ tenant_flag: 'x', nested: { a: 1 } }))],
    ['get with optional fields missing', getExchange({ id: 'rs_1', identifier: 'https://api.example.com/orders/' })],
    [
      '403 naming the scope',
      errorExchange(deleteExchange({ requestHeaders: { Authorization: `Bearer ${jwt(claims('read:users'))}` } }), 403, {
        statusCode: 403,
        error: 'Forbidden',
        message: 'Insufficient scope, expected any of: delete:token_exchange_profiles',
        errorCode: 'insufficient_scope',
      }),
    ],
    [
      '401 for a corrupted signature',
      errorExchange(deleteExchange({ tokenFacts: { signatureValid: false } }), 401, { statusCode: 401, message: 'Invalid token' }),
    ],
    [
      '401 for a non-global client',
      errorExchange(deleteExchange({ tokenFacts: { clientGlobal: false } }), 401, { statusCode: 401, message: 'Client is not global' }),
    ],
    ['429 with the three headers', errorExchange(deleteExchange(), 429, { statusCode: 429, message: 'Too Many Requests' }, rateLimitHeaders(0))],
    ['404 for an unknown session', errorExchange(updateExchange(), 404, { statusCode: 404, error: 'Not Found', message: 'The session does not exist' })],
  ])('%s: no finding', (_name, exchange) => {
    expect(findingsOf(exchange)).toEqual([]);
  });

  it('generated valid session metadata (up to 25 values of up to 255 characters) gives no finding', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string({ minLength: 1, maxLength: 20 }), fc.string({ maxLength: 255 }), { maxKeys: 25 }), (metadata) => {
        const sent = Object.keys(metadata).length === 0 ? null : metadata;
        expect(findingsOf(updateExchange({ session_metadata: sent }, session(sent)))).toEqual([]);
      }),
      runs,
    );
  });

  it('other paths under the API base path are other operations, named by their templated path; paths outside it are not matched', () => {
    for (const [method, path, name] of [
      ['GET', '/api/v2/users/u1', 'GET /users/{id}'],
      ['GET', '/api/v2/sessions/sess_1', 'GET /sessions/{id}'],
      ['PATCH', '/api/v2/users/sessions/sess_1', 'PATCH /users/{id}/{id2}'],
      ['DELETE', '/api/v2/resource-servers/rs_1', 'DELETE /resource-servers/{id}'],
    ] as const) {
      const judgement = judgeExchange(buildExchange({ method, url: `https://t.example.com${path}`, status: 200 }));
      expect(judgement.operation, `${method} ${path}`).toMatchObject({ operation: 'otherOperation', name, prefix: '/api/v2' });
      // Carried out without a credential: the rules of every operation hold here too.
      expect(judgement.findings.map((f) => [f.requirement, f.security !== undefined])).toEqual([
        ['AUTH-BEARER-HEADER', false],
        ['AUTH-CREDENTIAL-REQUIRED-OTHER', true],
        ['AUTH-MISSING-TOKEN-401-OTHER', true],
      ]);
    }
    for (const path of ['/api/v2', '/api/v2/', '/userinfo', '/.well-known/jwks.json', '/authorize?client_id=x']) {
      const judgement = judgeExchange(buildExchange({ method: 'GET', url: `https://t.example.com${path}`, status: 500 }));
      expect(judgement.operation, path).toBeUndefined();
      expect(judgement.findings).toEqual([]);
    }
    // A CORS preflight carries no credential by design, and is answered: not a call of the operation.
    for (const path of ['/api/v2/users/u1', '/api/v2/sessions/s1']) {
      const judgement = judgeExchange(buildExchange({ method: 'OPTIONS', url: `https://t.example.com${path}`, status: 204 }));
      expect(judgement.operation, path).toBeUndefined();
      expect(judgement.findings).toEqual([]);
    }
  });
});

describe('general checks', () => {
  it('responseBodyIsJson: a body without a JSON content type, or not JSON', () => {
    expectFinding(getExchange(resourceServer(), 'rs_1', { responseHeaders: { 'content-type': 'text/html' } }), 'responseBodyIsJson', 'GEN-JSON-RESPONSE');
    expectFinding(getExchange(resourceServer(), 'rs_1', { responseBody: '{"id": "rs_1",' }), 'responseBodyIsJson', 'GEN-JSON-RESPONSE');
  });

  it('statusCodeIsDocumented: undocumented codes are warnings', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 100, max: 499 }).filter((s) => ![204, 401, 403, 429].includes(s) && !(s >= 200 && s < 300)),
        (status) => {
          const f = expectFinding(errorExchange(deleteExchange(), status, { message: 'x' }), 'statusCodeIsDocumented', 'GEN-STATUS-DOCUMENTED');
          expect(f.level).toBe('should');
        },
      ),
      runs,
    );
  });

  it('statusCodeIsDocumented: any 4xx of update session and get resource server is left open by the document, as by schemas/openapi.yaml', () => {
    // "Error codes and conditions of update session and get resource server: not shown."
    fc.assert(
      fc.property(fc.integer({ min: 400, max: 499 }), (status) => {
        for (const exchange of [errorExchange(updateExchange(), status, { message: 'x' }), errorExchange(getExchange(), status, { message: 'x' })]) {
          expect(judgeExchange(exchange).findings.filter((f) => f.requirement === 'GEN-STATUS-DOCUMENTED')).toEqual([]);
          expect(judgeExchange(exchange).examined).toContain('GEN-STATUS-DOCUMENTED');
        }
      }),
      runs,
    );
    const openapi = parse(readFileSync(join(schemasDir, 'openapi.yaml'), 'utf8')) as { paths: Record<string, Record<string, { responses: object }>> };
    expect(Object.keys(openapi.paths['/sessions/{id}']!.patch!.responses)).toContain('4XX');
    expect(Object.keys(openapi.paths['/resource-servers/{id}']!.get!.responses)).toContain('4XX');
    // What the document rules out still warns: a redirect, or a 2xx other than the inferred 200.
    for (const status of [201, 204, 302]) {
      expectFinding(errorExchange(updateExchange(), status, { message: 'x' }), 'statusCodeIsDocumented', 'GEN-STATUS-DOCUMENTED');
      expectFinding(errorExchange(getExchange(), status, { message: 'x' }), 'statusCodeIsDocumented', 'GEN-STATUS-DOCUMENTED');
    }
  });

  it('noServerError: any 5xx is a warning', () => {
    fc.assert(
      fc.property(fc.integer({ min: 500, max: 599 }), (status) => {
        expectFinding(errorExchange(updateExchange(), status, { message: 'boom' }), 'noServerError', 'GEN-NO-SERVER-ERROR');
      }),
      runs,
    );
  });

  it('errorBodyIsObject: an error body that is not an object', () => {
    expectFinding(errorExchange(updateExchange(), 404, ['not', 'an', 'object']), 'errorBodyIsObject', 'GEN-ERROR-BODY');
  });
});

describe('authentication checks', () => {
  it('requestCarriesBearerToken: missing or malformed header is a client finding, and the secret is not echoed', () => {
    const missing = expectFinding(deleteExchange({ requestHeaders: {}, status: 401 }), 'requestCarriesBearerToken', 'AUTH-BEARER-HEADER');
    expect(missing.subject).toBe('client');
    const basic = expectFinding(
      deleteExchange({ requestHeaders: { authorization: 'Basic dXNlcjpzM2NyM3Q=' }, status: 401 }),
      'requestCarriesBearerToken',
      'AUTH-BEARER-HEADER',
    );
    expect(findingMessage(basic)).not.toContain('dXNlcjpzM2NyM3Q');
  });

  it('bearerTokenIsJwt: an opaque token', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[A-Za-z0-9_-]{8,40}$/), (opaque) => {
        const f = expectFinding(
          deleteExchange({ requestHeaders: { authorization: `Bearer ${opaque}` }, status: 401 }),
          'bearerTokenIsJwt',
          'AUTH-TOKEN-IS-JWT',
        );
        expect(f.subject).toBe('client');
      }),
      runs,
    );
  });

  it('missingTokenRefused: a request without a token refused with anything but 401 (must on delete, a 404 included; should on the others)', () => {
    const f = expectFinding(errorExchange(deleteExchange({ requestHeaders: {} }), 404, {}), 'missingTokenRefused', 'AUTH-MISSING-TOKEN-401');
    expect(f.level).toBe('must');
    expect(findingMessage(f)).toContain('received 404 for a request without a valid token: the caller was not refused with 401');
    expect(findingMessage(f)).not.toContain('looked up');
    const other = expectFinding(
      errorExchange(getExchange(resourceServer(), 'rs_1', { requestHeaders: {} }), 403, {}),
      'missingTokenRefused',
      'AUTH-MISSING-TOKEN-401-OTHER',
    );
    expect(other.level).toBe('should');
    expect(
      findingsOf(errorExchange(deleteExchange({ requestHeaders: {} }), 401, { message: 'Missing authentication' })).filter(
        (x) => x.subject === 'implementation',
      ),
    ).toEqual([]);
    // Carried out: no refusal at all, so the 401 rule is broken too, beside AUTH-CREDENTIAL-REQUIRED, both as security findings.
    const carried = findingsOf(deleteExchange({ requestHeaders: {} })).filter((x) => x.subject === 'implementation');
    expect(carried.map((x) => [x.requirement, x.security !== undefined])).toEqual([
      ['AUTH-CREDENTIAL-REQUIRED', true],
      ['AUTH-MISSING-TOKEN-401', true],
    ]);
  });

  it('invalidSignatureRefused: must for delete, should for the others', () => {
    fc.assert(
      fc.property(fc.constantFrom(400, 403, 404, 500), (status) => {
        const del = expectFinding(
          errorExchange(deleteExchange({ tokenFacts: { signatureValid: false } }), status, {}),
          'invalidSignatureRefused',
          'AUTH-INVALID-SIGNATURE-401',
        );
        expect(del.level).toBe('must');
        const get = expectFinding(
          errorExchange(getExchange(resourceServer(), 'rs_1', { tokenFacts: { signatureValid: false } }), status, {}),
          'invalidSignatureRefused',
          'AUTH-INVALID-SIGNATURE-401-OTHER',
        );
        expect(get.level).toBe('should');
      }),
      runs,
    );
  });

  it('nonGlobalClientRefused: a non-global client that gets its delete', () => {
    const f = expectFinding(deleteExchange({ tokenFacts: { clientGlobal: false } }), 'nonGlobalClientRefused', 'AUTH-NON-GLOBAL-401');
    expect(f.security).toBe('the target carried out a DELETE for a client that is not global');
  });

  it('tokenRequestNamesAudience: client credentials without the /api/v2/ audience', () => {
    const token = (body: string, type = 'application/x-www-form-urlencoded') =>
      buildExchange({
        method: 'POST',
        url: 'https://tenant.example.com/oauth/token',
        requestHeaders: { 'content-type': type },
        requestBody: body,
        status: 200,
        responseBody: '{}',
        responseHeaders: { 'content-type': 'application/json' },
      });
    expectFinding(token('grant_type=client_credentials&client_id=a&client_secret=b'), 'tokenRequestNamesAudience', 'AUTH-TOKEN-AUDIENCE');
    expectFinding(
      token(JSON.stringify({ grant_type: 'client_credentials', audience: 'https://tenant.example.com/api/v2' }), 'application/json'),
      'tokenRequestNamesAudience',
      'AUTH-TOKEN-AUDIENCE',
    );
    expect(findingsOf(token('grant_type=client_credentials&audience=https%3A%2F%2Ftenant.example.com%2Fapi%2Fv2%2F'))).toEqual([]);
    expect(findingsOf(token('grant_type=client_credentials&audience=https%3A%2F%2Fapi.example.com%2Forders%2F'))).toEqual([]);
  });
});

describe('scope checks', () => {
  const withScopes = (scope: string) => ({ Authorization: `Bearer ${jwt(claims(scope))}` });

  it('tokenScopesAreWellFormed: malformed scopes (must) and scopes outside the catalog (should)', () => {
    expect(
      expectFinding(
        deleteExchange({ requestHeaders: withScopes('delete:token_exchange_profiles DeleteEverything') }),
        'tokenScopesAreWellFormed',
        'SCOPE-FORMAT',
      ).level,
    ).toBe('must');
    expect(
      expectFinding(
        deleteExchange({ requestHeaders: withScopes('delete:token_exchange_profiles read:starships') }),
        'tokenScopesAreWellFormed',
        'SCOPE-IN-CATALOG',
      ).level,
    ).toBe('should');
    expect(findingsOf(deleteExchange({ requestHeaders: withScopes('openid profile delete:token_exchange_profiles') }))).toEqual([]);
  });

  it('requiredScopeEnforced: a 2xx for a token without the operation scope', () => {
    const scopes = fc.subarray([
      'read:users',
      'update:users',
      'read:sessions',
      'delete:sessions',
      'create:token_exchange_profiles',
      'read:token_exchange_profiles',
    ]);
    fc.assert(
      fc.property(scopes, (granted) => {
        const scope = granted.join(' ');
        const del = expectFinding(deleteExchange({ requestHeaders: withScopes(scope) }), 'requiredScopeEnforced', 'SCOPE-DELETE-REQUIRED');
        expect(del.level).toBe('must');
        expect(del.security).toMatch(/^the target carried out a DELETE for a token without delete:token_exchange_profiles/);
        expect(
          expectFinding(
            updateExchange(undefined, undefined, { requestHeaders: { ...withScopes(scope), 'content-type': 'application/json' } }),
            'requiredScopeEnforced',
            'SCOPE-UPDATE-SESSION',
          ).level,
        ).toBe('should');
        expect(
          expectFinding(getExchange(undefined, undefined, { requestHeaders: withScopes(scope) }), 'requiredScopeEnforced', 'SCOPE-READ-RESOURCE-SERVER').level,
        ).toBe('should');
      }),
      runs,
    );
  });

  it('insufficientScopeNamesExpectedScope: a 403 that does not name delete:token_exchange_profiles', () => {
    fc.assert(
      fc.property(
        fc.string({ maxLength: 60 }).filter((s) => !s.includes('delete:token_exchange_profiles')),
        (message) => {
          expectFinding(
            errorExchange(deleteExchange({ requestHeaders: withScopes('read:users') }), 403, { statusCode: 403, message }),
            'insufficientScopeNamesExpectedScope',
            'SCOPE-DELETE-403',
          );
        },
      ),
      runs,
    );
  });
});

describe('delete checks', () => {
  it('successStatusIsDocumented: any 2xx other than 204 (must); other operations other than 200 (should)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 200, max: 299 }).filter((s) => s !== 204),
        (status) => {
          expect(expectFinding(deleteExchange({ status }), 'successStatusIsDocumented', 'TEP-DELETE-204').level).toBe('must');
        },
      ),
      runs,
    );
    expect(expectFinding(updateExchange(undefined, undefined, { status: 201 }), 'successStatusIsDocumented', 'SES-SUCCESS-200').level).toBe('should');
    expect(expectFinding(getExchange(undefined, undefined, { status: 203 }), 'successStatusIsDocumented', 'RS-SUCCESS-200').level).toBe('should');
  });

  it('noContentHasNoBody: a 204 with a body or a Content-Length', () => {
    expectFinding(deleteExchange({ responseBody: '{"deleted":true}' }), 'noContentHasNoBody', 'TEP-DELETE-NO-BODY');
    expectFinding(deleteExchange({ responseHeaders: { ...rateLimitHeaders(), 'content-length': '2' } }), 'noContentHasNoBody', 'TEP-DELETE-NO-BODY');
  });
});

describe('update session checks', () => {
  const metadataOf = (count: number, length: number) => Object.fromEntries(Array.from({ length: count }, (_, i) => [`k${i}`, 'v'.repeat(length)]));

  it('updateRequestIsJson: a PATCH not sent as application/json', () => {
    const f = expectFinding(
      updateExchange(undefined, undefined, { requestHeaders: { authorization: `Bearer ${jwt(claims())}`, 'content-type': 'text/plain' } }),
      'updateRequestIsJson',
      'SES-REQUEST-CONTENT-TYPE',
    );
    expect(f.subject).toBe('client');
  });

  it('updateRequestMatchesSchema: limits of the request are client findings naming the limit', () => {
    fc.assert(
      fc.property(fc.integer({ min: 26, max: 40 }), fc.integer({ min: 256, max: 400 }), (count, length) => {
        const tooMany = updateExchange({ session_metadata: metadataOf(count, 1) }, undefined, { status: 400, responseBody: '{"statusCode":400}' });
        expect(expectFinding(tooMany, 'updateRequestMatchesSchema', 'SES-METADATA-MAX-PROPERTIES').subject).toBe('client');
        const tooLong = updateExchange({ session_metadata: metadataOf(1, length) }, undefined, { status: 400, responseBody: '{"statusCode":400}' });
        expectFinding(tooLong, 'updateRequestMatchesSchema', 'SES-METADATA-VALUE-LENGTH');
      }),
      { numRuns: 20 },
    );
    expectFinding(
      updateExchange({ session_metadata: 'gold' }, undefined, { status: 400, responseBody: '{}' }),
      'updateRequestMatchesSchema',
      'SES-REQUEST-BODY',
    );
    expectFinding(
      updateExchange(undefined, undefined, { requestBody: '{"session_metadata":', status: 400, responseBody: '{}' }),
      'updateRequestMatchesSchema',
      'SES-REQUEST-BODY',
    );
  });

  it('a server that refuses a bad update earns no finding', () => {
    const refused = updateExchange({ session_metadata: metadataOf(26, 1) }, { statusCode: 400, message: 'Too many properties' }, { status: 400 });
    expect(findingsOf(refused).filter((f) => f.subject === 'implementation')).toEqual([]);
  });

  it('invalidUpdateRefused: a 2xx for a body that breaks the rules', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.integer({ min: 26, max: 30 }).map((n) => metadataOf(n, 1)),
          fc.integer({ min: 256, max: 300 }).map((n) => metadataOf(1, n)),
          fc.constant({ nested: { a: 'b' } }),
          fc.constant({ n: 42 }),
          fc.constant(['a']),
        ),
        (metadata) => {
          const f = expectFinding(updateExchange({ session_metadata: metadata }, session(null)), 'invalidUpdateRefused', 'SES-INVALID-UPDATE-REFUSED');
          expect(f.subject).toBe('implementation');
        },
      ),
      { numRuns: 30 },
    );
  });

  it('responseBodyMatchesSchema: each session constraint, traced to its requirement', () => {
    expectFinding(updateExchange({ session_metadata: null }, session(metadataOf(26, 1))), 'responseBodyMatchesSchema', 'SES-METADATA-MAX-PROPERTIES');
    expectFinding(updateExchange({ session_metadata: null }, session({ k: 'v'.repeat(256) })), 'responseBodyMatchesSchema', 'SES-METADATA-VALUE-LENGTH');
    expectFinding(updateExchange(undefined, { ...session(), created_at: 'yesterday' }), 'responseBodyMatchesSchema', 'SES-RESPONSE-SCHEMA');
    expectFinding(updateExchange(undefined, { ...session(), clients: [{ client_id: 7 }] }), 'responseBodyMatchesSchema', 'SES-RESPONSE-SCHEMA');
    expectFinding(
      updateExchange(undefined, { ...session(), authentication: { methods: [{ name: 'pwd', timestamp: 'soon', type: 'password' }] } }),
      'responseBodyMatchesSchema',
      'SES-RESPONSE-SCHEMA',
    );
    expectFinding(updateExchange(undefined, { ...session(), device: { last_ip: 10 } }), 'responseBodyMatchesSchema', 'SES-RESPONSE-SCHEMA');
    expectFinding(updateExchange(undefined, undefined, { responseBody: '' }), 'responseBodyMatchesSchema', 'SES-RESPONSE-SCHEMA');
  });

  it('sessionMetadataCleared: null or {} that leaves metadata behind', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(null, {}),
        fc.dictionary(fc.string({ minLength: 1, maxLength: 8 }), fc.string({ maxLength: 20 }), { minKeys: 1, maxKeys: 5 }),
        (sent, left) => {
          expectFinding(updateExchange({ session_metadata: sent }, session(left)), 'sessionMetadataCleared', 'SES-METADATA-CLEARED');
        },
      ),
      runs,
    );
  });

  it('sessionMetadataEchoed: metadata that comes back different (should)', () => {
    const f = expectFinding(
      updateExchange({ session_metadata: { plan: 'gold' } }, session({ plan: 'gold', old: 'kept' })),
      'sessionMetadataEchoed',
      'SES-METADATA-ECHOED',
    );
    expect(f.level).toBe('should');
  });

  it('sessionIdMatchesPath: another session returned', () => {
    expectFinding(updateExchange(undefined, session({ plan: 'gold' }, 'sess_2')), 'sessionIdMatchesPath', 'SES-ID-MATCHES');
  });
});

describe('resource server checks', () => {
  const cases: Array<[string, Record<string, unknown>, string]> = [
    ['signing_alg outside the enum', { signing_alg: 'HS512' }, 'RS-SIGNING-ALG'],
    ['token_dialect outside the enum', { token_dialect: 'opaque' }, 'RS-TOKEN-DIALECT'],
    [
      'token_encryption.format',
      { token_encryption: { format: 'jwe', encryption_key: { pem: '-----BEGIN PUBLIC KEY-----', name: 'k', kid: '1' } } },
      'RS-TOKEN-ENCRYPTION',
    ],
    ['name with <', { name: 'Orders <API>' }, 'RS-NAME-CHARACTERS'],
    ['signing_secret of 15 characters', { signing_secret: 'x'.repeat(15) }, 'RS-SIGNING-SECRET-LENGTH'],
    ['is_system as a string', { is_system: 'false' }, 'RS-RESPONSE-SCHEMA'],
    ['token_lifetime as a string', { token_lifetime: '86400' }, 'RS-RESPONSE-SCHEMA'],
    ['scopes without value', { scopes: [{ value: 1, description: 'x' }] }, 'RS-RESPONSE-SCHEMA'],
    ['proof_of_possession.required as a string', { proof_of_possession: { required: 'yes' } }, 'RS-RESPONSE-SCHEMA'],
  ];
  it.each(cases)('responseBodyMatchesSchema: %s', (_name, override, requirementId) => {
    expectFinding(getExchange(resourceServer(override)), 'responseBodyMatchesSchema', requirementId);
  });

  it('responseBodyMatchesSchema: a too-short signing_secret is reported by its length, never shown', () => {
    const f = expectFinding(getExchange(resourceServer({ signing_secret: 'hunter2-secret' })), 'responseBodyMatchesSchema', 'RS-SIGNING-SECRET-LENGTH');
    expect(findingMessage(f)).toContain('a secret of 14 characters (redacted)');
    expect(findingMessage(f)).not.toContain('hunter2');
  });

  it('responseBodyMatchesSchema: any signing_alg outside the four is caught', () => {
    fc.assert(
      fc.property(
        fc.string().filter((s) => !['HS256', 'RS256', 'RS512', 'PS256'].includes(s)),
        (alg) => {
          expectFinding(getExchange(resourceServer({ signing_alg: alg })), 'responseBodyMatchesSchema', 'RS-SIGNING-ALG');
        },
      ),
      runs,
    );
  });

  it('tokenLifetimeForWebWithinTokenLifetime: web lifetime above the lifetime', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 1_000_000 }), fc.integer({ min: 1, max: 1000 }), (lifetime, extra) => {
        expectFinding(
          getExchange(resourceServer({ token_lifetime: lifetime, token_lifetime_for_web: lifetime + extra })),
          'tokenLifetimeForWebWithinTokenLifetime',
          'RS-TOKEN-LIFETIME-FOR-WEB',
        );
        expect(findingsOf(getExchange(resourceServer({ token_lifetime: lifetime, token_lifetime_for_web: lifetime })))).toEqual([]);
      }),
      runs,
    );
  });

  it('resourceServerMatchesLookup: another server returned for an id or an audience', () => {
    expectFinding(getExchange(resourceServer(), 'rs_2'), 'resourceServerMatchesLookup', 'RS-LOOKUP-BY-ID-OR-AUDIENCE');
    expectFinding(
      getExchange(resourceServer(), encodeURIComponent('https://api.example.com/invoices/')),
      'resourceServerMatchesLookup',
      'RS-LOOKUP-BY-ID-OR-AUDIENCE',
    );
  });

  it('includeFieldsIsBoolean: include_fields that is not a boolean is a client finding', () => {
    fc.assert(
      fc.property(
        fc.string({ minLength: 1, maxLength: 10 }).filter((s) => s !== 'true' && s !== 'false'),
        (value) => {
          const f = expectFinding(
            getExchange(resourceServer(), `rs_1?include_fields=${encodeURIComponent(value)}`),
            'includeFieldsIsBoolean',
            'RS-INCLUDE-FIELDS-BOOLEAN',
          );
          expect(f.subject).toBe('client');
        },
      ),
      runs,
    );
  });

  it('rateLimitHeadersOn429: each missing header is named', () => {
    fc.assert(
      fc.property(fc.subarray(['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset'], { minLength: 1 }), (drop) => {
        const headers = rateLimitHeaders(0);
        for (const name of drop) delete headers[name];
        const base = errorExchange(deleteExchange(), 429, { statusCode: 429 });
        const exchange = { ...base, response: { ...base.response!, headers: { 'content-type': 'application/json', ...headers } } };
        const f = expectFinding(exchange, 'rateLimitHeadersOn429', 'RL-429-HEADERS');
        // Each missing header is named as the document writes it.
        for (const name of drop)
          expect(findingMessage(f)).toContain(
            (
              {
                'x-ratelimit-limit': 'X-RateLimit-Limit',
                'x-ratelimit-remaining': 'X-RateLimit-Remaining',
                'x-ratelimit-reset': 'X-RateLimit-Reset',
              } as Record<string, string>
            )[name],
          );
        // An empty value carries nothing either.
        const blank = {
          ...exchange,
          response: { ...exchange.response, headers: { ...exchange.response.headers, ...Object.fromEntries(drop.map((n) => [n, ' '])) } },
        };
        expectFinding(blank, 'rateLimitHeadersOn429', 'RL-429-HEADERS');
      }),
      runs,
    );
  });

  it('rateLimitHeadersWellFormed: not integers, Remaining above Limit, Reset not epoch seconds, 429 with quota left', () => {
    expectFinding(deleteExchange({ responseHeaders: rateLimitHeaders(99, 100, '30s') }), 'rateLimitHeadersWellFormed', 'RL-HEADER-VALUES');
    expectFinding(deleteExchange({ responseHeaders: rateLimitHeaders(101, 100) }), 'rateLimitHeadersWellFormed', 'RL-HEADER-VALUES');
    expectFinding(deleteExchange({ responseHeaders: rateLimitHeaders(99, 100, '30') }), 'rateLimitHeadersWellFormed', 'RL-HEADER-VALUES');
    expectFinding(errorExchange(deleteExchange(), 429, {}, rateLimitHeaders(5)), 'rateLimitHeadersWellFormed', 'RL-HEADER-VALUES');
  });

  it('rateLimitSequenceIsConsistent: Remaining going up within a window, between non-overlapping requests', () => {
    const at = (offsetMs: number, remaining: number, reset = RESET) =>
      deleteExchange({
        startedAt: new Date(Date.parse(STARTED_AT) + offsetMs).toISOString(),
        durationMs: 10,
        responseHeaders: rateLimitHeaders(remaining, 100, reset),
      });
    const tracker = new RateLimitTracker();
    expect(findingsOf(at(0, 50), tracker)).toEqual([]);
    expect(findingsOf(at(20, 49), tracker)).toEqual([]);
    const f = findingsOf(at(40, 60), tracker).find((x) => x.requirement === 'RL-SEQUENCE');
    expect(f?.check).toBe('rateLimitSequenceIsConsistent');
    // A new window (later Reset) may start full again.
    expect(findingsOf(at(60, 99, String(Number(RESET) + 60)), tracker)).toEqual([]);
    // Overlapping requests are not compared: they may have been counted in either order.
    const overlapping = new RateLimitTracker();
    findingsOf(deleteExchange({ durationMs: 100, responseHeaders: rateLimitHeaders(40) }), overlapping);
    expect(findingsOf(deleteExchange({ durationMs: 10, responseHeaders: rateLimitHeaders(41) }), overlapping)).toEqual([]);
  });

  it('rateLimitSequenceIsConsistent: never fires on a generated count-down', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 3 }), { minLength: 2, maxLength: 30 }), (steps) => {
        const tracker = new RateLimitTracker();
        let remaining = 100;
        steps.forEach((step, i) => {
          remaining = Math.max(0, remaining - step);
          const exchange = deleteExchange({
            startedAt: new Date(Date.parse(STARTED_AT) + i * 20).toISOString(),
            durationMs: 10,
            responseHeaders: rateLimitHeaders(remaining),
          });
          expect(findingsOf(exchange, tracker)).toEqual([]);
        });
      }),
      runs,
    );
  });
});

describe('operation matching', () => {
  it('ids are decoded once; with no base path configured, any prefix ending in /api/v2 is accepted, and a path at the root is outside', () => {
    expect(judgeExchange(getExchange(resourceServer(), 'rs%2F1')).operation?.id).toBe('rs/1');
    const bare = buildExchange({ method: 'GET', url: '/resource-servers/rs_1' });
    expect(judgeExchange(bare)).toMatchObject({ findings: [], notCovered: 'outside the API base path /api/v2 (not an operation of the interface)' });
    expect(judgeExchange(bare).operation).toBeUndefined();
    expect(judgeExchange(bare, undefined, new ApiLayout({ base: apiBaseAt(['']) })).operation).toMatchObject({
      operation: 'getResourceServer',
      id: 'rs_1',
      prefix: '',
    });
    const proxied = buildExchange({ method: 'PATCH', url: `http://127.0.0.1:9/tenant-a/api/v2/sessions/s?x=1` });
    expect(judgeExchange(proxied).operation).toMatchObject({ operation: 'updateSession', id: 's', prefix: '/tenant-a/api/v2', query: { x: '1' } });
    expect(BASE).toContain('/api/v2');
  });
});

describe('building exchanges', () => {
  it('header names in any case are joined, pseudo-headers and nameless entries left out', () => {
    const headers = [
      { name: ':path', value: '/x' },
      { name: 'X-A', value: '1' },
      { name: 'x-a', value: '2' },
      { name: 'X-N', value: 7 },
      { value: 'no name' },
    ] as unknown as Array<{ name: string; value: string }>;
    expect(buildExchange({ method: 'get', url: '/x', requestHeaders: headers }).request.headers).toEqual({ 'x-a': '1, 2', 'x-n': '7' });
    expect(buildExchange({ method: 'get', url: '/x', requestHeaders: { 'X-A': ['1', '2'], ':authority': 'h', 'x-u': undefined } }).request.headers).toEqual({
      'x-a': '1, 2',
    });
  });

  it('exchanges with the same token share no per-exchange facts, and read their scopes alike', () => {
    const authorization = `Bearer ${jwt(claims('delete:token_exchange_profiles read:users'))}`;
    const first = deleteExchange({ requestHeaders: { Authorization: authorization } });
    first.token.clientGlobal = false; // a driver's fact about this exchange only
    // The header as a different string object, as every parsed recording line gives it.
    const second = buildExchange({ method: 'DELETE', url: first.request.url, requestHeaders: { authorization: ` ${authorization}`.slice(1) } });
    expect(second.token).toMatchObject({ headerPresent: true, wellFormed: true, claims: first.token.claims });
    expect(second.token.clientGlobal).toBeUndefined();
    // Scopes outside the catalog are reported for every exchange that carries them, not only the first.
    for (const exchange of [first, second]) expect(findingsOf(exchange).filter((f) => f.requirement === 'SCOPE-IN-CATALOG')).toEqual([]);
    const odd = `Bearer ${jwt(claims('delete:token_exchange_profiles read:nothing_here'))}`;
    for (let i = 0; i < 3; i++) expectFinding(deleteExchange({ requestHeaders: { Authorization: odd } }), 'tokenScopesAreWellFormed', 'SCOPE-IN-CATALOG');
  });
});

describe('reading X-RateLimit-* values', () => {
  it('accepts non-negative integers of up to 15 digits (surrounding spaces allowed) and nothing else', async () => {
    const { nonNegativeInteger } = await import('../rules/rate-limit-tracker.ts');
    for (const [text, value] of [
      ['0', 0],
      ['42', 42],
      [' 7 ', 7],
      ['000123', 123],
      ['999999999999999', 999999999999999],
    ] as const)
      expect(nonNegativeInteger(text), text).toBe(value);
    for (const text of ['', ' ', '-1', '1.5', '1e3', '0x10', '1 2', '١٢', '9999999999999999', 'NaN']) expect(nonNegativeInteger(text), text).toBeUndefined();
    fc.assert(
      fc.property(fc.string(), (text) => {
        const expected = /^\s*\d{1,15}\s*$/.test(text) ? Number(text) : undefined;
        expect(nonNegativeInteger(text)).toBe(expected);
      }),
      runs,
    );
  });
});

describe('bodies nested too deep to judge', () => {
  const nested = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);

  it('an exchange with a body nested deeper than 64 levels is not judged, and says why', () => {
    const response = judgeExchange(getExchange(undefined, 'rs_1', { responseBody: nested(100_000) }));
    expect(response).toMatchObject({
      operation: { operation: 'getResourceServer' },
      findings: [],
      examined: [],
      notJudged: 'response body nested deeper than 64 levels',
    });
    const request = judgeExchange(updateExchange(undefined, session(), { requestBody: `{"session_metadata":${nested(65)}}` }));
    expect(request.notJudged).toBe('request body nested deeper than 64 levels');
  });

  it('a bearer token whose claims nest deeper than 64 levels is not judged either (its claims are quoted in findings)', () => {
    const b64 = (text: string) => Buffer.from(text).toString('base64url');
    const token = `${b64('{"alg":"RS256","typ":"JWT"}')}.${b64(`{"scope":"read:resource_servers","aud":${nested(100_000)}}`)}.c2ln`;
    const judgement = judgeExchange(getExchange(undefined, 'rs_1', { requestHeaders: { Authorization: `Bearer ${token}` } }));
    expect(judgement).toMatchObject({ findings: [], notJudged: "the bearer token's claims nested deeper than 64 levels" });
  });

  it('64 levels are judged as usual, and brackets inside strings do not count', () => {
    const atLimit = judgeExchange(getExchange(undefined, 'rs_1', { responseBody: nested(64) }));
    expect(atLimit.notJudged).toBeUndefined();
    expect(atLimit.findings.map((f) => f.requirement)).toContain('RS-RESPONSE-SCHEMA');
    const quoted = judgeExchange(getExchange(resourceServer({ name: '['.repeat(200) + '"\\'.repeat(3) }), 'rs_1'));
    expect(quoted).toMatchObject({ findings: [] });
    expect(quoted.notJudged).toBeUndefined();
  });
});
