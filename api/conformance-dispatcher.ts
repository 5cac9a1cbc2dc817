// An undici dispatcher that judges an application's own calls to the tenant, in its own tests,
// without a proxy:
//   const conformance = await conformanceDispatcher({ target: 'https://tenant.example.com' });
//   setGlobalDispatcher(conformance);   // fetch() and undici.request() now go through it
//   … the application's tests …
//   const report = await conformance.report();
// Each request to the target's origin becomes an exchange when its answer has ended, judged by
// the rule engine as the proxy judges what it observes; other origins pass through unseen. The
// interceptor only watches: it never changes, delays or fails a request, and a body over the
// limit is counted, not kept.
import { randomUUID } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import type { Duplex } from 'node:stream';
import { Agent, type Dispatcher } from 'undici';
import { learnTenant, TenantTokens } from '../keys/tenant.ts';
import { ReportBuilder } from '../reports/builder.ts';
import type { FailOn } from '../reports/fail-on.ts';
import type { Baseline, Report } from '../reports/model.ts';
import { buildExchange, judgeExchange, RateLimitTracker } from '../rules/index.ts';
import type { CapturedBody, Exchange, Headers } from '../rules/types.ts';
import { bearerCredential } from '../rules/token.ts';
import { UsageError } from '../core/errors.ts';

export interface ConformanceDispatcherOptions {
  /** The tenant: requests to its origin are judged (https://tenant.example.com). */
  target: string;
  /** What sends the requests (default: a new undici Agent). */
  dispatcher?: Dispatcher;
  /** The tenant's JWKS (URL or file), to check every token's signature; default: from the target's discovery document, as the proxy does. */
  jwks?: string;
  /** The issuer the tenant's tokens carry; default: the discovery document's. */
  issuer?: string;
  /** Bytes of each body kept for judging (default 1 MiB); a longer body is not judged. */
  maxBodyBytes?: number;
}

export interface ConformanceDispatcher extends Dispatcher {
  /** The report of every exchange whose answer has ended, once each is judged (`report.passed` is the verdict). */
  report(options?: { failOn?: FailOn; baseline?: Baseline }): Promise<Report>;
  /** Exchanges judged so far. */
  readonly exchanges: number;
}

const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;

/** One body as it streams past: kept up to the limit, counted beyond it. */
class BodyCapture {
  private readonly chunks: Buffer[] = [];
  private kept = 0;
  private over = false;

  constructor(private readonly limit: number) {}

  add(chunk: Uint8Array | string): void {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    if (this.over) return;
    if (this.kept + bytes.length > this.limit) {
      this.over = true;
      return;
    }
    this.chunks.push(Buffer.from(bytes));
    this.kept += bytes.length;
  }

  body(): CapturedBody {
    if (this.over) return { text: '', truncated: true };
    return { text: Buffer.concat(this.chunks).toString('utf8') };
  }
}

/** undici's request headers in any of their shapes (record, [name, value] pairs, a flat list) as the rule engine's. */
function requestHeaders(input: Dispatcher.DispatchOptions['headers']): Headers {
  const out: Headers = {};
  const add = (name: unknown, value: unknown) => {
    if (typeof name !== 'string' || value === undefined || value === null) return;
    const key = name.toLowerCase();
    const text = Array.isArray(value) ? value.map(String).join(', ') : String(value);
    out[key] = out[key] === undefined ? text : `${out[key]}, ${text}`;
  };
  if (input === undefined || input === null) return out;
  if (Array.isArray(input)) {
    if (input.length > 0 && Array.isArray(input[0])) for (const pair of input as unknown as unknown[][]) add(pair[0], pair[1]);
    else for (let i = 0; i + 1 < input.length; i += 2) add(input[i], input[i + 1]);
    return out;
  }
  if (typeof (input as Iterable<unknown>)[Symbol.iterator] === 'function') {
    for (const pair of input as Iterable<[string, string]>) add(pair[0], pair[1]);
    return out;
  }
  for (const [name, value] of Object.entries(input as Record<string, unknown>)) add(name, value);
  return out;
}

/**
 * The request body as sent: a string or bytes are read as they are; an iterable or a stream
 * (what fetch hands over) is passed on through a copy that keeps what streams past.
 */
function watchRequestBody(body: Dispatcher.DispatchOptions['body'], capture: BodyCapture): Dispatcher.DispatchOptions['body'] {
  if (body === undefined || body === null) return body;
  if (typeof body === 'string' || body instanceof Uint8Array) {
    capture.add(body);
    return body;
  }
  const iterable = body as AsyncIterable<Uint8Array | string>;
  if (typeof iterable[Symbol.asyncIterator] !== 'function') return body;
  // undici sends any async iterable; its types name only streams.
  return (async function* passOn() {
    for await (const chunk of iterable) {
      capture.add(chunk);
      yield chunk;
    }
  })() as unknown as Dispatcher.DispatchOptions['body'];
}

interface Judging {
  origin: string;
  /** The next exchange's id: reports name the exchange behind each finding. */
  nextId: () => string;
  maxBodyBytes: number;
  tracker: RateLimitTracker;
  tenant: TenantTokens;
  clock: string;
  judged: (exchange: Exchange) => Promise<void>;
}

/** Passes every event on to the application's handler, keeping what it needs to make the exchange. */
class JudgingHandler implements Dispatcher.DispatchHandler {
  private readonly startedAt = Date.now();
  private readonly sent = performance.now();
  private readonly id: string;
  private readonly responseBody: BodyCapture;
  private status: number | undefined;
  private responseHeaders: Headers = {};

  constructor(
    private readonly options: Dispatcher.DispatchOptions,
    private readonly requestBody: BodyCapture,
    private readonly judging: Judging,
    private readonly handler: Dispatcher.DispatchHandler,
  ) {
    this.responseBody = new BodyCapture(judging.maxBodyBytes);
    this.id = judging.nextId();
  }

  onRequestStart(controller: Dispatcher.DispatchController, context: unknown): void {
    this.handler.onRequestStart?.(controller, context);
  }

  onRequestUpgrade(controller: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders, socket: Duplex): void {
    this.handler.onRequestUpgrade?.(controller, statusCode, headers, socket);
  }

  onResponseStart(controller: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders, statusMessage?: string): void {
    this.status = statusCode;
    this.responseHeaders = requestHeaders(headers as Record<string, string>);
    this.handler.onResponseStart?.(controller, statusCode, headers, statusMessage);
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.responseBody.add(chunk);
    this.handler.onResponseData?.(controller, chunk);
  }

  onResponseEnd(controller: Dispatcher.DispatchController, trailers: IncomingHttpHeaders): void {
    try {
      this.finish();
    } catch {
      // Judging never breaks the application's request.
    }
    this.handler.onResponseEnd?.(controller, trailers);
  }

  onResponseError(controller: Dispatcher.DispatchController, error: Error): void {
    this.handler.onResponseError?.(controller, error);
  }

  private finish(): void {
    if (this.status === undefined) return;
    const headers = requestHeaders(this.options.headers);
    const exchange = buildExchange({
      id: this.id,
      startedAt: new Date(this.startedAt).toISOString(),
      durationMs: Date.now() - this.startedAt,
      order: { clock: this.judging.clock, sent: this.sent, received: performance.now() },
      method: this.options.method,
      url: `${this.judging.origin}${this.options.path}`,
      requestHeaders: headers,
      requestBody: this.requestBody.body(),
      status: this.status,
      responseHeaders: this.responseHeaders,
      responseBody: this.responseBody.body(),
    });
    void this.judging.judged(exchange).catch(() => {});
  }
}

/** A dispatcher that sends as `options.dispatcher` does and judges every exchange with the tenant (see the file's header). */
export async function conformanceDispatcher(options: ConformanceDispatcherOptions): Promise<ConformanceDispatcher> {
  let origin: string;
  try {
    origin = new URL(options.target).origin;
  } catch {
    throw new UsageError(`conformanceDispatcher: target "${options.target}" is not a URL`);
  }
  const knowledge = await learnTenant({ wellKnownAt: origin, ...(options.jwks !== undefined ? { jwks: options.jwks } : {}), ...(options.issuer !== undefined ? { issuer: options.issuer } : {}) });
  if (options.jwks !== undefined && knowledge.keys && 'problem' in knowledge.keys) throw new UsageError(`conformanceDispatcher: jwks: ${knowledge.keys.problem}`);
  const tenant = TenantTokens.of(knowledge);
  const builder = new ReportBuilder({ kind: 'proxy', source: 'dispatcher', target: origin });
  let exchanges = 0;
  let sent = 0;
  // Judged in the order answers end, one after another (a token's signature check may wait for keys).
  let queue: Promise<void> = Promise.resolve();
  const judging: Judging = {
    origin,
    nextId: () => `dispatcher-${++sent}`,
    maxBodyBytes: options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES,
    tracker: new RateLimitTracker(),
    tenant,
    clock: `dispatcher ${randomUUID()}`,
    judged: (exchange) => {
      queue = queue.then(async () => {
        const credential = bearerCredential(exchange.request.headers['authorization']);
        await tenant.check(exchange.token, credential);
        builder.addExchange(exchange, judgeExchange(exchange, judging.tracker));
        exchanges++;
      });
      return queue;
    },
  };
  const interceptor: Dispatcher.DispatcherComposeInterceptor = (dispatch) => (dispatchOptions, handler) => {
    if (dispatchOptions.origin === undefined || new URL(String(dispatchOptions.origin)).origin !== origin) return dispatch(dispatchOptions, handler);
    const requestBody = new BodyCapture(judging.maxBodyBytes);
    const watched = { ...dispatchOptions, body: watchRequestBody(dispatchOptions.body, requestBody) };
    return dispatch(watched, new JudgingHandler(watched, requestBody, judging, handler));
  };
  const composed = (options.dispatcher ?? new Agent()).compose(interceptor);
  return Object.defineProperties(composed, {
    report: {
      value: async ({ failOn = 'must', baseline }: { failOn?: FailOn; baseline?: Baseline } = {}) => {
        await queue;
        return builder.build({ failOn, baseline });
      },
    },
    exchanges: { get: () => exchanges },
  }) as ConformanceDispatcher;
}
