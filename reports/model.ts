// The one report model that `run`, `proxy`, `validate` and `report merge` all produce.
// report.json is this model serialised; schemas/report.schema.json documents it.
import type { Finding, Level, OperationId, Subject } from '../rules/types.ts';

export type Status = 'pass' | 'fail' | 'warn' | 'skip';
export type ReportKind = 'run' | 'proxy' | 'validate' | 'merge';

/** Where evidence came from: a suite run, a proxy session, a validated file. */
export interface Source {
  name: string; // e.g. "run", "proxy", "validate:traffic.har"
  kind: ReportKind;
  target?: string;
  startedAt?: string;
  finishedAt?: string;
}

/** A compact, redacted view of one exchange, kept as evidence. */
export interface ExchangeEvidence {
  id?: string;
  startedAt: string;
  operation?: OperationId;
  request: { method: string; url: string; headers?: Record<string, string>; body?: string };
  response?: { status: number; headers?: Record<string, string>; body?: string };
  error?: string;
}

/** One suite test's outcome, as the suites report it. */
export interface TestOutcome {
  name: string; // "updateSession > clears metadata with null"
  file?: string;
  requirements: string[];
  status: 'pass' | 'fail' | 'skip';
  message?: string; // failure message or skip reason
  counterexample?: string; // fast-check's shrunk counterexample, when a property failed
  durationMs?: number;
}

export interface Evidence {
  source: string; // Source.name
  kind: 'test' | 'exchange';
  test?: string; // TestOutcome.name
  status: Status;
  message?: string;
  counterexample?: string;
  findings?: Finding[];
  exchange?: ExchangeEvidence;
}

export interface RequirementResult {
  id: string;
  level: Level;
  subject: Subject | 'both';
  operations: string[];
  section: string;
  title: string;
  quote: string;
  inferred?: string;
  status: Status;
  /** Why it is skipped, when it is. */
  reason?: string;
  coverage: { checks: string[]; tests: string[] };
  counts: { exchanges: number; tests: number; findings: number; clientFindings: number };
  /** A bounded sample: failures first. */
  evidence: Evidence[];
}

export interface TrafficStats {
  exchanges: number;
  /** Exchanges to paths the document does not cover: counted, never judged. */
  notCovered: number;
  /** operation -> status code (or "error") -> count */
  byOperation: Record<string, Record<string, number>>;
  /** The X-RateLimit-* headers over time, per client (token azp/sub), for charts. */
  rateLimitSeries: Array<{ t: string; client: string; status: number; limit?: number; remaining?: number; reset?: number }>;
}

export interface Report {
  schemaVersion: 1;
  tool: { name: 'tmi-conform'; version: string };
  kind: ReportKind;
  target?: string;
  startedAt: string;
  finishedAt: string;
  sources: Source[];
  summary: { pass: number; fail: number; warn: number; skip: number };
  /** Verdict: false when a requirement at or above the fail-on level failed. */
  passed: boolean;
  /** The level that decides the verdict (--fail-on). */
  failOn: 'must' | 'should';
  requirements: RequirementResult[];
  /** Findings whose subject is the client: reported, never part of the verdict. */
  clientFindings: Array<Finding & { count: number; example?: ExchangeEvidence }>;
  traffic?: TrafficStats;
}
