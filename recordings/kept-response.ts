// Recorders keep what they keep, entry by entry: one file may hold the entries of several. HTTP
// mocking libraries (go-vcr cassettes, trimmed HARs) keep the status and body of a response but
// no header, or only Content-Type; a browser automation tool may omit a response's content and
// keep only its size. What an entry of another recorder did not keep is marked on its exchange,
// and the rules do not judge it (rules/checks/check.ts RESPONSE_HEADERS_NOT_RECORDED, the
// judgement's responseBodyNotRecorded). The kit's own recordings keep every response header and
// body as it was (a body cut short says so): nothing is marked on them.
import type { Exchange, Headers } from '../rules/types.ts';

/** Headers a recorder keeps even when it drops the rest, or makes up itself: no proof of anything. */
const NOT_PROOF: ReadonlySet<string> = new Set(['content-type', 'content-length']);

/** The response carries a header a recorder that drops headers would not have kept (Date, X-RateLimit-*, anything a server sends). */
function showsKeptHeaders(headers: Headers): boolean {
  for (const name in headers) if (!NOT_PROOF.has(name)) return true;
  return false;
}

/** A response that has no body whatever its size or Content-Length say: to a HEAD, a 1xx, a 204, a 304. */
function hasNoBody(method: string, status: number): boolean {
  return method === 'HEAD' || status < 200 || status === 204 || status === 304;
}

/**
 * The entry says its response had a body (`content.size` above 0, or -1: not known; a
 * Content-Length above 0) and kept none of it.
 */
function declaresBodyNotKept(exchange: Exchange, contentSize: unknown): boolean {
  const response = exchange.response!;
  if (response.body !== undefined || hasNoBody(exchange.request.method, response.status)) return false;
  if (typeof contentSize === 'number' && (contentSize > 0 || contentSize === -1)) return true;
  return Number(response.headers['content-length']) > 0;
}

/** Marks what another recorder's entry did not keep of its response: its headers, its body. */
export function markWhatWasNotKept(exchange: Exchange, contentSize: unknown): void {
  const response = exchange.response;
  if (!response) return;
  if (!showsKeptHeaders(response.headers)) response.headersRecorded = false;
  if (declaresBodyNotKept(exchange, contentSize)) response.body = { text: '', truncated: true, notRecorded: true };
}
