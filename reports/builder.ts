// Builds the one report model from what the drivers saw: judged exchanges (proxy, validate,
// suites) and test outcomes (suites). A requirement's status comes from its evidence:
//   fail  a `must` requirement with an implementation finding or a failed test
//   warn  the same for a `should` requirement
//   pass  examined by at least one exchange or test, and nothing against it
//   skip  nothing examined it (the reason says why; in an interrupted run, by default, that it was not reached)
// Client findings are kept beside the verdict, never in it. Every suite test is listed too.
// The builder routes each exchange and test to its parts: requirement-tally.ts (counts and
// evidence per requirement), traffic.ts (traffic statistics and rate-limit series),
// client-findings.ts, test-result.ts; kept-exchange.ts makes an exchange's evidence only when
// something keeps it, so most passing exchanges are only counted.
import type { Judgement } from '../rules/index.ts';
import { applyBaseline } from './baseline.ts';
import { OPENAPI_REQUIREMENTS } from '../rules/checks/openapi.ts';
import { loadRequirements } from '../rules/requirements.ts';
import { observationOf } from '../rules/rate-limit-tracker.ts';
import type { Exchange, Finding, Level } from '../rules/types.ts';
import { assembleReport } from './assemble.ts';
import { ClientFindingTally } from './client-findings.ts';
import { exchangeEvidence } from './exchange-evidence.ts';
import type { FailOn } from './fail-on.ts';
import { KeptExchange } from './kept-exchange.ts';
import { KnownSecrets, learnSecrets } from '../core/redact.ts';
import type { Baseline, Report, ReportKind, Source, Status, TestOutcome, TestResult } from './model.ts';
import { redactTarget, redactText } from './redact-text.ts';
import { RequirementTally } from './requirement-tally.ts';
import { NOT_RUN_INTERRUPTED } from './status.ts';
import { chargedBy, notExamined, notExaminedMessage, testResult } from './test-result.ts';
import { TrafficTally } from './traffic.ts';
import { coverageOf } from './coverage.ts';
import { DescriptionTally } from './description-coverage.ts';
import type { DescriptionFrame } from '../rules/openapi/coverage.ts';

export { exchangeEvidence };

export interface BuilderOptions {
  kind: ReportKind;
  /** Name of this source of evidence, e.g. "run", "proxy", "validate:traffic.har". */
  source: string;
  target?: string;
  /** Seed of the generated inputs of a suite run. */
  seed?: number;
  /**
   * Learn the secrets of the source's token requests (a client secret) and mask them wherever
   * they turn up in later evidence. The proxy masks before the builder sees anything; validate
   * reads recordings made by anyone, so its builder does it.
   */
  maskLearnedSecrets?: boolean;
  /** Where the learned secrets are kept: shared with whoever else masks them (a judging session's); default: the builder's own. */
  knownSecrets?: KnownSecrets;
  /** A user's OpenAPI description judges the other operations (--openapi): its requirements are reported. */
  openapi?: boolean;
  /**
   * What that description declares, when the driver has it at start (the proxy): its coverage then
   * counts from the first report on; otherwise it comes with the first judgement against it.
   */
  description?: DescriptionFrame;
}

export class ReportBuilder {
  private readonly startedAt = new Date().toISOString();
  private readonly source: Source;
  private readonly byId = new Map<string, RequirementTally>();
  private readonly clientFindings = new ClientFindingTally();
  private readonly tests: TestResult[] = [];
  private readonly traffic = new TrafficTally();
  private readonly levelOf = (id: string): Level | undefined => this.byId.get(id)?.requirement.level;
  private readonly knownSecrets: KnownSecrets | undefined;
  /** The values of the document's enumerations and limits the exchanges carried (Judgement.reached), for the coverage. */
  private readonly reached = new Set<string>();
  /** What the exchanges exercised of the user's description (Judgement.described), for the coverage. */
  private readonly described: DescriptionTally;

  constructor(private readonly options: BuilderOptions) {
    this.source = { name: options.source, kind: options.kind, startedAt: this.startedAt };
    this.knownSecrets = options.maskLearnedSecrets === true ? (options.knownSecrets ?? new KnownSecrets()) : undefined;
    this.described = new DescriptionTally(options.description);
    if (options.target !== undefined) this.source.target = redactTarget(options.target);
    if (options.seed !== undefined) this.source.seed = options.seed;
    for (const requirement of loadRequirements()) {
      if (options.openapi !== true && OPENAPI_REQUIREMENTS.has(requirement.id)) continue;
      this.byId.set(requirement.id, new RequirementTally(requirement, options.source));
    }
  }

  /** One judged exchange: counted in the traffic statistics, and evidence for what it examined. */
  addExchange(exchange: Exchange, judgement: Judgement, test?: string): void {
    if (!judgement.operation) {
      this.traffic.notCoveredExchange(exchange, judgement.notCovered);
      return;
    }
    const operation = judgement.operation.operation;
    if (judgement.reached) for (const key of judgement.reached) this.reached.add(key);
    if (judgement.described) this.described.add(judgement.described);
    this.traffic.coveredExchange(exchange, operation, judgement, judgement.rateLimit !== undefined ? judgement.rateLimit : observationOf(exchange));
    // Token requests carry the client secrets: learned from each (they are few) before any later evidence is made.
    if (operation === 'getToken' && this.knownSecrets) learnSecrets(exchange, this.knownSecrets);
    const kept = new KeptExchange(exchange, operation, this.knownSecrets);
    if (judgement.findings.length === 0) {
      // The common case, kept cheap: every examined requirement gets a pass.
      for (const id of judgement.examined) this.byId.get(id)?.passedExchange(kept, test);
      return;
    }
    this.addJudgedFindings(kept, judgement, test);
  }

  /**
   * Exchanges the driver did not judge and never handed over (a journal's last line cut short, a
   * HAR read once through the journal it was made from): listed with the others not judged, so
   * that every report says so. `ids`: the first few.
   */
  addNotJudged(reason: string, count: number, ids: readonly string[]): void {
    this.traffic.notJudgedElsewhere(reason, count, ids);
  }

  private addJudgedFindings(kept: KeptExchange, judgement: Judgement, test: string | undefined): void {
    const implementationFindings = new Map<string, Finding[]>();
    const brokenByClient = new Set<string>();
    for (const f of judgement.findings) {
      if (f.subject === 'client') {
        brokenByClient.add(f.requirement);
        if (!this.clientFindings.counted(f, 1)) this.clientFindings.start({ ...kept.reported(f), count: 1, example: kept.evidence() });
        this.byId.get(f.requirement)?.clientFinding();
        continue;
      }
      const list = implementationFindings.get(f.requirement);
      if (list) list.push(f);
      else implementationFindings.set(f.requirement, [f]);
    }
    for (const id of judgement.examined) this.addJudgedRequirement(id, kept, implementationFindings, brokenByClient, test);
    for (const id of implementationFindings.keys())
      if (!judgement.examined.includes(id)) this.addJudgedRequirement(id, kept, implementationFindings, brokenByClient, test);
  }

  private addJudgedRequirement(
    id: string,
    kept: KeptExchange,
    implementationFindings: Map<string, Finding[]>,
    brokenByClient: Set<string>,
    test: string | undefined,
  ): void {
    const tally = this.byId.get(id);
    const findings = implementationFindings.get(id);
    // A rule the caller broke says nothing for or against the implementation.
    if (!tally || (brokenByClient.has(id) && !findings)) return;
    if (findings) tally.failedExchange(kept, findings, test);
    else tally.passedExchange(kept, test);
  }

  /**
   * One suite test's outcome: listed as a test, and evidence for the requirements it names. A
   * failed test is evidence only against the requirements it charges; the others it covers were
   * not examined by it. Returns its status in the report.
   */
  addTest(outcome: TestOutcome): Status {
    const raw = notExamined(outcome) ? notExaminedMessage(outcome.message) : outcome.message;
    const message = raw === undefined ? undefined : redactText(raw);
    const counterexample = outcome.counterexample === undefined ? undefined : redactText(outcome.counterexample);
    const exchange = outcome.exchange === undefined ? undefined : exchangeEvidence(outcome.exchange);
    const result = testResult(this.source.name, outcome, message, counterexample, this.levelOf);
    this.tests.push(result);
    const charged = chargedBy(outcome);
    for (const id of new Set([...outcome.requirements, ...charged])) this.byId.get(id)?.testOutcome(outcome, charged, message, counterexample, exchange);
    return result.status;
  }

  /** Why requirements that nothing examined were skipped (e.g. a missing credential profile). */
  skip(requirementIds: string[], reason: string): void {
    for (const id of requirementIds) this.byId.get(id)?.skip(reason);
  }

  /**
   * The source was interrupted: the report says so and has no verdict (`passed` is false), and
   * a requirement nothing examined before the interrupt is skipped as not run.
   */
  interrupted(): void {
    this.source.interrupted = true;
  }

  /** `baseline` (--baseline): the failures it accepts are marked and left out of the verdict. */
  build({ failOn, baseline }: { failOn: FailOn; baseline?: Baseline | undefined }): Report {
    const finishedAt = new Date().toISOString();
    const report = assembleReport(
      {
        kind: this.options.kind,
        startedAt: this.startedAt,
        finishedAt,
        sources: [{ ...this.source, finishedAt }],
        requirements: [...this.byId.values()].map((tally) => tally.result(this.source.interrupted ? NOT_RUN_INTERRUPTED : undefined)),
        tests: structuredClone(this.tests),
        clientFindings: this.clientFindings.list(),
      },
      failOn,
    );
    if (this.source.target !== undefined) report.target = this.source.target;
    const traffic = this.traffic.stats();
    if (traffic) report.traffic = traffic;
    report.coverage = coverageOf(report, this.reached, this.described);
    return baseline ? applyBaseline(report, baseline) : report;
  }
}
