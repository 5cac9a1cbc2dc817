// One request to the target, as an exchange judged by the rule engine. Suites and the run's
// preflight send everything through here; nothing in suites/ judges a response itself.
import { Agent, request, type Dispatcher } from 'undici';
import type { JudgingSession } from '../judging/session.ts';
import { buildExchange } from '../rules/exchange.ts';
import { bearerCredentialOf } from '../rules/token.ts';
import type { Judgement } from '../rules/index.ts';
import type { BearerToken, Exchange } from '../rules/types.ts';

export interface OutgoingRequest {
  method: string;
  /** Absolute URL, path already encoded. */
  url: string;
  headers: Record<string, string>;
  body?: string;
  /** What the suite knows about the token that its claims cannot tell. */
  tokenFacts?: Pick<BearerToken, 'signatureValid' | 'clientGlobal' | 'attack' | 'attackSecret' | 'heldByKit'>;
  /** The token names a key URL the suite serves: whether the target requested it, asked once the answer is in. */
  keyUrlFetched?: () => boolean;
}

/** What sending and judging one request needs, owned by the caller (suites/api.ts SuiteApi). */
export interface SendContext {
  /** The connections to the target, and the request timeout they apply. */
  connections: TargetConnections;
  /** Judges every exchange (judging/session.ts): the tenant's tokens, the rate-limit history, the API base path of base_url. */
  session: JudgingSession;
  /** Aborted when the run is interrupted: a request in flight is given up, with no exchange (it is no evidence). */
  signal?: AbortSignal;
}

export interface Judged extends Judgement {
  status: number;
  headers: Exchange['request']['headers'];
  text: string;
  /** The body parsed as JSON; undefined when empty or not JSON. */
  json: unknown;
  exchange: Exchange;
}

/** The target did not answer (refused, reset, timed out): the run cannot go on. */
export class TargetUnreachable extends Error {
  override name = 'TargetUnreachable';
}

/** Connections to the target whose every step (connect, head, body) gives up after `timeoutMs`. */
function targetAgent(timeoutMs: number): Agent {
  return new Agent({ connect: { timeout: timeoutMs }, headersTimeout: timeoutMs, bodyTimeout: timeoutMs, keepAliveTimeout: 4_000 });
}

/**
 * The connections to the target: one keep-alive pool, and one of its own for each request
 * whose header values differ from some sent before only in letter case ("bearer <token>" after
 * "Bearer <token>"). An HTTP server may keep the header values a connection brought and take a
 * later one that matches regardless of case for the earlier (Jetty's parser does, so WireMock
 * does): on a shared connection the second request would be read as the first, and its answer,
 * judged as the answer to what was sent, would be to something else.
 */
export class TargetConnections {
  private readonly shared: Agent;
  /** The first spelling sent of each header value, by its name and lowercase form. */
  private readonly firstSpelling = new Map<string, string>();
  /** The pools of the other spellings, by the values that are not the first. */
  private readonly apart = new Map<string, Agent>();

  constructor(private readonly timeoutMs: number) {
    this.shared = targetAgent(timeoutMs);
  }

  /** Where a request with these headers goes. */
  for(headers: Record<string, string>): Dispatcher {
    const otherSpellings = Object.entries(headers).filter(([name, value]) => this.spellingFirstSent(name, value) !== value);
    if (otherSpellings.length === 0) return this.shared;
    const key = JSON.stringify(otherSpellings);
    let agent = this.apart.get(key);
    if (!agent) {
      agent = targetAgent(this.timeoutMs);
      this.apart.set(key, agent);
    }
    return agent;
  }

  async close(): Promise<void> {
    await Promise.all([this.shared, ...this.apart.values()].map((agent) => agent.close()));
  }

  private spellingFirstSent(name: string, value: string): string {
    const folded = `${name.toLowerCase()}: ${value.toLowerCase()}`;
    const first = this.firstSpelling.get(folded);
    if (first === undefined) this.firstSpelling.set(folded, value);
    return first ?? value;
  }
}

function parseJson(text: string): unknown {
  if (text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The kit failed on an exchange while judging it (a bug): the test cannot go on, and says so. */
export class NotJudged extends Error {
  override name = 'NotJudged';
}

export async function sendAndJudge(outgoing: OutgoingRequest, { connections, session, signal }: SendContext): Promise<Judged> {
  signal?.throwIfAborted();
  const dispatcher = connections.for(outgoing.headers);
  const started = Date.now();
  const sent = performance.now();
  let response: Awaited<ReturnType<typeof request>>;
  const send = () =>
    request(outgoing.url, {
      method: outgoing.method as 'GET',
      headers: outgoing.headers,
      body: outgoing.body ?? null,
      dispatcher,
      ...(signal ? { signal } : {}),
    });
  try {
    response = await send().catch((error: { code?: string }) => {
      // A kept-alive connection the target closed as the request went out: once more, on a
      // fresh connection, as any HTTP client does.
      if (!signal?.aborted && (error.code === 'UND_ERR_SOCKET' || error.code === 'ECONNRESET')) return send();
      throw error;
    });
  } catch (error) {
    signal?.throwIfAborted();
    const code = (error as { code?: string }).code;
    throw new TargetUnreachable(`${outgoing.method} ${new URL(outgoing.url).origin}: ${code ?? (error as Error).message}`);
  }
  const status = response.statusCode;
  const responseHeaders = response.headers;
  let text = '';
  let bodyError: string | undefined;
  try {
    text = await response.body.text();
  } catch (error) {
    signal?.throwIfAborted();
    // The target answered, but its body broke HTTP (e.g. a 204 declaring a Content-Length):
    // the status and headers are evidence the rules judge; the error is kept beside them.
    bodyError = `response body: ${(error as { code?: string }).code ?? (error as Error).message}`;
  }
  const exchange = buildExchange({
    startedAt: new Date(started).toISOString(),
    durationMs: Date.now() - started,
    order: { clock: session.clock, sent, received: performance.now() },
    method: outgoing.method,
    url: outgoing.url,
    requestHeaders: outgoing.headers,
    ...(outgoing.body !== undefined ? { requestBody: outgoing.body } : {}),
    status,
    responseHeaders,
    responseBody: text,
    ...(outgoing.tokenFacts || outgoing.keyUrlFetched
      ? { tokenFacts: { ...outgoing.tokenFacts, ...(outgoing.keyUrlFetched ? { keyUrlFetched: outgoing.keyUrlFetched() } : {}) } }
      : {}),
    ...(bodyError !== undefined ? { error: bodyError } : {}),
  });
  const judgement = await session.judge(exchange, bearerCredentialOf(outgoing.headers));
  if (!judgement) throw new NotJudged(`internal error of the kit judging ${outgoing.method} ${outgoing.url}: ${session.lastInternalError}`);
  return { ...judgement, status, headers: exchange.response!.headers, text, json: parseJson(text), exchange };
}
