// The run's vitest reporter: a progress line per suite file, and every test's outcome and
// judged exchanges handed to the report builder. A test that did not run to its end never
// passes: one vitest never started is a skip, and so, once the run is interrupted, is one it
// cancelled or whose requests the interrupt cut short ("not run: the run was interrupted").
import type { Reporter, TestCase, TestModule } from 'vitest/node';
import type { ReportBuilder } from '../reports/builder.ts';
import type { Status, TestOutcome } from '../reports/model.ts';
import { NOT_RUN_INTERRUPTED } from '../reports/status.ts';
import { describeTestError } from './failure.ts';
import type { ProgressTally } from './progress.ts';
import { suiteFileOf, suiteNameOf } from './suite-files.ts';
// The test meta's shape (TaskMeta.tmi) is declared with the evidence it carries.
import type {} from './evidence.ts';

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
  /** Its tests the interrupt kept from running to their end. */
  notRun: number;
}

export interface RunTotals {
  tests: TestCounts;
  unplanned429: number;
  risked429: number;
  exchanges: number;
}

/** vitest's note on the tests a cancelled run marked skipped (@vitest/runner's TestRunAbortError). */
const CANCELLED_NOTE = 'The test run was aborted by the user.';

/** What errors of a failed test say that it failed because the run was interrupted (the kit's RunInterrupted, vitest's TestRunAbortError), and nothing else. */
const failedByInterrupt = (errors: ReadonlyArray<{ name?: string; message?: string }>): boolean =>
  errors.length > 0 && errors.every((e) => e.name === 'RunInterrupted' || e.name === 'TestRunAbortError' || (e.message ?? '').includes(NOT_RUN_INTERRUPTED));

export class SuiteReporter implements Reporter {
  readonly totals: RunTotals = { tests: noTests(), unplanned429: 0, risked429: 0, exchanges: 0 };
  private readonly modules = new Map<string, ModuleTally>();
  /** Tests reported: vitest reports the tests of a cancelled file once more. */
  private readonly reported = new Set<string>();
  private interrupted = false;

  constructor(
    private readonly builder: ReportBuilder,
    private readonly print: (line: string) => void,
    /** --requirement: the tests that declare none of its ids are skipped with the reason. */
    private readonly selection: { requirements: string[]; notSelected: string } | undefined,
    /** Told of each file and test, for the run's progress and --json events. */
    private readonly progress?: ProgressTally,
  ) {}

  /** The run was interrupted: from now on, a test that did not run to its end is "not run". */
  interrupt(): void {
    this.interrupted = true;
  }

  /**
   * A suite file's tally, made by whichever of its events comes first: vitest can report a
   * test's result before its file's start, or after its file's end, and each must count.
   */
  private moduleTally(moduleId: string): ModuleTally {
    let tally = this.modules.get(moduleId);
    if (!tally) {
      tally = {
        startedAt: Date.now(),
        tests: noTests(),
        findings: { must: 0, should: 0 },
        expected: undefined,
        endedAt: undefined,
        errors: [],
        printed: false,
        notRun: 0,
      };
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
    if (this.reported.has(testCase.id)) return;
    this.reported.add(testCase.id);
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

    const duration = testCase.diagnostic()?.duration;
    // The requirements the test declared as its tags (suites/requirement-tags.ts), never its title.
    const requirements = [...testCase.tags];
    const outcome: TestOutcome = {
      name,
      file: suiteFileOf(testCase.module.moduleId),
      requirements,
      status: 'pass',
      ...(duration !== undefined ? { durationMs: duration } : {}),
    };
    const notRun = this.notRun(result);
    if (this.selection && !requirements.some((id) => this.selection!.requirements.includes(id))) {
      // Left out by --requirement: never run, whatever vitest made of it when the run was cancelled.
      outcome.status = 'skip';
      outcome.message = this.selection.notSelected;
    } else if (notRun !== undefined) {
      outcome.status = 'skip';
      outcome.message = notRun;
      if (this.interrupted) tally.notRun++;
    } else if (result.state === 'skipped') {
      outcome.status = 'skip';
      outcome.message = result.note ?? 'skipped';
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

  /** Why a test did not run to its end, when it did not: never started, or (interrupted) cancelled or cut short. */
  private notRun(result: ReturnType<TestCase['result']>): string | undefined {
    const why = this.interrupted ? NOT_RUN_INTERRUPTED : 'not run';
    if (result.state === 'pending') return why;
    if (!this.interrupted) return undefined;
    if (result.state === 'failed') return failedByInterrupt(result.errors) ? why : undefined;
    // Cancelled by vitest: with its note, or (tests it reached after the cancel) without one.
    return result.state === 'skipped' && (result.note === CANCELLED_NOTE || result.note === undefined) ? why : undefined;
  }

  onTestModuleEnd(module: TestModule): void {
    const tally = this.moduleTally(module.moduleId);
    tally.endedAt = Date.now();
    this.progress?.ended(module.moduleId);
    tally.expected = [...module.children.allTests()].length;
    tally.errors = module.errors().map((error) => error.message.split('\n')[0]!);
    this.printWhenComplete(module.moduleId, tally);
  }

  /**
   * Tests the run ended without a result of (a worker that a signal to the process group ended)
   * are reported as they stand (not run); then the files whose line was still waiting for a
   * result are printed with what came.
   */
  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    for (const module of modules) for (const test of module.children.allTests()) if (!this.reported.has(test.id)) this.onTestCaseResult(test);
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
    const mark = counts.fail > 0 || findings.must > 0 ? '✗' : counts.warn > 0 || findings.should > 0 ? '⚠' : tally.notRun > 0 ? '⏹' : '✓';
    const name = suiteNameOf(moduleId);
    const inExchanges = findings.must + findings.should > 0 ? `; findings in its exchanges: ${findings.must} must, ${findings.should} should` : '';
    const notRun = tally.notRun > 0 ? ` (${tally.notRun} not run: interrupted)` : '';
    this.print(`  ${mark} ${name.padEnd(32)} ${countsLine(counts)}${notRun}${inExchanges}  (${seconds} s)`);
    for (const error of tally.errors) this.print(`    error in ${name}: ${error}`);
  }
}
