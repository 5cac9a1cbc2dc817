// Conforming exchanges for each operation, built the way a driver builds them. Tests derive
// violating exchanges from these by changing one thing.
import { buildExchange, type ExchangeParts } from '../../rules/exchange.ts';
import type { Exchange } from '../../rules/types.ts';

const b64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

/** An unsigned-looking JWT: the rules decode claims and never verify signatures. */
export function jwt(claims: Record<string, unknown>): string {
  return `${b64url({ alg: 'RS256', typ: 'JWT', kid: 'test' })}.${b64url(claims)}.c2lnbmF0dXJl`;
}

export const FULL_SCOPES = 'delete:token_exchange_profiles update:sessions read:resource_servers';

export function claims(scope = FULL_SCOPES, azp = 'client-full'): Record<string, unknown> {
  const now = 1_800_000_000;
  return { iss: 'https://tenant.example.com/', sub: `${azp}@clients`, aud: 'https://tenant.example.com/api/v2/', azp, scope, gty: 'client-credentials', iat: now, exp: now + 3600 };
}

export const STARTED_AT = '2027-01-15T08:00:00.000Z';
export const RESET = String(Date.parse(STARTED_AT) / 1000 + 30);

export function rateLimitHeaders(remaining = 99, limit = 100, reset = RESET): Record<string, string> {
  return { 'x-ratelimit-limit': String(limit), 'x-ratelimit-remaining': String(remaining), 'x-ratelimit-reset': reset };
}

export const BASE = 'https://tenant.example.com/api/v2';

export function deleteExchange(overrides: Partial<ExchangeParts> = {}): Exchange {
  return buildExchange({
    startedAt: STARTED_AT,
    durationMs: 12,
    method: 'DELETE',
    url: `${BASE}/token-exchange-profiles/tep_1`,
    requestHeaders: { Authorization: `Bearer ${jwt(claims())}` },
    status: 204,
    responseHeaders: rateLimitHeaders(),
    ...overrides,
  });
}

export function session(metadata: unknown = { plan: 'gold' }, id = 'sess_1'): Record<string, unknown> {
  const t = '2027-01-15T07:00:00.000Z';
  return {
    id,
    user_id: 'auth0|user_1',
    created_at: t,
    updated_at: STARTED_AT,
    authenticated_at: t,
    idle_expires_at: '2027-01-18T07:00:00.000Z',
    expires_at: '2027-01-22T07:00:00.000Z',
    last_interacted_at: t,
    device: { initial_user_agent: 'Mozilla/5.0', initial_ip: '192.0.2.10', initial_asn: '64496', last_user_agent: 'Mozilla/5.0', last_ip: '192.0.2.11', last_asn: '64496' },
    clients: [{ client_id: 'app_1' }],
    authentication: { methods: [{ name: 'pwd', timestamp: t, type: 'password' }] },
    cookie: { mode: 'non-persistent' },
    session_metadata: metadata,
  };
}

export function updateExchange(sent: unknown = { session_metadata: { plan: 'gold' } }, returned: unknown = session(), overrides: Partial<ExchangeParts> = {}): Exchange {
  return buildExchange({
    startedAt: STARTED_AT,
    durationMs: 15,
    method: 'PATCH',
    url: `${BASE}/sessions/sess_1`,
    requestHeaders: { Authorization: `Bearer ${jwt(claims())}`, 'Content-Type': 'application/json' },
    requestBody: JSON.stringify(sent),
    status: 200,
    responseHeaders: { 'content-type': 'application/json; charset=utf-8', ...rateLimitHeaders() },
    responseBody: JSON.stringify(returned),
    ...overrides,
  });
}

export function resourceServer(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id: 'rs_1',
    name: 'Orders API',
    is_system: false,
    identifier: 'https://api.example.com/orders/',
    scopes: [{ value: 'read:orders', description: 'Read orders' }],
    signing_alg: 'HS256',
    signing_secret: 'a-secret-of-32-characters-length',
    allow_offline_access: false,
    allow_online_access: false,
    allow_online_access_with_ephemeral_sessions: false,
    skip_consent_for_verifiable_first_party_clients: true,
    token_lifetime: 86400,
    token_lifetime_for_web: 7200,
    enforce_policies: false,
    token_dialect: 'access_token',
    token_encryption: null,
    authorization_details: null,
    proof_of_possession: { required: false },
    subject_type_authorization: { user: {}, client: {} },
    authorization_policy: null,
    client_id: 'client_rs_1',
    ...overrides,
  };
}

export function getExchange(returned: unknown = resourceServer(), path = 'rs_1', overrides: Partial<ExchangeParts> = {}): Exchange {
  return buildExchange({
    startedAt: STARTED_AT,
    durationMs: 9,
    method: 'GET',
    url: `${BASE}/resource-servers/${path}`,
    requestHeaders: { Authorization: `Bearer ${jwt(claims())}` },
    status: 200,
    responseHeaders: { 'content-type': 'application/json', ...rateLimitHeaders() },
    responseBody: JSON.stringify(returned),
    ...overrides,
  });
}

export function errorExchange(base: Exchange, status: number, body: unknown, headers: Record<string, string> = {}): Exchange {
  return buildExchange({
    startedAt: base.startedAt,
    durationMs: 5,
    method: base.request.method,
    url: base.request.url,
    requestHeaders: base.request.headers,
    ...(base.request.body ? { requestBody: base.request.body.text } : {}),
    status,
    responseHeaders: { 'content-type': 'application/json', ...rateLimitHeaders(), ...headers },
    responseBody: JSON.stringify(body),
    tokenFacts: { ...(base.token.signatureValid !== undefined ? { signatureValid: base.token.signatureValid } : {}), ...(base.token.clientGlobal !== undefined ? { clientGlobal: base.token.clientGlobal } : {}) },
  });
}
