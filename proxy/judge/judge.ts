// Judging: each finished flow becomes an Exchange (the rule engine's vocabulary) and is judged by
// the proxy's judging session (judging/session.ts), whose rate-limit history a resumed journal's
// earlier traffic began.
import { buildExchange } from '../../rules/index.ts';
import type { ExchangeParts } from '../../rules/exchange.ts';
import type { Exchange } from '../../rules/types.ts';
import type { Addon, Flow } from '../flow.ts';
import type { JudgingSession } from '../../judging/session.ts';
import { bearerCredentialOf } from '../../rules/token.ts';

export class JudgeAddon implements Addon {
  readonly name = 'judge';

  /** `origin`: the target's, which recorded URLs start with. Each batch's tokens are verified (prepareTokens) before it is judged. */
  constructor(
    private readonly session: JudgingSession,
    private readonly origin: string,
  ) {}

  done(flow: Flow): void {
    const exchange = exchangeOf(flow, this.origin);
    // The forwarding thread's performance.now() marks order the exchanges finer than their
    // timestamps' milliseconds; recorded with each entry, so validate orders them alike.
    if (exchange.durationMs !== undefined && flow.marks.end !== undefined)
      exchange.order = { clock: this.session.clock, sent: flow.marks.start, received: flow.marks.end };
    flow.exchange = exchange;
    const judgement = this.session.judgePrepared(exchange, bearerCredentialOf(flow.request.headers));
    // The session counted it; the pipeline says it on the console and marks the flow not judged.
    if (!judgement) throw new Error(this.session.lastInternalError);
    flow.judgement = judgement;
  }
}

/** Verifies the batch's tokens not verified yet; undefined when the batch can be judged at once. */
export function prepareTokens(session: JudgingSession, flows: readonly Flow[]): Promise<unknown> | undefined {
  return session.prepare(flows.map((flow) => bearerCredentialOf(flow.request.headers)));
}

const round = (ms: number) => Math.round(ms * 1000) / 1000;

export function exchangeOf(flow: Flow, origin: string): Exchange {
  const { request, response, marks } = flow;
  const parts: ExchangeParts = {
    id: String(flow.id),
    startedAt: new Date(flow.startedAt).toISOString(),
    method: request.method,
    url: origin + request.path,
    requestHeaders: request.headers as Record<string, string | string[] | number | undefined>,
  };
  const requestBody = request.body.captured(headerValue(request.headers['content-encoding']));
  if (requestBody) parts.requestBody = requestBody;
  if (response) {
    parts.status = response.status;
    parts.responseHeaders = response.headers as Record<string, string | string[] | number | undefined>;
    const responseBody = response.body.captured(headerValue(response.headers['content-encoding']));
    if (responseBody) parts.responseBody = responseBody;
  }
  if (flow.error !== undefined) parts.error = flow.error;
  const exchange = buildExchange(parts);
  // Durations only for exchanges that got a response: the rate-limit history places them in time.
  if (response && marks.end !== undefined) exchange.durationMs = round(marks.end - marks.start);
  return exchange;
}

function headerValue(value: string | string[] | number | undefined): string | undefined {
  if (value === undefined) return undefined;
  return Array.isArray(value) ? value.join(', ') : String(value);
}
