// Which headers cross the proxy: the client's request headers minus hop-by-hop ones, with the
// target's Host; and the target's response head readied for the client, whose connection
// follows its own wish rather than the target's.
import type { IncomingHttpHeaders } from 'node:http';

/** Hop-by-hop headers (RFC 9110 §7.6.1) and those meant for this proxy: not forwarded. */
const NOT_FORWARDED: ReadonlySet<string> = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authorization',
  'te',
  'trailer',
  'upgrade',
  'expect',
]);

/** The client's headers minus hop-by-hop ones, with the target's Host. */
export function forwardedHeaders(headers: IncomingHttpHeaders, host: string): IncomingHttpHeaders {
  const listed = connectionOptions(headers['connection']);
  const out: IncomingHttpHeaders = {};
  for (const name in headers) {
    const value = headers[name];
    if (value === undefined || NOT_FORWARDED.has(name) || name === 'host' || listed?.includes(name)) continue;
    out[name] = value;
  }
  out.host = host;
  return out;
}

/**
 * Readies the target's response head (changed in place) for a client speaking `clientHttpVersion`.
 * Connection and Keep-Alive are about the target's connection; the client's stays open unless
 * `close`. An HTTP/1.0 client cannot read a chunked body: Node frames it by closing.
 */
export function readyHeadForClient(head: IncomingHttpHeaders, clientHttpVersion: string, close: boolean): void {
  delete head['keep-alive'];
  if (clientHttpVersion === '1.0') delete head['transfer-encoding'];
  head['connection'] = close ? 'close' : 'keep-alive';
}

/** The header names a Connection header lists (lower-cased); undefined for none or only "keep-alive"/"close". */
function connectionOptions(connection: string | undefined): string[] | undefined {
  if (connection === undefined) return undefined;
  const lower = connection.toLowerCase();
  // The usual values name no other header: skip the parsing.
  if (lower === 'keep-alive' || lower === 'close') return undefined;
  const names: string[] = [];
  for (const part of lower.split(',')) {
    const name = part.trim();
    if (name !== '') names.push(name);
  }
  return names;
}
