// Secrets never reach the disk or a report: bearer tokens, client secrets, issued tokens,
// signing secrets and token-encryption keys are replaced before anything is written.
import type { Exchange, Headers } from '../rules/types.ts';

export const REDACTED = '[REDACTED]';

/** JSON keys (anywhere in a body) whose values are secrets. */
export const SECRET_KEYS = new Set([
  'client_secret',
  'access_token',
  'refresh_token',
  'id_token',
  'subject_token',
  'actor_token',
  'client_assertion',
  'signing_secret',
  'password',
  'pem', // token_encryption.encryption_key.pem
  'encryption_key',
]);

/** Headers that carry credentials. */
const SECRET_HEADERS = new Set(['authorization', 'proxy-authorization', 'cookie', 'set-cookie', 'x-api-key']);

/** The token claims kept for the audit; everything else in the token is dropped. */
export const KEPT_CLAIMS = ['iss', 'sub', 'aud', 'azp', 'scope', 'gty', 'iat', 'exp'];

export function redactHeaders(headers: Headers): Headers {
  const out: Headers = {};
  for (const [name, value] of Object.entries(headers)) {
    if (!SECRET_HEADERS.has(name)) out[name] = value;
    else if (name === 'authorization' && /^bearer\s/i.test(value)) out[name] = `Bearer ${REDACTED}`;
    else if (name === 'authorization' && /^basic\s/i.test(value)) out[name] = `Basic ${REDACTED}`;
    else out[name] = REDACTED;
  }
  return out;
}

function redactValue(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(redactValue);
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [key, v] of Object.entries(value)) out[key] = SECRET_KEYS.has(key) && v !== null ? REDACTED : redactValue(v);
    return out;
  }
  return value;
}

const FORM_SECRET = new RegExp(`(^|&)(${[...SECRET_KEYS].join('|')})=[^&]*`, 'g');

/** Redacts a JSON or form-encoded body; any other text is scanned for JWT-looking strings. */
export function redactBody(text: string): string {
  const trimmed = text.trimStart();
  if (trimmed.startsWith('{') || trimmed.startsWith('[')) {
    try {
      return JSON.stringify(redactValue(JSON.parse(text)));
    } catch {
      // not JSON after all: fall through to the text rules
    }
  }
  return text
    .replace(FORM_SECRET, (_m, sep: string, key: string) => `${sep}${key}=${encodeURIComponent(REDACTED)}`)
    .replace(/eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*/g, REDACTED);
}

export function keptClaims(claims: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  if (!claims) return undefined;
  const out: Record<string, unknown> = {};
  for (const key of KEPT_CLAIMS) if (claims[key] !== undefined) out[key] = claims[key];
  return out;
}

/** A copy of the exchange safe to write anywhere. */
export function redactExchange(exchange: Exchange): Exchange {
  const copy: Exchange = {
    ...exchange,
    request: { ...exchange.request, url: redactUrl(exchange.request.url), headers: redactHeaders(exchange.request.headers) },
    token: { ...exchange.token, claims: keptClaims(exchange.token.claims) },
  };
  if (exchange.request.body) copy.request.body = { ...exchange.request.body, text: redactBody(exchange.request.body.text) };
  if (exchange.response) {
    copy.response = { ...exchange.response, headers: redactHeaders(exchange.response.headers) };
    if (exchange.response.body) copy.response.body = { ...exchange.response.body, text: redactBody(exchange.response.body.text) };
  }
  return copy;
}

/** Secrets in a query string (e.g. ?access_token=…) are redacted too. */
export function redactUrl(url: string): string {
  const q = url.indexOf('?');
  if (q === -1) return url;
  return url.slice(0, q + 1) + redactBody(url.slice(q + 1));
}
