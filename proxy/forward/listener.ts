// The proxy's listening socket: plain HTTP, or HTTPS with the certificate tls.ts chose. What
// arrives that is not an exchange is refused here with the API's error body: CONNECT (this is a
// reverse proxy, not a forward one) and requests that do not parse, are too large or too slow.
// A client that fails the TLS handshake is dropped and reported.
import { createServer, type IncomingMessage, type RequestListener, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { Duplex } from 'node:stream';
import { rawProxyError } from './error-response.ts';

/** Request headers up to this size are accepted (as the reference does; Node's default is 16 KiB). */
const MAX_HEADER_BYTES = 64 * 1024;

export interface ListenerOptions {
  /** Named in the refusal of CONNECT. */
  targetOrigin: string;
  /** HTTPS with this certificate (PEM, leaf first) and key; plain HTTP without. */
  tls?: { cert: string | Buffer; key: string | Buffer };
  onRequest: RequestListener;
  /** A request refused before it became an exchange. */
  onRefused(reason: string): void;
  /** A client that did not complete the TLS handshake (it does not trust the certificate, or spoke plain HTTP). */
  onTlsClientError?(error: NodeJS.ErrnoException): void;
}

export function createListener(options: ListenerOptions): Server {
  const server = options.tls
    ? // An https.Server is an http.Server on TLS sockets: the same events and methods (its type does not say so).
      (createHttpsServer({ maxHeaderSize: MAX_HEADER_BYTES, cert: options.tls.cert, key: options.tls.key }, options.onRequest) as unknown as Server)
    : createServer({ maxHeaderSize: MAX_HEADER_BYTES }, options.onRequest);
  server.on('connect', (_req: IncomingMessage, socket: Duplex) => {
    socket.on('error', () => {});
    options.onRefused('CONNECT');
    socket.end(rawProxyError(405, `CONNECT is refused: this is a reverse proxy for ${options.targetOrigin}, not a forward proxy.`, 'connect_refused'));
  });
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    socket.on('error', () => {});
    if (error.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    options.onRefused(error.code ?? 'malformed request');
    const [status, message] =
      error.code === 'HPE_HEADER_OVERFLOW'
        ? [431, `Request headers (including the URL) exceed ${MAX_HEADER_BYTES} bytes.`]
        : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
          ? [408, 'The request was not received in time.']
          : [400, 'Malformed HTTP request.'];
    socket.end(rawProxyError(status, message, status === 431 ? 'headers_too_large' : status === 408 ? 'request_timeout' : 'bad_request'));
  });
  if (options.tls) {
    server.on('tlsClientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
      socket.destroy();
      options.onTlsClientError?.(error);
    });
  }
  return server;
}
