// Runs the suite files with vitest's programmatic API: one worker, files in a fixed order
// (rate limits last: the probe spends a quota), the configuration handed over in memory.
// vitest's `test` key of the inline configuration below is declared by vitest/config.
/// <reference types="vitest/config" />
import { join, relative } from 'node:path';
import type { TestSpecification } from 'vitest/node';
import type { ReportBuilder } from '../reports/builder.ts';
import { packageRoot, runsCompiled } from '../core/paths.ts';
import type { SuiteConfig } from './config.ts';
import type { HandoverAddress } from './handover.ts';
import { requirementTags, tagsFilterFor } from './requirement-tags.ts';
import { loadVitestNode } from './vitest-node.ts';
import { SuiteReporter, type RunTotals } from './reporter.ts';
import { SUITE_FILES, suiteFileOf } from './suite-files.ts';
import type { ProgressTally } from './progress.ts';

/**
 * Where the suite files are, and what they are named: beside this module, as TypeScript, or in
 * dist/ as JavaScript when the kit runs compiled (scripts/compiled.mjs).
 */
const suitesDir = runsCompiled ? join(packageRoot, 'dist', 'suites') : join(packageRoot, 'suites');
const inThisForm = (file: string) => (runsCompiled ? file.replace(/\.ts$/, '.js') : file);

/** The kit's modules under `root`, outside its node_modules, but for the suite files and the setup file: TypeScript, or JavaScript in dist/ when `compiled`. */
export function kitModulesOutsideSuites(root: string, compiled = false): RegExp {
  const escaped = root.replaceAll('\\', '/').replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const [under, ext] = compiled ? ['dist/', 'js'] : ['', 'ts'];
  return new RegExp(`^${escaped}/${under}(?!node_modules/)(?!suites/(?:setup|[\\w-]+\\.suite)\\.${ext}$).+\\.${ext}$`);
}

class InDocumentOrder {
  sort(files: TestSpecification[]): TestSpecification[] {
    const rank = (f: TestSpecification) => SUITE_FILES.indexOf(suiteFileOf(f.moduleId));
    return [...files].sort((a, b) => rank(a) - rank(b));
  }

  shard(files: TestSpecification[]): TestSpecification[] {
    return files;
  }
}

export interface SuiteRunOptions {
  config: SuiteConfig;
  /** Where the worker gets the preflight's outcome (suites/handover.ts): it starts before the preflight ends, and waits for it. */
  handover: HandoverAddress;
  /** Only the tests covering these requirements (empty: all). */
  requirements: string[];
  builder: ReportBuilder;
  print: (line: string) => void;
  /** Told of each file and test as they run (suites/progress.ts). */
  progress?: ProgressTally;
  /**
   * Receives how to stop the running vitest: `interrupted` (the user's interrupt), the tests it
   * keeps from running to their end are reported "not run"; without (a setup error), nothing ran.
   */
  onStart?: (stop: (interrupted: boolean) => Promise<void>) => void;
}

export interface SuiteRunResult {
  totals: RunTotals;
  /** Errors outside any test (a suite file that failed to load). */
  errors: string[];
}

export async function runSuites(options: SuiteRunOptions): Promise<SuiteRunResult> {
  const selection =
    options.requirements.length > 0
      ? { requirements: options.requirements, notSelected: `not selected (--requirement ${options.requirements.join(' ')})` }
      : undefined;
  const reporter = new SuiteReporter(options.builder, options.print, selection, options.progress);
  const vitest = await createSuitesVitest(options, reporter, selection?.requirements);
  // An interrupt cancels the run and stops the worker before the caller touches the target again.
  let stopped = false;
  let ran!: () => void;
  const ended = new Promise<void>((resolve) => (ran = resolve));
  options.onStart?.(async (interrupted) => {
    stopped = true;
    if (interrupted) reporter.interrupt();
    // vitest's cancel waits until the worker says it stopped; a worker the signal ended itself
    // (SIGTERM to the process group) never says so, though the run has ended without it.
    await Promise.race([vitest.cancelCurrentRun('keyboard-input'), ended]);
    await vitest.close();
  });
  // Stopped before it started (the run ended in a setup error): no worker at all.
  if (stopped) return { totals: reporter.totals, errors: [] };
  await vitest.start(SUITE_FILES.map((f) => join(suitesDir, inThisForm(f)))).finally(ran);
  const errors = vitest.state.getUnhandledErrors().map((e) => String((e as Error)?.message ?? e).split('\n')[0]!);
  for (const file of vitest.state.getFiles()) {
    for (const error of file.result?.errors ?? []) errors.push(`${file.name}: ${String(error.message).split('\n')[0]}`);
  }
  await vitest.close();
  return { totals: reporter.totals, errors };
}

/**
 * vitest, made to run the suite files in one worker. Vitest's logger exits the process on
 * SIGINT/SIGTERM; the run handles them itself (it puts fixture sessions back and writes the
 * reports first), so the listeners added while vitest is made go.
 */
async function createSuitesVitest(options: SuiteRunOptions, reporter: SuiteReporter, requirements: string[] | undefined) {
  const signalListeners = { SIGINT: process.listeners('SIGINT'), SIGTERM: process.listeners('SIGTERM') };
  const { createVitest } = await loadVitestNode();
  const vitest = await createVitest(
    'test',
    {
      root: packageRoot,
      config: false,
      watch: false,
      reporters: [reporter],
      // The tests that declare a selected requirement among their tags.
      ...(requirements ? { tagsFilter: tagsFilterFor(requirements) } : {}),
    },
    {
      test: {
        include: SUITE_FILES.map((f) => relative(packageRoot, join(suitesDir, inThisForm(f))).replaceAll('\\', '/')),
        // A suite test's tags are the requirements it covers (suites/requirement-tags.ts).
        tags: requirementTags(),
        setupFiles: [join(suitesDir, inThisForm('setup.ts'))],
        pool: 'forks',
        maxWorkers: 1,
        fileParallelism: false,
        // One worker for all files: they share the API client (tokens, pacing, rate-limit history).
        isolate: false,
        testTimeout: 15 * 60_000,
        hookTimeout: 5 * 60_000,
        passWithNoTests: true,
        provide: { tmiConfig: options.config, tmiHandover: options.handover },
        sequence: { sequencer: InDocumentOrder },
        // The kit's own modules load in the worker as the command loads them, through Node (with
        // tsx's loader when the kit runs its TypeScript), rather than transformed one by one by
        // vite and sent over: the first suite file started 1.3 s after the worker, now 0.5 s.
        // Only the suite files and the setup file go through vitest's runner.
        server: { deps: { external: [kitModulesOutsideSuites(packageRoot, runsCompiled)] } },
        execArgv: runsCompiled ? [] : ['--import', import.meta.resolve('tsx/esm')],
      },
    },
  );
  // Vitest's logger exits the process on SIGINT/SIGTERM; the run handles them itself (it puts
  // fixture sessions back and writes the reports first), so those listeners go.
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    for (const listener of process.listeners(signal)) if (!signalListeners[signal].includes(listener)) process.off(signal, listener);
  }
  return vitest;
}
