// The run's vitest reporter: a progress line per suite file, and every test's outcome and
// judged exchanges handed to the report builder.
import { basename } from 'node:path';
import type { Reporter, TestCase, TestModule } from 'vitest/node';
import type { ReportBuilder } from '../reports/builder.ts';
import type { TestOutcome } from '../reports/model.ts';
import { requirementsOfTestName } from './requirement-names.ts';

/** fast-check's failure text names the shrunk counterexample on one line. */
const COUNTEREXAMPLE = /Counterexample: (.*)/;

/**
 * The requirements a failed test is evidence against: those whose findings its failure
 * names ("ID: expected …"); when it names none (a scenario expectation failed), all it covers.
 * A test that stops at a schema finding says nothing against the other rules it covers.
 */
export function blamed(covered: string[], message: string): string[] {
  const named = covered.filter((id) => message.includes(`${id}: expected`));
  return named.length > 0 ? named : covered;
}

export interface RunTotals {
  tests: { pass: number; fail: number; skip: number };
  unplanned429: number;
  risked429: number;
  exchanges: number;
}

export class SuiteReporter implements Reporter {
  readonly totals: RunTotals = { tests: { pass: 0, fail: 0, skip: 0 }, unplanned429: 0, risked429: 0, exchanges: 0 };
  private readonly startedAt = new Map<string, number>();

  constructor(
    private readonly builder: ReportBuilder,
    private readonly print: (line: string) => void,
    /** Tests left out by --requirement are skipped with this reason. */
    private readonly notSelected: string | undefined,
  ) {}

  onTestModuleStart(module: TestModule): void {
    this.startedAt.set(module.moduleId, Date.now());
  }

  onTestCaseResult(testCase: TestCase): void {
    const result = testCase.result();
    const name = testCase.fullName;
    const evidence = testCase.meta().tmi;
    for (const { exchange, judgement } of evidence?.exchanges ?? []) this.builder.addExchange(exchange, judgement, name);
    this.totals.exchanges += evidence?.exchanges.length ?? 0;
    this.totals.unplanned429 += evidence?.unplanned429 ?? 0;
    this.totals.risked429 += evidence?.risked429 ?? 0;

    const outcome: TestOutcome = { name, file: basename(testCase.module.moduleId), requirements: requirementsOfTestName(testCase.name), status: 'pass', durationMs: testCase.diagnostic()?.duration ?? 0 };
    if (result.state === 'skipped') {
      outcome.status = 'skip';
      outcome.message = result.note ?? this.notSelected ?? 'skipped';
      this.totals.tests.skip++;
    } else if (result.state === 'failed') {
      outcome.status = 'fail';
      // fast-check puts the failing assertion in `cause`, beneath its counterexample.
      const message = result.errors.map((e) => [e.message, (e.cause as { message?: string } | undefined)?.message].filter(Boolean).join('\n')).join('\n');
      outcome.message = message.slice(0, 4000);
      outcome.requirements = blamed(outcome.requirements, message);
      const counterexample = COUNTEREXAMPLE.exec(message)?.[1];
      if (counterexample) outcome.counterexample = counterexample.slice(0, 2000);
      this.totals.tests.fail++;
    } else {
      this.totals.tests.pass++;
    }
    this.builder.addTest(outcome);
  }

  onTestModuleEnd(module: TestModule): void {
    const counts = { passed: 0, failed: 0, skipped: 0 };
    for (const test of module.children.allTests()) {
      const state = test.result().state;
      if (state === 'passed') counts.passed++;
      else if (state === 'failed') counts.failed++;
      else if (state === 'skipped') counts.skipped++;
    }
    const seconds = ((Date.now() - (this.startedAt.get(module.moduleId) ?? Date.now())) / 1000).toFixed(1);
    const mark = counts.failed > 0 ? '✗' : '✓';
    const name = basename(module.moduleId).replace(/\.suite\.ts$/, '');
    this.print(`  ${mark} ${name.padEnd(32)} ${counts.passed} passed · ${counts.failed} failed · ${counts.skipped} skipped  (${seconds} s)`);
    for (const error of module.errors()) this.print(`    error in ${name}: ${error.message.split('\n')[0]}`);
  }
}
