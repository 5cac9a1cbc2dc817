// The admin listener (--admin HOST:PORT), on the recorder thread beside the judged data: the
// forwarding thread never serves it, so neither a scrape nor an open page slows a response.
// Endpoints: / (the live page), /events (its server-sent events), /findings/N (a kept finding's
// redacted exchange and curl line), /rate-limits (the report's rate-limit chart), /status.json
// (today's status counts and the verdict so far), /metrics (Prometheus text format), and
// POST /login (the page's token form, when there is a token).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Report } from '../../reports/model.ts';
import type { CoverageFigure } from '../../reports/coverage-render.ts';
import type { OperationRow } from '../../reports/operations.ts';
import { renderRateLimitChart } from '../../reports/rate-limit-chart.ts';
import { RateLimitSeries } from '../../reports/rate-limit-series.ts';
import { observationOf } from '../../rules/rate-limit-tracker.ts';
import type { Finding } from '../../rules/types.ts';
import { emptyCounts } from '../../judging/tally.ts';
import { countsLine, statusLine, type StatusCounts } from '../record/status.ts';
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
  /** The operations called, named as the console and the reports name them (the first OPERATIONS_LIVE), and how many more. */
  operations: { rows: OperationRow[]; more: number };
  /** The report's coverage figures now (reports/coverage-render.ts): the page shows them, the coverage gauges read them. */
  coverage?: CoverageFigure[];
}

/** Operations the live page lists; the reports list them all. */
export const OPERATIONS_LIVE = 100;

/** The status as /status.json and the page's status events give it. */
export interface AdminStatus extends SessionState {
  /** The status line printed on stderr, from the same counts. */
  line: string;
  /** Its exchanges and findings alone: the page lists the operations by name. */
  counted: string;
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
  private state: () => SessionState = () => ({
    counts: emptyCounts(),
    verdict: { passed: true, summary: { pass: 0, fail: 0, warn: 0, skip: 0 } },
    operations: { rows: [], more: 0 },
  });

  /** `target`: the report's base URL. */
  constructor(
    private readonly settings: AdminSettings,
    private readonly target: string,
  ) {
    this.feed = new LiveFeed(target);
    // One source for the page and the gauges: the session's state, the report builder's coverage.
    this.metrics.coverageFrom(() => this.state().coverage);
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

  /** One judged exchange (counted in the session's tally): its findings sent to the open pages, its rate-limit reading charted. */
  exchange(metered: MeteredExchange & { findings: readonly Finding[] }): void {
    this.metrics.observe(metered);
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
    return { ...state, line: statusLine(state.counts), counted: countsLine(state.counts), chartVersion: this.chartVersion };
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
    if (request.method === 'POST' && path === '/login') {
      this.login(request, response);
    } else if (request.method !== 'GET' && request.method !== 'HEAD') {
      send(response, { status: 405, type: 'text/plain', body: 'only GET (and POST /login)\n', headers: { allow: 'GET, HEAD' } });
    } else if (!this.auth.allows(request)) {
      send(response, this.refusal(path));
    } else if (path === '/events' && request.method === 'GET') {
      this.feed.subscribe(response, lastEventId(request), this.status());
    } else if (path === '/metrics') {
      this.metrics.text().then(
        (text) => send(response, { status: 200, type: this.metrics.contentType, body: text }),
        (error: Error) => send(response, { status: 500, type: 'text/plain', body: `metrics: ${error.message}\n` }),
      );
    } else {
      send(response, this.answer(path));
    }
  }

  /** Why a request is refused: no token (the page asks for it), or a host name other than this machine's. */
  private refusal(path: string): Answer {
    if (!this.auth.required) return { status: 403, type: 'text/plain', body: 'this listener answers requests to a loopback host name only\n' };
    if (path === '/') return { status: 401, type: 'text/html', body: loginPage(false) };
    return {
      status: 401,
      type: 'text/plain',
      body: 'the admin token is required: Authorization: Bearer TOKEN\n',
      headers: { 'www-authenticate': 'Bearer realm="tmi-conform admin"' },
    };
  }

  /** The answer to an allowed GET of anything but the event stream and the metrics. */
  private answer(path: string): Answer {
    if (path === '/') return { status: 200, type: 'text/html', body: livePage(this.target) };
    if (path === '/events') return { status: 200, type: 'text/event-stream', body: '' }; // HEAD: the stream's head alone
    if (path === '/status.json') return { status: 200, type: 'application/json', body: `${JSON.stringify(this.status(), null, 2)}\n` };
    if (path === '/rate-limits')
      return { status: 200, type: 'text/html', body: renderRateLimitChart(this.rateLimits.points) || '<p class="empty">No X-RateLimit-* header yet.</p>' };
    const finding = /^\/findings\/(\d{1,15})$/.exec(path);
    if (finding) {
      const detail = this.feed.detail(Number(finding[1]));
      if (!detail) return { status: 404, type: 'text/plain', body: 'no such finding kept (the last ones are; the journal and the reports hold all)\n' };
      return { status: 200, type: 'application/json', body: JSON.stringify(detail) };
    }
    return { status: 404, type: 'text/plain', body: 'not found: /, /events, /findings/N, /rate-limits, /status.json, /metrics\n' };
  }

  private login(request: IncomingMessage, response: ServerResponse): void {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_LOGIN_BYTES) chunks.push(chunk);
    });
    request.on('end', () => {
      const token = size > MAX_LOGIN_BYTES ? '' : (new URLSearchParams(Buffer.concat(chunks).toString('utf8')).get('token') ?? '');
      const cookie = this.auth.login(token);
      if (cookie === undefined) send(response, { status: 401, type: 'text/html', body: loginPage(true) });
      else send(response, { status: 303, type: 'text/plain', body: '', headers: { location: './', 'set-cookie': cookie } });
    });
  }
}

interface Answer {
  status: number;
  type: string;
  body: string;
  headers?: Record<string, string>;
}

function send(response: ServerResponse, { status, type, body, headers = {} }: Answer): void {
  response.writeHead(status, { 'content-type': type.includes('charset') ? type : `${type}; charset=utf-8`, ...headers });
  response.end(body);
}

/** The last finding a reconnecting page saw (its EventSource sends it), else 0. */
function lastEventId(request: IncomingMessage): number {
  const value = request.headers['last-event-id'];
  return typeof value === 'string' && /^\d{1,15}$/.test(value) ? Number(value) : 0;
}
