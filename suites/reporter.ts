// The run's vitest reporter: a progress line per suite file, and every test's outcome and
// judged exchanges handed to the report builder.
import { basename } from 'node:path';
import type { Reporter, TestCase, TestModule } from 'vitest/node';
import type { ReportBuilder } from '../reports/builder.ts';
import type { Status, TestOutcome } from '../reports/model.ts';
import { describeTestError } from './failure.ts';
import { requirementsOfTestName } from './requirement-names.ts';
import type { ProgressTally } from './progress.ts';

/** Tests per status, counted as the report counts them (a failure of `should` requirements only is a warning). */
export type TestCounts = Record<Status, number>;

const noTests = (): TestCounts => ({ pass: 0, fail: 0, warn: 0, skip: 0 });

/** "3 passed · 0 failed · 1 warned · 0 skipped". */
export const countsLine = (c: TestCounts): string => `${c.pass} passed · ${c.fail} failed · ${c.warn} warned · ${c.skip} skipped`;

/** What the console line of one suite file says: its tests, and the findings in their exchanges (they weigh on the report even when a test passes). */
interface ModuleTally {
  startedAt: number;
  tests: TestCounts;
  findings: { must: number; should: number };
  /** How many tests the file has (known at its end), its end, and its errors. */
  expected: number | undefined;
  endedAt: number | undefined;
  errors: string[];
  printed: boolean;
}

export interface RunTotals {
  tests: TestCounts;
  unplanned429: number;
  risked429: number;
  exchanges: number;
}

export class SuiteReporter implements Reporter {
  readonly totals: RunTotals = { tests: noTests(), unplanned429: 0, risked429: 0, exchanges: 0 };
  private readonly modules = new Map<string, ModuleTally>();

  constructor(
    private readonly builder: ReportBuilder,
    private readonly print: (line: string) => void,
    /** Tests left out by --requirement are skipped with this reason. */
    private readonly notSelected: string | undefined,
    /** Told of each file and test, for the run's progress and --json events. */
    private readonly progress?: ProgressTally,
  ) {}

  /**
   * A suite file's tally, made by whichever of its events comes first: vitest can report a
   * test's result before its file's start, or after its file's end, and each must count.
   */
  private moduleTally(moduleId: string): ModuleTally {
    let tally = this.modules.get(moduleId);
    if (!tally) {
      tally = { startedAt: Date.now(), tests: noTests(), findings: { must: 0, should: 0 }, expected: undefined, endedAt: undefined, errors: [], printed: false };
      this.modules.set(moduleId, tally);
    }
    return tally;
  }

  onTestModuleCollected(module: TestModule): void {
    this.progress?.collected(module.moduleId, [...module.children.allTests()].length);
  }

  onTestModuleStart(module: TestModule): void {
    this.moduleTally(module.moduleId);
    this.progress?.started(module.moduleId);
  }

  onTestCaseResult(testCase: TestCase): void {
    const result = testCase.result();
    const name = testCase.fullName;
    const evidence = testCase.meta().tmi;
    const tally = this.moduleTally(testCase.module.moduleId);
    for (const { exchange, judgement } of evidence?.exchanges ?? []) {
      this.builder.addExchange(exchange, judgement, name);
      for (const f of judgement.findings) if (f.subject === 'implementation') tally.findings[f.level]++;
    }
    this.totals.exchanges += evidence?.exchanges.length ?? 0;
    this.totals.unplanned429 += evidence?.unplanned429 ?? 0;
    this.totals.risked429 += evidence?.risked429 ?? 0;

    const outcome: TestOutcome = { name, file: basename(testCase.module.moduleId), requirements: requirementsOfTestName(testCase.name), status: 'pass', durationMs: testCase.diagnostic()?.duration ?? 0 };
    if (result.state === 'skipped') {
      outcome.status = 'skip';
      outcome.message = result.note ?? this.notSelected ?? 'skipped';
    } else if (result.state === 'failed') {
      outcome.status = 'fail';
      // The kit's words (suites/failure.ts); a property's shrunk counterexample beneath them.
      const described = result.errors.map((e) => describeTestError(e));
      const message = described.map((d) => d.message).join('\n');
      outcome.message = message.slice(0, 4000);
      // What the failed expectation charged (suites/context.ts); a failure the kit's expectations
      // did not make (an error thrown on the way) charges nothing: the test was not examined.
      outcome.charged = evidence?.charged ?? [];
      const counterexample = described.find((d) => d.counterexample !== undefined)?.counterexample;
      if (counterexample) outcome.counterexample = counterexample.slice(0, 2000);
      // The last exchange a failed expectation marked: for a property, its shrunk counterexample's.
      const failing = [...(evidence?.exchanges ?? [])].reverse().find((e) => e.failing);
      if (failing) outcome.exchange = failing.exchange;
    }
    const status = this.builder.addTest(outcome);
    this.totals.tests[status]++;
    tally.tests[status]++;
    this.progress?.testFinished(testCase.module.moduleId, outcome, status);
    this.printWhenComplete(testCase.module.moduleId, tally);
  }

  onTestModuleEnd(module: TestModule): void {
    const tally = this.moduleTally(module.moduleId);
    tally.endedAt = Date.now();
    this.progress?.ended(module.moduleId);
    tally.expected = [...module.children.allTests()].length;
    tally.errors = module.errors().map((error) => error.message.split('\n')[0]!);
    this.printWhenComplete(module.moduleId, tally);
  }

  /** Files whose line was still waiting for a result when the run ended: printed with what came. */
  onTestRunEnd(): void {
    for (const [moduleId, tally] of this.modules) if (!tally.printed) this.printLine(moduleId, tally);
  }

  /** A file's line, once the file has ended and every one of its tests has reported. */
  private printWhenComplete(moduleId: string, tally: ModuleTally): void {
    const reported = tally.tests.pass + tally.tests.fail + tally.tests.warn + tally.tests.skip;
    if (!tally.printed && tally.expected !== undefined && reported >= tally.expected) this.printLine(moduleId, tally);
  }

  private printLine(moduleId: string, tally: ModuleTally): void {
    tally.printed = true;
    // As the report counts them: a failed test naming only `should` requirements is a warning.
    const { tests: counts, findings } = tally;
    const seconds = (((tally.endedAt ?? Date.now()) - tally.startedAt) / 1000).toFixed(1);
    const mark = counts.fail > 0 || findings.must > 0 ? '✗' : counts.warn > 0 || findings.should > 0 ? '⚠' : '✓';
    const name = basename(moduleId).replace(/\.suite\.ts$/, '');
    const inExchanges = findings.must + findings.should > 0 ? `; findings in its exchanges: ${findings.must} must, ${findings.should} should` : '';
    this.print(`  ${mark} ${name.padEnd(32)} ${countsLine(counts)}${inExchanges}  (${seconds} s)`);
    for (const error of tally.errors) this.print(`    error in ${name}: ${error}`);
  }
}
