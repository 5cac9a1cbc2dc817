// `tmi-conform proxy --target URL [...]`: the recording, validating reverse proxy. Forwards
// every request to the target, judges each finished exchange with the rule engine, appends it
// (redacted) to a JSONL journal, and on SIGINT/SIGTERM finishes what is in flight, writes the
// HAR file and the reports, and exits 0.
import { resolve } from 'node:path';
import { parseFailOn } from '../reports/fail-on.ts';
import { DEFAULT_MAX_BODY_BYTES, DEFAULT_STATUS_INTERVAL_MS, DEFAULT_UPSTREAM_TIMEOUT_MS, ProxyStartError, startProxy, type ProxySummary } from '../proxy/session.ts';
import { parseTarget, TargetError, type Target } from '../proxy/target.ts';
import { parseArgs, parseListen, stringFlag } from './args.ts';
import { EXIT_OK, UsageError } from './errors.ts';

const DEFAULT_LISTEN = '127.0.0.1:8080';
const DEFAULT_REPORT_DIR = 'reports/latest';
const JOURNAL_NAME = 'traffic.jsonl';

export const help = `Usage: tmi-conform proxy --target URL [--listen HOST:PORT] [--record FILE.har] [--journal FILE.jsonl]
                         [--report-dir DIR] [--fail-on must|should] [--max-body-bytes N]
                         [--upstream-timeout SECONDS] [--status-interval SECONDS]
                         [--non-global-client CLIENT_ID]...

A reverse proxy in front of URL (the tenant, or any implementation of the interface) that
judges every exchange with the same rules as "tmi-conform run" and records it. Clients talk to
the proxy as they would to the target; bodies stream through, and judging and recording
happen after each response has been sent. It forwards to URL only: absolute-form requests and
CONNECT are refused, and the Host header is always the target's.

Prints "listening on http://HOST:PORT" on stdout once ready, and a status line on stderr every
few seconds while traffic flows. On Ctrl-C or SIGTERM it lets in-flight exchanges finish (at
most the upstream timeout plus one second; a second signal cuts them short), then writes the
HAR file and the reports and exits 0.

Recording: every finished exchange is appended at once to a JSONL journal (one HAR 1.2 entry
per line with "_conformance": operation, findings, token claims), so a crash loses at most the
exchanges in flight and the last few the recorder had not written yet. Secrets never reach
the disk: bearer tokens, client secrets, issued tokens, signing secrets and encryption keys
are masked. "tmi-conform validate" reads both the journal and the HAR file (one of them:
they hold the same exchanges).

Options:
  --target URL              where to forward (http or https, optionally with a base path); required
  --listen HOST:PORT        where to listen (default ${DEFAULT_LISTEN}; port 0 = a free port)
  --record FILE.har         write a complete HAR 1.2 file at stop; the journal is FILE.har.jsonl
  --journal FILE.jsonl      where the journal goes (default: next to --record, else DIR/${JOURNAL_NAME})
                            (an existing file is replaced)
  --report-dir DIR          where report.json, junit.xml, report.md, report.html go (default ${DEFAULT_REPORT_DIR})
  --fail-on LEVEL           the reports' verdict: must (default) or should (warnings fail it too);
                            the exit code stays 0
  --max-body-bytes N        bytes of each body kept for judging (default ${DEFAULT_MAX_BODY_BYTES}); bigger bodies
                            stream through whole, are recorded cut short and are not judged
  --upstream-timeout SECS   the target has this long to answer, and between two chunks (default ${DEFAULT_UPSTREAM_TIMEOUT_MS / 1000});
                            then the client gets 504
  --status-interval SECS    how often the status line is printed (default ${DEFAULT_STATUS_INTERVAL_MS / 1000}; 0 = never)
  --non-global-client ID    a client (token azp) that is not global, so that "a non-global client
                            cannot delete" is judged (no token claim says it); repeatable

Exit codes: 0 after a stop by signal, 2 usage error (bad flag, missing or unparseable --target,
address in use, unwritable journal or report directory).`;

export interface ProxyControl {
  /** Resolves when the proxy should stop; default: the first SIGINT or SIGTERM. */
  stopped?: Promise<unknown>;
  out?: (text: string) => void;
  err?: (text: string) => void;
}

export async function run(argv: string[], control: ProxyControl = {}): Promise<number> {
  const out = control.out ?? ((text: string) => writeSafely(process.stdout, text));
  const err = control.err ?? ((text: string) => writeSafely(process.stderr, text));
  const args = parseArgs('proxy', argv, {
    target: { value: true },
    listen: { value: true },
    record: { value: true },
    journal: { value: true },
    'report-dir': { value: true },
    'fail-on': { value: true },
    'max-body-bytes': { value: true },
    'upstream-timeout': { value: true },
    'status-interval': { value: true },
    'non-global-client': { value: true, repeat: true },
  });
  if (args.positionals.length > 0) throw new UsageError(`proxy: unexpected argument "${args.positionals[0]}" (the target goes in --target URL)`);
  const targetFlag = stringFlag(args, 'target');
  if (targetFlag === undefined) throw new UsageError('proxy: --target URL is required (the implementation to forward to, e.g. --target https://tenant.example.com)');
  let target: Target;
  try {
    target = parseTarget(targetFlag);
  } catch (error) {
    if (error instanceof TargetError) throw new UsageError(`proxy: ${error.message}`);
    throw error;
  }
  const { host, port } = parseListen('proxy', stringFlag(args, 'listen') ?? DEFAULT_LISTEN);
  const failOn = parseFailOn(stringFlag(args, 'fail-on'));
  const reportDir = stringFlag(args, 'report-dir') ?? DEFAULT_REPORT_DIR;
  const harPath = stringFlag(args, 'record');
  const journalPath = stringFlag(args, 'journal') ?? (harPath !== undefined ? `${harPath}.jsonl` : `${reportDir}/${JOURNAL_NAME}`);
  if (harPath !== undefined && resolve(harPath) === resolve(journalPath)) throw new UsageError('proxy: --record and --journal must name different files');
  const maxBodyBytes = integerFlag(stringFlag(args, 'max-body-bytes'), '--max-body-bytes', DEFAULT_MAX_BODY_BYTES);
  const upstreamTimeoutMs = secondsFlag(stringFlag(args, 'upstream-timeout'), '--upstream-timeout', DEFAULT_UPSTREAM_TIMEOUT_MS, false);
  const statusIntervalMs = secondsFlag(stringFlag(args, 'status-interval'), '--status-interval', DEFAULT_STATUS_INTERVAL_MS, true);
  const nonGlobalClients = (args.flags['non-global-client'] as string[] | undefined) ?? [];

  // Listen for signals before starting, so an early Ctrl-C is not lost.
  const signals = control.stopped ? undefined : signalListener();
  const stopped = control.stopped ?? signals!.first;
  const log = (line: string) => err(`tmi-conform proxy: ${line}\n`);
  let proxy;
  try {
    proxy = await startProxy({ target, host, port, journalPath, ...(harPath !== undefined ? { harPath } : {}), reportDir, failOn, maxBodyBytes, upstreamTimeoutMs, statusIntervalMs, nonGlobalClients, log });
  } catch (error) {
    signals?.dispose();
    if (error instanceof ProxyStartError) throw new UsageError(`proxy: ${error.message}`);
    throw error;
  }
  out(`listening on ${proxy.origin}\n`);
  log(`forwarding to ${target.origin}${target.basePath}; journal ${journalPath}${harPath !== undefined ? `, HAR ${harPath} at stop` : ''}; reports in ${reportDir}`);

  await stopped;
  log(`stopping: finishing the exchanges in flight (again to cut them short)`);
  signals?.second.then(() => proxy.hurry());
  try {
    const summary = await proxy.stop();
    out(summarize(summary));
  } finally {
    signals?.dispose();
  }
  return EXIT_OK;
}

function integerFlag(value: string | undefined, name: string, fallback: number): number {
  if (value === undefined) return fallback;
  if (!/^\d{1,12}$/.test(value)) throw new UsageError(`proxy: ${name} expects a whole number of bytes, got "${value}"`);
  return Number(value);
}

function secondsFlag(value: string | undefined, name: string, fallback: number, zeroAllowed: boolean): number {
  if (value === undefined) return fallback;
  const seconds = /^\d{1,7}(\.\d{1,3})?$/.test(value) ? Number(value) : NaN;
  if (Number.isNaN(seconds) || (!zeroAllowed && seconds === 0)) throw new UsageError(`proxy: ${name} expects a number of seconds${zeroAllowed ? '' : ' above 0'}, got "${value}"`);
  return Math.round(seconds * 1000);
}

interface SignalListener {
  first: Promise<NodeJS.Signals>;
  second: Promise<NodeJS.Signals>;
  dispose(): void;
}

function signalListener(): SignalListener {
  let count = 0;
  let resolveFirst!: (s: NodeJS.Signals) => void;
  let resolveSecond!: (s: NodeJS.Signals) => void;
  const first = new Promise<NodeJS.Signals>((resolve) => (resolveFirst = resolve));
  const second = new Promise<NodeJS.Signals>((resolve) => (resolveSecond = resolve));
  const onSignal = (signal: NodeJS.Signals) => {
    count++;
    if (count === 1) resolveFirst(signal);
    else resolveSecond(signal);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return {
    first,
    second,
    dispose: () => {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    },
  };
}

/** Output closed early (piped into head, terminal gone) is not worth a crash. */
function writeSafely(stream: NodeJS.WriteStream, text: string): void {
  if (stream.listenerCount('error') === 0) stream.on('error', () => {});
  stream.write(text);
}

function summarize(summary: ProxySummary): string {
  const c = summary.counts;
  const lines: string[] = [];
  lines.push(`${c.exchanges} exchanges: ${c.exchanges - c.notCovered} judged, ${c.notCovered} not covered by the document, ${c.failed} without a complete response; ${c.refused} requests refused`);
  const rows = Object.entries(c.byRequirement).sort((a, b) => b[1].count - a[1].count);
  if (rows.length === 0) lines.push('no findings');
  for (const [id, { level, subject, count }] of rows) lines.push(`  ${id.padEnd(34)} ${level.padEnd(6)} ${subject.padEnd(14)} ${count}`);
  if (c.internalErrors > 0) lines.push(`${c.internalErrors} exchanges hit an internal error (see above)`);
  lines.push(summary.report.passed ? 'verdict: conforming' : 'verdict: NOT conforming');
  lines.push(`journal: ${summary.journal.path} (${summary.journal.written} entries${summary.journal.lost > 0 ? `, ${summary.journal.lost} NOT written` : ''})`);
  if (summary.har) lines.push(`har: ${summary.har.path} (${summary.har.entries} entries)`);
  if (summary.shed > 0) lines.push(`${summary.shed} exchanges were recorded without their bodies: the recorder was behind the traffic`);
  lines.push(`reports: ${summary.reportFiles.join(', ')}`);
  return lines.join('\n') + '\n';
}
