// Building exchanges from what a driver captured. Pure: no I/O.
// Hot path (every exchange of validate and proxy): plain loops, no closures or spreads.
import { readBearerToken } from './token.ts';
import type { BearerToken, CapturedBody, Exchange, ExchangeOrder, Headers } from './types.ts';

type HeaderInput = Headers | Record<string, string | string[] | number | undefined> | ReadonlyArray<{ name: unknown; value?: unknown }> | undefined;

function addHeader(out: Headers, name: string, value: string): void {
  const key = name.toLowerCase();
  const previous = out[key];
  out[key] = previous === undefined ? value : `${previous}, ${value}`;
}

/**
 * Lower-cases header names and joins repeated headers, whatever shape they arrive in. HTTP/2
 * pseudo-headers (":method", ":path"…) are not headers and are left out.
 */
export function normalizeHeaders(input: HeaderInput): Headers {
  const out: Headers = {};
  if (input === undefined) return out;
  if (Array.isArray(input)) {
    for (let i = 0; i < input.length; i++) {
      const header = input[i] as { name: unknown; value?: unknown } | null | undefined;
      const name = header?.name;
      if (typeof name !== 'string' || name.startsWith(':')) continue;
      const value = header!.value;
      addHeader(out, name, typeof value === 'string' ? value : String(value ?? ''));
    }
    return out;
  }
  const record = input as Record<string, string | string[] | number | undefined>;
  for (const name in record) {
    const value = record[name];
    if (value === undefined || name.startsWith(':')) continue;
    if (Array.isArray(value)) for (const v of value) addHeader(out, name, String(v));
    else addHeader(out, name, typeof value === 'string' ? value : String(value));
  }
  return out;
}

export interface ExchangeParts {
  id?: string;
  startedAt?: string;
  durationMs?: number;
  /** The driver's finer ordering (see Exchange.order). */
  order?: ExchangeOrder;
  method: string;
  url: string;
  requestHeaders?: HeaderInput;
  requestBody?: string | CapturedBody;
  status?: number;
  responseHeaders?: HeaderInput;
  responseBody?: string | CapturedBody;
  error?: string;
  /** Facts about the token the driver knows (see BearerToken). */
  tokenFacts?: Pick<BearerToken, 'signatureValid' | 'clientGlobal' | 'issuerExpected' | 'attack' | 'attackSecret' | 'keyUrlFetched' | 'heldByKit'>;
}

/** The body as judged: a body that was there but not captured stays, marked truncated (it is not "no body"). */
function keptBody(body: string | CapturedBody | undefined): CapturedBody | undefined {
  if (body === undefined) return undefined;
  const captured = typeof body === 'string' ? { text: body } : body;
  return captured.text.length > 0 || captured.truncated ? captured : undefined;
}

export function buildExchange(parts: ExchangeParts): Exchange {
  const requestHeaders = normalizeHeaders(parts.requestHeaders);
  const token = readBearerToken(requestHeaders);
  if (parts.tokenFacts) {
    if (parts.tokenFacts.signatureValid !== undefined) token.signatureValid = parts.tokenFacts.signatureValid;
    if (parts.tokenFacts.clientGlobal !== undefined) token.clientGlobal = parts.tokenFacts.clientGlobal;
    if (parts.tokenFacts.issuerExpected !== undefined) token.issuerExpected = parts.tokenFacts.issuerExpected;
    if (parts.tokenFacts.attack !== undefined) token.attack = parts.tokenFacts.attack;
    if (parts.tokenFacts.attackSecret !== undefined) token.attackSecret = parts.tokenFacts.attackSecret;
    if (parts.tokenFacts.keyUrlFetched !== undefined) token.keyUrlFetched = parts.tokenFacts.keyUrlFetched;
    if (parts.tokenFacts.heldByKit) token.heldByKit = true;
  }
  // Every field is set, present or not: one object shape for every exchange keeps the checks'
  // property reads monomorphic. (Absent fields stay undefined, which JSON and the rules read as absent.)
  let response: Exchange['response'];
  if (parts.status !== undefined) response = { status: parts.status, headers: normalizeHeaders(parts.responseHeaders), body: keptBody(parts.responseBody) };
  const exchange: Exchange = {
    id: parts.id,
    startedAt: parts.startedAt ?? new Date().toISOString(),
    durationMs: parts.durationMs,
    order: parts.order,
    request: { method: parts.method.toUpperCase(), url: parts.url, headers: requestHeaders, body: keptBody(parts.requestBody) },
    response,
    error: parts.error,
    token,
  };
  return exchange;
}
