// The relay of the proxy: accepts origin-form requests (listener.ts), forwards them to the one
// target through http-proxy over a keep-alive pool, and watches both bodies stream past
// (capture.ts) without ever holding them back. The response is relayed here rather than by
// http-proxy (selfHandleResponse), so that the proxy decides what happens at each step: a head Node
// refuses to send becomes a 502 (under http-proxy it threw where nothing could catch it), a
// target failing before the first body byte still gets the client a 502 or 504, and while a
// slow client holds the target back, the upstream timeout does not run. Each exchange becomes
// a Flow, handed on once its response has been sent or has failed. It never forwards anywhere
// but the target: absolute-form requests and CONNECT are refused, and the Host header is always
// the target's (headers.ts).
import { Agent as HttpAgent, type ClientRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import httpProxy from 'http-proxy';
import { BodyCapture } from './capture.ts';
import { sendProxyError } from './error-response.ts';
import type { Flow } from '../flow.ts';
import { forwardedHeaders, readyHeadForClient } from './headers.ts';
import { InFlightList } from './in-flight.ts';
import { createListener, type ListenerOptions } from './listener.ts';
import type { Target } from './target.ts';
import { startTimeoutSweep } from './timeout-sweep.ts';
import { TRANSIT, type InTransit, type Relay, type Transit } from './transit.ts';
import { describeUpstreamFailure, midResponseFailure, upstreamError } from './upstream-failure.ts';

/** Idle pooled connections are closed after this long (sooner when the target says so). */
const IDLE_UPSTREAM_SOCKET_MS = 30_000;

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
  /** Listen with HTTPS, presenting this certificate; plain HTTP without. */
  tls?: ListenerOptions['tls'];
  /** A client that did not complete the TLS handshake. */
  onTlsClientError?: ListenerOptions['onTlsClientError'];
}

export class ProxyServer implements Relay {
  readonly server: Server;
  private readonly proxy: httpProxy;
  private readonly agent: HttpAgent;
  private readonly inFlight = new InFlightList();
  private readonly timeoutSweep: NodeJS.Timeout;
  private nextId = 1;
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

    this.timeoutSweep = startTimeoutSweep(
      this.inFlight,
      options.upstreamTimeoutMs,
      (transit, proxyReq) => this.onUpstreamTimeout(transit, proxyReq),
      (transit) => this.finishAbandoned(transit, 'client closed the connection before the response'),
    );
    this.server = createListener({
      targetOrigin: target.origin,
      ...(options.tls ? { tls: options.tls } : {}),
      onRequest: (req, res) => this.onRequest(req, res),
      onRefused: (reason) => this.refused(reason),
      ...(options.onTlsClientError ? { onTlsClientError: options.onTlsClientError } : {}),
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
    return this.inFlight.whenEmpty();
  }

  /** Ends every exchange still in flight, recording `reason` as its error. */
  abortInFlight(reason: string): void {
    for (const transit of this.inFlight.snapshot()) {
      transit.flow.error ??= reason;
      if (transit.proxyReq && !transit.flow.response?.body.complete) transit.proxyReq.destroy();
      transit.res.destroy();
    }
  }

  /**
   * Finishes, as cut short, every exchange still in flight after abortInFlight had its chance:
   * responses that never got their socket (queued behind earlier pipelined requests on a
   * connection that was reset) emit no 'close', so nothing else would ever finish them.
   */
  finishAllAbandoned(reason: string): void {
    for (const transit of this.inFlight.snapshot()) this.finishAbandoned(transit, reason);
  }

  /** Finishes one exchange whose response will never close by itself, recording `reason`. */
  private finishAbandoned(transit: Transit, reason: string): void {
    transit.flow.error ??= reason;
    if (transit.proxyReq && !transit.proxyReq.destroyed && !transit.flow.response?.body.complete) transit.proxyReq.destroy();
    this.onResponseClosed(transit);
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
      this.refuseAbsoluteForm(req, res);
      return;
    }
    if (this.stopping) res.setHeader('Connection', 'close');

    const headers = forwardedHeaders(req.headers, target.host);
    const path = target.basePath + requestTarget;
    const transit = this.newTransit(req, res, headers, path);
    const { flow } = transit;
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

  /** absolute-form ("http://elsewhere/…") and asterisk-form ("*"): never forwarded. */
  private refuseAbsoluteForm(req: IncomingMessage, res: ServerResponse): void {
    this.refused('absolute-form request target');
    res.setHeader('Connection', 'close');
    req.resume();
    sendProxyError(
      res,
      400,
      'absolute_form_refused',
      `This is a reverse proxy for ${this.options.target.origin}: send origin-form requests ("GET /path"), not absolute URLs or "*".`,
    );
  }

  /** A request's flow (what is recorded) and its transit (what the forwarding tracks), as it arrives. */
  private newTransit(req: IncomingMessage, res: ServerResponse, headers: Flow['request']['headers'], path: string): Transit {
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
    return {
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
      done: false,
    };
  }

  private forward(transit: Transit): void {
    // web(req, res, callback): without an options argument http-proxy copies no options per request.
    (this.proxy.web as (req: IncomingMessage, res: ServerResponse, callback: (error: Error, req: IncomingMessage) => void) => void)(
      transit.req,
      transit.res,
      this.onWebError,
    );
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
    readyHeadForClient(proxyRes.headers, transit.req.httpVersion, transit.clientCloses || this.stopping);
    transit.headPending = true;
    transit.proxyRes = proxyRes;
    transit.lastActivity = flow.marks.responseStart;
    (proxyRes as InTransit<IncomingMessage>)[TRANSIT] = transit;
    proxyRes.on('data', onResponseData);
    proxyRes.on('end', onResponseEnd);
    // A response cut short is destroyed with an "aborted" error, which reaches 'error' listeners ('aborted' is not needed too).
    proxyRes.on('error', onResponseBroken);
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
      this.onForwardError(
        transit,
        upstreamError('the target stopped after its response head', transit.timedOut ? 'UPSTREAM_TIMEOUT' : 'UPSTREAM_BROKE_AFTER_HEAD'),
      );
      return;
    }
    flow.error ??= midResponseFailure(transit.timedOut, this.options.upstreamTimeoutMs, 'upstream closed the connection in the middle of the response');
    res.destroy();
  }

  private onForwardError(transit: Transit, error: NodeJS.ErrnoException): void {
    if (this.tookBodyAfterBodylessAnswer(transit, error)) return;
    const { flow, req, res } = transit;
    if (res.writableEnded || res.destroyed) return; // already answered, or the client is gone
    if (req.destroyed && !flow.request.body.complete) {
      // The client aborted its own request: nobody to answer.
      flow.error ??= 'client aborted the request';
      res.destroy();
      return;
    }
    // A pooled connection the target had just closed: a request without a body is safely sent again.
    if (
      !transit.retried &&
      !transit.timedOut &&
      !flow.response &&
      transit.bodyless &&
      transit.proxyReq?.reusedSocket &&
      (error.code === 'ECONNRESET' || error.code === 'EPIPE')
    ) {
      transit.retried = true;
      transit.proxyReq = undefined;
      this.forward(transit);
      return;
    }
    if (res.headersSent) {
      flow.error ??= midResponseFailure(
        transit.timedOut,
        this.options.upstreamTimeoutMs,
        `upstream connection failed in the middle of the response (${error.code ?? error.message})`,
      );
      res.destroy();
      return;
    }
    const failure = describeUpstreamFailure(error, transit.timedOut, this.options.upstreamTimeoutMs);
    flow.error = failure.message;
    flow.proxyStatus = failure.status;
    delete flow.response; // a head that arrived without its body is not the target's answer
    for (const name of res.getHeaderNames()) res.removeHeader(name);
    if (this.stopping) res.setHeader('Connection', 'close');
    sendProxyError(res, failure.status, failure.code, `tmi-conform proxy: ${failure.message}`);
  }

  /**
   * A 204 or 304 (or an answer to HEAD) has no body by HTTP's rules, so Node's parser reads bytes
   * the target sent after such a head as the start of a next response, and fails. Those bytes are
   * the body the target sent: the client gets the answer as HTTP defines it (no body), and the
   * exchange is recorded with the bytes, so the rules judge what the target did (a 204 with a body)
   * instead of a 502 the target never caused.
   */
  private tookBodyAfterBodylessAnswer(transit: Transit, error: NodeJS.ErrnoException): boolean {
    const { flow, res } = transit;
    const response = flow.response;
    if (!response || transit.done || !error.code?.startsWith('HPE_')) return false;
    if (response.status !== 204 && response.status !== 304 && flow.request.method !== 'HEAD') return false;
    const { rawPacket, bytesParsed } = error as NodeJS.ErrnoException & { rawPacket?: unknown; bytesParsed?: number };
    if (Buffer.isBuffer(rawPacket)) response.body.add(bytesAfterHead(rawPacket, bytesParsed ?? 0));
    response.body.complete = true;
    if (!res.writableEnded && !res.destroyed) {
      if (transit.headPending && !this.writeResponseHead(transit)) return true;
      res.end();
    }
    return true;
  }

  onResponseClosed(transit: Transit): void {
    if (transit.done) return;
    transit.done = true;
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
      this.inFlight.notifyIfEmpty();
    }
  }
}

/**
 * The bytes of a failed parse that follow the bodyless head: after the head's blank line when the
 * packet holds the head too, otherwise from where the parser stopped.
 */
function bytesAfterHead(packet: Buffer, bytesParsed: number): Buffer {
  const headEnd = packet.indexOf('\r\n\r\n');
  if (packet.toString('latin1', 0, 5) === 'HTTP/' && headEnd !== -1) return packet.subarray(headEnd + 4);
  return packet.subarray(Math.min(bytesParsed, packet.length));
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
