// An undici dispatcher that judges an application's own calls to the tenant, in its own tests,
// without a proxy:
//   const conformance = await conformanceDispatcher({ target: 'https://tenant.example.com' });
//   setGlobalDispatcher(conformance);   // fetch() and undici.request() now go through it
//   … the application's tests …
//   const report = await conformance.report();
// Each request to the target's origin becomes an exchange when its answer has ended, judged by
// the rule engine as the proxy judges what it observes; other origins pass through unseen. The
// interceptor only watches: it never changes, delays or fails a request. Bodies are kept as the
// proxy keeps them (proxy/forward/capture.ts): a body over the limit is counted, not judged, and a
// content-encoded body (undici hands it on still encoded) is decoded before the rules read it.
import { randomUUID } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { stringify } from 'node:querystring';
import type { Duplex } from 'node:stream';
import { Agent, type Dispatcher } from 'undici';
import { learnTenant, TenantTokens } from '../keys/tenant.ts';
import type { FailOn } from '../reports/fail-on.ts';
import type { Baseline, Report } from '../reports/model.ts';
import { ApiLayout, buildExchange } from '../rules/index.ts';
import { apiBaseOfTarget } from '../rules/api-base.ts';
import { normalizeHeaders } from '../rules/exchange.ts';
import { loadOpenApiFile } from '../rules/openapi/load.ts';
import type { Exchange, Headers } from '../rules/types.ts';
import { bearerCredentialOf } from '../rules/token.ts';
import { UsageError } from '../core/errors.ts';
import { BodyCapture } from '../proxy/forward/capture.ts';
import { JudgingSession } from '../judging/session.ts';

export interface ConformanceDispatcherOptions {
  /** The tenant: requests to its origin are judged (https://tenant.example.com). */
  target: string;
  /** What sends the requests (default: a new undici Agent). */
  dispatcher?: Dispatcher;
  /** The tenant's JWKS (URL or file), to check every token's signature; default: from the target's discovery document, as the proxy does. */
  jwks?: string;
  /** The issuer the tenant's tokens carry; default: the discovery document's. */
  issuer?: string;
  /** Bytes of each body kept for judging (default 1 MiB); a longer body, on the wire or once decoded, is not judged. */
  maxBodyBytes?: number;
  /** An OpenAPI 3.0/3.1 description (a file) of the operations the document does not detail, as the proxy's --openapi. */
  openapi?: string;
  /** Clients (token azp) that are not global, so that "a non-global client cannot delete" is judged. */
  nonGlobalClients?: string[];
}

export interface ConformanceDispatcher extends Dispatcher {
  /** The report of every exchange whose answer has ended, once each is judged (`report.passed` is the verdict). */
  report(options?: { failOn?: FailOn; baseline?: Baseline }): Promise<Report>;
  /** Exchanges judged so far. */
  readonly exchanges: number;
}

const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;

/** A header of undici's as normalizeHeaders reads it: a list value is one header per item. */
type HeaderLine = { name: string; value: string };

/**
 * undici's headers in any of their shapes (a record, a flat [name, value, …] list, a list or any
 * iterable of [name, value] pairs; a value a string, a list or a number) as the rule engine's.
 * Undefined values are left out and null is sent empty, as undici does.
 */
export function undiciHeaders(input: Dispatcher.DispatchOptions['headers'] | undefined): Headers {
  const lines: HeaderLine[] = [];
  const add = (name: unknown, value: unknown): void => {
    if (typeof name !== 'string' || value === undefined) return;
    if (Array.isArray(value)) for (const item of value) lines.push({ name, value: String(item ?? '') });
    else lines.push({ name, value: String(value ?? '') });
  };
  if (input === undefined || input === null) return {};
  if (Array.isArray(input)) {
    if (input.length > 0 && Array.isArray(input[0])) for (const pair of input as unknown as unknown[][]) add(pair[0], pair[1]);
    else for (let i = 0; i + 1 < input.length; i += 2) add(input[i], input[i + 1]);
  } else if (typeof (input as Iterable<unknown>)[Symbol.iterator] === 'function') {
    for (const pair of input as Iterable<[unknown, unknown]>) add(pair[0], pair[1]);
  } else {
    for (const [name, value] of Object.entries(input)) add(name, value);
  }
  return normalizeHeaders(lines);
}

/** A chunk as bytes of its own: undici's are views into the socket's read buffer, and a string is sent as utf-8. */
function bytesOf(chunk: Uint8Array | string): Buffer {
  return typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : Buffer.from(chunk);
}

/**
 * The request body as sent: a string or bytes are read as they are; an iterable or a stream
 * (what fetch hands over) is passed on through a copy that keeps what streams past.
 */
function watchRequestBody(body: Dispatcher.DispatchOptions['body'], capture: BodyCapture): Dispatcher.DispatchOptions['body'] {
  if (body === undefined || body === null) {
    capture.complete = true;
    return body;
  }
  if (typeof body === 'string' || body instanceof Uint8Array) {
    capture.add(bytesOf(body));
    capture.complete = true;
    return body;
  }
  const iterable = body as AsyncIterable<Uint8Array | string>;
  if (typeof iterable[Symbol.asyncIterator] !== 'function') return body;
  // undici sends any async iterable; its types name only streams.
  return (async function* passOn() {
    for await (const chunk of iterable) {
      capture.add(bytesOf(chunk));
      yield chunk;
    }
    // Only a body sent to its end is judged; one cut short stays truncated.
    capture.complete = true;
  })() as unknown as Dispatcher.DispatchOptions['body'];
}

interface Judging {
  origin: string;
  /** The next exchange's id: reports name the exchange behind each finding. */
  nextId: () => string;
  maxBodyBytes: number;
  clock: string;
  judged: (exchange: Exchange) => Promise<void>;
  /** An exchange the kit failed on: counted among those not judged, never breaking the application's request. */
  failed: (id: string) => void;
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
    this.responseHeaders = undiciHeaders(headers);
    this.handler.onResponseStart?.(controller, statusCode, headers, statusMessage);
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.responseBody.add(bytesOf(chunk));
    this.handler.onResponseData?.(controller, chunk);
  }

  onResponseEnd(controller: Dispatcher.DispatchController, trailers: IncomingHttpHeaders): void {
    this.responseBody.complete = true;
    try {
      this.finish();
    } catch {
      // Judging never breaks the application's request; the report says the exchange was not judged.
      this.judging.failed(this.id);
    }
    this.handler.onResponseEnd?.(controller, trailers);
  }

  onResponseError(controller: Dispatcher.DispatchController, error: Error): void {
    this.handler.onResponseError?.(controller, error);
  }

  private finish(): void {
    if (this.status === undefined) return;
    const requestHeaders = undiciHeaders(this.options.headers);
    const exchange = buildExchange({
      id: this.id,
      startedAt: new Date(this.startedAt).toISOString(),
      durationMs: Date.now() - this.startedAt,
      order: { clock: this.judging.clock, sent: this.sent, received: performance.now() },
      method: this.options.method,
      url: `${this.judging.origin}${pathWithQuery(this.options)}`,
      requestHeaders,
      // Bodies as the rules read them: decoded per content-encoding; cut short or over the limit, truncated (not judged).
      requestBody: this.requestBody.captured(requestHeaders['content-encoding']),
      status: this.status,
      responseHeaders: this.responseHeaders,
      responseBody: this.responseBody.captured(this.responseHeaders['content-encoding']),
    });
    void this.judging.judged(exchange);
  }
}

/** The path as sent: undici appends a `query` option to it as node:querystring writes it. */
function pathWithQuery({ path, query }: Dispatcher.DispatchOptions): string {
  if (query === undefined || query === null) return path;
  const written = stringify(query as Record<string, string | number | boolean | readonly string[]>);
  return written === '' ? path : `${path}?${written}`;
}

/** A dispatcher that sends as `options.dispatcher` does and judges every exchange with the tenant (see the file's header). */
export async function conformanceDispatcher(options: ConformanceDispatcherOptions): Promise<ConformanceDispatcher> {
  let origin: string;
  try {
    origin = new URL(options.target).origin;
  } catch {
    throw new UsageError(`conformanceDispatcher: target "${options.target}" is not a URL`);
  }
  const knowledge = await learnTenant({
    wellKnownAt: origin,
    ...(options.jwks !== undefined ? { jwks: options.jwks } : {}),
    ...(options.issuer !== undefined ? { issuer: options.issuer } : {}),
  });
  if (options.jwks !== undefined && knowledge.keys && 'problem' in knowledge.keys)
    throw new UsageError(`conformanceDispatcher: jwks: ${knowledge.keys.problem}`);
  const openapi =
    options.openapi === undefined
      ? undefined
      : await loadOpenApiFile(options.openapi).catch((error: Error) => {
          throw new UsageError(`conformanceDispatcher: openapi: ${error.message}`);
        });
  const session = new JudgingSession({
    tenant: TenantTokens.of(knowledge),
    // The API base path behind the target, as the proxy finds it behind --target.
    layout: new ApiLayout({ base: apiBaseOfTarget(new URL(options.target).pathname, openapi?.declaredBasePaths), ...(openapi ? { openapi } : {}) }),
    ...(options.nonGlobalClients ? { nonGlobalClients: options.nonGlobalClients } : {}),
    // The application's token requests carry its client secrets: learned, and masked wherever they turn up later.
    report: {
      kind: 'proxy',
      source: 'dispatcher',
      target: origin,
      openapi: openapi !== undefined,
      maskLearnedSecrets: true,
      ...(openapi ? { description: openapi.coverageFrame() } : {}),
    },
    clock: `dispatcher ${randomUUID()}`,
  });
  let exchanges = 0;
  let sent = 0;
  // Judged in the order answers end, one after another (a token's signature check may wait for
  // keys). The session counts an exchange the kit failed on as not judged and goes on.
  let queue: Promise<void> = Promise.resolve();
  const judging: Judging = {
    origin,
    nextId: () => `dispatcher-${++sent}`,
    maxBodyBytes: options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES,
    clock: session.clock,
    judged: (exchange) => {
      queue = queue.then(async () => {
        const judgement = await session.judge(exchange, bearerCredentialOf(exchange.request.headers));
        session.record(exchange, judgement);
        if (judgement) exchanges++;
      });
      return queue;
    },
    failed: (id) => session.notJudged(id),
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
        return session.builder!.build({ failOn, baseline });
      },
    },
    exchanges: { get: () => exchanges },
  }) as ConformanceDispatcher;
}
