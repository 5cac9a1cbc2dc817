// `tmi-conform proxy --target URL [...]`: the recording, validating reverse proxy. Forwards
// every request to the target, judges each finished exchange with the rule engine, appends it
// (redacted) to a JSONL journal, and on SIGINT/SIGTERM (or when its launcher goes away)
// finishes what is in flight, writes the HAR file and the reports, and exits 0. With
// `-- CMD ARGS…` it runs CMD through itself and stops when CMD ends.
import { resolve } from 'node:path';
import { parseFailOn } from '../reports/fail-on.ts';
import { DEFAULT_MAX_BODY_BYTES } from '../core/body-limit.ts';
import { renderSummary, underGitHubActions } from '../reports/console.ts';
import { sayReportEnd } from './events.ts';
import { OUTPUT_FLAGS, OUTPUT_HELP, Terminal } from './terminal.ts';
import {
  DEFAULT_STATUS_INTERVAL_MS,
  DEFAULT_UPSTREAM_TIMEOUT_MS,
  ProxyStartError,
  startProxy,
  type ProxySessionOptions,
  type ProxySummary,
  type RunningProxy,
} from '../proxy/session.ts';
import { parseTarget, TargetError, type Target } from '../proxy/forward/target.ts';
import type { TlsSource } from '../proxy/tls/tls.ts';
import type { AdminSettings } from '../proxy/admin/admin.ts';
import { isLoopback } from '../proxy/admin/auth.ts';
import { noJwksLine } from '../keys/tenant-keys.ts';
import { issuerLine, learnTenant, tenantTokensData } from '../keys/tenant.ts';
import { bytesFlag, parseArgs, parseListen, stringFlag, type FlagSpec, type ParsedArgs } from './args.ts';
import { openApiLine, openApiOption, openApiProblemLines } from './openapi-option.ts';
import { baselineOption } from './baseline-option.ts';
import { coverageGateOption, exitWithCoverageGate } from './coverage-option.ts';
import { ADDING_VARIABLE, CA_BUNDLE_NAME, REPLACING_VARIABLES, trustCa } from './ca-bundle.ts';
import { EXIT_FAILED, EXIT_OK, UsageError } from '../core/errors.ts';
import { checkExistingRecording, type RecordingMode } from './existing-recording.ts';
import { segmentPath } from '../recordings/segments.ts';
import { checkReportDir } from '../reports/write.ts';
import { watchLauncher } from './launcher.ts';
import { SignalQueue } from './signals.ts';
import { CommandError, findCommand, startCommand, type CommandEnd } from './wrapped-command.ts';
import { type ApiBase, apiBaseOfTarget, DOCUMENT_PREFIX } from '../rules/api-base.ts';

const DEFAULT_LISTEN = '127.0.0.1:8080';
const DEFAULT_REPORT_DIR = 'reports/latest';
const JOURNAL_NAME = 'traffic.jsonl';
/** The report interval when the journal rotates (a run meant to last) and none is given. */
const DEFAULT_ROTATING_REPORT_INTERVAL_S = 300;
const DEFAULT_TLS_DIR = '.tmi-conform/tls';

export const help = `Usage: tmi-conform proxy --target URL [--listen HOST:PORT] [--record FILE.har] [--journal FILE.jsonl]
                         [--rotate-size SIZE] [--rotate-interval DURATION] [--compress] [--report-interval DURATION]
                         [--report-dir DIR] [--fail-on must|should] [--max-body-bytes N]
                         [--upstream-timeout SECONDS] [--status-interval SECONDS]
                         [--tls [--tls-dir DIR | --tls-cert FILE --tls-key FILE]]
                         [--non-global-client CLIENT_ID]... [--jwks URL|FILE] [--append | --overwrite]
                         [--openapi FILE] [--baseline FILE] [--admin HOST:PORT [--admin-token TOKEN]]
                         [-- CMD [ARGS...]]

A reverse proxy in front of URL (the tenant, or any implementation of the interface) that
judges every exchange with the same rules as "tmi-conform run" and records it. Clients talk to
the proxy as they would to the target; bodies stream through, and judging and recording
happen after each response has been sent. It forwards to URL only: absolute-form requests and
CONNECT are refused, and the Host header is always the target's.

Prints "listening on http://HOST:PORT" on stdout once ready, and a status line on stderr every
few seconds while traffic flows. On Ctrl-C or SIGTERM, or when the process that launched it
goes away (npx, npm exec or sh -c killed by SIGTERM), it lets in-flight exchanges finish (at
most the upstream timeout plus one second; a second signal cuts them short), then writes the
HAR file and the reports and exits 0.

With "-- CMD ARGS...", once listening it runs CMD (stdin, stdout and stderr shared) with
TMI_PROXY_URL set to the management API's base URL through the proxy (the proxy's URL plus the
API base path below --target's path) and TMI_PROXY_ORIGIN to
the proxy's URL alone (the token endpoint is TMI_PROXY_ORIGIN/oauth/token); with --tls also
${ADDING_VARIABLE} set to the proxy's CA certificate and ${REPLACING_VARIABLES.join(', ')}
(which replace the roots) to ${CA_BUNDLE_NAME} beside it, the system's roots plus the CA; a variable
already set keeps the roots it names, with the CA added (in a file beside the CA).
SIGINT and SIGTERM are passed on to CMD; when CMD ends, the proxy stops as above. Exit code:
CMD's when it failed (128 + the signal's number when a signal ended it), else the verdict on
the traffic under --fail-on (0 conforming, 1 not); one line on stderr says which decided.
CMD not found: 127, not executable: 126 (as in a shell), before the proxy starts.

HTTPS (--tls), for clients that only call https:// (the official SDKs): the proxy presents a
certificate for localhost, 127.0.0.1, ::1 and the --listen host, issued by a local CA that it
makes once in --tls-dir and reuses (the certificate is made again when it no longer fits). The
client must trust that CA: NODE_EXTRA_CA_CERTS (Node), SSL_CERT_FILE (Go, curl, OpenSSL),
REQUESTS_CA_BUNDLE (Python requests); the start prints the lines to use. Or bring your own
pair with --tls-cert and --tls-key.

Recording: every finished exchange is appended at once to a JSONL journal (one HAR 1.2 entry
per line with "_conformance": operation, findings, token claims), so a crash loses at most the
exchanges in flight and the last few the recorder had not written yet. Secrets never reach
the disk: bearer tokens, client secrets, issued tokens, signing secrets and encryption keys
are masked. "tmi-conform validate" reads both the journal and the HAR file (one of them:
they hold the same exchanges). The extension says what a file holds: --record names a .har
file, --journal a .jsonl file; any other name is a usage error (exit 2).

Running for days: --rotate-size and/or --rotate-interval split the journal into segments beside
the --journal name, NAME.000001.jsonl, NAME.000002.jsonl... (in order; a new one begins between
two entries, never inside one), each a complete journal; with --compress the closed ones become
NAME.000001.jsonl.gz (the open one stays plain, so a crash loses nothing). No HAR is written then
(--record is refused): "tmi-conform validate DIR" (or the segments by name) judges the segments as
one recording, with the verdict the reports give at stop. --report-interval rewrites the reports
while the proxy runs, from what has been judged so far: after a crash (even kill -9) they are at
most one interval old, and validate over the segments completes them.

Options:
  --target URL              where to forward (http or https, optionally with a base path); required
  --listen HOST:PORT        where to listen (default ${DEFAULT_LISTEN}; port 0 = a free port)
  --tls                     listen with HTTPS (the ready line says https://), certificate from the local CA
                            (--tls-dir, --tls-cert and --tls-key imply it)
  --tls-dir DIR             where the local CA (ca.pem, ca-key.pem) and the certificate it issued for the
                            listen host (leaf.pem, leaf-key.pem) are kept (default ${DEFAULT_TLS_DIR}; keys mode 0600)
  --tls-cert FILE           present this PEM certificate instead (leaf first, then any intermediates)
  --tls-key FILE            its PEM private key, unencrypted (--tls-cert and --tls-key go together)
  --record FILE.har         write a complete HAR 1.2 file at stop; the journal is FILE.har.jsonl
                            (the name must end in .har; not with --rotate-*)
  --journal FILE.jsonl      where the journal goes (default: next to --record, else DIR/${JOURNAL_NAME});
                            the name must end in .jsonl
  --rotate-size SIZE        begin a new journal segment before one would grow past SIZE: bytes, or
                            with a unit: KB, MB, GB (1000s) or KiB, MiB, GiB (1024s), e.g. 100MB
  --rotate-interval DUR     begin a new journal segment once the open one's first entry is DUR old
                            (checked every second): a number with s, m, h or d (a bare number is
                            seconds), e.g. 1h
  --compress                gzip each closed segment (NAME.000001.jsonl.gz), the last one at stop;
                            needs --rotate-*
  --report-interval DUR     rewrite the reports every DUR while running (each file replaced whole);
                            default ${DEFAULT_ROTATING_REPORT_INTERVAL_S / 60}m with --rotate-*, else 0 (only at stop)
  --append                  resume an existing journal: new exchanges are appended (with rotation: to
                            its last segment, or a new one after a compressed last), the HAR written
                            at stop holds the earlier and the new, the reports judge both
  --overwrite               replace an existing journal (with rotation: its segments) and HAR file
                            (without either, an existing journal or --record file is refused: exit 2)
  --report-dir DIR          where report.json, junit.xml, report.md, report.html, report.sarif go (default ${DEFAULT_REPORT_DIR})
  --fail-on LEVEL           the reports' verdict: must (default) or should (warnings fail it too);
                            the exit code stays 0, except with -- CMD
  --min-coverage N|PART=N,…  exit 1 at the stop unless the report examined N % of the document's
                            requirements; PART=N for document, responses, values, operations,
                            and with --openapi description (its operations exercised) and
                            description-responses (its declared statuses seen)
  --max-body-bytes N        bytes of each body kept for judging (default ${DEFAULT_MAX_BODY_BYTES}); bigger bodies
                            stream through whole and are recorded as their size, SHA-256 and first
                            bytes; what they hold is not judged
  --upstream-timeout SECS   the target has this long to answer, and between two chunks (default ${DEFAULT_UPSTREAM_TIMEOUT_MS / 1000});
                            then the client gets 504
  --status-interval SECS    how often the status line is printed (default ${DEFAULT_STATUS_INTERVAL_MS / 1000}, with --quiet 0; 0 = never)
  --baseline FILE           accepted failures: an earlier report.json, or a YAML list (tmi-conform report
                            baseline); only failures it does not accept count in the verdict
  --openapi FILE            an OpenAPI 3.0 or 3.1 description (YAML or JSON) of the operations the document
                            does not detail: their status codes and bodies are checked against it (OAS-*,
                            warnings); one that cannot be read is a usage error (exit 2)
  --non-global-client ID    a client (token azp) that is not global, so that "a non-global client
                            cannot delete" is judged (no token claim says it); repeatable
  --jwks URL|FILE           the tenant's public keys (JWKS), read once at start (a URL is fetched again, at most
                            every 30 s, when a token names a key it does not hold): every token's signature is
                            checked, so a forged token that got a 2xx is a security finding. Default: the jwks_uri
                            of the target's discovery document (origin + /.well-known/openid-configuration), else
                            the target's origin + /.well-known/jwks.json; when that cannot be fetched the proxy says
                            "signatures not verified: no JWKS" and judges the rest; a --jwks that cannot be read: exit 2
  --admin HOST:PORT         an admin listener apart from the proxied port (a PORT alone: 127.0.0.1:PORT; 0 = a free
                            port; off by default): /metrics (Prometheus), /status.json, and a live page at / (the
                            verdict so far, findings as they arrive, per-operation counts, the rate-limit chart);
                            "admin on http://HOST:PORT" is printed on stderr once ready
  --admin-token TOKEN       required with a --admin address other than loopback (127.0.0.1, ::1, localhost): every
                            request must carry it (Authorization: Bearer TOKEN; the page asks for it once and keeps
                            a cookie); at least 16 characters. Or in the environment variable TMI_ADMIN_TOKEN,
                            which keeps it off the command line (ps shows a process's arguments)
  --issuer ISSUER           the issuer the tenant's tokens carry: a token naming another is judged as from another
                            issuer. Default: the issuer of the target's discovery document; none: not judged

${OUTPUT_HELP}
  With --quiet the "listening on" line stays (with port 0 it says where to connect); with --json
  it is the "listening" event.

Exit codes: 0 after a stop by signal, 2 usage error (bad flag, missing or unparseable --target,
a --record name without .har or a --journal name without .jsonl, --record with --rotate-*,
address in use, --admin other than loopback without --admin-token, unwritable journal or report directory, unusable TLS files or --tls-dir, existing journal without --append or
--overwrite). With -- CMD: see above.`;

export interface ProxyControl {
  /** Resolves when the proxy should stop; default: the first SIGINT or SIGTERM. */
  stopped?: Promise<unknown>;
  out?: (text: string) => void;
  err?: (text: string) => void;
}

/** The flags `tmi-conform proxy` takes (before any `--`). */
const PROXY_FLAGS: Record<string, FlagSpec> = {
  target: { value: true },
  listen: { value: true },
  record: { value: true },
  journal: { value: true },
  'report-dir': { value: true },
  'fail-on': { value: true },
  'min-coverage': { value: true },
  'max-body-bytes': { value: true },
  'upstream-timeout': { value: true },
  'status-interval': { value: true },
  'non-global-client': { value: true, repeat: true },
  openapi: { value: true },
  baseline: { value: true },
  tls: { value: false },
  'tls-dir': { value: true },
  'tls-cert': { value: true },
  'tls-key': { value: true },
  jwks: { value: true },
  issuer: { value: true },
  admin: { value: true },
  'admin-token': { value: true },
  append: { value: false },
  overwrite: { value: false },
  'rotate-size': { value: true },
  'rotate-interval': { value: true },
  compress: { value: false },
  'report-interval': { value: true },
  ...OUTPUT_FLAGS,
};

export async function run(argv: string[], control: ProxyControl = {}): Promise<number> {
  const out = control.out ?? ((text: string) => writeSafely(process.stdout, text));
  const err = control.err ?? ((text: string) => writeSafely(process.stderr, text));
  // `-- CMD ARGS…`: everything after the first "--" is the command to run through the proxy.
  const terminator = argv.indexOf('--');
  const command = terminator === -1 ? undefined : argv.slice(terminator + 1);
  const args = parseArgs('proxy', terminator === -1 ? argv : argv.slice(0, terminator), PROXY_FLAGS);
  const terminal = Terminal.of('proxy', args, { out, err });
  const settings = await proxySettings(args, terminal);
  const commandFile = command === undefined ? undefined : commandFileOf(command);
  const { journalPath, harPath, mode, rotation } = settings.recording;
  await checkExistingRecording(journalPath, harPath, mode, rotation !== undefined);
  const options = await optionsOfTheRun(args, settings.target);
  const log = (line: string) => err(`tmi-conform proxy: ${line}\n`);
  const { signals, dispose } = listenForStop(control, log);
  let proxy: RunningProxy;
  try {
    proxy = await startProxy(sessionOptions(settings, options, log));
  } catch (error) {
    dispose();
    if (error instanceof ProxyStartError) throw new UsageError(`proxy: ${error.message}`);
    throw error;
  }
  sayStarted(proxy, settings, options, terminal, out, log);
  const { ended, nextSignal } = await waitForStop({ command, commandFile, proxy, target: settings.target, openapi: options.openapi, signals, log });
  log(`stopping: finishing the exchanges in flight (Ctrl-C or SIGTERM again cuts them short)`);
  void nextSignal.then(() => proxy.hurry());
  let summary: ProxySummary;
  try {
    summary = await proxy.stop();
    sayReportEnd(terminal, summary.report, summaryLines(summary), { written: summary.reportFiles, more: { exchanges: summary.counts.exchanges } });
  } catch (error) {
    // A failed command still decides the exit code, even when the recording could not be finished.
    if (ended === undefined || ended.exitCode === 0) throw error;
    log(`the recording could not be finished: ${(error as Error).message}`);
    log(`exit ${ended.exitCode}: ${command![0]} ${ended.how}`);
    return ended.exitCode;
  } finally {
    dispose();
  }
  if (ended === undefined) return exitWithCoverageGate(EXIT_OK, summary.report, options.coverageGate, 'proxy');
  return exitWithCoverageGate(decideExit(command![0]!, ended, summary, settings.failOn, log), summary.report, options.coverageGate, 'proxy');
}

/** Where the recording goes and how: journal, HAR, rotation, report rewrites, and what to do with an existing journal. */
interface RecordingSettings {
  reportDir: string;
  harPath: string | undefined;
  journalPath: string;
  rotation: ReturnType<typeof rotationFlags>;
  reportIntervalMs: number;
  mode: RecordingMode;
}

/** What the flags say, checked before anything starts (bad input is a usage error, exit 2). */
async function proxySettings(args: ParsedArgs, terminal: Terminal) {
  if (args.positionals.length > 0) throw new UsageError(`proxy: unexpected argument "${args.positionals[0]}" (the target goes in --target URL)`);
  const target = targetFlag(args);
  const { host, port } = parseListen('proxy', stringFlag(args, 'listen') ?? DEFAULT_LISTEN);
  const failOn = parseFailOn(stringFlag(args, 'fail-on'));
  const recording = await recordingFlags(args);
  const maxBodyBytes = bytesFlag('proxy', args, 'max-body-bytes', DEFAULT_MAX_BODY_BYTES);
  const upstreamTimeoutMs = secondsFlag(stringFlag(args, 'upstream-timeout'), '--upstream-timeout', DEFAULT_UPSTREAM_TIMEOUT_MS, false);
  // --quiet: no status line unless asked for.
  const statusIntervalMs = secondsFlag(stringFlag(args, 'status-interval'), '--status-interval', terminal.quiet ? 0 : DEFAULT_STATUS_INTERVAL_MS, true);
  const nonGlobalClients = (args.flags['non-global-client'] as string[] | undefined) ?? [];
  const tls = tlsFlags(args);
  const admin = adminFlags(args, process.env);
  const mode = recordingModeFlags(args);
  return { target, host, port, failOn, recording: { ...recording, mode }, maxBodyBytes, upstreamTimeoutMs, statusIntervalMs, nonGlobalClients, tls, admin };
}

type ProxySettings = Awaited<ReturnType<typeof proxySettings>>;

/** --target: required, and a URL the proxy can forward to. */
function targetFlag(args: ParsedArgs): Target {
  const value = stringFlag(args, 'target');
  if (value === undefined) throw new UsageError('proxy: --target URL is required (the implementation to forward to, e.g. --target https://tenant.example.com)');
  try {
    return parseTarget(value);
  } catch (error) {
    if (error instanceof TargetError) throw new UsageError(`proxy: ${error.message}`);
    throw error;
  }
}

/** --report-dir, --record, --journal, --rotate-* and --report-interval. */
async function recordingFlags(args: ParsedArgs): Promise<Omit<RecordingSettings, 'mode'>> {
  const reportDir = stringFlag(args, 'report-dir') ?? DEFAULT_REPORT_DIR;
  await checkReportDir(reportDir); // before the journal is looked for inside it
  const harPath = stringFlag(args, 'record');
  const journalFlag = stringFlag(args, 'journal');
  checkRecordingNames(harPath, journalFlag);
  const journalPath = journalFlag ?? (harPath !== undefined ? `${harPath}.jsonl` : `${reportDir}/${JOURNAL_NAME}`);
  if (harPath !== undefined && resolve(harPath) === resolve(journalPath)) throw new UsageError('proxy: --record and --journal must name different files');
  const rotation = rotationFlags(args);
  if (rotation && harPath !== undefined) {
    throw new UsageError(
      `proxy: --record writes one HAR of the whole run at stop, which --rotate-* is there to avoid: drop --record (the journal segments are the recording; "tmi-conform validate" reads them), or drop --rotate-* for a short run`,
    );
  }
  const reportIntervalFlag = stringFlag(args, 'report-interval');
  const reportIntervalMs =
    reportIntervalFlag !== undefined ? durationFlag(reportIntervalFlag, '--report-interval', true) : rotation ? DEFAULT_ROTATING_REPORT_INTERVAL_S * 1000 : 0;
  return { reportDir, harPath, journalPath, rotation, reportIntervalMs };
}

/** --append or --overwrite: what to do with an existing journal (neither: refuse it). */
function recordingModeFlags(args: ParsedArgs): RecordingMode {
  if (args.flags['append'] === true && args.flags['overwrite'] === true)
    throw new UsageError('proxy: --append and --overwrite exclude each other (resume the journal, or replace it)');
  return args.flags['append'] === true ? 'append' : args.flags['overwrite'] === true ? 'overwrite' : 'refuse';
}

/** The file `-- CMD` runs, found before the proxy starts (not found: 127, not executable: 126). */
function commandFileOf(command: string[]): string {
  if (command.length === 0) throw new UsageError('proxy: "--" must be followed by the command to run through the proxy (e.g. -- npm test)');
  try {
    return findCommand(command[0]!);
  } catch (error) {
    if (error instanceof CommandError) throw new UsageError(`proxy: ${error.message}`, error.exitCode);
    throw error;
  }
}

/** What is read from files and the tenant before the start: the OpenAPI description, the baseline, the coverage gate, the tenant's tokens. */
async function optionsOfTheRun(args: ParsedArgs, target: Target) {
  // Read here to refuse a description that cannot be used before anything starts; the recorder thread reads it again.
  const openapiPath = stringFlag(args, 'openapi');
  const openapi = await openApiOption(openapiPath);
  const baseline = await baselineOption(stringFlag(args, 'baseline'));
  const coverageGate = coverageGateOption(stringFlag(args, 'min-coverage'), 'proxy: --min-coverage');
  const jwksFlag = stringFlag(args, 'jwks');
  const issuerFlag = stringFlag(args, 'issuer');
  // What the tenant says of its tokens (keys/tenant.ts), asked at the target's origin.
  const tenant = await learnTenant({
    ...(issuerFlag !== undefined ? { issuer: issuerFlag } : {}),
    ...(jwksFlag !== undefined ? { jwks: jwksFlag } : {}),
    wellKnownAt: target.origin,
  });
  const keys = tenant.keys!;
  if ('problem' in keys && jwksFlag !== undefined) throw new UsageError(`proxy: --jwks: ${keys.problem}`);
  return { openapiPath, openapi, baseline, coverageGate, tenant, keys };
}

type RunOptions = Awaited<ReturnType<typeof optionsOfTheRun>>;

/** What startProxy is given: the flags' settings and what was read before the start. */
function sessionOptions(settings: ProxySettings, options: RunOptions, log: (line: string) => void): ProxySessionOptions {
  const { target, host, port, tls, recording, failOn, maxBodyBytes, upstreamTimeoutMs, statusIntervalMs, nonGlobalClients, admin } = settings;
  const { journalPath, harPath, rotation, reportIntervalMs, reportDir } = recording;
  const { openapiPath, baseline, tenant } = options;
  return {
    target,
    host,
    port,
    ...(tls ? { tls } : {}),
    journalPath,
    appendToJournal: recording.mode === 'append',
    ...(harPath !== undefined ? { harPath } : {}),
    ...(rotation ? { rotation } : {}),
    ...(reportIntervalMs > 0 ? { reportIntervalMs } : {}),
    reportDir,
    failOn,
    maxBodyBytes,
    upstreamTimeoutMs,
    statusIntervalMs,
    nonGlobalClients,
    tenant: tenantTokensData(tenant),
    ...(openapiPath !== undefined ? { openapiPath } : {}),
    ...(baseline ? { baseline } : {}),
    ...(admin ? { admin } : {}),
    log,
  };
}

/**
 * Listen for signals before starting, so an early Ctrl-C is not lost. A launcher that goes away
 * (npx, npm exec or sh -c killed by SIGTERM) counts as SIGTERM: no signal reaches us then.
 */
function listenForStop(control: ProxyControl, log: (line: string) => void): { signals: SignalQueue; dispose: () => void } {
  const signals = new SignalQueue(control.stopped === undefined);
  const launcher = control.stopped ? undefined : watchLauncher();
  void control.stopped?.then(() => signals.push('SIGTERM'));
  void launcher?.gone.then((pid) => {
    log(`its launcher (pid ${pid}) went away: stopping as on SIGTERM`);
    signals.push('SIGTERM');
  });
  const dispose = () => {
    signals.dispose();
    launcher?.dispose();
  };
  return { signals, dispose };
}

/** The lines said once the proxy listens: where to connect, the admin page, what is known of the tenant, where the recording goes. */
function sayStarted(
  proxy: RunningProxy,
  settings: ProxySettings,
  options: RunOptions,
  terminal: Terminal,
  out: (text: string) => void,
  log: (line: string) => void,
): void {
  const { admin, target } = settings;
  const { journalPath, harPath, rotation, reportIntervalMs, reportDir, mode } = settings.recording;
  const { tenant, keys, openapi } = options;
  // Said even with --quiet: with port 0 it is the only way to know where to connect.
  if (terminal.json) terminal.event({ event: 'listening', url: proxy.origin, ...(proxy.adminUrl !== undefined ? { admin: proxy.adminUrl } : {}) });
  else out(`listening on ${proxy.origin}\n`);
  if (proxy.adminUrl !== undefined)
    log(`admin on ${proxy.adminUrl} (the live page; /metrics, /status.json)${admin?.token !== undefined ? ', token required' : ''}`);
  if ('problem' in keys) log(noJwksLine(keys));
  if (tenant.issuer) log(issuerLine(tenant));
  if (openapi) for (const line of [openApiLine(openapi), ...openApiProblemLines(openapi)]) log(line);
  const journalSaid = rotation
    ? `journal segments ${segmentPath(journalPath, 1).replace(/\.000001\.jsonl$/, '.NNNNNN.jsonl')}${rotation.compress ? ' (closed ones gzipped)' : ''}`
    : `journal ${journalPath}`;
  const reportsSaid = `reports in ${reportDir}${reportIntervalMs > 0 ? ` (rewritten every ${reportIntervalMs / 1000} s)` : ''}`;
  log(
    `forwarding to ${target.origin}${target.basePath}; ${journalSaid}${mode === 'append' ? ' (resumed)' : ''}${harPath !== undefined ? `, HAR ${harPath} at stop` : ''}; ${reportsSaid}`,
  );
}

/** What the proxy waits for before stopping: a signal, or with -- CMD the command's end. */
interface WaitForStop {
  command: string[] | undefined;
  commandFile: string | undefined;
  proxy: RunningProxy;
  target: Target;
  openapi: RunOptions['openapi'];
  signals: SignalQueue;
  log: (line: string) => void;
}

/**
 * Waits for the first signal, or with -- CMD runs it and waits for its end (passing signals on to
 * it). Returns how CMD ended and the next signal, which cuts the stop short.
 */
async function waitForStop({
  command,
  commandFile,
  proxy,
  target,
  openapi,
  signals,
  log,
}: WaitForStop): Promise<{ ended?: CommandEnd; nextSignal: Promise<NodeJS.Signals> }> {
  let nextSignal = signals.next();
  if (command === undefined) {
    await nextSignal;
    return { nextSignal: signals.next() };
  }
  const env = await commandEnvironment(proxy.url, proxy.caPath, target, apiBaseOfTarget(target.basePath, openapi?.declaredBasePaths), log);
  log(`running ${command.join(' ')} with TMI_PROXY_URL=${env['TMI_PROXY_URL']}`);
  const running = startCommand(commandFile!, command[0]!, command.slice(1), env);
  for (;;) {
    const next = await Promise.race([running.ended, nextSignal]);
    if (typeof next !== 'string') return { ended: next, nextSignal };
    running.signal(next);
    nextSignal = signals.next();
  }
}

/** With -- CMD: CMD's code when it failed, else the verdict; one line says which decided. */
function decideExit(name: string, ended: CommandEnd, summary: ProxySummary, failOn: string, log: (line: string) => void): number {
  const traffic = `the traffic is ${summary.report.passed ? 'conforming' : 'NOT conforming'} under --fail-on ${failOn}`;
  if (ended.exitCode !== 0) {
    log(`exit ${ended.exitCode}: ${name} ${ended.how}, which decides (${traffic})`);
    return ended.exitCode;
  }
  const code = summary.report.passed ? EXIT_OK : EXIT_FAILED;
  log(`exit ${code}: ${name} ${ended.how}; ${traffic}, which decides`);
  return code;
}

/** CMD's environment: where the proxy is, and with --tls its CA for the usual TLS stacks. */
async function commandEnvironment(
  proxyUrl: string,
  caPath: string | undefined,
  target: Target,
  apiBase: ApiBase,
  log: (line: string) => void,
): Promise<NodeJS.ProcessEnv> {
  // The proxy forwards its paths under the target's base path: the API base path the proxy judges
  // at (rules/api-base.ts), less the target's path, is where the API is behind the proxy.
  const apiPath = apiBase.paths?.[0] ?? DOCUMENT_PREFIX;
  const apiBehindProxy = apiPath.startsWith(target.basePath) ? apiPath.slice(target.basePath.length) : '';
  const env: NodeJS.ProcessEnv = { ...process.env, TMI_PROXY_URL: proxyUrl + apiBehindProxy, TMI_PROXY_ORIGIN: proxyUrl };
  if (caPath === undefined) return env;
  try {
    await trustCa(env, caPath, log);
  } catch (error) {
    log(`cannot write the CA bundles beside ${caPath} (${(error as Error).message}): CMD's trust variables are left as they were`);
  }
  return env;
}

/** --tls and where its certificate comes from: the user's pair, or the local CA in --tls-dir. Any of the flags means HTTPS. */
function tlsFlags(args: ParsedArgs): TlsSource | undefined {
  const certFile = stringFlag(args, 'tls-cert');
  const keyFile = stringFlag(args, 'tls-key');
  const dir = stringFlag(args, 'tls-dir');
  if (args.flags['tls'] !== true && certFile === undefined && keyFile === undefined && dir === undefined) return undefined;
  if (certFile === undefined && keyFile !== undefined) throw new UsageError('proxy: --tls-key needs --tls-cert (the certificate of that key, a PEM file)');
  if (certFile !== undefined && keyFile === undefined)
    throw new UsageError('proxy: --tls-cert needs --tls-key (the private key of that certificate, a PEM file)');
  if (certFile !== undefined && dir !== undefined)
    throw new UsageError('proxy: --tls-dir is where the proxy makes its own certificate; with --tls-cert and --tls-key it makes none (give one or the other)');
  return certFile !== undefined ? { certFile, keyFile: keyFile! } : { dir: dir ?? DEFAULT_TLS_DIR };
}

/** The shortest admin token accepted: a guessable one would open the page to the network. */
const MIN_ADMIN_TOKEN_LENGTH = 16;

/** --admin and --admin-token (or TMI_ADMIN_TOKEN): an address other than loopback is refused without a token. */
function adminFlags(args: ParsedArgs, env: NodeJS.ProcessEnv): AdminSettings | undefined {
  const value = stringFlag(args, 'admin');
  const token = stringFlag(args, 'admin-token') ?? (env['TMI_ADMIN_TOKEN'] || undefined);
  if (value === undefined) {
    if (stringFlag(args, 'admin-token') !== undefined)
      throw new UsageError('proxy: --admin-token goes with --admin HOST:PORT (the admin listener it protects)');
    return undefined;
  }
  const match = /^(?:(\[[^\]]+\]|[^:]+):)?(\d{1,5})$/.exec(value);
  if (!match) throw new UsageError(`proxy: --admin expects HOST:PORT or a PORT alone (e.g. 127.0.0.1:9464), got "${value}"`);
  const host = match[1]?.replace(/^\[|\]$/g, '') ?? '127.0.0.1';
  const port = Number(match[2]);
  if (port > 65535) throw new UsageError(`proxy: --admin: port ${port} is above 65535 in "${value}"`);
  if (token === undefined && !isLoopback(host))
    throw new UsageError(
      `proxy: --admin ${value} is reachable from other machines: give --admin-token TOKEN or TMI_ADMIN_TOKEN too (every request must then carry it), or listen on 127.0.0.1`,
    );
  if (token !== undefined && token.length < MIN_ADMIN_TOKEN_LENGTH)
    throw new UsageError(
      `proxy: the admin token (--admin-token or TMI_ADMIN_TOKEN) must be at least ${MIN_ADMIN_TOKEN_LENGTH} characters long (e.g. openssl rand -hex 16)`,
    );
  return { host, port, ...(token !== undefined ? { token } : {}) };
}

/**
 * The extension says what a file holds: --record a HAR (.har), --journal the JSONL journal
 * (.jsonl, written plain: --compress gzips closed segments). Any other name is refused with the fix.
 */
function checkRecordingNames(harPath: string | undefined, journalPath: string | undefined): void {
  if (harPath !== undefined && !/\.har$/i.test(harPath)) {
    if (/\.jsonl(\.gz)?$/i.test(harPath))
      throw new UsageError(
        `proxy: --record writes a HAR file, and "${harPath}" names a journal: use --journal ${harPath.replace(/\.gz$/i, '')} for the journal (and --record NAME.har for a HAR at stop too)`,
      );
    throw new UsageError(`proxy: --record writes a HAR file: name it with .har (e.g. --record ${harPath.replace(/\.[^./\\]*$/, '')}.har)`);
  }
  if (journalPath !== undefined && !/\.jsonl$/i.test(journalPath)) {
    if (/\.jsonl\.gz$/i.test(journalPath))
      throw new UsageError(
        `proxy: the journal is written plain, so that a crash loses nothing: use --journal ${journalPath.slice(0, -3)} (with --rotate-* and --compress, closed segments are gzipped)`,
      );
    if (/\.har$/i.test(journalPath))
      throw new UsageError(
        `proxy: --journal writes the JSONL journal, and "${journalPath}" names a HAR: use --record ${journalPath} for a HAR at stop, and --journal NAME.jsonl for the journal`,
      );
    throw new UsageError(
      `proxy: --journal writes the JSONL journal (one HAR entry per line): name it with .jsonl (e.g. --journal ${journalPath.replace(/\.[^./\\]*$/, '')}.jsonl)`,
    );
  }
}

/** --rotate-size, --rotate-interval and --compress; undefined when the journal does not rotate. */
function rotationFlags(args: ParsedArgs): { maxBytes?: number; intervalMs?: number; compress: boolean } | undefined {
  const size = stringFlag(args, 'rotate-size');
  const interval = stringFlag(args, 'rotate-interval');
  const compress = args.flags['compress'] === true;
  if (size === undefined && interval === undefined) {
    if (compress)
      throw new UsageError('proxy: --compress gzips the closed segments of a rotating journal: add --rotate-size SIZE and/or --rotate-interval DURATION');
    return undefined;
  }
  return {
    ...(size !== undefined ? { maxBytes: sizeFlag(size) } : {}),
    ...(interval !== undefined ? { intervalMs: durationFlag(interval, '--rotate-interval', false) } : {}),
    compress,
  };
}

const SIZE_UNITS: Record<string, number> = { '': 1, b: 1, kb: 1e3, mb: 1e6, gb: 1e9, kib: 1024, mib: 1024 ** 2, gib: 1024 ** 3 };

/** "100MB", "1.5GiB", "65536": a size in bytes. */
function sizeFlag(value: string): number {
  const match = /^(\d{1,12}(?:\.\d{1,3})?)\s*([a-z]*)$/i.exec(value.trim());
  const unit = match ? SIZE_UNITS[match[2]!.toLowerCase()] : undefined;
  const bytes = match && unit !== undefined ? Math.floor(Number(match[1]) * unit) : NaN;
  if (!(bytes >= 1))
    throw new UsageError(
      `proxy: --rotate-size expects a size: bytes, or a number with KB, MB, GB (1000s) or KiB, MiB, GiB (1024s), e.g. 100MB; got "${value}"`,
    );
  return bytes;
}

const DURATION_UNITS: Record<string, number> = { '': 1000, ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** "90", "30s", "5m", "1h", "2d": a duration in ms (a bare number is seconds). */
function durationFlag(value: string, name: string, zeroAllowed: boolean): number {
  const match = /^(\d{1,7}(?:\.\d{1,3})?)\s*(ms|s|m|h|d|)$/i.exec(value.trim());
  const ms = match ? Math.round(Number(match[1]) * DURATION_UNITS[match[2]!.toLowerCase()]!) : NaN;
  if (Number.isNaN(ms) || (!zeroAllowed && ms === 0))
    throw new UsageError(
      `proxy: ${name} expects a duration: a number with s, m, h or d (a bare number is seconds), e.g. 1h${zeroAllowed ? ' (0: never)' : ''}; got "${value}"`,
    );
  return ms;
}

function secondsFlag(value: string | undefined, name: string, fallback: number, zeroAllowed: boolean): number {
  if (value === undefined) return fallback;
  const seconds = /^\d{1,7}(\.\d{1,3})?$/.test(value) ? Number(value) : NaN;
  if (Number.isNaN(seconds) || (!zeroAllowed && seconds === 0))
    throw new UsageError(`proxy: ${name} expects a number of seconds${zeroAllowed ? '' : ' above 0'}, got "${value}"`);
  return Math.round(seconds * 1000);
}

/** Output closed early (piped into head, terminal gone) is not worth a crash. */
function writeSafely(stream: NodeJS.WriteStream, text: string): void {
  if (stream.listenerCount('error') === 0) stream.on('error', () => {});
  stream.write(text);
}

function summaryLines(summary: ProxySummary): string[] {
  const c = summary.counts;
  const earlier = summary.journal.earlier > 0 ? `${summary.journal.earlier} earlier + ${summary.journal.written} new` : `${summary.journal.written}`;
  const segments = summary.journal.segments;
  const where =
    segments === undefined ? summary.journal.path : segments.length === 1 ? segments[0]! : `${segments.length} segments, ${segments[0]} to ${segments.at(-1)}`;
  const total = summary.journal.earlier + summary.journal.written;
  const trailer = [
    `journal: ${where} (${earlier} ${total === 1 ? 'entry' : 'entries'}${summary.journal.lost > 0 ? `, ${summary.journal.lost} NOT written` : ''})`,
  ];
  if (summary.har) trailer.push(`har: ${summary.har.path} (${summary.har.entries} ${summary.har.entries === 1 ? 'entry' : 'entries'})`);
  if (summary.shed > 0) trailer.push(`${summary.shed} exchanges were recorded without their bodies: the recorder was behind the traffic`);
  return renderSummary(summary.report, {
    workflowCommands: underGitHubActions(),
    lead: [
      `${c.exchanges} exchanges: ${c.exchanges - c.notCovered} judged, ${c.notCovered} not operation calls, ${c.failed} without a complete response; ${c.refused} requests refused`,
      ...(c.internalErrors > 0 ? [`${c.internalErrors} exchanges hit an internal error (see above)`] : []),
    ],
    detail: 'table',
    written: summary.reportFiles,
    trailer,
  });
}
