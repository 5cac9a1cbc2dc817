// Building exchanges from what a driver captured. Pure: no I/O.
import { readBearerToken } from './token.ts';
import type { BearerToken, CapturedBody, Exchange, Headers } from './types.ts';

/** Lower-cases header names and joins repeated headers, whatever shape they arrive in. */
export function normalizeHeaders(
  input: Headers | Record<string, string | string[] | number | undefined> | Array<{ name: string; value: string }> | undefined,
): Headers {
  const out: Headers = {};
  const add = (name: string, value: string) => {
    const key = name.toLowerCase();
    out[key] = out[key] === undefined ? value : `${out[key]}, ${value}`;
  };
  if (Array.isArray(input)) {
    for (const { name, value } of input) add(name, value);
  } else if (input) {
    for (const [name, value] of Object.entries(input)) {
      if (value === undefined) continue;
      if (Array.isArray(value)) value.forEach((v) => add(name, String(v)));
      else add(name, String(value));
    }
  }
  return out;
}

export interface ExchangeParts {
  id?: string;
  startedAt?: string;
  durationMs?: number;
  method: string;
  url: string;
  requestHeaders?: Parameters<typeof normalizeHeaders>[0];
  requestBody?: string | CapturedBody;
  status?: number;
  responseHeaders?: Parameters<typeof normalizeHeaders>[0];
  responseBody?: string | CapturedBody;
  error?: string;
  /** Facts about the token the driver knows (see BearerToken). */
  tokenFacts?: Pick<BearerToken, 'signatureValid' | 'clientGlobal'>;
}

const asBody = (body: string | CapturedBody | undefined): CapturedBody | undefined =>
  body === undefined ? undefined : typeof body === 'string' ? { text: body } : body;

export function buildExchange(parts: ExchangeParts): Exchange {
  const requestHeaders = normalizeHeaders(parts.requestHeaders);
  const exchange: Exchange = {
    startedAt: parts.startedAt ?? new Date().toISOString(),
    request: { method: parts.method.toUpperCase(), url: parts.url, headers: requestHeaders },
    token: { ...readBearerToken(requestHeaders), ...parts.tokenFacts },
  };
  if (parts.id !== undefined) exchange.id = parts.id;
  if (parts.durationMs !== undefined) exchange.durationMs = parts.durationMs;
  const requestBody = asBody(parts.requestBody);
  // A body that was there but not captured stays, marked truncated: it is not "no body".
  if (requestBody && (requestBody.text.length > 0 || requestBody.truncated)) exchange.request.body = requestBody;
  if (parts.status !== undefined) {
    exchange.response = { status: parts.status, headers: normalizeHeaders(parts.responseHeaders) };
    const responseBody = asBody(parts.responseBody);
    if (responseBody && (responseBody.text.length > 0 || responseBody.truncated)) exchange.response.body = responseBody;
  }
  if (parts.error !== undefined) exchange.error = parts.error;
  return exchange;
}
