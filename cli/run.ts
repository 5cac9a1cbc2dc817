// `tmi-conform run`: the conformance suites against an implementation (default: the embedded
// reference, started in-process on a free loopback port), ending in the compliance reports.
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { stopSignal } from './signals.ts';
import { FAULT_NAMES, isFaultName, parseRateLimit, startReference, type RunningReference, type StartReferenceOptions } from '../reference/index.ts';
import { ReportBuilder } from '../reports/builder.ts';
import { renderSummary } from '../reports/console.ts';
import { parseFailOn } from '../reports/fail-on.ts';
import type { Report } from '../reports/model.ts';
import { redactTarget } from '../reports/redact-text.ts';
import { summarize } from '../reports/status.ts';
import { checkReportDir, REPORT_FILES, writeReports } from '../reports/write.ts';
import { loadRequirements } from '../rules/requirements.ts';
import { noJwksLine } from '../keys/tenant-keys.ts';
import { issuerLine, learnTenant, TenantTokens, tenantTokensData, withIssuerFromTokens } from '../keys/tenant.ts';
import { SuiteApi } from '../suites/api.ts';
import { configFromEnv, configFromFlags, mergeConfig, PROFILES, readConfigFile, resolveConfig, type RawConfig, type SuiteConfig } from '../suites/config.ts';
import { countsLine } from '../suites/reporter.ts';
import { runSuites } from '../suites/runner.ts';
import { loadVitestNode } from '../suites/vitest-node.ts';
import { notServedReason, preflight, type PreflightOutcome } from '../suites/preflight.ts';
import { OPERATION_ROUTES, type ApiOperationId } from '../rules/checks/served.ts';
import { parseArgs, stringFlag, type FlagSpec } from './args.ts';
import { CONFIG_KEYS } from '../suites/config-keys.ts';
import { EXIT_FAILED, EXIT_OK, UsageError } from '../core/errors.ts';

export const help = `Usage: tmi-conform run [--config FILE] [--base-url URL] [--report-dir DIR] [options]

Runs the conformance suites (vitest + fast-check + undici) against an implementation of the
interface and writes the compliance reports. With no target (no --base-url, TMI_BASE_URL or
base_url in the config), it starts the embedded reference implementation on a free loopback
port and runs against it.

Target and credentials (flag > environment > config file; see schemas/conformance.schema.json):
  --config FILE          YAML config file (env TMI_CONFIG)
${configKeyLines()}

Selection and output:
  --requirement ID       run only the tests that cover this requirement (repeatable)
  --report-dir DIR       where report.json, junit.xml, report.md, report.html go (default reports/latest)
  --fail-on LEVEL        must (default): exit 1 on a failed "must" requirement; should: also on warnings

Embedded reference only (to see what failures look like):
  --fault NAME           switch on a deliberate non-conformity (repeatable; tmi-conform serve --list-faults)
  --rate-limit N/SECONDS its rate limit (default 1000/10), or "off"

Exit codes: 0 every "must" requirement that ran passed; 1 at least one failed; 2 usage or
config error, or a setup error found before any test (target unreachable, credentials refused,
no token endpoint, a fixture id not found, no operation served at base_url; no report is
written); 130 interrupted (fixture sessions are
restored first, and the reports of what ran are written).`;

const FLAGS: Record<string, FlagSpec> = {
  config: { value: true },
  // One flag per configuration key that has one (suites/config-keys.ts).
  ...Object.fromEntries(CONFIG_KEYS.flatMap((key) => (key.flag ? [[key.flag.name, { value: key.kind !== 'switch' }]] : []))),
  'report-dir': { value: true },
  'fail-on': { value: true },
  requirement: { value: true, repeat: true },
  fault: { value: true, repeat: true },
  'rate-limit': { value: true },
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

/** The target and the run's options, from the three layers. */
async function configuration(args: ReturnType<typeof parseArgs>, env: NodeJS.ProcessEnv): Promise<RawConfig> {
  const configFile = stringFlag(args, 'config') ?? (env['TMI_CONFIG'] || undefined);
  const file = configFile ? await readConfigFile(configFile) : {};
  const flag = (name: string): string | true | undefined => (args.flags[name] === true ? true : stringFlag(args, name));
  return mergeConfig(file, configFromEnv(env), configFromFlags(flag));
}

function referenceOptions(args: ReturnType<typeof parseArgs>): StartReferenceOptions {
  const faults = (args.flags['fault'] as string[] | undefined) ?? [];
  const unknown = faults.filter((f) => !isFaultName(f));
  if (unknown.length > 0) throw new UsageError(`run: unknown fault ${unknown.map((f) => JSON.stringify(f)).join(', ')} (known: ${FAULT_NAMES.length}; tmi-conform serve --list-faults)`);
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

/** The embedded reference's configuration, with what the user set about the run itself. */
function embeddedConfig(reference: RunningReference, raw: RawConfig): SuiteConfig {
  const { base_url: _b, auth_url: _a, token_url: _t, audience: _u, credentials: _c, fixtures: _f, ...runOptions } = raw;
  return resolveConfig(mergeConfig(reference.config(), runOptions));
}

export async function run(argv: string[]): Promise<number> {
  const started = Date.now();
  const args = parseArgs('run', argv, FLAGS);
  if (args.positionals.length > 0) throw new UsageError(`run: unexpected argument "${args.positionals[0]}"`);
  const failOn = parseFailOn(stringFlag(args, 'fail-on'));
  const reportDir = stringFlag(args, 'report-dir') ?? 'reports/latest';
  await checkReportDir(reportDir); // before the run, not after it
  const requirements = (args.flags['requirement'] as string[] | undefined) ?? [];
  const known = new Set(loadRequirements().map((r) => r.id));
  const unknownIds = requirements.filter((id) => !known.has(id));
  if (unknownIds.length > 0) throw new UsageError(`run: unknown requirement ${unknownIds.join(', ')} (see schemas/requirements.yaml)`);
  // A run that ends in a setup error (exit 2) writes no report: an earlier run's must not pass for this one's.
  await removeEarlierReports(reportDir);

  const raw = await configuration(args, process.env);
  const embedded = raw.base_url === undefined;
  if (embedded && (raw.credentials || raw.fixtures)) throw new UsageError('run: credentials or fixtures are configured but no base_url: say which implementation they are for');
  if (!embedded && (args.flags['fault'] !== undefined || args.flags['rate-limit'] !== undefined)) throw new UsageError('run: --fault and --rate-limit apply to the embedded reference only (no --base-url)');
  void loadVitestNode();
  const reference = embedded ? await startReference(referenceOptions(args)) : undefined;
  const print = (line: string) => process.stdout.write(`${line}\n`);
  let mainApi: SuiteApi | undefined;

  try {
    const config = reference ? embeddedConfig(reference, raw) : resolveConfig(raw);
    print(`tmi-conform run → ${redactTarget(config.baseUrl)}${reference ? ` (embedded reference${reference.faults.length > 0 ? `, faults: ${reference.faults.join(', ')}` : ''})` : ''}`);
    print(`seed ${config.seed} (tmi-conform run --seed ${config.seed} generates the same inputs again)`);
    // What the tenant says of its tokens (keys/tenant.ts): never guessed from the address the run reaches it at.
    let tenant = await learnTenant({ ...(config.issuer !== undefined ? { issuer: config.issuer } : {}), ...(config.jwksUrlGiven ? { jwks: config.jwksUrl } : {}), wellKnownAt: config.authUrl });
    const keys = tenant.keys!;
    if ('problem' in keys && config.jwksUrlGiven) throw new UsageError(`run: jwks_url: ${keys.problem}`);
    const cleared = config.fixtures.sessions.filter((s) => s.leftCleared).map((s) => s.id);
    if (cleared.length > 0) print(`allow_destructive: fixture sessions given by id only will be tested and left with session_metadata cleared: ${cleared.join(', ')}`);
    const builder = new ReportBuilder({ kind: 'run', source: 'run', target: config.baseUrl, seed: config.seed });
    // The run's own requests (preflight, restore) are judged here; the suites' in their worker (suites/context.ts), from the same knowledge.
    const checked = await preflight(config, TenantTokens.of(tenant));
    // Said once the target has answered: an unreachable target is one line of its own.
    if ('problem' in keys) process.stderr.write(`tmi-conform run: ${noJwksLine(keys)}\n`);
    tenant = await withIssuerFromTokens(tenant, tokensFromTheTokenEndpoint(checked.tokens, config));
    print(issuerLine(tenant));
    const served = afterPreflight(checked, config, builder, print);
    // The suites ask for tokens where the preflight had them.
    const suiteConfig: SuiteConfig = { ...config, tokenUrls: [checked.tokenUrl] };
    mainApi = new SuiteApi(suiteConfig, TenantTokens.of(tenant), checked.tokens, {
      exchange: (exchange, judgement) => builder.addExchange(exchange, judgement, 'run: preflight and restore'),
      unplanned429: () => {},
      risked429: () => {},
    });
    const interrupted = stopSignal();
    let stopSuites: (() => Promise<void>) | undefined;
    const suites = runSuites({ config: suiteConfig, tokens: checked.tokens, notServed: checked.notServed, tenant: tenantTokensData(tenant), requirements, builder, print, onStart: (stop) => (stopSuites = stop) });
    const outcome = await Promise.race([suites.then((r) => ({ kind: 'done' as const, ...r })), interrupted.promise.then(() => ({ kind: 'interrupted' as const }))]);
    interrupted.dispose();
    if (outcome.kind === 'interrupted') {
      print('interrupted: stopping the suites, restoring fixture sessions, writing the reports of what ran');
      await stopSuites?.().catch(() => {});
    }
    // A session update the target does not serve changed nothing: there is nothing to put back.
    const restored = served.updateSession ? await restoreSessions(mainApi, config, print) : [];
    if (cleared.length > 0 && served.updateSession) {
      // Listed in the report beside the tests: what the run did to sessions it could not restore.
      const failed = cleared.filter((id) => !restored.includes(id));
      builder.addTest({
        name: `run: fixture sessions given by id only, left with session_metadata cleared: ${cleared.join(', ')}`,
        requirements: [],
        status: failed.length === 0 ? 'pass' : 'fail',
        ...(failed.length > 0 ? { message: `could not clear: ${failed.join(', ')}` } : {}),
      });
    }
    if (outcome.kind === 'done' && outcome.errors.length > 0) {
      for (const error of outcome.errors) process.stderr.write(`tmi-conform run: ${error}\n`);
      throw new UsageError('run: a suite could not run (see above)');
    }
    const report = builder.build({ failOn });
    const written = await writeReports(report, reportDir);
    printSummary(report, outcome.kind === 'done' ? outcome.totals : undefined, mainApi, written, Date.now() - started, print);
    if (outcome.kind === 'interrupted') return 130;
    return report.passed ? EXIT_OK : EXIT_FAILED;
  } finally {
    await mainApi?.close();
    await reference?.close();
  }
}

/** The tokens the token endpoint issued to the run's client credentials profiles (a static token is the user's word, not the endpoint's). */
function tokensFromTheTokenEndpoint(fetched: PreflightOutcome['tokens'], config: SuiteConfig): string[] {
  const fromEndpoint = PROFILES.filter((profile) => {
    const credential = config.credentials[profile];
    return credential !== undefined && !('token' in credential);
  });
  return fromEndpoint.flatMap((profile) => (fetched[profile] ? [fetched[profile]!.token] : []));
}

/** Removes the report files an earlier run left in `dir` (only those: the directory may hold more). */
async function removeEarlierReports(dir: string): Promise<void> {
  for (const name of Object.keys(REPORT_FILES)) {
    await rm(join(dir, name), { force: true }).catch((error: NodeJS.ErrnoException) => {
      throw new UsageError(`run: --report-dir ${dir}: cannot remove the earlier ${name} (${error.code ?? error.message})`);
    });
  }
}

/**
 * What the preflight (suites/preflight.ts) found, told: its exchanges go to the report, the
 * token endpoint's fallback is noted once, and each operation not served is said, its other
 * requirements left "not examined" with the reason. Returns which operations are served.
 */
function afterPreflight(checked: PreflightOutcome, config: SuiteConfig, builder: ReportBuilder, print: (line: string) => void): Record<ApiOperationId, boolean> {
  for (const { exchange, judgement } of checked.exchanges) builder.addExchange(exchange, judgement, 'run: preflight and restore');
  if (checked.tokenUrl !== config.tokenUrls[0]) {
    process.stderr.write(`tmi-conform run: note: the token endpoint answered 404 at ${config.tokenUrls[0]}; tokens come from ${checked.tokenUrl} (set token_url to say so)\n`);
  }
  const served = { deleteTokenExchangeProfile: true, updateSession: true, getResourceServer: true };
  for (const operation of checked.notServed) {
    served[operation] = false;
    print(`not served: ${OPERATION_ROUTES[operation]} (no route at the target: 404 to every request, with and without a token): GEN-OPERATION-SERVED fails; its other requirements and tests are skipped`);
    const own = loadRequirements().filter((r) => r.operations.includes(operation) && r.id !== 'GEN-OPERATION-SERVED');
    builder.skip(own.map((r) => r.id), notServedReason(operation));
  }
  return served;
}

/**
 * Puts every fixture session whose original metadata is known back as it was (those given by id
 * only under allow_destructive: cleared). Returns the ids put back.
 */
async function restoreSessions(api: SuiteApi, config: SuiteConfig, print: (line: string) => void): Promise<string[]> {
  const untouched = config.fixtures.sessions.filter((s) => !s.original).map((s) => s.id);
  if (untouched.length > 0) print(`left untouched (original session_metadata unknown): ${untouched.join(', ')}`);
  const restorable = config.fixtures.sessions.filter((s) => s.original);
  if (restorable.length === 0 || !api.has('full')) return [];
  const failed: string[] = [];
  const done: string[] = [];
  for (const session of restorable) {
    try {
      const answer = await api.updateSession(session.id, { session_metadata: session.original!.session_metadata });
      if (answer.status >= 300) failed.push(`${session.id} (${answer.status})`);
      else done.push(session.id);
    } catch (error) {
      failed.push(`${session.id} (${(error as Error).message})`);
    }
  }
  const cleared = restorable.filter((s) => s.leftCleared && done.includes(s.id)).map((s) => s.id);
  print(failed.length === 0 ? `restored session_metadata of ${restorable.length} fixture session(s)${cleared.length > 0 ? ` (${cleared.length} given by id only: cleared)` : ''}` : `could NOT restore: ${failed.join(', ')}`);
  return done;
}

function printSummary(report: Report, totals: Awaited<ReturnType<typeof runSuites>>['totals'] | undefined, api: SuiteApi, written: string[], ms: number, print: (line: string) => void): void {
  const lead: string[] = [];
  if (totals) lead.push(`tests: ${countsLine(summarize(report.tests))}; ${totals.exchanges} exchanges judged; unplanned 429s: ${totals.unplanned429}; 429s the pacer risked to learn window lengths: ${totals.risked429}`);
  // Tests that ran and ended before they examined what they cover (skipped ones are said once per reason).
  for (const test of report.tests.filter((t) => t.status === 'skip' && t.charged !== undefined)) lead.push(`  ${test.message!.split('\n', 1)[0]} (test "${test.name}")`);
  const seed = report.sources[0]?.seed;
  const lines = renderSummary(report, {
    lead,
    detail: 'failures',
    verdictNote: `(fail-on ${report.failOn}) in ${(ms / 1000).toFixed(1)} s${api.pacer.waitedMs > 0 ? `, ${(api.pacer.waitedMs / 1000).toFixed(1)} s waiting for rate-limit windows` : ''}`,
    written,
    trailer: seed !== undefined ? [`seed: ${seed} (tmi-conform run --seed ${seed} generates the same inputs again)`] : [],
  });
  for (const line of lines) print(line);
}
