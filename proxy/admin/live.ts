// The live feed of the admin page: findings as they are judged, and the status now and then, to
// every open page over server-sent events (/events). The page shows one group per requirement and
// subject: each finding carries its group's count, and the feed keeps each group's latest finding
// (and the last RECENT_FINDINGS findings), each with its exchange as the report keeps evidence
// (redacted again, bodies cut) and its curl line, so that a page opened late catches up with every
// group and a group opens to its latest exchange (/findings/N).
// Nothing here is made from the raw flow: only from the redacted exchange and the scrubbed
// findings the journal and the reports hold.
import type { ServerResponse } from 'node:http';
import { findingMessage } from '../../rules/message.ts';
import type { Exchange, Finding, OperationId } from '../../rules/types.ts';
import { curlCommand } from '../../reports/curl.ts';
import { exchangeEvidence } from '../../reports/exchange-evidence.ts';
import type { ExchangeEvidence } from '../../reports/model.ts';

/** Findings kept for pages opened late and for /findings/N; older ones are in the journal and the reports. */
const RECENT_FINDINGS = 200;
/** A comment line this often keeps idle connections (and proxies in between) from timing out. */
const KEEP_ALIVE_MS = 15_000;
/** Bytes a page may leave unread before its stream is closed. */
const MAX_UNREAD_BYTES = 1024 * 1024;

/** One finding as the page lists it. */
export interface LiveFinding {
  /** 1, 2, 3… in the order judged: the event id, and the N of /findings/N. */
  n: number;
  /** When the exchange started (ISO). */
  at: string;
  exchangeId?: string;
  requirement: string;
  level: string;
  subject: string;
  /** Set on a security finding: what the target did that it should have refused. */
  security?: string;
  /** Findings of this requirement and subject so far, this one included. */
  count: number;
  /** How many of those were security findings. */
  securityCount: number;
  message: string;
  operation?: string;
  method: string;
  /** The redacted URL. */
  url: string;
  status?: number;
}

/** A finding with the redacted exchange it was found on and the curl line that sends it again. */
export interface FindingDetail {
  finding: LiveFinding;
  exchange: ExchangeEvidence;
  curl: string;
}

export class LiveFeed {
  private readonly recent: FindingDetail[] = [];
  /** Each requirement and subject's latest finding (its count in it): few, one per requirement at most twice. */
  private readonly groups = new Map<string, FindingDetail>();
  private next = 1;
  private readonly pages = new Set<ServerResponse>();
  private readonly keepAlive: NodeJS.Timeout;

  /** `target`: the report's base URL, which completes recorded URLs in curl lines. */
  constructor(private readonly target: string) {
    this.keepAlive = setInterval(() => this.send(': keep-alive\n\n'), KEEP_ALIVE_MS);
    this.keepAlive.unref();
  }

  /** The findings of one judged exchange; `safe` is the redacted exchange, `findings` scrubbed. */
  findings(safe: Exchange, operation: OperationId | undefined, findings: readonly Finding[]): void {
    if (findings.length === 0) return;
    const exchange = exchangeEvidence(safe, operation);
    const curl = curlCommand(exchange, this.target);
    for (const f of findings) {
      const key = `${f.requirement} ${f.subject}`;
      const before = this.groups.get(key)?.finding;
      const count = (before?.count ?? 0) + 1;
      const securityCount = (before?.securityCount ?? 0) + (f.security === undefined ? 0 : 1);
      const finding: LiveFinding = {
        n: this.next++,
        at: exchange.startedAt,
        requirement: f.requirement,
        level: f.level,
        subject: f.subject,
        message: findingMessage(f),
        method: exchange.request.method,
        url: exchange.request.url,
        count,
        securityCount,
      };
      if (exchange.id !== undefined) finding.exchangeId = exchange.id;
      if (f.security !== undefined) finding.security = f.security;
      if (operation !== undefined) finding.operation = operation;
      if (exchange.response) finding.status = exchange.response.status;
      this.recent.push({ finding, exchange, curl });
      this.groups.set(key, { finding, exchange, curl });
      if (this.recent.length > RECENT_FINDINGS) this.recent.shift();
      this.send(findingEvent(finding));
    }
  }

  /** The status of the whole session, to every open page. */
  status(status: unknown): void {
    this.send(event('status', status));
  }

  /** A finding still kept (one of the last, or a group's latest), by its number. */
  detail(n: number): FindingDetail | undefined {
    const first = this.recent[0]?.finding.n;
    const recent = first === undefined ? undefined : this.recent[n - first];
    return recent ?? [...this.groups.values()].find((kept) => kept.finding.n === n);
  }

  /** Opens the event stream of a page: each group's latest finding after `lastSeen` (the page's Last-Event-ID), then the status, then whatever comes. */
  subscribe(response: ServerResponse, lastSeen: number, status: unknown): void {
    response.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      connection: 'keep-alive',
      'x-content-type-options': 'nosniff',
    });
    // A reconnecting page asks the next one again in 2 s.
    response.write('retry: 2000\n\n');
    const latest = [...this.groups.values()].map((kept) => kept.finding).sort((a, b) => a.n - b.n);
    for (const finding of latest) if (finding.n > lastSeen) response.write(findingEvent(finding));
    response.write(event('status', status));
    this.pages.add(response);
    response.on('close', () => this.pages.delete(response));
  }

  get openPages(): number {
    return this.pages.size;
  }

  /** Ends every stream (the proxy stops). */
  close(): void {
    clearInterval(this.keepAlive);
    for (const page of this.pages) page.end();
    this.pages.clear();
  }

  private send(text: string): void {
    for (const page of this.pages) {
      // A page that stopped reading is let go rather than buffered for without end: its browser reconnects and catches up.
      if (page.writableLength > MAX_UNREAD_BYTES) {
        this.pages.delete(page);
        page.destroy();
      } else page.write(text);
    }
  }
}

const event = (name: string, data: unknown) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;
const findingEvent = (finding: LiveFinding) => `id: ${finding.n}\n${event('finding', finding)}`;
