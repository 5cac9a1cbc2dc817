// The reference conforms: every operation through success and every error path, each exchange
// judged by the rule engine. No finding against the implementation (a step may name the `should`
// ones it expects, none does today); findings against the client show up where the
// test sent a bad request on purpose, which proves the traffic really was judged.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { judgeExchange, RateLimitTracker } from '../rules/index.ts';
import { findingMessage } from '../rules/message.ts';
import { startReference, type RunningReference } from '../reference/index.ts';
import { decodeJwt, type JWK } from 'jose';
import { keyConfusionTokens, unsignedToken, withScopeAdded } from '../suites/tokens.ts';
import { bearer, call, forged, json, metadata, paths, tokenFor, type Answer, type Call } from './helpers/reference.ts';

interface Step {
  name: string;
  request: () => Call;
  status: number;
  /** Requirement ids of the implementation findings this step must produce (default none). */
  implementation?: string[];
  /** Requirement ids of client findings this step must produce (others may appear too). */
  client?: string[];
  check?: (answer: Answer) => void;
}

const DOCUMENTED_RESOURCE_SERVER_FIELDS = [
  'id',
  'name',
  'is_system',
  'identifier',
  'scopes',
  'signing_alg',
  'allow_offline_access',
  'allow_online_access',
  'allow_online_access_with_ephemeral_sessions',
  'skip_consent_for_verifiable_first_party_clients',
  'token_lifetime',
  'token_lifetime_for_web',
  'enforce_policies',
  'token_dialect',
  'token_encryption',
  'authorization_details',
  'proof_of_possession',
  'subject_type_authorization',
  'authorization_policy',
  'client_id',
];
const DOCUMENTED_SESSION_FIELDS = [
  'id',
  'user_id',
  'created_at',
  'updated_at',
  'authenticated_at',
  'idle_expires_at',
  'expires_at',
  'last_interacted_at',
  'device',
  'clients',
  'authentication',
  'cookie',
  'session_metadata',
];

const clock = { offsetMs: 0 };
let ref: RunningReference;
const tokens = {
  full: '',
  noScope: '',
  nonGlobal: '',
  forged: '',
  expired: '',
  sessionsOnly: '',
  unsigned: '',
  tampered: '',
  keyConfusion: '',
  otherAudience: '',
};
const tracker = new RateLimitTracker();

beforeAll(async () => {
  ref = await startReference({ now: () => Date.now() + clock.offsetMs });
  tokens.full = await tokenFor(ref, 'full');
  tokens.noScope = await tokenFor(ref, 'no_scope');
  tokens.nonGlobal = await tokenFor(ref, 'non_global');
  tokens.sessionsOnly = await tokenFor(ref, 'full', { scope: 'update:sessions' });
  tokens.otherAudience = await tokenFor(ref, 'full', { audience: ref.otherAudience });
  tokens.forged = await forged(tokens.full);
  tokens.unsigned = unsignedToken(tokens.full);
  tokens.tampered = withScopeAdded(tokens.noScope, 'delete:token_exchange_profiles');
  const jwks = (await (await fetch(`${ref.origin}/.well-known/jwks.json`)).json()) as { keys: JWK[] };
  tokens.keyConfusion = (await keyConfusionTokens(tokens.full, jwks))[0]!;
  clock.offsetMs = -2 * 86_400_000; // issued two days ago: expired now
  tokens.expired = await tokenFor(ref, 'full');
  clock.offsetMs = 0;
});

afterAll(async () => {
  await ref?.close();
});

function runSteps(steps: Step[]): void {
  for (const step of steps) {
    it(`${step.name} → ${step.status}`, async () => {
      const answer = await call(ref, step.request());
      expect(answer.status, answer.text).toBe(step.status);
      const { operation, findings } = judgeExchange(answer.exchange, tracker);
      expect(operation, 'the exchange is one the document covers').toBeDefined();
      const implementation = findings.filter((f) => f.subject === 'implementation');
      expect(implementation.map((f) => `${f.requirement}: ${findingMessage(f)}`)).toEqual(
        (step.implementation ?? []).map((id) => expect.stringMatching(new RegExp(`^${id}: `))),
      );
      const client = new Set(findings.filter((f) => f.subject === 'client').map((f) => f.requirement));
      for (const id of step.client ?? []) expect(client, `client finding ${id}`).toContain(id);
      step.check?.(answer);
    });
  }
}

const errorShape = (status: number, errorCode?: string) => (answer: Answer) => {
  expect(answer.headers.get('content-type')).toMatch(/^application\/json/);
  expect(answer.json).toMatchObject({ statusCode: status, error: expect.any(String), message: expect.any(String), errorCode: errorCode ?? expect.any(String) });
};

const form = (params: Record<string, string>) => new URLSearchParams(params).toString();
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

describe('token endpoint (client credentials)', () => {
  const full = () => ({
    grant_type: 'client_credentials',
    client_id: ref.clients.full.client_id,
    client_secret: ref.clients.full.client_secret,
    audience: ref.audience,
  });
  const oauthError = (error: string) => (a: Answer) => expect(a.json).toMatchObject({ error, error_description: expect.any(String) });
  runSteps([
    {
      name: 'form body, path with trailing slash',
      request: () => ({ method: 'POST', path: '/oauth/token/', headers: FORM, body: form(full()) }),
      status: 200,
      check: (a) => {
        expect(a.json).toMatchObject({
          access_token: expect.any(String),
          token_type: 'Bearer',
          expires_in: 86400,
          scope: 'delete:token_exchange_profiles update:sessions read:resource_servers',
        });
        expect(a.headers.get('cache-control')).toBe('no-store');
      },
    },
    {
      name: 'JSON body, path without trailing slash',
      request: () => ({ method: 'POST', path: '/oauth/token', headers: { 'content-type': 'application/json' }, body: JSON.stringify(full()) }),
      status: 200,
    },
    {
      name: 'client authentication with HTTP Basic',
      request: () => {
        const { client_id, client_secret, ...rest } = full();
        return {
          method: 'POST',
          path: '/oauth/token',
          headers: { ...FORM, authorization: `Basic ${Buffer.from(`${client_id}:${client_secret}`).toString('base64')}` },
          body: form(rest),
        };
      },
      status: 200,
    },
    {
      name: 'scope narrowed to a granted subset',
      request: () => ({ method: 'POST', path: '/oauth/token', headers: FORM, body: form({ ...full(), scope: 'read:resource_servers' }) }),
      status: 200,
      check: (a) => expect(a.json).toMatchObject({ scope: 'read:resource_servers' }),
    },
    {
      name: 'scope not granted',
      request: () => ({ method: 'POST', path: '/oauth/token', headers: FORM, body: form({ ...full(), scope: 'delete:users' }) }),
      status: 403,
      check: oauthError('access_denied'),
    },
    {
      name: 'wrong client secret',
      request: () => ({ method: 'POST', path: '/oauth/token', headers: FORM, body: form({ ...full(), client_secret: 'wrong' }) }),
      status: 401,
      check: oauthError('invalid_client'),
    },
    {
      name: 'unknown client',
      request: () => ({ method: 'POST', path: '/oauth/token', headers: FORM, body: form({ ...full(), client_id: 'nobody' }) }),
      status: 401,
      check: oauthError('invalid_client'),
    },
    {
      name: 'no audience',
      request: () => {
        const { audience: _, ...rest } = full();
        return { method: 'POST', path: '/oauth/token', headers: FORM, body: form(rest) };
      },
      status: 400,
      client: ['AUTH-TOKEN-AUDIENCE'],
      check: oauthError('invalid_request'),
    },
    {
      name: 'audience of no API of the tenant',
      request: () => ({ method: 'POST', path: '/oauth/token', headers: FORM, body: form({ ...full(), audience: 'https://nowhere.example.com/api' }) }),
      status: 403,
      check: oauthError('access_denied'),
    },
    // Another API of the tenant (a seeded resource server): its token is issued, for that audience (credentials.other_audience).
    {
      name: 'audience of another API of the tenant',
      request: () => ({ method: 'POST', path: '/oauth/token', headers: FORM, body: form({ ...full(), audience: 'https://orders.example.com/api' }) }),
      status: 200,
      check: (a) => expect(decodeJwt((a.json as { access_token: string }).access_token).aud).toBe('https://orders.example.com/api'),
    },
    {
      name: 'another grant type',
      request: () => ({ method: 'POST', path: '/oauth/token', headers: FORM, body: form({ ...full(), grant_type: 'password' }) }),
      status: 400,
      check: oauthError('unsupported_grant_type'),
    },
    {
      name: 'invalid JSON',
      request: () => ({ method: 'POST', path: '/oauth/token', headers: { 'content-type': 'application/json' }, body: '{"grant_type":' }),
      status: 400,
      check: oauthError('invalid_request'),
    },
    {
      name: 'unsupported content type',
      request: () => ({ method: 'POST', path: '/oauth/token', headers: { 'content-type': 'text/plain' }, body: form(full()) }),
      status: 400,
      check: oauthError('invalid_request'),
    },
  ]);
});

describe('DELETE /token-exchange-profiles/{id}', () => {
  const tep = (i: number) => ref.fixtures.token_exchange_profiles[i]!;
  const del = (id: string, token?: string, tokenFacts?: Call['tokenFacts']): Call => ({
    method: 'DELETE',
    path: paths.tokenExchangeProfile(id),
    headers: token === undefined ? {} : bearer(token),
    ...(tokenFacts ? { tokenFacts } : {}),
  });
  runSteps([
    {
      name: 'without a token',
      request: () => del(tep(0)),
      status: 401,
      client: ['AUTH-BEARER-HEADER'],
      check: (a) => (errorShape(401)(a), expect(a.headers.get('www-authenticate')).toBe('Bearer')),
    },
    {
      name: 'with a Basic credential',
      request: () => ({ ...del(tep(0)), headers: { authorization: 'Basic dXNlcjpwYXNz' } }),
      status: 401,
      client: ['AUTH-BEARER-HEADER'],
      check: errorShape(401),
    },
    {
      name: 'with a bearer token that is not a JWT',
      request: () => del(tep(0), 'opaque-token'),
      status: 401,
      client: ['AUTH-TOKEN-IS-JWT'],
      check: errorShape(401, 'invalid_token'),
    },
    {
      name: 'with an invalid signature',
      request: () => del(tep(0), tokens.forged, { signatureValid: false }),
      status: 401,
      check: (a) => (errorShape(401, 'invalid_token')(a), expect(a.json).toMatchObject({ message: expect.stringMatching(/invalid signature/i) })),
    },
    {
      name: 'with an expired token',
      request: () => del(tep(0), tokens.expired),
      status: 401,
      check: (a) => (errorShape(401, 'invalid_token')(a), expect(a.json).toMatchObject({ message: expect.stringMatching(/expired/i) })),
    },
    {
      name: 'with the expired token the reference hands to run',
      request: () => del(tep(0), ref.expiredToken),
      status: 401,
      check: (a) => expect(a.json).toMatchObject({ message: expect.stringMatching(/expired/i) }),
    },
    {
      name: 'with a token the tenant issued for another of its APIs',
      request: () => del(tep(0), tokens.otherAudience),
      status: 401,
      check: (a) => expect(a.json).toMatchObject({ message: 'Bad audience' }),
    },
    {
      name: 'with the not-yet-valid token the reference hands to run',
      request: () => del(tep(0), ref.notYetValidToken),
      status: 401,
      check: (a) => expect(a.json).toMatchObject({ message: 'Invalid token claim: nbf' }),
    },
    // Refused before anything is looked up: an id that never existed gets 401 too, never 404.
    { name: 'without a token, an id that never existed', request: () => del('tep_never_existed'), status: 401, client: ['AUTH-BEARER-HEADER'] },
    {
      name: 'with "Bearer" and nothing after it',
      request: () => ({ ...del(tep(0)), headers: { authorization: 'Bearer' } }),
      status: 401,
      client: ['AUTH-BEARER-HEADER'],
    },
    {
      name: "with alg none and the full client's claims",
      request: () => del(tep(0), tokens.unsigned, { signatureValid: false }),
      status: 401,
      check: (a) => expect(a.json).toMatchObject({ message: expect.stringMatching(/algorithm/i) }),
    },
    {
      name: 'with the no_scope token, scope added, signature kept',
      request: () => del(tep(0), tokens.tampered, { signatureValid: false }),
      status: 401,
      check: (a) => expect(a.json).toMatchObject({ message: expect.stringMatching(/invalid signature/i) }),
    },
    {
      name: 'with HS256 signed with the public key from the JWKS',
      request: () => del(tep(0), tokens.keyConfusion, { signatureValid: false }),
      status: 401,
      check: (a) => expect(a.json).toMatchObject({ message: expect.stringMatching(/algorithm/i) }),
    },
    {
      name: 'with lowercase "bearer" and a token signed by another key',
      request: () => ({ ...del(tep(0), undefined, { signatureValid: false }), headers: { authorization: `bearer ${tokens.forged}` } }),
      status: 401,
    },
    // The scheme is case-insensitive (RFC 7235 §2.1): lowercase "bearer" and a valid token is served.
    {
      name: 'with lowercase "bearer" and the full client\'s token, an id that never existed',
      request: () => ({ ...del('tep_never_existed'), headers: { authorization: `bearer ${tokens.full}` } }),
      status: 204,
    },
    {
      name: 'by a client that is not global',
      request: () => del(tep(0), tokens.nonGlobal, { clientGlobal: false }),
      status: 401,
      check: (a) => (errorShape(401, 'client_not_global')(a), expect(a.json).toMatchObject({ message: 'Client is not global.' })),
    },
    {
      name: 'by a global client without delete:token_exchange_profiles',
      request: () => del(tep(0), tokens.noScope),
      status: 403,
      check: (a) => (
        errorShape(403, 'insufficient_scope')(a), expect(a.json).toMatchObject({ message: expect.stringContaining('delete:token_exchange_profiles') })
      ),
    },
    { name: 'by the full client whose token was narrowed to update:sessions', request: () => del(tep(0), tokens.sessionsOnly), status: 403 },
    {
      name: 'by the full client',
      request: () => del(tep(0), tokens.full),
      status: 204,
      check: (a) => {
        expect(a.text).toBe('');
        expect(a.headers.get('content-type')).toBeNull();
        for (const h of ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset']) expect(a.headers.get(h)).toMatch(/^\d+$/);
      },
    },
    { name: 'the same profile again (idempotent)', request: () => del(tep(0), tokens.full), status: 204 },
    { name: 'an id that never existed', request: () => del('tep_never_existed', tokens.full), status: 204 },
  ]);
});

describe('PATCH /sessions/{id}', () => {
  const sid = (i: number) => ref.fixtures.sessions[i]!;
  const patch = (id: string, body: string, headers: Record<string, string> = json(tokens.full)): Call => ({
    method: 'PATCH',
    path: paths.session(id),
    headers,
    body,
  });
  const sent = (value: unknown) => JSON.stringify({ session_metadata: value });
  const returnsMetadata = (expected: unknown) => (a: Answer) => {
    expect(Object.keys(a.json as object).sort()).toEqual([...DOCUMENTED_SESSION_FIELDS].sort());
    expect((a.json as { session_metadata: unknown }).session_metadata).toEqual(expected);
  };
  runSteps([
    { name: 'replace the metadata', request: () => patch(sid(0), sent({ plan: 'silver' })), status: 200, check: returnsMetadata({ plan: 'silver' }) },
    {
      name: '25 properties of 255 characters (the limits)',
      request: () => patch(sid(0), sent(metadata(25, 255))),
      status: 200,
      check: returnsMetadata(metadata(25, 255)),
    },
    {
      name: '255 characters outside the BMP',
      request: () => patch(sid(0), sent({ emoji: '😀'.repeat(255), kanji: '会話' })),
      status: 200,
      check: returnsMetadata({ emoji: '😀'.repeat(255), kanji: '会話' }),
    },
    { name: 'null removes all metadata', request: () => patch(sid(0), sent(null)), status: 200, check: returnsMetadata(null) },
    { name: 'set again', request: () => patch(sid(0), sent({ a: '1' })), status: 200 },
    { name: '{} removes all metadata', request: () => patch(sid(0), sent({})), status: 200, check: returnsMetadata(null) },
    { name: 'a session that had none', request: () => patch(sid(1), sent({ first: 'yes' })), status: 200, check: returnsMetadata({ first: 'yes' }) },
    {
      name: 'by a client that is not global (only the delete requires one)',
      request: () => patch(sid(2), sent({ ticket: 'SUP-1' }), json(tokens.nonGlobal)),
      status: 200,
    },
    {
      name: '26 properties',
      request: () => patch(sid(0), sent(metadata(26))),
      status: 400,
      client: ['SES-METADATA-MAX-PROPERTIES'],
      check: errorShape(400, 'invalid_body'),
    },
    {
      name: 'a value of 256 characters',
      request: () => patch(sid(0), sent({ long: 'x'.repeat(256) })),
      status: 400,
      client: ['SES-METADATA-VALUE-LENGTH'],
      check: errorShape(400, 'invalid_body'),
    },
    { name: 'a value that is not a string', request: () => patch(sid(0), sent({ count: 3 })), status: 400, check: errorShape(400, 'invalid_body') },
    { name: 'metadata that is an array', request: () => patch(sid(0), sent(['a'])), status: 400, check: errorShape(400, 'invalid_body') },
    { name: 'a body that is not an object', request: () => patch(sid(0), '"plan"'), status: 400, check: errorShape(400, 'invalid_body') },
    {
      name: 'another property beside session_metadata',
      request: () => patch(sid(0), JSON.stringify({ session_metadata: null, user_id: 'x' })),
      status: 400,
      check: errorShape(400, 'invalid_body'),
    },
    { name: 'no session_metadata', request: () => patch(sid(0), '{}'), status: 400, check: errorShape(400, 'invalid_body') },
    {
      name: 'invalid JSON',
      request: () => patch(sid(0), '{"session_metadata": {'),
      status: 400,
      client: ['SES-REQUEST-BODY'],
      check: errorShape(400, 'invalid_json'),
    },
    { name: 'an empty body', request: () => patch(sid(0), ''), status: 400, client: ['SES-REQUEST-BODY'], check: errorShape(400, 'invalid_body') },
    {
      name: 'Content-Type text/plain',
      request: () => patch(sid(0), sent(null), { ...bearer(tokens.full), 'content-type': 'text/plain' }),
      status: 400,
      client: ['SES-REQUEST-CONTENT-TYPE'],
      check: errorShape(400, 'invalid_content_type'),
    },
    { name: 'no Content-Type', request: () => patch(sid(0), sent(null), bearer(tokens.full)), status: 400, check: errorShape(400, 'invalid_content_type') },
    { name: 'an unknown session', request: () => patch('sess_unknown', sent(null)), status: 404, check: errorShape(404, 'inexistent_session') },
    { name: 'an id with characters outside ASCII', request: () => patch('會話-ß-😀', sent(null)), status: 404, check: errorShape(404) },
    { name: 'an id with an encoded slash', request: () => patch('a/b', sent(null)), status: 404, check: errorShape(404) },
    { name: 'an id of 10 000 characters', request: () => patch('s'.repeat(10_000), sent(null)), status: 404, check: errorShape(404) },
    {
      name: 'without a token',
      request: () => patch(sid(0), sent(null), { 'content-type': 'application/json' }),
      status: 401,
      client: ['AUTH-BEARER-HEADER'],
      check: errorShape(401),
    },
    {
      name: 'with an invalid signature',
      request: () => ({ ...patch(sid(0), sent(null), json(tokens.forged)), tokenFacts: { signatureValid: false } }),
      status: 401,
      check: errorShape(401, 'invalid_token'),
    },
    { name: 'with an expired token', request: () => patch(sid(0), sent(null), json(tokens.expired)), status: 401, check: errorShape(401, 'invalid_token') },
    {
      name: 'a body larger than 1 MiB',
      request: () => patch(sid(0), 'x'.repeat(1024 * 1024 + 1)),
      status: 413,
      // The document leaves the error codes of update session open: a 413 is one of them.
      check: (a) => (errorShape(413, 'payload_too_large')(a), expect(a.headers.get('connection')).toBe('close')),
    },
    {
      name: 'without update:sessions',
      request: () => patch(sid(0), sent(null), json(tokens.noScope)),
      status: 403,
      check: (a) => (errorShape(403, 'insufficient_scope')(a), expect(a.json).toMatchObject({ message: expect.stringContaining('update:sessions') })),
    },
  ]);
});

describe('GET /resource-servers/{id}', () => {
  const rs = (i: number) => ref.fixtures.resource_servers[i]!;
  const get = (id: string, query = '', headers: Record<string, string> = bearer(tokens.full)): Call => ({
    method: 'GET',
    path: paths.resourceServer(id, query),
    headers,
  });
  const isServer = (id: () => string) => (a: Answer) => expect(a.json).toMatchObject({ id: id() });
  const keys = (expected: string[]) => (a: Answer) => expect(Object.keys(a.json as object).sort()).toEqual([...expected].sort());
  runSteps([
    {
      name: 'the system API by id',
      request: () => get(rs(0)),
      status: 200,
      check: (a) => (keys(DOCUMENTED_RESOURCE_SERVER_FIELDS)(a), expect(a.json).toMatchObject({ is_system: true, identifier: ref.audience })),
    },
    {
      name: 'the HS256 API by id',
      request: () => get(rs(1)),
      status: 200,
      check: (a) => (keys([...DOCUMENTED_RESOURCE_SERVER_FIELDS, 'signing_secret'])(a), expect(a.json).toMatchObject({ signing_alg: 'HS256' })),
    },
    {
      name: 'the API with token encryption by id',
      request: () => get(rs(2)),
      status: 200,
      check: (a) =>
        expect(a.json).toMatchObject({
          token_encryption: { format: 'compact-nested-jwe', encryption_key: { pem: expect.stringMatching(/^-----BEGIN PUBLIC KEY-----/) } },
        }),
    },
    { name: 'the system API by its audience', request: () => get(ref.audience), status: 200, check: isServer(() => rs(0)) },
    { name: 'an API by its URL audience', request: () => get('https://orders.example.com/api'), status: 200, check: isServer(() => rs(1)) },
    { name: 'an API by its URN audience', request: () => get('urn:example:ledger'), status: 200, check: isServer(() => rs(2)) },
    {
      name: 'fields with include_fields=true',
      request: () => get(rs(1), '?fields=id,name,identifier&include_fields=true'),
      status: 200,
      check: keys(['id', 'name', 'identifier']),
    },
    { name: 'fields without include_fields (include)', request: () => get(rs(1), '?fields=id,signing_alg'), status: 200, check: keys(['id', 'signing_alg']) },
    {
      name: 'fields with include_fields=false',
      request: () => get(rs(1), '?fields=signing_secret,token_encryption&include_fields=false'),
      status: 200,
      check: keys(DOCUMENTED_RESOURCE_SERVER_FIELDS.filter((f) => f !== 'token_encryption')),
    },
    { name: 'include_fields alone', request: () => get(rs(0), '?include_fields=true'), status: 200, check: keys(DOCUMENTED_RESOURCE_SERVER_FIELDS) },
    { name: 'by a client that is not global', request: () => get(rs(0), '', bearer(tokens.nonGlobal)), status: 200 },
    {
      name: 'include_fields that is not a boolean',
      request: () => get(rs(1), '?fields=id&include_fields=maybe'),
      status: 400,
      client: ['RS-INCLUDE-FIELDS-BOOLEAN'],
      check: errorShape(400),
    },
    { name: 'an unknown id', request: () => get('rs_unknown'), status: 404, check: errorShape(404, 'inexistent_resource_server') },
    { name: 'an unknown audience', request: () => get('https://unknown.example.com/api'), status: 404, check: errorShape(404) },
    { name: 'an id with characters outside ASCII', request: () => get('リソース'), status: 404, check: errorShape(404) },
    {
      name: 'a malformed escape in the id',
      request: () => ({ method: 'GET', path: '/api/v2/resource-servers/%E0%A4%A', headers: bearer(tokens.full) }),
      status: 404,
      check: errorShape(404),
    },
    { name: 'an id of 10 000 characters', request: () => get('r'.repeat(10_000)), status: 404, check: errorShape(404) },
    {
      name: 'without a token',
      request: () => ({ method: 'GET', path: paths.resourceServer(rs(0)) }),
      status: 401,
      client: ['AUTH-BEARER-HEADER'],
      check: errorShape(401),
    },
    {
      name: 'with an invalid signature',
      request: () => ({ ...get(rs(0), '', bearer(tokens.forged)), tokenFacts: { signatureValid: false } }),
      status: 401,
      check: errorShape(401, 'invalid_token'),
    },
    {
      name: 'without read:resource_servers',
      request: () => get(rs(0), '', bearer(tokens.noScope)),
      status: 403,
      check: (a) => (errorShape(403, 'insufficient_scope')(a), expect(a.json).toMatchObject({ message: expect.stringContaining('read:resource_servers') })),
    },
  ]);
});

describe('rate limiting (a limit of 3 per minute)', () => {
  let limited: RunningReference;
  const limitedClock = { offsetMs: 0 };
  const limitedTracker = new RateLimitTracker();
  let token = '';

  beforeAll(async () => {
    limited = await startReference({ rateLimit: { limit: 3, windowSeconds: 60 }, now: () => Date.now() + limitedClock.offsetMs });
    token = await tokenFor(limited, 'full');
  });
  afterAll(async () => {
    await limited?.close();
  });

  const read = (t = token) => call(limited, { method: 'GET', path: paths.resourceServer(limited.fixtures.resource_servers[0]!), headers: bearer(t) });
  const judged = (a: Answer) => {
    return judgeExchange(a.exchange, limitedTracker).findings;
  };
  const header = (a: Answer, name: string) => Number(a.headers.get(name));

  it('counts down, answers 429 with the headers once spent, and opens a new window after Reset', async () => {
    const answers: Answer[] = [];
    for (let i = 0; i < 4; i++) answers.push(await read());
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 429]);
    expect(answers.map((a) => header(a, 'x-ratelimit-remaining'))).toEqual([2, 1, 0, 0]);
    for (const a of answers) {
      expect(header(a, 'x-ratelimit-limit')).toBe(3);
      expect(header(a, 'x-ratelimit-reset')).toBe(header(answers[0]!, 'x-ratelimit-reset'));
      expect(judged(a)).toEqual([]);
    }
    const reset = header(answers[0]!, 'x-ratelimit-reset');
    expect(reset * 1000).toBeGreaterThan(Date.now());
    expect(reset * 1000).toBeLessThanOrEqual(Date.now() + 61_000);
    expect(answers[3]!.json).toMatchObject({ statusCode: 429, errorCode: 'too_many_requests' });

    // Another client has its own quota.
    const other = await read(await tokenFor(limited, 'non_global'));
    expect(other.status).toBe(200);
    expect(header(other, 'x-ratelimit-remaining')).toBe(2);

    // Past Reset, the client may call again.
    limitedClock.offsetMs = reset * 1000 - Date.now() + 1;
    const again = await read();
    expect(again.status).toBe(200);
    expect(header(again, 'x-ratelimit-remaining')).toBe(2);
    expect(header(again, 'x-ratelimit-reset')).toBeGreaterThan(reset);
  });

  it('answers 429 on every operation and before authentication', async () => {
    for (let i = 0; i < 5 && (await read()).status !== 429; i++);
    const answers = [
      await call(limited, { method: 'DELETE', path: paths.tokenExchangeProfile('tep_x'), headers: bearer(token) }),
      await call(limited, { method: 'PATCH', path: paths.session(limited.fixtures.sessions[0]!), headers: json(token), body: '{"session_metadata":null}' }),
      await read(await forged(token)),
    ];
    for (const a of answers) {
      expect(a.status).toBe(429);
      expect(a.headers.get('x-ratelimit-remaining')).toBe('0');
    }
    // judged in order: the sequence of Remaining stays consistent
    for (const a of answers) expect(judged(a).filter((f) => f.subject === 'implementation')).toEqual([]);
  });
});
