// What one requirement gathers while a report is built: how many exchanges and tests examined
// it and how many of them failed, the tests that name it, why it was skipped, and a bounded
// sample of evidence (failures first). Its result is the requirement's entry in the report.
import type { Requirement } from '../rules/requirements.ts';
import { checksOf } from '../rules/checks/index.ts';
import type { Finding } from '../rules/types.ts';
import { EVIDENCE_PER_REQUIREMENT, PASSING_EVIDENCE_PER_REQUIREMENT, PASSING_EXCHANGES_PER_REQUIREMENT } from './evidence-limits.ts';
import type { KeptExchange } from './kept-exchange.ts';
import { FailedPlaces } from './failed-places.ts';
import type { Evidence, ExchangeEvidence, RequirementResult, Status, TestOutcome } from './model.ts';
import { requirementResult } from './requirement-result.ts';
import { failureStatus } from './status.ts';

export class RequirementTally {
  private exchanges = 0;
  private tests = 0;
  private failingExchanges = 0;
  private failingTests = 0;
  private clientFindings = 0;
  /** Failing exchanges with a security finding among theirs. */
  private securityExchanges = 0;
  private readonly skipReasons: string[] = [];
  private readonly testNames: string[] = [];
  private readonly failures: Evidence[] = [];
  private readonly passes: Evidence[] = [];
  /** Per operation id, for a requirement of several: exchanges that examined it, and those that failed it. */
  private readonly byOperation = new Map<string, { exchanges: number; findings: number }>();
  /** Per operation id, the places its findings named, of every failing exchange (one of any number of operations). */
  private readonly places = new FailedPlaces();
  /** Tests with an exchange that failed it: their failure is at the places of its findings. */
  private readonly testsWithFindings = new Set<string>();

  constructor(
    readonly requirement: Requirement,
    /** Name of the report's source of evidence (Source.name). */
    private readonly source: string,
  ) {}

  /** An exchange examined it and found nothing against it: the common case, kept cheap. */
  passedExchange(kept: KeptExchange, test: string | undefined): void {
    this.exchanges++;
    this.countOperation(kept.operation, false);
    if (this.passes.length >= PASSING_EXCHANGES_PER_REQUIREMENT) return;
    const item: Evidence = { source: this.source, kind: 'exchange', status: 'pass', exchange: kept.evidence() };
    if (test !== undefined) item.test = test;
    this.passes.push(item);
  }

  /** An exchange with implementation findings against it. */
  failedExchange(kept: KeptExchange, findings: Finding[], test: string | undefined): void {
    this.exchanges++;
    this.failingExchanges++;
    this.countOperation(kept.operation, true);
    if (findings.some((f) => f.security !== undefined)) this.securityExchanges++;
    for (const f of findings) this.places.add(kept.operation, f.pointer ?? '');
    if (test !== undefined) this.testsWithFindings.add(test);
    if (!this.roomForFailure(failureKind(kept.credentialAttack(), test))) return;
    const item: Evidence = { source: this.source, kind: 'exchange', status: failureStatus(this.requirement.level) };
    if (test !== undefined) item.test = test;
    item.findings = findings.map((f) => kept.reported(f));
    item.message = item.findings.map((f) => f.message).join('\n');
    item.exchange = kept.evidence();
    this.failures.push(item);
  }

  /**
   * Whether a failure of this kind is kept: while fewer than the limit are, always; once full,
   * only a kind not kept yet, in place of the newest repeat of a kind kept twice or more, and
   * a token attack not kept yet even when no repeat is left to give way. So the
   * kept failures show every kind (up to the limit) whatever order they arrived in: tests run
   * side by side interleave their failures, and each attack a target let through is shown.
   */
  private roomForFailure(kind: string): boolean {
    if (this.failures.length < EVIDENCE_PER_REQUIREMENT) return true;
    const kinds = this.failures.map((e) => failureKind(e.exchange?.credential?.attack, e.test));
    if (kinds.includes(kind)) return false;
    for (let i = kinds.length - 1; i >= 0; i--) {
      if (kinds.indexOf(kinds[i]!) !== i) {
        this.failures.splice(i, 1);
        return true;
      }
    }
    // Every token attack a target let through is a hole of its own, with a reproduction of its
    // own: kept beyond the limit (one per attack, so at most as many as there are attacks).
    return kind.startsWith('attack ');
  }

  private countOperation(operation: string, failed: boolean): void {
    if (this.requirement.operations.length < 2 && !this.requirement.operations.includes('all')) return;
    let counts = this.byOperation.get(operation);
    if (!counts) this.byOperation.set(operation, (counts = { exchanges: 0, findings: 0 }));
    counts.exchanges++;
    if (failed) counts.findings++;
  }

  /** A finding against the client: counted, never evidence for or against the implementation. */
  clientFinding(): void {
    this.clientFindings++;
  }

  /**
   * A suite test that names it or whose failure charges it (`charged`); `message`,
   * `counterexample` and `exchange` are already redacted. A failed test that does not charge it
   * did not examine it: its words become a reason, shown if nothing else examined it.
   */
  testOutcome(
    outcome: TestOutcome,
    charged: readonly string[],
    message: string | undefined,
    counterexample: string | undefined,
    exchange: ExchangeEvidence | undefined,
  ): void {
    if (!this.testNames.includes(outcome.name)) this.testNames.push(outcome.name);
    if (outcome.status === 'fail' && !charged.includes(this.requirement.id)) {
      // Ended early (its own words), or stopped at another requirement's finding first.
      const why =
        charged.length === 0 ? firstLine(message ?? 'not examined: the test ended early') : `not examined: the test stopped at ${charged.join(', ')} first`;
      this.skip(`${why} (test "${outcome.name}")`);
      return;
    }
    if (outcome.status === 'skip') {
      if (message) this.skip(message);
      return;
    }
    this.tests++;
    const item: Evidence = {
      source: this.source,
      kind: 'test',
      test: outcome.name,
      status: outcome.status === 'fail' ? failureStatus(this.requirement.level) : 'pass',
    };
    if (message !== undefined) item.message = message;
    if (counterexample !== undefined) item.counterexample = counterexample;
    if (exchange !== undefined) item.exchange = exchange;
    if (outcome.status === 'fail') {
      this.failingTests++;
      this.testFailedWithoutFindings(outcome.name);
      if (this.roomForFailure(failureKind(exchange?.credential?.attack, outcome.name))) this.failures.push(item);
    } else if (this.passes.length < PASSING_EVIDENCE_PER_REQUIREMENT) {
      this.passes.push(item);
    }
  }

  /**
   * A failed test none of whose exchanges had a finding against it (an expectation of its own
   * failed) names no place: "" on the requirement's operation, when it has one. A requirement of
   * several operations is left to report.sarif, which gives an operation without places "".
   */
  private testFailedWithoutFindings(test: string): void {
    const [operation, ...others] = this.requirement.operations;
    if (this.testsWithFindings.has(test) || operation === undefined || others.length > 0 || operation === 'all') return;
    this.places.add(operation, '');
  }

  /** Why nothing examined it (e.g. a missing credential profile); each reason once. */
  skip(reason: string): void {
    if (!this.skipReasons.includes(reason)) this.skipReasons.push(reason);
  }

  /** `unexamined`: why nothing examined it, when nothing else said why (default: nothing did). */
  result(unexamined?: string): RequirementResult {
    const r = this.requirement;
    const failed = this.failingExchanges + this.failingTests > 0;
    const examined = this.exchanges + this.tests > 0;
    const status: Status = failed ? failureStatus(r.level) : examined ? 'pass' : 'skip';
    const result = requirementResult(r, {
      status,
      coverage: { checks: checksOf(r.id), tests: this.testNames },
      counts: {
        exchanges: this.exchanges,
        tests: this.tests,
        findings: this.failingExchanges + this.failingTests,
        clientFindings: this.clientFindings,
        security: this.securityExchanges,
      },
      evidence: [...this.failures, ...this.passes],
    });
    if (status === 'skip') result.reason = this.skipReason(unexamined);
    if (this.byOperation.size > 0) result.byOperation = Object.fromEntries(this.byOperation);
    this.places.writeTo(result);
    return result;
  }

  private skipReason(unexamined: string | undefined): string {
    if (this.skipReasons.length > 0) return this.skipReasons.join('; ');
    if (this.clientFindings > 0) return `only client traffic concerned it (${this.clientFindings} client finding(s), reported beside the verdict)`;
    return unexamined ?? 'no test or exchange examined it';
  }
}

const firstLine = (text: string): string => text.split('\n', 1)[0]!;

/** What tells failures apart as evidence: the token attack an exchange sent, else the test it belongs to. */
const failureKind = (attack: string | undefined, test: string | undefined): string => (attack !== undefined ? `attack ${attack}` : `test ${test ?? ''}`);
