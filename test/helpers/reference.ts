// Talking to a running reference the way a driver does: every request becomes an Exchange
// (rules/exchange.ts) that the rule engine can judge.
import { decodeProtectedHeader, generateKeyPair, SignJWT, decodeJwt } from 'jose';
import { buildExchange } from '../../rules/exchange.ts';
import type { BearerToken, Exchange } from '../../rules/types.ts';
import { startReference, type ProfileName, type RunningReference } from '../../reference/index.ts';

export interface Call {
  method: string;
  /** Path under the origin, e.g. "/api/v2/sessions/x" (already encoded). */
  path: string;
  headers?: Record<string, string>;
  body?: string;
  /** Facts about the token the test knows (it forged the signature, the client is not global). */
  tokenFacts?: Pick<BearerToken, 'signatureValid' | 'clientGlobal'>;
}

export interface Answer {
  status: number;
  headers: Headers;
  text: string;
  json: unknown;
  exchange: Exchange;
}

/** This process's monotonic clock, which orders the helper's exchanges finer than their timestamps. */
const HELPER_CLOCK = `performance.now() of process ${process.pid} from ${performance.timeOrigin}`;

export async function call(ref: RunningReference, request: Call): Promise<Answer> {
  const startedAt = new Date();
  const sent = performance.now();
  const url = ref.origin + request.path;
  const init: RequestInit = { method: request.method, headers: request.headers ?? {} };
  if (request.body !== undefined) init.body = request.body;
  const response = await fetch(url, init);
  const text = await response.text();
  const responseHeaders: Record<string, string> = {};
  response.headers.forEach((value, name) => {
    responseHeaders[name] = value;
  });
  const exchange = buildExchange({
    startedAt: startedAt.toISOString(),
    durationMs: Date.now() - startedAt.getTime(),
    // Requests sent one after another can share a millisecond: this clock still orders them.
    order: { clock: HELPER_CLOCK, sent, received: performance.now() },
    method: request.method,
    url,
    requestHeaders: request.headers ?? {},
    ...(request.body !== undefined ? { requestBody: request.body } : {}),
    status: response.status,
    responseHeaders,
    responseBody: text,
    ...(request.tokenFacts ? { tokenFacts: request.tokenFacts } : {}),
  });
  let json: unknown;
  try {
    json = text === '' ? undefined : JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: response.status, headers: response.headers, text, json, exchange };
}

/** A client credentials token for a built-in client of the reference. */
export async function tokenFor(ref: RunningReference, profile: ProfileName, extra: Record<string, string> = {}): Promise<string> {
  const { client_id, client_secret } = ref.clients[profile];
  const response = await fetch(`${ref.authUrl}/oauth/token/`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'client_credentials', client_id, client_secret, audience: ref.audience, ...extra }),
  });
  const body = (await response.json()) as { access_token?: string };
  if (response.status !== 200 || !body.access_token) throw new Error(`token request for ${profile} failed: ${response.status} ${JSON.stringify(body)}`);
  return body.access_token;
}

// One foreign key per test process: RSA key generation is slow.
let foreignKey: ReturnType<typeof generateKeyPair> | undefined;

/** The same header and claims as `token`, signed with a key the reference does not know. */
export async function forged(token: string): Promise<string> {
  foreignKey ??= generateKeyPair('RS256');
  const { privateKey } = await foreignKey;
  const header = decodeProtectedHeader(token);
  return new SignJWT(decodeJwt(token)).setProtectedHeader({ ...header, alg: 'RS256' }).sign(privateKey);
}

export const bearer = (token: string): Record<string, string> => ({ authorization: `Bearer ${token}` });
export const json = (token: string): Record<string, string> => ({ ...bearer(token), 'content-type': 'application/json' });

/** Path of an operation under /api/v2, the id encoded once. */
export const paths = {
  session: (id: string) => `/api/v2/sessions/${encodeURIComponent(id)}`,
  resourceServer: (id: string, query = '') => `/api/v2/resource-servers/${encodeURIComponent(id)}${query}`,
  tokenExchangeProfile: (id: string) => `/api/v2/token-exchange-profiles/${encodeURIComponent(id)}`,
};

/** A metadata object with `count` properties whose values are `length` characters long. */
export function metadata(count: number, length = 8): Record<string, string> {
  return Object.fromEntries(Array.from({ length: count }, (_, i) => [`key_${String(i).padStart(2, '0')}`, String(i % 10).repeat(length)]));
}

/**
 * A conforming reference and one whose resource servers break the schema (is_system as a
 * string), each with a token of its full client: the pair the proxy's launch tests run behind.
 */
export interface ReferencePair {
  ref: RunningReference;
  faulty: RunningReference;
  token: string;
  faultyToken: string;
}

export async function startConformingAndFaulty(): Promise<ReferencePair> {
  const [ref, faulty] = await Promise.all([startReference(), startReference({ faults: ['rs-is-system-string'] })]);
  const [token, faultyToken] = await Promise.all([tokenFor(ref, 'full'), tokenFor(faulty, 'full')]);
  return { ref, faulty, token, faultyToken };
}
