// Builds the one report model from what the drivers saw: judged exchanges (proxy, validate,
// suites) and test outcomes (suites). A requirement's status comes from its evidence:
//   fail  a `must` requirement with an implementation finding or a failed test
//   warn  the same for a `should` requirement
//   pass  examined by at least one exchange or test, and nothing against it
//   skip  nothing examined it (the reason says why)
// Client findings are kept beside the verdict, never in it. Every suite test is listed too.
import type { Judgement } from '../rules/index.ts';
import { loadRequirements, type Requirement } from '../rules/requirements.ts';
import { observationOf, rateLimitClient, type RateLimitObservation } from '../rules/rate-limit-tracker.ts';
import { findingMessage } from '../rules/message.ts';
import { credentialState } from '../rules/credential.ts';
import type { Exchange, Finding } from '../rules/types.ts';
import { redactExchange, scrubSecrets, type SecretSink } from '../recordings/redact.ts';
import { version } from '../cli/version.ts';
import type { FailOn } from './fail-on.ts';
import type { CredentialEvidence, Evidence, ExchangeEvidence, Report, ReportedFinding, ReportKind, RequirementResult, Source, Status, TestOutcome, TestResult, TrafficStats } from './model.ts';
import { groupByOperation } from './operations.ts';
import { redactTarget, redactText } from './redact-text.ts';
import { summarize, verdict } from './status.ts';

/** Evidence kept per requirement: failures first, then a few passes. */
export const EVIDENCE_PER_REQUIREMENT = 8;
export const PASSING_EVIDENCE_PER_REQUIREMENT = 4;
/** Bodies kept in evidence are cut to this many characters. */
const EVIDENCE_BODY_CHARS = 2000;
/** Points of the rate-limit chart; beyond it every other point is dropped (the shape stays). */
export const RATE_LIMIT_POINTS = 2000;

interface Accumulator {
  requirement: Requirement;
  exchanges: number;
  tests: number;
  failingExchanges: number;
  failingTests: number;
  clientFindings: number;
  skipReasons: string[];
  testNames: string[];
  failures: Evidence[];
  passes: Evidence[];
}

export interface BuilderOptions {
  kind: ReportKind;
  /** Name of this source of evidence, e.g. "run", "proxy", "validate:traffic.har". */
  source: string;
  target?: string;
  /** Seed of the generated inputs of a suite run. */
  seed?: number;
}

/** Compact, redacted evidence of one exchange; `sink` collects the secret values it masked. */
export function exchangeEvidence(exchange: Exchange, operation?: string, sink?: SecretSink): ExchangeEvidence {
  const safe = redactExchange(exchange, sink);
  const cut = (text: string | undefined) => (text === undefined ? undefined : text.length > EVIDENCE_BODY_CHARS ? `${text.slice(0, EVIDENCE_BODY_CHARS)}… (${text.length} characters)` : text);
  const evidence: ExchangeEvidence = {
    startedAt: safe.startedAt,
    request: { method: safe.request.method, url: safe.request.url, headers: safe.request.headers },
  };
  if (safe.id !== undefined) evidence.id = safe.id;
  if (operation) evidence.operation = operation as ExchangeEvidence['operation'];
  const requestBody = cut(safe.request.body?.text);
  if (requestBody !== undefined) evidence.request.body = requestBody;
  if (safe.response) {
    evidence.response = { status: safe.response.status, headers: safe.response.headers };
    const responseBody = cut(safe.response.body?.text);
    if (responseBody !== undefined) evidence.response.body = responseBody;
  }
  if (safe.error !== undefined) evidence.error = safe.error;
  if (operation && operation !== 'getToken') evidence.credential = credentialEvidence(safe);
  return evidence;
}

/** The credential of a redacted exchange: its state and what the recording may keep of the token. */
function credentialEvidence(safe: Exchange): CredentialEvidence {
  const credential: CredentialEvidence = { state: credentialState(safe) };
  if (safe.token.alg !== undefined) credential.alg = safe.token.alg;
  if (safe.token.claims) credential.claims = safe.token.claims;
  if (safe.token.signatureValid !== undefined) credential.signatureValid = safe.token.signatureValid;
  return credential;
}

export class ReportBuilder {
  private readonly startedAt = new Date().toISOString();
  private readonly source: Source;
  private readonly byId = new Map<string, Accumulator>();
  private readonly clientFindings = new Map<string, ReportedFinding & { count: number; example?: ExchangeEvidence }>();
  private readonly tests: TestResult[] = [];
  private readonly traffic: TrafficStats = { exchanges: 0, notCovered: 0, byOperation: {}, rateLimitSeries: [] };
  private rateLimitStride = 1;
  private rateLimitSeen = 0;

  constructor(private readonly options: BuilderOptions) {
    this.source = { name: options.source, kind: options.kind, startedAt: this.startedAt };
    if (options.target !== undefined) this.source.target = redactTarget(options.target);
    if (options.seed !== undefined) this.source.seed = options.seed;
    for (const requirement of loadRequirements()) {
      this.byId.set(requirement.id, { requirement, exchanges: 0, tests: 0, failingExchanges: 0, failingTests: 0, clientFindings: 0, skipReasons: [], testNames: [], failures: [], passes: [] });
    }
  }

  /** One judged exchange: counted in the traffic statistics, and evidence for what it examined. */
  addExchange(exchange: Exchange, judgement: Judgement, test?: string): void {
    this.traffic.exchanges++;
    if (!judgement.operation) {
      this.traffic.notCovered++;
      return;
    }
    const operation = judgement.operation.operation;
    const byStatus = (this.traffic.byOperation[operation] ??= {});
    const status = exchange.response ? String(exchange.response.status) : 'error';
    byStatus[status] = (byStatus[status] ?? 0) + 1;
    this.recordRateLimit(exchange, judgement.rateLimit !== undefined ? judgement.rateLimit : observationOf(exchange));
    const kept = new KeptExchange(exchange, operation);
    if (judgement.findings.length === 0) {
      // The common case, kept cheap: every examined requirement gets a pass.
      for (const id of judgement.examined) {
        const acc = this.byId.get(id);
        if (acc) this.addPass(acc, kept, test);
      }
      return;
    }
    this.addJudgedFindings(kept, judgement, test);
  }

  private addPass(acc: Accumulator, kept: KeptExchange, test: string | undefined): void {
    acc.exchanges++;
    if (acc.passes.length >= 2) return;
    const item: Evidence = { source: this.source.name, kind: 'exchange', status: 'pass', exchange: kept.evidence() };
    if (test !== undefined) item.test = test;
    acc.passes.push(item);
  }

  private addJudgedFindings(kept: KeptExchange, judgement: Judgement, test: string | undefined): void {
    const implementationFindings = new Map<string, Finding[]>();
    const brokenByClient = new Set<string>();
    for (const f of judgement.findings) {
      if (f.subject === 'client') {
        brokenByClient.add(f.requirement);
        this.addClientFinding(f, kept);
        const acc = this.byId.get(f.requirement);
        if (acc) acc.clientFindings++;
        continue;
      }
      const list = implementationFindings.get(f.requirement);
      if (list) list.push(f);
      else implementationFindings.set(f.requirement, [f]);
    }
    for (const id of judgement.examined) this.addJudgedRequirement(id, kept, implementationFindings, brokenByClient, test);
    for (const id of implementationFindings.keys()) if (!judgement.examined.includes(id)) this.addJudgedRequirement(id, kept, implementationFindings, brokenByClient, test);
  }

  private addJudgedRequirement(id: string, kept: KeptExchange, implementationFindings: Map<string, Finding[]>, brokenByClient: Set<string>, test: string | undefined): void {
    const acc = this.byId.get(id);
    const findings = implementationFindings.get(id);
    // A rule the caller broke says nothing for or against the implementation.
    if (!acc || (brokenByClient.has(id) && !findings)) return;
    if (!findings) {
      this.addPass(acc, kept, test);
      return;
    }
    acc.exchanges++;
    acc.failingExchanges++;
    if (acc.failures.length >= EVIDENCE_PER_REQUIREMENT) return;
    const item: Evidence = { source: this.source.name, kind: 'exchange', status: statusOfFailure(acc.requirement) };
    if (test !== undefined) item.test = test;
    item.findings = findings.map((f) => kept.reported(f));
    item.message = item.findings.map((f) => f.message).join('\n');
    item.exchange = kept.evidence();
    acc.failures.push(item);
  }

  /** One suite test's outcome: listed as a test, and evidence for every requirement it names. Returns its status in the report. */
  addTest(outcome: TestOutcome): Status {
    const message = outcome.message === undefined ? undefined : redactText(outcome.message);
    const counterexample = outcome.counterexample === undefined ? undefined : redactText(outcome.counterexample);
    const exchange = outcome.exchange === undefined ? undefined : exchangeEvidence(outcome.exchange);
    const result = this.testResult(outcome, message, counterexample);
    this.tests.push(result);
    for (const id of outcome.requirements) {
      const acc = this.byId.get(id);
      if (!acc) continue;
      if (!acc.testNames.includes(outcome.name)) acc.testNames.push(outcome.name);
      if (outcome.status === 'skip') {
        if (message && !acc.skipReasons.includes(message)) acc.skipReasons.push(message);
        continue;
      }
      acc.tests++;
      const item: Evidence = { source: this.source.name, kind: 'test', test: outcome.name, status: outcome.status === 'fail' ? statusOfFailure(acc.requirement) : 'pass' };
      if (message !== undefined) item.message = message;
      if (counterexample !== undefined) item.counterexample = counterexample;
      if (exchange !== undefined) item.exchange = exchange;
      if (outcome.status === 'fail') {
        acc.failingTests++;
        if (acc.failures.length < EVIDENCE_PER_REQUIREMENT) acc.failures.push(item);
      } else if (acc.passes.length < PASSING_EVIDENCE_PER_REQUIREMENT) {
        acc.passes.push(item);
      }
    }
    return result.status;
  }

  /** Why requirements that nothing examined were skipped (e.g. a missing credential profile). */
  skip(requirementIds: string[], reason: string): void {
    for (const id of requirementIds) {
      const acc = this.byId.get(id);
      if (acc && !acc.skipReasons.includes(reason)) acc.skipReasons.push(reason);
    }
  }

  build({ failOn }: { failOn: FailOn }): Report {
    const finishedAt = new Date().toISOString();
    const requirements: RequirementResult[] = [];
    for (const acc of this.byId.values()) requirements.push(resultOf(acc));
    const summary = summarize(requirements);
    const report: Report = {
      schemaVersion: 1,
      tool: { name: 'tmi-conform', version },
      kind: this.options.kind,
      startedAt: this.startedAt,
      finishedAt,
      sources: [{ ...this.source, finishedAt }],
      summary,
      passed: verdict(summary, failOn),
      failOn,
      requirements,
      operations: groupByOperation(requirements),
      tests: structuredClone(this.tests),
      clientFindings: [...this.clientFindings.values()].sort((a, b) => b.count - a.count),
    };
    if (this.source.target !== undefined) report.target = this.source.target;
    if (this.traffic.exchanges > 0) report.traffic = structuredClone(this.traffic);
    return report;
  }

  private addClientFinding(f: Finding, kept: KeptExchange): void {
    const key = `${f.requirement} ${f.check}`;
    const existing = this.clientFindings.get(key);
    if (existing) existing.count++;
    else this.clientFindings.set(key, { ...kept.reported(f), count: 1, example: kept.evidence() });
  }

  private testResult(outcome: TestOutcome, message: string | undefined, counterexample: string | undefined): TestResult {
    let status: Status = outcome.status;
    if (outcome.status === 'fail') {
      const levels = outcome.requirements.map((id) => this.byId.get(id)?.requirement.level);
      status = levels.length > 0 && levels.every((level) => level === 'should') ? 'warn' : 'fail';
    }
    const result: TestResult = { source: this.source.name, name: outcome.name, requirements: [...outcome.requirements], status };
    if (outcome.file !== undefined) result.file = outcome.file;
    if (message !== undefined) result.message = message;
    if (counterexample !== undefined) result.counterexample = counterexample;
    if (outcome.durationMs !== undefined) result.durationMs = outcome.durationMs;
    return result;
  }

  private recordRateLimit(exchange: Exchange, observation: RateLimitObservation | null | undefined): void {
    if (!observation) return;
    if (this.rateLimitSeen++ % this.rateLimitStride !== 0) return;
    const series = this.traffic.rateLimitSeries;
    series.push({ t: exchange.startedAt, client: rateLimitClient(exchange), status: observation.status, limit: observation.limit, remaining: observation.remaining, reset: observation.reset });
    if (series.length >= RATE_LIMIT_POINTS) {
      this.traffic.rateLimitSeries = series.filter((_, i) => i % 2 === 0);
      this.rateLimitStride *= 2;
    }
  }
}

/**
 * An exchange as a report keeps it: its redacted evidence is made only when some requirement
 * keeps it (most exchanges are counted, not kept), and once.
 */
class KeptExchange {
  private kept: ExchangeEvidence | undefined;
  /** Secret values the redaction masked: a finding's message quoting one is masked the same way. */
  private secrets: SecretSink | undefined;

  constructor(
    private readonly exchange: Exchange,
    private readonly operation: string,
  ) {}

  evidence(): ExchangeEvidence {
    if (!this.kept) {
      this.secrets = new Set();
      this.kept = exchangeEvidence(this.exchange, this.operation, this.secrets);
    }
    return this.kept;
  }

  /** A finding as a report shows it: its documented fields, masked like the evidence, and its message. */
  reported(f: Finding): ReportedFinding {
    this.evidence();
    return reportedFinding(f, this.secrets!);
  }
}

const statusOfFailure = (requirement: Requirement): Status => (requirement.level === 'must' ? 'fail' : 'warn');

/**
 * Only the finding's documented fields reach a report, so report.json keeps its schema; what
 * it quotes of the exchange is masked as the exchange's evidence is, then the message is made.
 */
function reportedFinding(f: Finding, secrets: SecretSink): ReportedFinding {
  const expected = scrubSecrets(f.expected, secrets);
  const received = scrubSecrets(f.received, secrets);
  return { requirement: f.requirement, level: f.level, subject: f.subject, check: f.check, expected, received, message: findingMessage({ requirement: f.requirement, expected, received }) };
}

function resultOf(acc: Accumulator): RequirementResult {
  const r = acc.requirement;
  const failed = acc.failingExchanges + acc.failingTests > 0;
  const examined = acc.exchanges + acc.tests > 0;
  const status: Status = failed ? statusOfFailure(r) : examined ? 'pass' : 'skip';
  const result: RequirementResult = {
    id: r.id,
    level: r.level,
    subject: r.subject,
    operations: r.operations,
    section: r.section,
    title: r.title,
    quote: r.quote,
    status,
    coverage: { checks: r.checks, tests: acc.testNames },
    counts: { exchanges: acc.exchanges, tests: acc.tests, findings: acc.failingExchanges + acc.failingTests, clientFindings: acc.clientFindings },
    evidence: [...acc.failures, ...acc.passes],
  };
  if (r.inferred !== undefined) result.inferred = r.inferred;
  if (status === 'skip') {
    result.reason =
      acc.skipReasons.length > 0
        ? acc.skipReasons.join('; ')
        : acc.clientFindings > 0
          ? `only client traffic concerned it (${acc.clientFindings} client finding(s), reported beside the verdict)`
          : 'no test or exchange examined it';
  }
  return result;
}
