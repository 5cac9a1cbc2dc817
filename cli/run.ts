// `tmi-conform run`: the conformance suites against an implementation (default: the embedded
// reference, started in-process on a free loopback port), ending in the compliance reports.
import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { stopSignal } from './signals.ts';
import { FAULT_NAMES, isFaultName, parseRateLimit, startReference, type StartReferenceOptions } from '../reference/index.ts';
import { ReportBuilder } from '../reports/builder.ts';
import { renderSummary, underGitHubActions } from '../reports/console.ts';
import { parseFailOn } from '../reports/fail-on.ts';
import type { Report } from '../reports/model.ts';
import { redactTarget } from '../reports/redact-text.ts';
import { summarize } from '../reports/status.ts';
import { checkReportDir, REPORT_FILES, writeReports } from '../reports/write.ts';
import { refuseUnknownRequirements } from '../suites/requirement-tags.ts';
import {
  configFromEnv,
  configFromFlags,
  embeddedReferenceConfig,
  mergeConfig,
  readConfigFile,
  refuseTargetKeysWithoutBaseUrl,
  resolveConfig,
  type RawConfig,
} from '../suites/config.ts';
import { countsLine } from '../suites/reporter.ts';
import { runConformance, type ConformanceOutcome } from '../suites/conformance.ts';
import { loadVitestNode } from '../suites/vitest-node.ts';
import { parseArgs, stringFlag, type FlagSpec } from './args.ts';
import { baselineOption } from './baseline-option.ts';
import { coverageGateOption, exitWithCoverageGate } from './coverage-option.ts';
import { DOCUMENT_COVERAGE_PARTS } from '../reports/coverage.ts';
import { CONFIG_KEYS } from '../suites/config-keys.ts';
import { runEvents, sayReportEnd } from './events.ts';
import { OUTPUT_FLAGS, OUTPUT_HELP, Terminal } from './terminal.ts';
import { EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK, UsageError } from '../core/errors.ts';

/** Config files a run uses from the working directory when none is named, in this order. */
const DISCOVERED_CONFIG_FILES = ['tmi-conform.yaml', 'tmi-conform.yml', 'tmi.yaml', 'tmi.yml'];

export const help = `Usage: tmi-conform run [--config FILE] [--base-url URL] [--report-dir DIR] [options]

Runs the conformance suites (vitest + fast-check + undici) against an implementation of the
interface and writes the compliance reports. With no target (no --base-url, TMI_BASE_URL or
base_url in the config), it starts the embedded reference implementation on a free loopback
port and runs against it.

Target and credentials (flag > environment > config file; see schemas/conformance.schema.json):
  --config FILE          YAML config file (env TMI_CONFIG; default: the first of ${DISCOVERED_CONFIG_FILES.join(', ')}
                         in the working directory, if any)
${configKeyLines()}

Selection and output:
  --requirement ID       run only the tests that cover this requirement (repeatable)
  --report-dir DIR       where report.json, junit.xml, report.md, report.html, report.sarif go (default reports/latest)
  --fail-on LEVEL        must (default): exit 1 on a failed "must" requirement; should: also on warnings
  --baseline FILE        accepted failures: an earlier report.json, or a YAML list (tmi-conform report baseline);
                         only failures it does not accept count in the verdict

Embedded reference only (to see what failures look like):
  --fault NAME           switch on a deliberate non-conformity (repeatable; tmi-conform serve --list-faults)
  --rate-limit N/SECONDS its rate limit (default 1000/10), or "off"

${OUTPUT_HELP}
  While a suite file runs, a progress line (its tests finished of planned, requests sent, the
  pacer's rate and current wait) fills silences: rewritten on a terminal, a line every 10 s in a log.

Exit codes: 0 every "must" requirement that ran passed; 1 at least one failed, or below --min-coverage; 2 usage or
config error, or a setup error found before any test (target unreachable, credentials refused,
no token endpoint, a fixture id not found, no operation served at base_url; no report is
written); 130 interrupted by SIGINT or SIGTERM: the suites stop at once, fixture sessions are
restored, and the reports say "interrupted: no verdict" (what the run did not reach: skipped, not
run); a second interrupt exits at once, without restoring or writing a report.`;

const FLAGS: Record<string, FlagSpec> = {
  config: { value: true },
  // One flag per configuration key that has one (suites/config-keys.ts).
  ...Object.fromEntries(CONFIG_KEYS.flatMap((key) => (key.flag ? [[key.flag.name, { value: key.kind !== 'switch' }]] : []))),
  'report-dir': { value: true },
  'fail-on': { value: true },
  baseline: { value: true },
  requirement: { value: true, repeat: true },
  fault: { value: true, repeat: true },
  'rate-limit': { value: true },
  ...OUTPUT_FLAGS,
};

/** The --help lines of the configuration keys: flag (or key), what it is, its default and variable, wrapped. */
function configKeyLines(): string {
  const WIDTH = 110;
  const INDENT = 25;
  return CONFIG_KEYS.map((key) => {
    const head = `  ${key.flag ? `--${key.flag.name}${key.flag.value ? ` ${key.flag.value}` : ''}` : key.key}`;
    const text = `${key.doc} (env ${key.env}${key.default !== undefined ? `; default: ${key.default}` : ''})`;
    const lines: string[] = [];
    let line = head.length < INDENT - 1 ? head.padEnd(INDENT - 1) : `${head}\n${' '.repeat(INDENT - 1)}`;
    let width = line.length - line.lastIndexOf('\n') - 1;
    for (const word of text.split(' ')) {
      if (width + 1 + word.length > WIDTH) {
        lines.push(line);
        line = ' '.repeat(INDENT - 1);
        width = line.length;
      }
      line += ` ${word}`;
      width += word.length + 1;
    }
    lines.push(line);
    return lines.join('\n');
  }).join('\n');
}

/** The config file named by --config or TMI_CONFIG, else the first of DISCOVERED_CONFIG_FILES in the working directory. */
function configFileOf(args: ReturnType<typeof parseArgs>, env: NodeJS.ProcessEnv): { path: string; discovered: boolean } | undefined {
  const named = stringFlag(args, 'config') ?? (env['TMI_CONFIG'] || undefined);
  if (named !== undefined) return { path: named, discovered: false };
  const found = DISCOVERED_CONFIG_FILES.find((name) => existsSync(name));
  return found === undefined ? undefined : { path: found, discovered: true };
}

/** The target and the run's options, from the three layers. */
async function configuration(args: ReturnType<typeof parseArgs>, env: NodeJS.ProcessEnv, configFile: string | undefined): Promise<RawConfig> {
  const file = configFile ? await readConfigFile(configFile) : {};
  const flag = (name: string): string | true | undefined => (args.flags[name] === true ? true : stringFlag(args, name));
  return mergeConfig(file, configFromEnv(env), configFromFlags(flag));
}

function referenceOptions(args: ReturnType<typeof parseArgs>): StartReferenceOptions {
  const faults = (args.flags['fault'] as string[] | undefined) ?? [];
  const unknown = faults.filter((f) => !isFaultName(f));
  if (unknown.length > 0)
    throw new UsageError(
      `run: unknown fault ${unknown.map((f) => JSON.stringify(f)).join(', ')} (known: ${FAULT_NAMES.length}; tmi-conform serve --list-faults)`,
    );
  const options: StartReferenceOptions = { faults };
  const rateLimit = stringFlag(args, 'rate-limit');
  if (rateLimit === 'off') options.rateLimit = false;
  else if (rateLimit !== undefined) {
    const parsed = parseRateLimit(rateLimit);
    if (!parsed) throw new UsageError(`run: --rate-limit expects N/SECONDS (e.g. 40/1) or "off", got "${rateLimit}"`);
    options.rateLimit = parsed;
  }
  return options;
}

export async function run(argv: string[]): Promise<number> {
  const started = Date.now();
  const args = parseArgs('run', argv, FLAGS);
  const terminal = Terminal.of('run', args);
  if (args.positionals.length > 0) throw new UsageError(`run: unexpected argument "${args.positionals[0]}"`);
  const failOn = parseFailOn(stringFlag(args, 'fail-on'));
  const reportDir = stringFlag(args, 'report-dir') ?? 'reports/latest';
  await checkReportDir(reportDir); // before the run, not after it
  const requirements = (args.flags['requirement'] as string[] | undefined) ?? [];
  refuseUnknownRequirements(requirements, 'run');
  // A run that ends in a setup error (exit 2) writes no report: an earlier run's must not pass for this one's.
  const baseline = await baselineOption(stringFlag(args, 'baseline'));
  await removeEarlierReports(reportDir);

  const configFile = configFileOf(args, process.env);
  const raw = await configuration(args, process.env, configFile?.path);
  const coverageGate = coverageGateOption(raw.coverage, 'run: coverage (--min-coverage, TMI_MIN_COVERAGE)', DOCUMENT_COVERAGE_PARTS);
  const embedded = raw.base_url === undefined;
  refuseTargetKeysWithoutBaseUrl(raw, 'run');
  if (!embedded && (args.flags['fault'] !== undefined || args.flags['rate-limit'] !== undefined))
    throw new UsageError('run: --fault and --rate-limit apply to the embedded reference only (no --base-url)');
  void loadVitestNode();
  const reference = embedded ? await startReference(referenceOptions(args)) : undefined;
  const print = (line: string) => terminal.line(line);
  if (configFile?.discovered) print(`config: ${configFile.path} (found in the working directory; --config FILE names another)`);

  try {
    const config = reference ? embeddedReferenceConfig(reference.config(), raw) : resolveConfig(raw);
    print(
      `tmi-conform run → ${redactTarget(config.baseUrl)}${reference ? ` (embedded reference${reference.faults.length > 0 ? `, faults: ${reference.faults.join(', ')}` : ''})` : ''}`,
    );
    print(`seed ${config.seed} (tmi-conform run --seed ${config.seed} generates the same inputs again)`);
    const builder = new ReportBuilder({ kind: 'run', source: 'run', target: config.baseUrl, seed: config.seed });
    const outcome = await runConformance(config, {
      requirements,
      builder,
      print,
      warn: (line) => process.stderr.write(`tmi-conform run: ${line}\n`),
      listenForInterrupt: () => stopSignal(exitAtOnce),
      events: runEvents(terminal),
    });
    const report = builder.build({ failOn, baseline });
    const written = await writeReports(report, reportDir);
    const lines: string[] = [];
    printSummary(report, outcome.totals, outcome.waitedMs, written, Date.now() - started, (line) => lines.push(line));
    sayReportEnd(terminal, report, lines, { written, more: { interrupted: outcome.interrupted, ...(outcome.totals ? { tests: outcome.totals.tests } : {}) } });
    if (outcome.interrupted) return EXIT_INTERRUPTED;
    return exitWithCoverageGate(report.passed ? EXIT_OK : EXIT_FAILED, report, coverageGate, 'run');
  } finally {
    await reference?.close();
  }
}

/**
 * A second interrupt while the run stops after the first: exit at once, without restoring the
 * fixture sessions or writing a report (the earlier run's were removed when this one started).
 */
function exitAtOnce(): never {
  process.stderr.write('tmi-conform run: interrupted again: exiting at once; fixture sessions may be left changed, no report written\n');
  process.exit(EXIT_INTERRUPTED);
}

/** Removes the report files an earlier run left in `dir` (only those: the directory may hold more). */
async function removeEarlierReports(dir: string): Promise<void> {
  for (const name of Object.keys(REPORT_FILES)) {
    await rm(join(dir, name), { force: true }).catch((error: NodeJS.ErrnoException) => {
      throw new UsageError(`run: --report-dir ${dir}: cannot remove the earlier ${name} (${error.code ?? error.message})`);
    });
  }
}

function printSummary(
  report: Report,
  totals: ConformanceOutcome['totals'],
  waitedMs: number,
  written: string[],
  ms: number,
  print: (line: string) => void,
): void {
  const lead: string[] = [];
  if (totals)
    lead.push(
      `tests: ${countsLine(summarize(report.tests))}; ${totals.exchanges} exchanges judged; unplanned 429s: ${totals.unplanned429}; 429s the pacer risked to learn window lengths: ${totals.risked429}`,
    );
  // Tests that ran and ended before they examined what they cover (skipped ones are said once per reason).
  for (const test of report.tests.filter((t) => t.status === 'skip' && t.charged !== undefined))
    lead.push(`  ${test.message!.split('\n', 1)[0]} (test "${test.name}")`);
  const seed = report.sources[0]?.seed;
  const lines = renderSummary(report, {
    workflowCommands: underGitHubActions(),
    lead,
    detail: 'failures',
    verdictNote: `(fail-on ${report.failOn}) in ${(ms / 1000).toFixed(1)} s${waitedMs > 0 ? `, ${(waitedMs / 1000).toFixed(1)} s waiting for rate-limit windows` : ''}`,
    written,
    trailer: seed !== undefined ? [`seed: ${seed} (tmi-conform run --seed ${seed} generates the same inputs again)`] : [],
  });
  for (const line of lines) print(line);
}
