// The proxy's Prometheus metrics (served at /metrics on the admin listener), kept with prom-client
// in a registry of their own (never the library's global one). Every label is bounded: operation
// ids and finding levels and subjects are fixed sets, status codes are 100–599, and requirement
// ids and clients go through a LabelCap (the first distinct values seen keep their name, the
// others are counted together under OVERFLOW_LABEL), so a stream of forged tokens or of unknown
// requirement ids cannot grow the series without bound.
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Judgement } from '../../rules/index.ts';
import { observationOf, rateLimitClient, type RateLimitObservation } from '../../rules/rate-limit-tracker.ts';
import type { Exchange } from '../../rules/types.ts';
import type { CoverageFigure } from '../../reports/coverage-render.ts';
import type { TallyCounts } from '../../judging/tally.ts';

/** The label value that stands for every value past a label's cap. */
export const OVERFLOW_LABEL = '(other)';
/** Distinct operations named as such (the document's and `otherOperation`: far fewer). */
export const MAX_OPERATIONS = 100;
/** Distinct requirement ids named as such (the catalog's, and those of an --openapi description). */
export const MAX_REQUIREMENTS = 300;
/** Distinct clients whose X-RateLimit-Remaining gets a series of its own. */
export const MAX_CLIENTS = 50;

/** Upstream latency buckets, in seconds: from a cached read to the upstream timeout's order. */
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/** Keeps the first `max` distinct values of a label; any other becomes OVERFLOW_LABEL. */
export class LabelCap {
  private readonly kept = new Set<string>();

  constructor(private readonly max: number) {}

  label(value: string): string {
    if (this.kept.has(value)) return value;
    if (this.kept.size >= this.max) return OVERFLOW_LABEL;
    this.kept.add(value);
    return value;
  }
}

/** What the metrics take of one exchange beyond the session's tally: its latency and rate-limit reading. */
export interface MeteredExchange {
  /** The exchange redacted as the journal holds it; undefined: the recording step failed on it. */
  exchange: Exchange | undefined;
  judgement: Judgement | undefined;
  /** Seconds from the request sent on to the target to the target's response head (the HAR entry's timings.wait); undefined: no response from the target. */
  upstreamSeconds?: number;
}

export class ProxyMetrics {
  readonly registry = new Registry();
  private readonly operations = new LabelCap(MAX_OPERATIONS);
  private readonly requirements = new LabelCap(MAX_REQUIREMENTS);
  private readonly clients = new LabelCap(MAX_CLIENTS);

  /**
   * The counters, read from the judging session's tally (judging/tally.ts) at each scrape: the
   * same counts as /status.json and the status line, counted once. Once.
   */
  countsFrom(read: () => TallyCounts): void {
    const operations = this.operations;
    const requirements = this.requirements;
    new Counter({
      name: 'tmi_conform_exchanges_total',
      help: 'Exchanges the proxy recorded, by operation (outside_api: paths the document does not cover; not_judged: the judge failed) and HTTP status (none: no response).',
      labelNames: ['operation', 'status'] as const,
      registers: [this.registry],
      collect() {
        this.reset();
        for (const [operation, byStatus] of Object.entries(read().byOperationStatus)) {
          for (const [status, count] of Object.entries(byStatus)) this.inc({ operation: operations.label(operation), status: statusLabel(status) }, count);
        }
      },
    });
    new Counter({
      name: 'tmi_conform_exchanges_failed_total',
      help: 'Exchanges without a complete response (target unreachable, too slow, cut short).',
      registers: [this.registry],
      collect() {
        this.reset();
        this.inc(read().failed);
      },
    });
    new Counter({
      name: 'tmi_conform_requests_refused_total',
      help: 'Requests refused before they became exchanges (malformed, absolute-form, CONNECT).',
      registers: [this.registry],
      collect() {
        this.reset();
        this.inc(read().refused);
      },
    });
    // As the status counts: findings are counted on the exchanges of an operation only.
    new Counter({
      name: 'tmi_conform_findings_total',
      help: 'Findings by requirement, level (must, should) and subject (implementation: the target; client: the caller).',
      labelNames: ['requirement', 'level', 'subject'] as const,
      registers: [this.registry],
      collect() {
        this.reset();
        for (const [id, { level, subject, count }] of Object.entries(read().byRequirement))
          this.inc({ requirement: requirements.label(id), level, subject }, count);
      },
    });
    new Counter({
      name: 'tmi_conform_security_findings_total',
      help: 'Security findings (the target carried out a request it should have refused), by requirement.',
      labelNames: ['requirement'] as const,
      registers: [this.registry],
      collect() {
        this.reset();
        for (const [id, { security }] of Object.entries(read().byRequirement)) if (security) this.inc({ requirement: requirements.label(id) }, security);
      },
    });
  }
  private readonly latency = new Histogram({
    name: 'tmi_conform_upstream_latency_seconds',
    help: "Time from the request forwarded to the target to the target's response head (the HAR timings.wait).",
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });
  private readonly remaining = new Gauge({
    name: 'tmi_conform_rate_limit_remaining',
    help: 'The last X-RateLimit-Remaining the target answered each client (a client named by a trusted token).',
    labelNames: ['client'] as const,
    registers: [this.registry],
  });
  private readonly journalBytes = new Gauge({
    name: 'tmi_conform_journal_bytes',
    help: "Bytes in the proxy's journal (all its segments).",
    registers: [this.registry],
  });
  private readonly journalSegments = new Gauge({
    name: 'tmi_conform_journal_segments',
    help: "Files the proxy's journal is made of.",
    registers: [this.registry],
  });
  /** A gauge per coverage part, set from the report's coverage figures when scraped: it rises as traffic comes in. */
  private coverageGauge(
    name: string,
    help: string,
    read: () => readonly CoverageFigure[] | undefined,
    value: (count: { examined: number; applicable: number }) => number,
  ): Gauge<'part'> {
    return new Gauge({
      name,
      help,
      labelNames: ['part'] as const,
      registers: [this.registry],
      collect() {
        for (const figure of read() ?? []) this.set({ part: figure.part }, value(figure));
      },
    });
  }

  /** The coverage gauges, read from the coverage figures the live page shows (the recorder thread's builder) at each scrape. Once. */
  coverageFrom(read: () => readonly CoverageFigure[] | undefined): void {
    this.coverageGauge(
      'tmi_conform_coverage_examined',
      "Parts examined so far, by part (document: the document's requirements; responses: the status codes it names; values: its enumeration values and limit edges; operations: its operations called; with --openapi, description: the description's operations exercised, description-responses: the status codes it declares seen).",
      read,
      (c) => c.examined,
    );
    this.coverageGauge(
      'tmi_conform_coverage_applicable',
      'Parts of the document that apply, by part (the denominators of tmi_conform_coverage_examined).',
      read,
      (c) => c.applicable,
    );
    this.coverageGauge(
      'tmi_conform_coverage_ratio',
      'Share of the document examined so far, by part: examined / applicable (1 when nothing applies).',
      read,
      (c) => (c.applicable === 0 ? 1 : c.examined / c.applicable),
    );
  }

  /** What the tally does not hold of one exchange: its upstream latency and its rate-limit reading. */
  observe({ exchange, judgement, upstreamSeconds }: MeteredExchange): void {
    if (upstreamSeconds !== undefined) this.latency.observe(upstreamSeconds);
    if (exchange) this.rateLimit(exchange, judgement?.rateLimit);
  }

  /** The journal's size, as the journal reports it after each write. */
  journalSize(bytes: number, segments: number): void {
    this.journalBytes.set(bytes);
    this.journalSegments.set(segments);
  }

  /** The text format (version 0.0.4). */
  text(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  private rateLimit(exchange: Exchange, reading: RateLimitObservation | null | undefined): void {
    const observation = reading === undefined ? observationOf(exchange) : reading;
    if (observation?.remaining === undefined) return;
    const client = rateLimitClient(exchange);
    if (client === undefined) return;
    this.remaining.set({ client: this.clients.label(client) }, observation.remaining);
  }
}

/** A status code as a label: 100–599 as it is, anything else (none: no response) bounded. */
function statusLabel(status: string): string {
  if (status === 'none') return status;
  const code = Number(status);
  return Number.isInteger(code) && code >= 100 && code <= 599 ? status : 'invalid';
}
