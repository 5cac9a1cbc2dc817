// The admin listener (--admin HOST:PORT), on the recorder thread beside the judged data: the
// forwarding thread never serves it, so neither a scrape nor an open page slows a response.
// Endpoints: / (the live page), /events (its server-sent events), /findings/N (a kept finding's
// redacted exchange and curl line), /rate-limits (the report's rate-limit chart), /status.json
// (today's status counts and the verdict so far), /metrics (Prometheus text format), and
// POST /login (the page's token form, when there is a token).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Report } from '../../reports/model.ts';
import { renderRateLimitChart } from '../../reports/rate-limit-chart.ts';
import { RateLimitSeries } from '../../reports/rate-limit-series.ts';
import { observationOf } from '../../rules/rate-limit-tracker.ts';
import { statusLine, type StatusCounts } from '../record/status.ts';
import { AdminAuth } from './auth.ts';
import { LiveFeed } from './live.ts';
import { ProxyMetrics, type MeteredExchange } from './metrics.ts';
import { livePage, loginPage, SECURITY_HEADERS } from './page.ts';

export interface AdminSettings {
  host: string;
  /** 0: a free port. */
  port: number;
  /** Required of every request (Authorization: Bearer, or the login form's cookie); undefined: none (loopback only). */
  token?: string;
}

/** What the recorder knows of the whole session, asked when a status is sent. */
export interface SessionState {
  counts: StatusCounts;
  verdict: { passed: boolean; summary: Report['summary'] };
}

/** The status as /status.json and the page's status events give it. */
export interface AdminStatus extends SessionState {
  /** The status line printed on stderr, from the same counts. */
  line: string;
  /** Goes up when the rate-limit chart has new points (the page then fetches /rate-limits again). */
  chartVersion: number;
}

/** Open pages get the status at most this often (each one builds the verdict over the whole session). */
const STATUS_EVERY_MS = 500;
/** A login form's body, at most. */
const MAX_LOGIN_BYTES = 4096;

export class AdminListener {
  readonly metrics = new ProxyMetrics();
  readonly feed: LiveFeed;
  private readonly rateLimits = new RateLimitSeries();
  private chartVersion = 0;
  private readonly auth: AdminAuth;
  private readonly server: Server;
  private statusTimer: NodeJS.Timeout | undefined;
  private statusSentAt = -Infinity;

  /** The session's counts and verdict now (follow()); before: nothing counted yet. */
  private state: () => SessionState = () => ({ counts: { exchanges: 0, notCovered: 0, failed: 0, refused: 0, findings: { must: 0, should: 0, client: 0 }, byOperation: {}, byRequirement: {}, internalErrors: 0 }, verdict: { passed: true, summary: { pass: 0, fail: 0, warn: 0, skip: 0 } } });

  /** `target`: the report's base URL. */
  constructor(
    private readonly settings: AdminSettings,
    private readonly target: string,
  ) {
    this.feed = new LiveFeed(target);
    this.auth = new AdminAuth(settings.token, settings.host);
    this.server = createServer((request, response) => this.handle(request, response));
  }

  /** Where the session's counts and verdict come from (the recorder's pipeline, made once the listener listens). */
  follow(state: () => SessionState): void {
    this.state = state;
  }

  /** Listens. Rejects with the system error (EADDRINUSE…). */
  listen(): Promise<void> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(this.settings.port, this.settings.host, () => {
        this.server.off('error', reject);
        resolve();
      });
    });
  }

  /** The port listened on (a free one for port 0). */
  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  /** One judged exchange: counted, its findings sent to the open pages, its rate-limit reading charted. */
  exchange(metered: MeteredExchange): void {
    this.metrics.exchange(metered);
    const { exchange, judgement, findings } = metered;
    if (exchange && judgement?.operation) {
      this.feed.findings(exchange, judgement.operation.operation, findings);
      const before = this.rateLimits.points.length;
      this.rateLimits.record(exchange, judgement.rateLimit !== undefined ? judgement.rateLimit : observationOf(exchange));
      if (this.rateLimits.points.length !== before) this.chartVersion++;
    }
  }

  /** After each batch: the open pages get the new status (at most every STATUS_EVERY_MS). */
  changed(): void {
    if (this.feed.openPages === 0 || this.statusTimer) return;
    const wait = this.statusSentAt + STATUS_EVERY_MS - performance.now();
    this.statusTimer = setTimeout(
      () => {
        this.statusTimer = undefined;
        this.statusSentAt = performance.now();
        this.feed.status(this.status());
      },
      Math.max(0, wait),
    );
  }

  status(): AdminStatus {
    const state = this.state();
    return { ...state, line: statusLine(state.counts), chartVersion: this.chartVersion };
  }

  /** Ends the event streams and closes the listener. */
  async close(): Promise<void> {
    clearTimeout(this.statusTimer);
    this.feed.close();
    await new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }

  private handle(request: IncomingMessage, response: ServerResponse): void {
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) response.setHeader(name, value);
    const path = new URL(request.url ?? '/', 'http://admin').pathname;
    if (request.method === 'POST' && path === '/login') return this.login(request, response);
    if (request.method !== 'GET' && request.method !== 'HEAD') return send(response, 405, 'text/plain', 'only GET (and POST /login)\n', { allow: 'GET, HEAD' });
    if (!this.auth.allows(request)) {
      if (!this.auth.required) return send(response, 403, 'text/plain', 'this listener answers requests to a loopback host name only\n');
      if (path === '/') return send(response, 401, 'text/html', loginPage(false));
      return send(response, 401, 'text/plain', 'the admin token is required: Authorization: Bearer TOKEN\n', { 'www-authenticate': 'Bearer realm="tmi-conform admin"' });
    }
    if (path === '/') return send(response, 200, 'text/html', livePage(this.target));
    if (path === '/events') return this.feed.subscribe(response, lastEventId(request), this.status());
    if (path === '/status.json') return send(response, 200, 'application/json', `${JSON.stringify(this.status(), null, 2)}\n`);
    if (path === '/rate-limits') return send(response, 200, 'text/html', renderRateLimitChart(this.rateLimits.points) || '<p class="muted">No X-RateLimit-* header yet.</p>');
    if (path === '/metrics') {
      void this.metrics.text().then(
        (text) => send(response, 200, this.metrics.contentType, text),
        (error: Error) => send(response, 500, 'text/plain', `metrics: ${error.message}\n`),
      );
      return;
    }
    const finding = /^\/findings\/(\d{1,15})$/.exec(path);
    if (finding) {
      const detail = this.feed.detail(Number(finding[1]));
      if (!detail) return send(response, 404, 'text/plain', 'no such finding kept (the last ones are; the journal and the reports hold all)\n');
      return send(response, 200, 'application/json', JSON.stringify(detail));
    }
    send(response, 404, 'text/plain', 'not found: /, /events, /findings/N, /rate-limits, /status.json, /metrics\n');
  }

  private login(request: IncomingMessage, response: ServerResponse): void {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_LOGIN_BYTES) chunks.push(chunk);
    });
    request.on('end', () => {
      if (size > MAX_LOGIN_BYTES) return send(response, 413, 'text/plain', 'too long\n');
      const token = new URLSearchParams(Buffer.concat(chunks).toString('utf8')).get('token') ?? '';
      const cookie = this.auth.login(token);
      if (cookie === undefined) return send(response, 401, 'text/html', loginPage(true));
      send(response, 303, 'text/plain', '', { location: './', 'set-cookie': cookie });
    });
  }
}

function send(response: ServerResponse, status: number, type: string, body: string, headers: Record<string, string> = {}): void {
  response.writeHead(status, { 'content-type': type.includes('charset') ? type : `${type}; charset=utf-8`, ...headers });
  response.end(body);
}

/** The last finding a reconnecting page saw (its EventSource sends it), else 0. */
function lastEventId(request: IncomingMessage): number {
  const value = request.headers['last-event-id'];
  return typeof value === 'string' && /^\d{1,15}$/.test(value) ? Number(value) : 0;
}
