// The one report model that `run`, `proxy`, `validate` and `report merge` all produce.
// report.json is this model serialised; schemas/report.schema.json documents it.
import type { Requirement } from '../rules/requirements.ts';
import type { Exchange, Finding, OperationId, TokenAttack } from '../rules/types.ts';

export type Status = 'pass' | 'fail' | 'warn' | 'skip';
export type ReportKind = 'run' | 'proxy' | 'validate' | 'merge';

export interface Summary {
  pass: number;
  fail: number;
  warn: number;
  skip: number;
}

/** Where evidence came from: a suite run, a proxy session, a validated file. */
export interface Source {
  name: string; // e.g. "run", "proxy", "validate:traffic.har"
  kind: ReportKind;
  target?: string;
  startedAt?: string;
  finishedAt?: string;
  /** In a merged report: the report.json this source was read from. */
  origin?: string;
  /** A suite run's seed of generated inputs: `tmi-conform run --seed N` generates the same inputs again. */
  seed?: number;
  /** It was interrupted (a suite run stopped by SIGINT or SIGTERM): what it did not reach was not examined. Absent: it ended on its own. */
  interrupted?: true;
}

/**
 * A finding as a report keeps it: the rule engine's data (what was expected, what was
 * received), its secrets masked, and the message rendered from them for people.
 */
export interface ReportedFinding extends Pick<Finding, 'requirement' | 'level' | 'subject' | 'check' | 'expected' | 'received' | 'security' | 'pointer'> {
  message: string;
}

/** A compact, redacted view of one exchange, kept as evidence. */
export interface ExchangeEvidence {
  id?: string;
  startedAt: string;
  operation?: OperationId;
  request: { method: string; url: string; headers?: Record<string, string>; body?: string };
  response?: { status: number; headers?: Record<string, string>; body?: string };
  error?: string;
  /** What the request's credential was (rules/credential.ts), with the token's non-secret claims; the token itself never. */
  credential?: CredentialEvidence;
}

export interface CredentialEvidence {
  /** absent, malformed, not-jwt, unsigned, signature-invalid, expired, not-yet-valid, wrong-audience, wrong-issuer, valid, unverified, not-recorded. */
  state: string;
  /** The JOSE header's alg, as the token said it. */
  alg?: string;
  /** iss, sub, aud, azp, scope, gty, iat, exp, nbf, when the token had them. */
  claims?: Record<string, unknown>;
  /** Whether the signature verified against the tenant's keys; false also for a token the kit forged itself (see attack), keys or none; absent: not checked. */
  signatureValid?: boolean;
  /** A suite run made this token to be refused, this way (`tmi-conform token --attack` makes it again). */
  attack?: TokenAttack;
  /** hs256-weak-secret: the public weak secret it was signed with (a word of the kit's list). */
  attackSecret?: string;
}

/** One suite test's outcome, as the suites report it. */
export interface TestOutcome {
  name: string; // "updateSession > clears metadata with null"
  file?: string;
  requirements: string[];
  status: 'pass' | 'fail' | 'skip';
  /**
   * A failed test: the requirements its failure is evidence against (findings it stopped at, or
   * the expectation that is the requirement itself). Empty: it ended before it could examine what
   * it covers (a precondition was not met), so it charges nothing and is reported not examined.
   * Undefined: every requirement it covers.
   */
  charged?: string[];
  message?: string; // failure message or skip reason
  counterexample?: string; // fast-check's shrunk counterexample, when a property failed
  durationMs?: number;
  /** The exchange a failure concerns (redacted): the report shows it, with a curl command to send it again. */
  exchange?: Exchange;
}

/**
 * One suite test in the report. Its status follows the levels of the requirements it names:
 * a failed test is `fail` when one of them is a `must` (or it names none the catalog knows),
 * `warn` when all are `should`.
 */
export interface TestResult {
  source: string; // Source.name
  name: string;
  file?: string;
  requirements: string[];
  status: Status;
  /** A failed test: the requirements its failure is evidence against (see TestOutcome.charged). */
  charged?: string[];
  message?: string;
  counterexample?: string;
  durationMs?: number;
}

export interface Evidence {
  source: string; // Source.name
  kind: 'test' | 'exchange';
  test?: string; // TestOutcome.name
  status: Status;
  message?: string;
  counterexample?: string;
  findings?: ReportedFinding[];
  exchange?: ExchangeEvidence;
}

/** What the catalog (schemas/requirements.yaml) says of a requirement; the checks that judge it are in `coverage`. */
export type RequirementFacts = Omit<Requirement, 'checks'>;

export interface RequirementResult extends RequirementFacts {
  status: Status;
  /** Why it is skipped, when it is. */
  reason?: string;
  coverage: { checks: string[]; tests: string[] };
  /** `security`: exchanges in which the target carried out a request it should have refused (a security finding); absent in reports of earlier versions. */
  counts: { exchanges: number; tests: number; findings: number; clientFindings: number; security?: number };
  /** A bounded sample: failures first. */
  evidence: Evidence[];
  /**
   * For a requirement of several operations: the exchanges that examined it per operation id, and
   * how many of them failed it, so that each operation's table row shows its own result.
   */
  byOperation?: Record<string, { exchanges: number; findings: number }>;
  /**
   * Where it failed, per operation id: the distinct places (Finding.pointer, RFC 6901 JSON
   * pointers into the documented body) the findings of every failing exchange named, sorted; ""
   * for a failure that named none (or a failed test without a finding of its exchange). At most
   * PLACES_PER_OPERATION per operation (reports/failed-places.ts). Absent: it did not fail, or a
   * report of an earlier version.
   */
  pointers?: Record<string, string[]>;
  /** Operations with more places than `pointers` holds: the rest are folded into its "". */
  pointersFolded?: string[];
  /** Failed or warned, and accepted by the baseline (--baseline): not counted in the verdict. */
  accepted?: { reason: string; until?: string };
}

/**
 * The requirements of one operation: those naming it ("all": those of every operation). A
 * requirement named by several operations counts in each, with its overall status.
 */
export interface OperationResult {
  operation: OperationId | 'all';
  title: string;
  /** The worst status among its requirements (fail > warn > pass > skip). */
  status: Status;
  summary: Summary;
  requirements: string[];
}

export interface NotJudgedTally {
  /** "response body over the 1.0 MB body limit", "request body nested deeper than 64 levels" */
  reason: string;
  count: number;
  /** The first few exchanges, by id (a journal line, a HAR entry index, a proxy exchange number). */
  exchanges: string[];
}

/** One operation the traffic called: the document's, or another of the interface by its templated path. */
export interface OperationTraffic {
  /** "GET /users/{id}", "DELETE /token-exchange-profiles/{id}" (see rules/operations.ts templatePath). */
  name: string;
  operation: OperationId;
  exchanges: number;
  /** status code (or "error") -> count */
  byStatus: Record<string, number>;
  /** The requirements judged on its exchanges (examined, or found broken), sorted. */
  requirements: string[];
}

export interface TrafficStats {
  exchanges: number;
  /** Exchanges that call no operation (a path outside the API base path, a CORS preflight): counted, never judged. */
  notCovered: number;
  /** operation id -> status code (or "error") -> count */
  byOperation: Record<string, Record<string, number>>;
  /**
   * Every operation called, the most called first (the document's three first of all), at most
   * OPERATIONS_LISTED; the exchanges of any further one are counted under OPERATIONS_OVERFLOW.
   */
  operations?: OperationTraffic[];
  /** Exchanges on covered paths not judged in whole or in part, grouped by why (absent: none). */
  notJudged?: NotJudgedTally[];
  /** The X-RateLimit-* headers over time, per client (token azp/sub), for charts. */
  rateLimitSeries: Array<{ t: string; client: string; status: number; limit?: number; remaining?: number; reset?: number }>;
}

export interface BaselineEntry {
  requirement: string;
  reason: string;
  /** YYYY-MM-DD: accepted until the end of that day (UTC); after it, the failure counts again. */
  until?: string;
}

/** A coverage gap a baseline accepts: one part of the coverage (reports/coverage.ts coverageItems), e.g. "response DELETE /token-exchange-profiles/{id} 429". */
export interface BaselineGap {
  gap: string;
  reason: string;
  /** YYYY-MM-DD: accepted until the end of that day (UTC); after it, the gap counts again. */
  until?: string;
}

export interface Baseline {
  /** The file it was read from, as the user named it. */
  source: string;
  entries: BaselineEntry[];
  /** Coverage gaps it accepts (--min-coverage); absent: none. */
  gaps?: BaselineGap[];
}

/** What a baseline did to a report: report.json's `baseline`. */
export interface BaselineOutcome {
  source: string;
  /** Failures it accepted: not counted in the verdict. */
  accepted: BaselineEntry[];
  /** Entries whose requirement passes now: the entry can go. */
  fixed: Array<BaselineEntry & { remove: string }>;
  /** Entries past their `until:` date: their failures count again. */
  expired: BaselineEntry[];
}

/** How much of something was examined: `examined` of `applicable`. */
export interface CoverageCount {
  examined: number;
  applicable: number;
}

/** A requirement nothing examined, and why (its skip reason). */
export interface NotExaminedRequirement {
  requirement: string;
  level: 'must' | 'should';
  operations: string[];
  reason: string;
}

/** The status codes the document names for one of its operations, and those the traffic got. */
export interface ResponseCoverage {
  operation: OperationId;
  /** "DELETE /token-exchange-profiles/{id}" */
  route: string;
  named: string[];
  seen: string[];
}

/** One enumeration or limit of the document, its values, and those the traffic reached (rules/coverage.ts). */
export interface ValueCoverage {
  operation: OperationId;
  /** `signing_alg`, `session_metadata` */
  name: string;
  /** Read in the response the target returned, or the request that reached it. */
  in: 'request' | 'response';
  values: string[];
  reached: string[];
}

/** One operation of the user's description (--openapi), whether the traffic called it, and the statuses it declares seen. */
export interface DescribedOperationCoverage {
  /** "GET /users/{id}": the method and the key under `paths`. */
  operation: string;
  operationId?: string;
  exercised: boolean;
  /** The response keys it declares, `default` aside ("200", "4XX"). */
  statuses: string[];
  seen: string[];
}

/**
 * What the traffic exercised of the user's description (--openapi): its operations called of those
 * it declares, and per operation the statuses it declares seen (`default` names none; a status it
 * does not declare is never missing). `identity` tells two descriptions apart: a hash of the
 * operations and statuses it declares, which a merge compares.
 */
export interface DescriptionCoverage {
  title?: string;
  version?: string;
  identity: string;
  operations: CoverageCount;
  responses: CoverageCount;
  byOperation: DescribedOperationCoverage[];
}

/**
 * What the report's evidence examined, computed once from the judged requirements and exchanges
 * (reports/coverage.ts), so every format says the same numbers. A merged report unions what each
 * input examined.
 */
export interface Coverage {
  /** The document's requirements the report holds (all apply) and those a test or exchange examined (pass, fail or warn). */
  document: CoverageCount & {
    must: CoverageCount;
    should: CoverageCount;
    /** Per operation group (as `operations`): its requirements examined on that operation. */
    byOperation: Array<CoverageCount & { operation: string; title: string }>;
    notExamined: NotExaminedRequirement[];
  };
  /** The status codes the document names, per operation; an operation whose codes are "not shown" counts none. */
  responses: CoverageCount & { byOperation: ResponseCoverage[] };
  /** The values of the document's enumerations and the edges of its limits. */
  values: CoverageCount & { byName: ValueCoverage[] };
  /** The document's operations the traffic or tests called, of the three it details. */
  operations: CoverageCount & { called: string[]; notCalled: string[] };
  /** With a user's description (--openapi): what the traffic exercised of it; absent without one. */
  description?: DescriptionCoverage;
  /** A merge of reports that judged different descriptions: their names; no description coverage is merged then. */
  descriptionsNotMerged?: string[];
  /** Gaps a baseline accepts (`gap:` entries): counted as examined by --min-coverage, never in the figures above. */
  accepted?: BaselineGap[];
}

export interface Report {
  schemaVersion: 1;
  tool: { name: 'tmi-conform'; version: string };
  kind: ReportKind;
  target?: string;
  startedAt: string;
  finishedAt: string;
  sources: Source[];
  summary: Summary;
  /** Verdict: false when a requirement at or above the fail-on level failed, and always when interrupted. */
  passed: boolean;
  /** A source was interrupted (Source.interrupted): no verdict, `passed` is false. Absent: none was. */
  interrupted?: true;
  /** The level that decides the verdict (--fail-on). */
  failOn: 'must' | 'should';
  requirements: RequirementResult[];
  /** The same requirements grouped per operation. */
  operations: OperationResult[];
  /** What --baseline accepted, found fixed and found expired; absent without one. */
  baseline?: BaselineOutcome;
  /** Every suite test that reported (empty for proxy and validate). */
  tests: TestResult[];
  /** Findings whose subject is the client: reported, never part of the verdict. */
  clientFindings: Array<ReportedFinding & { count: number; example?: ExchangeEvidence }>;
  traffic?: TrafficStats;
  /** What was examined, as numbers; absent in reports of earlier versions (`report merge` computes it then). */
  coverage?: Coverage;
}
