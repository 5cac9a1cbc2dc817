// Judging: each finished flow becomes an Exchange (the rule engine's vocabulary) and goes
// through judgeExchange, with one rate-limit tracker for the whole proxy session.
import { randomUUID } from 'node:crypto';
import { buildExchange, judgeExchange, RateLimitTracker } from '../../rules/index.ts';
import type { ExchangeParts } from '../../rules/exchange.ts';
import type { Exchange } from '../../rules/types.ts';
import type { Addon, Flow } from '../flow.ts';
import type { TenantTokens } from '../../keys/tenant.ts';
import type { ApiLayout } from '../../rules/api-layout.ts';
import { bearerCredential } from '../../rules/token.ts';

export class JudgeAddon implements Addon {
  readonly name = 'judge';
  /** Shared with the judging of a resumed journal's exchanges: the rate-limit history goes on from them, as validate's does. */
  readonly tracker = new RateLimitTracker();
  /**
   * The forwarding thread's performance.now() marks of this session, named once: exchanges on
   * it are ordered finer than their timestamps' milliseconds (sequential requests of a client
   * often share one). Recorded with each entry, so validate orders them alike.
   */
  private readonly clock = `proxy session ${randomUUID()}`;

  /**
   * `origin`: the target's, which recorded URLs start with. `nonGlobalClients`: client ids
   * the operator declared not global (no token claim says it), so the rule that such a
   * client may not delete can be judged. `tenant`: what is known of the tenant's tokens (keys/tenant.ts);
   * each batch's tokens are verified (prepareTokens) before it is judged. `layout`: the API base
   * path behind the target and the user's description (--openapi), rules/api-layout.ts.
   */
  constructor(
    private readonly origin: string,
    private readonly nonGlobalClients: ReadonlySet<string> = new Set(),
    private readonly tenant?: TenantTokens,
    private readonly layout?: ApiLayout,
  ) {}

  done(flow: Flow): void {
    const exchange = exchangeOf(flow, this.origin);
    if (exchange.durationMs !== undefined && flow.marks.end !== undefined) exchange.order = { clock: this.clock, sent: flow.marks.start, received: flow.marks.end };
    markNonGlobalClient(exchange, this.nonGlobalClients);
    this.tenant?.settle(exchange.token, credentialOf(flow));
    flow.exchange = exchange;
    flow.judgement = judgeExchange(exchange, this.tracker, this.layout);
  }
}

/** Verifies the batch's tokens not verified yet; undefined when the batch can be judged at once. */
export function prepareTokens(tenant: TenantTokens | undefined, flows: readonly Flow[]): Promise<unknown> | undefined {
  return tenant?.prepare(flows.map(credentialOf));
}

function credentialOf(flow: Flow): string | undefined {
  const header = flow.request.headers['authorization'];
  return typeof header === 'string' ? bearerCredential(header) : undefined;
}

/** A token of a client the operator declared not global says so, for the rule on deleting. */
export function markNonGlobalClient(exchange: Exchange, nonGlobalClients: ReadonlySet<string>): void {
  const azp = exchange.token.claims?.['azp'];
  if (typeof azp === 'string' && nonGlobalClients.has(azp)) exchange.token.clientGlobal = false;
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
