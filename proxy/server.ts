// The HTTP side of the proxy: accepts origin-form requests, forwards them to the one target
// through http-proxy over a keep-alive pool, and watches both bodies stream past (capture.ts)
// without ever holding them back. The response is relayed here rather than by http-proxy
// (selfHandleResponse), so that the proxy decides what happens at each step: a head Node
// refuses to send becomes a 502 (under http-proxy it threw where nothing could catch it), a
// target failing before the first body byte still gets the client a 502 or 504, and while a
// slow client holds the target back, the upstream timeout does not run. Each exchange becomes
// a Flow, handed on once its response has been sent or has failed. It never forwards anywhere but the target: absolute-form
// requests and CONNECT are refused, and the Host header is always the target's.
import { Agent as HttpAgent, createServer, STATUS_CODES, type ClientRequest, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import type { Duplex } from 'node:stream';
import httpProxy from 'http-proxy';
import { BodyCapture } from './capture.ts';
import type { Flow } from './flow.ts';
import type { Target } from './target.ts';

/** Request headers up to this size are accepted (as the reference does; Node's default is 16 KiB). */
const MAX_HEADER_BYTES = 64 * 1024;
/** Idle pooled connections are closed after this long (sooner when the target says so). */
const IDLE_UPSTREAM_SOCKET_MS = 30_000;

/** Hop-by-hop headers (RFC 9110 §7.6.1) and those meant for this proxy: not forwarded. */
const NOT_FORWARDED = new Set(['connection', 'keep-alive', 'proxy-connection', 'proxy-authorization', 'te', 'trailer', 'upgrade', 'expect']);

export interface ProxyServerOptions {
  target: Target;
  /** Bytes of each body kept for judging; the rest streams past uncaptured. */
  maxBodyBytes: number;
  /** The target has this long to answer, and at most this long between two chunks. */
  upstreamTimeoutMs: number;
  /** Called once per exchange, after its response was sent (or it failed). */
  onFlowDone(flow: Flow): void;
  /** A request refused before it became an exchange (malformed, absolute-form, CONNECT). */
  onRefused?(reason: string): void;
}

/**
 * Where a request's (and its response's, and the target's response's) Transit hangs: a
 * property, not a WeakMap (cheaper for the garbage collector), so that the stream listeners
 * below can be shared functions instead of closures made for every request.
 */
const TRANSIT = Symbol('transit');
type InTransit<T> = T & { [TRANSIT]?: Transit };

/** Transport state of one flow; addons see only the Flow. */
interface Transit {
  server: ProxyServer;
  /** Neighbours in the list of exchanges in flight. */
  previous: Transit | undefined;
  next: Transit | undefined;
  flow: Flow;
  req: IncomingMessage;
  res: ServerResponse;
  proxyReq?: ClientRequest;
  /** The target's response being relayed. */
  proxyRes?: IncomingMessage;
  /** Its head (proxyRes.headers, readied for the client) is written with the first chunk or the end: until then a failure can still be answered with a 502 or 504. */
  headPending: boolean;
  /** The target's response is paused until the client reads what it was sent: the client sets the pace, no upstream timeout applies. */
  heldForClient: boolean;
  timedOut: boolean;
  retried: boolean;
  /** The request has no body, so it may be sent again on a fresh connection. */
  bodyless: boolean;
  /** The client asked to close its connection after this exchange. */
  clientCloses: boolean;
  /** performance.now() of the last byte either way: the upstream timeout counts from it. */
  lastActivity: number;
}

export class ProxyServer {
  readonly server: Server;
  private readonly proxy: httpProxy;
  private readonly agent: HttpAgent;
  private readonly inFlight = new InFlightList();
  private readonly timeoutSweep: NodeJS.Timeout;
  private nextId = 1;
  private idleWaiters: Array<() => void> = [];
  private stopping = false;

  /** http-proxy's per-request error callback: one function for every request. */
  private readonly onWebError = (error: Error, req: IncomingMessage): void => {
    const transit = (req as InTransit<IncomingMessage>)[TRANSIT];
    if (transit) this.onForwardError(transit, error as NodeJS.ErrnoException);
  };

  constructor(private readonly options: ProxyServerOptions) {
    const { target } = options;
    const agentOptions = { keepAlive: true, timeout: IDLE_UPSTREAM_SOCKET_MS, scheduling: 'lifo' as const };
    this.agent = target.protocol === 'https:' ? new HttpsAgent(agentOptions) : new HttpAgent(agentOptions);
    this.proxy = httpProxy.createProxyServer({
      target: { protocol: target.protocol, host: target.hostname, hostname: target.hostname, port: target.port },
      agent: this.agent,
      xfwd: false,
      changeOrigin: false,
      selfHandleResponse: true,
    });
    this.proxy.on('proxyReq', (proxyReq, req) => this.onProxyRequest(proxyReq, req));
    this.proxy.on('proxyRes', (proxyRes, req) => this.onProxyResponse(proxyRes, req));
    // The client went away while the target was still being asked: the flow ends with its response.
    this.proxy.on('econnreset', () => {});
    this.proxy.on('error', () => {}); // every web() call has its own handler; this only guards stray events

    this.timeoutSweep = setInterval(() => this.sweepTimeouts(), Math.max(10, Math.min(1000, Math.floor(options.upstreamTimeoutMs / 4))));
    this.timeoutSweep.unref();
    this.server = createServer({ maxHeaderSize: MAX_HEADER_BYTES }, (req, res) => this.onRequest(req, res));
    this.server.on('connect', (req: IncomingMessage, socket: Duplex) => {
      socket.on('error', () => {});
      this.refused('CONNECT');
      socket.end(rawErrorResponse(405, `CONNECT is refused: this is a reverse proxy for ${target.origin}, not a forward proxy.`, 'connect_refused'));
    });
    this.server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
      socket.on('error', () => {});
      if (error.code === 'ECONNRESET' || !socket.writable) {
        socket.destroy();
        return;
      }
      this.refused(error.code ?? 'malformed request');
      const [status, message] =
        error.code === 'HPE_HEADER_OVERFLOW'
          ? [431, `Request headers (including the URL) exceed ${MAX_HEADER_BYTES} bytes.`]
          : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
            ? [408, 'The request was not received in time.']
            : [400, 'Malformed HTTP request.'];
      socket.end(rawErrorResponse(status, message, status === 431 ? 'headers_too_large' : status === 408 ? 'request_timeout' : 'bad_request'));
    });
  }

  /** Exchanges whose response has not closed yet. */
  get inFlightCount(): number {
    return this.inFlight.size;
  }

  /** Stops accepting connections; requests already on open connections still complete. */
  stopAccepting(): void {
    this.stopping = true;
    this.server.close();
    this.server.closeIdleConnections();
  }

  /** Resolves once no exchange is in flight. */
  whenIdle(): Promise<void> {
    if (this.inFlight.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Ends every exchange still in flight, recording `reason` as its error. */
  abortInFlight(reason: string): void {
    for (const transit of this.inFlight.snapshot()) {
      transit.flow.error ??= reason;
      if (transit.proxyReq && !transit.flow.response?.body.complete) transit.proxyReq.destroy();
      transit.res.destroy();
    }
  }

  /** Closes every connection, client and upstream. */
  closeAll(): void {
    clearInterval(this.timeoutSweep);
    this.server.closeAllConnections();
    this.agent.destroy();
    this.proxy.close();
  }

  private refused(reason: string): void {
    this.options.onRefused?.(reason);
  }

  private onRequest(req: IncomingMessage, res: ServerResponse): void {
    const { target } = this.options;
    const requestTarget = req.url ?? '';
    if (!requestTarget.startsWith('/')) {
      // absolute-form ("http://elsewhere/…") and asterisk-form ("*"): never forwarded.
      this.refused('absolute-form request target');
      res.setHeader('Connection', 'close');
      req.resume();
      sendJsonError(res, 400, 'absolute_form_refused', `This is a reverse proxy for ${target.origin}: send origin-form requests ("GET /path"), not absolute URLs or "*".`);
      return;
    }
    if (this.stopping) res.setHeader('Connection', 'close');

    const headers = forwardedHeaders(req.headers, target.host);
    const path = target.basePath + requestTarget;
    const flow: Flow = {
      id: this.nextId++,
      startedAt: Date.now(),
      marks: { start: performance.now() },
      clientAddress: req.socket.remoteAddress ?? '',
      httpVersion: `HTTP/${req.httpVersion}`,
      request: { method: req.method ?? 'GET', path, headers, body: new BodyCapture(this.options.maxBodyBytes) },
    };
    const contentLength = req.headers['content-length'];
    const connection = String(req.headers['connection'] ?? '').toLowerCase();
    const transit: Transit = {
      server: this,
      previous: undefined,
      next: undefined,
      flow,
      req,
      res,
      proxyReq: undefined,
      proxyRes: undefined,
      headPending: false,
      heldForClient: false,
      timedOut: false,
      retried: false,
      bodyless: req.headers['transfer-encoding'] === undefined && (contentLength === undefined || contentLength === '0'),
      clientCloses: /\bclose\b/.test(connection) || (req.httpVersion === '1.0' && !/\bkeep-alive\b/.test(connection)),
      lastActivity: flow.marks.start,
    };
    (req as InTransit<IncomingMessage>)[TRANSIT] = transit;
    (res as InTransit<ServerResponse>)[TRANSIT] = transit;
    this.inFlight.add(transit);

    // http-proxy copies req.headers and req.url into the request to the target.
    req.headers = headers;
    req.url = path;
    if (transit.bodyless) {
      // Nothing will stream in: the request is whole with its head (and no listener is needed to see it).
      flow.request.body.complete = true;
      flow.marks.requestEnd = flow.marks.start;
    } else {
      req.on('data', onRequestData);
      req.on('end', onRequestEnd);
    }
    req.on('error', ignoreError); // a client abort; the response's close records it
    res.on('close', onResponseClose);
    this.forward(transit);
  }

  private forward(transit: Transit): void {
    // web(req, res, callback): without an options argument http-proxy copies no options per request.
    (this.proxy.web as (req: IncomingMessage, res: ServerResponse, callback: (error: Error, req: IncomingMessage) => void) => void)(transit.req, transit.res, this.onWebError);
  }

  private onProxyRequest(proxyReq: ClientRequest, req: IncomingMessage): void {
    const transit = (req as InTransit<IncomingMessage>)[TRANSIT];
    if (!transit) return;
    transit.proxyReq = proxyReq;
    const { flow } = transit;
    // http-proxy joins paths and collapses "//"; the target gets the path exactly as the client sent it.
    if (!proxyReq.headersSent && proxyReq.path !== flow.request.path) proxyReq.path = flow.request.path;
    flow.request.path = proxyReq.path;
    // flow.request.headers is the object http-proxy sent (it may add Content-Length: 0 to a DELETE).
    transit.lastActivity = performance.now();
  }

  private onProxyResponse(proxyRes: IncomingMessage, req: IncomingMessage): void {
    const transit = (req as InTransit<IncomingMessage>)[TRANSIT];
    if (!transit) return;
    const { flow } = transit;
    flow.marks.responseStart = performance.now();
    flow.response = {
      status: proxyRes.statusCode ?? 0,
      statusText: proxyRes.statusMessage ?? '',
      httpVersion: `HTTP/${proxyRes.httpVersion}`,
      headers: { ...proxyRes.headers }, // as the target sent them, before the hop-by-hop ones change below
      body: new BodyCapture(this.options.maxBodyBytes),
    };
    // The head for the client. Connection and Keep-Alive are about the target's connection; the
    // client's follows its own wish. An HTTP/1.0 client cannot read a chunked body: Node frames it by closing.
    const head = proxyRes.headers;
    delete head['keep-alive'];
    if (transit.req.httpVersion === '1.0') delete head['transfer-encoding'];
    head['connection'] = transit.clientCloses || this.stopping ? 'close' : 'keep-alive';
    transit.headPending = true;
    transit.proxyRes = proxyRes;
    transit.lastActivity = flow.marks.responseStart;
    (proxyRes as InTransit<IncomingMessage>)[TRANSIT] = transit;
    proxyRes.on('data', onResponseData);
    proxyRes.on('end', onResponseEnd);
    // A response cut short is destroyed with an "aborted" error, which reaches 'error' listeners ('aborted' is not needed too).
    proxyRes.on('error', onResponseBroken);
  }

  /**
   * Cuts exchanges whose target has been silent too long. One sweep over the exchanges in
   * flight replaces a timer per request; it runs a few times per timeout period, so a
   * timeout fires at most a quarter period late.
   */
  private sweepTimeouts(): void {
    const limit = performance.now() - this.options.upstreamTimeoutMs;
    for (const transit of this.inFlight.snapshot()) {
      // A client still uploading sets the pace itself (Node's request timeout bounds it).
      if (!transit.flow.request.body.complete && !transit.flow.response) continue;
      // Nor a client reading slowly.
      if (transit.heldForClient) continue;
      if (transit.proxyReq && !transit.timedOut && transit.lastActivity < limit) this.onUpstreamTimeout(transit, transit.proxyReq);
    }
  }

  private onUpstreamTimeout(transit: Transit, proxyReq: ClientRequest): void {
    if (transit.flow.response?.body.complete || proxyReq.destroyed) return;
    transit.timedOut = true;
    proxyReq.destroy(upstreamError(`the target sent nothing for ${this.options.upstreamTimeoutMs} ms`, 'UPSTREAM_TIMEOUT'));
  }

  /** Writes the target's status line and head to the client; false when Node refuses them (the target's fault: it gets a 502). */
  writeResponseHead(transit: Transit): boolean {
    transit.headPending = false;
    const { res } = transit;
    const { statusCode = 0, statusMessage, headers } = transit.proxyRes!;
    try {
      if (statusMessage) res.writeHead(statusCode, statusMessage, headers);
      else res.writeHead(statusCode, headers);
      return true;
    } catch (error) {
      this.onForwardError(transit, upstreamError(`the target's response head cannot be relayed (${(error as Error).message})`, 'UPSTREAM_INVALID_HEAD'));
      transit.proxyReq?.destroy();
      return false;
    }
  }

  /** The target's response stopped before its end: the client's is cut short too. */
  onUpstreamBroke(transit: Transit): void {
    const { flow, res } = transit;
    // No response: the proxy answered the client itself (a 502 or 504) and is done with the target's.
    if (!flow.response || flow.response.body.complete) return;
    if (transit.headPending) {
      // Only the head had come, and none of it reached the client, who can still be told why.
      transit.headPending = false;
      this.onForwardError(transit, upstreamError('the target stopped after its response head', transit.timedOut ? 'UPSTREAM_TIMEOUT' : 'UPSTREAM_BROKE_AFTER_HEAD'));
      return;
    }
    flow.error ??= transit.timedOut
      ? `upstream sent nothing for ${this.options.upstreamTimeoutMs} ms in the middle of the response`
      : 'upstream closed the connection in the middle of the response';
    res.destroy();
  }

  private onForwardError(transit: Transit, error: NodeJS.ErrnoException): void {
    const { flow, req, res } = transit;
    if (res.writableEnded || res.destroyed) return; // already answered, or the client is gone
    if (req.destroyed && !flow.request.body.complete) {
      // The client aborted its own request: nobody to answer.
      flow.error ??= 'client aborted the request';
      res.destroy();
      return;
    }
    // A pooled connection the target had just closed: a request without a body is safely sent again.
    if (!transit.retried && !transit.timedOut && !flow.response && transit.bodyless && transit.proxyReq?.reusedSocket && (error.code === 'ECONNRESET' || error.code === 'EPIPE')) {
      transit.retried = true;
      transit.proxyReq = undefined;
      this.forward(transit);
      return;
    }
    if (res.headersSent) {
      flow.error ??= transit.timedOut ? `upstream sent nothing for ${this.options.upstreamTimeoutMs} ms in the middle of the response` : `upstream connection failed in the middle of the response (${error.code ?? error.message})`;
      res.destroy();
      return;
    }
    const failure = describeUpstreamFailure(error, transit.timedOut, this.options.upstreamTimeoutMs);
    flow.error = failure.message;
    flow.proxyStatus = failure.status;
    delete flow.response; // a head that arrived without its body is not the target's answer
    for (const name of res.getHeaderNames()) res.removeHeader(name);
    if (this.stopping) res.setHeader('Connection', 'close');
    sendJsonError(res, failure.status, failure.code, `tmi-conform proxy: ${failure.message}`);
  }

  onResponseClosed(transit: Transit): void {
    const { flow, res } = transit;
    this.inFlight.delete(transit);
    flow.marks.end = performance.now();
    if (!res.writableFinished) {
      flow.error ??= flow.response ? 'client closed the connection before the response was complete' : 'client closed the connection before the response';
      // Free the upstream connection: nobody reads the rest of its answer.
      if (transit.proxyReq && !transit.proxyReq.destroyed && !flow.response?.body.complete) transit.proxyReq.destroy();
    }
    try {
      this.options.onFlowDone(flow);
    } finally {
      if (this.stopping) this.server.closeIdleConnections();
      if (this.inFlight.size === 0 && this.idleWaiters.length > 0) {
        const waiters = this.idleWaiters;
        this.idleWaiters = [];
        for (const resolve of waiters) resolve();
      }
    }
  }
}

// Stream listeners shared by every exchange (`this` is the stream; its Transit hangs on it).

function onRequestData(this: InTransit<IncomingMessage>, chunk: Buffer): void {
  const transit = this[TRANSIT]!;
  transit.flow.request.body.add(chunk);
  transit.lastActivity = performance.now();
}

function onRequestEnd(this: InTransit<IncomingMessage>): void {
  const transit = this[TRANSIT]!;
  transit.flow.request.body.complete = true;
  transit.flow.marks.requestEnd = transit.lastActivity = performance.now();
}

function onResponseData(this: InTransit<IncomingMessage>, chunk: Buffer): void {
  const transit = this[TRANSIT]!;
  const response = transit.flow.response;
  // No response: it was discarded after a failure (the proxy answered itself); its bytes do not matter.
  if (!response) return;
  response.body.add(chunk);
  transit.lastActivity = performance.now();
  if (transit.headPending && !transit.server.writeResponseHead(transit)) return;
  // The client reads slower than the target sends: hold the target until the client has caught up.
  if (!transit.res.write(chunk) && !transit.res.destroyed && !transit.heldForClient) {
    transit.heldForClient = true;
    this.pause();
    transit.res.once('drain', onClientDrained);
  }
}

function onClientDrained(this: InTransit<ServerResponse>): void {
  const transit = this[TRANSIT]!;
  transit.heldForClient = false;
  transit.lastActivity = performance.now();
  transit.proxyRes?.resume();
}

function onResponseEnd(this: InTransit<IncomingMessage>): void {
  const transit = this[TRANSIT]!;
  const response = transit.flow.response;
  if (!response) return;
  response.body.complete = true;
  if (transit.headPending && !transit.server.writeResponseHead(transit)) return;
  transit.res.end();
}

function onResponseBroken(this: InTransit<IncomingMessage>): void {
  const transit = this[TRANSIT]!;
  transit.server.onUpstreamBroke(transit);
}

function onResponseClose(this: InTransit<ServerResponse>): void {
  const transit = this[TRANSIT]!;
  transit.server.onResponseClosed(transit);
}

function ignoreError(): void {}

/**
 * The exchanges in flight, in a list threaded through their Transits. Not a Set: with an add
 * and a delete per exchange, a Set rehashes its table every few dozen exchanges, and each
 * discarded table, in the old generation, still points at the exchanges in flight when it was
 * replaced. Until the next full collection the young-generation collector takes those for
 * alive, so nearly every exchange was promoted (about 4 KB each at full speed, measured with
 * --trace-gc-nvp) and collected again by costly full collections. The list allocates nothing.
 */
class InFlightList {
  private first: Transit | undefined;
  size = 0;

  add(transit: Transit): void {
    transit.previous = undefined;
    transit.next = this.first;
    if (this.first) this.first.previous = transit;
    this.first = transit;
    this.size++;
  }

  /** Removes `transit`; nothing when it is not in the list. */
  delete(transit: Transit): void {
    if (transit.previous) transit.previous.next = transit.next;
    else if (this.first === transit) this.first = transit.next;
    else return;
    if (transit.next) transit.next.previous = transit.previous;
    transit.previous = transit.next = undefined;
    this.size--;
  }

  /** The exchanges now in flight: a copy, so that they may leave the list while it is walked. */
  snapshot(): Transit[] {
    const transits: Transit[] = [];
    for (let transit = this.first; transit; transit = transit.next) transits.push(transit);
    return transits;
  }
}

/** The client's headers minus hop-by-hop ones, with the target's Host. */
export function forwardedHeaders(headers: IncomingHttpHeaders, host: string): IncomingHttpHeaders {
  const listed = connectionOptions(headers['connection']);
  const out: IncomingHttpHeaders = {};
  for (const name in headers) {
    const value = headers[name];
    if (value === undefined || NOT_FORWARDED.has(name) || name === 'host' || (listed !== undefined && listed.includes(name))) continue;
    out[name] = value;
  }
  out.host = host;
  return out;
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

interface UpstreamFailure {
  status: 502 | 504;
  code: string;
  message: string;
}

/** A failure of the target's that the proxy detects itself, coded for describeUpstreamFailure. */
function upstreamError(message: string, code: string): NodeJS.ErrnoException {
  return Object.assign(new Error(message), { code });
}

function describeUpstreamFailure(error: NodeJS.ErrnoException, timedOut: boolean, timeoutMs: number): UpstreamFailure {
  if (timedOut || error.code === 'UPSTREAM_TIMEOUT') return { status: 504, code: 'upstream_timeout', message: `upstream did not answer within ${timeoutMs} ms` };
  switch (error.code) {
    case 'ECONNREFUSED':
      return { status: 502, code: 'upstream_refused', message: 'upstream refused the connection (ECONNREFUSED)' };
    case 'ECONNRESET':
    case 'EPIPE':
      return { status: 502, code: 'upstream_reset', message: `upstream closed the connection without answering (${error.code})` };
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return { status: 502, code: 'upstream_unknown_host', message: `upstream host could not be resolved (${error.code})` };
    case 'ETIMEDOUT':
      return { status: 504, code: 'upstream_timeout', message: 'upstream connection timed out (ETIMEDOUT)' };
    case 'UPSTREAM_BROKE_AFTER_HEAD':
      return { status: 502, code: 'upstream_reset', message: 'upstream closed the connection after the response head, before its body' };
    case 'UPSTREAM_INVALID_HEAD':
      return { status: 502, code: 'upstream_invalid_response', message: error.message };
    default:
      return { status: 502, code: 'upstream_error', message: `upstream failed: ${error.code ?? error.message}` };
  }
}

function errorBodyText(status: number, message: string, errorCode: string): string {
  return JSON.stringify({ statusCode: status, error: STATUS_CODES[status] ?? 'Error', message, errorCode });
}

/** An error the proxy answers itself, in the API's error body shape; marked so nobody takes it for the target's. */
function sendJsonError(res: ServerResponse, status: number, errorCode: string, message: string): void {
  const text = errorBodyText(status, message, errorCode);
  res.statusCode = status;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(text));
  res.setHeader('Cache-Control', 'no-store');
  res.setHeader('X-TMI-Conform-Proxy-Error', errorCode);
  res.end(text);
}

/** The same, written straight to a socket (no ServerResponse exists for a request that did not parse). */
function rawErrorResponse(status: number, message: string, errorCode: string): string {
  const text = errorBodyText(status, message, errorCode);
  return (
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}\r\n` +
    'Content-Type: application/json; charset=utf-8\r\n' +
    `Content-Length: ${Buffer.byteLength(text)}\r\n` +
    `X-TMI-Conform-Proxy-Error: ${errorCode}\r\n` +
    'Connection: close\r\n\r\n' +
    text
  );
}
