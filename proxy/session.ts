// A proxy session: the forwarding server on this thread, the recorder (judge → record →
// journal → report → status) on its own thread, the status line, and the stop sequence
// (finish in-flight exchanges, let the recorder write the journal's last lines, the HAR file
// and the reports). Used by `tmi-conform proxy` and by the tests.
import { DEFAULT_MAX_BODY_BYTES } from '../core/body-limit.ts';
import type { AddressInfo } from 'node:net';
import { dirname } from 'node:path';
import { UsageError } from '../core/errors.ts';
import type { FailOn } from '../reports/fail-on.ts';
import { checkReportDir } from '../reports/write.ts';
import type { Flow } from './flow.ts';
import { Recorder, RecorderStartError } from './record/recorder.ts';
import { ProxyServer } from './forward/server.ts';
import { statusLine, type StatusCounts } from './record/status.ts';
import type { Target } from './forward/target.ts';
import { howToTrust, listenerCertificate, TlsSetupError, type TlsSource } from './tls/tls.ts';
import type { RecorderSummary } from './record/messages.ts';
import type { TenantTokensData } from '../keys/tenant.ts';
import type { Baseline } from '../reports/model.ts';
import type { AdminSettings } from './admin/admin.ts';

export const DEFAULT_UPSTREAM_TIMEOUT_MS = 30_000;
export const DEFAULT_STATUS_INTERVAL_MS = 5_000;
/** How long exchanges cut at stop get to close by themselves before they are finished as cut short. */
const ABORT_GRACE_MS = 250;

export interface ProxySessionOptions {
  target: Target;
  host: string;
  /** 0: a free port. */
  port: number;
  /** Listen with HTTPS, presenting the user's pair or a certificate of the local CA kept in a directory. */
  tls?: TlsSource;
  journalPath: string;
  /** Resume the journal (new exchanges appended, HAR and report over both) instead of emptying it. */
  appendToJournal?: boolean;
  /** Also write a complete HAR here at stop (not with rotation: the segments are the recording). */
  harPath?: string;
  /** Rotate the journal into segments named after journalPath (NAME.000001.jsonl…): by size (bytes), by age (ms); gzip the closed ones. */
  rotation?: { maxBytes?: number; intervalMs?: number; compress: boolean };
  /** Rewrite the reports this often while running; undefined: only at stop. */
  reportIntervalMs?: number;
  reportDir: string;
  failOn: FailOn;
  maxBodyBytes?: number;
  upstreamTimeoutMs?: number;
  /** 0: no status line. */
  statusIntervalMs?: number;
  /** How long stop() waits for in-flight exchanges before cutting them; default upstream timeout + 0.5 s (with the grace after cutting, the stop takes at most the upstream timeout + 1 s before writing). */
  drainTimeoutMs?: number;
  /** Client ids (azp) the operator declares not global. */
  nonGlobalClients?: string[];
  /** What the caller learned of the tenant's tokens at start (keys/tenant.ts): every token is settled against it. */
  tenant?: TenantTokensData;
  /** The user's OpenAPI description (--openapi): the recorder thread reads it and judges the other operations against it. */
  openapiPath?: string;
  /** Accepted failures (--baseline): left out of the reports' verdict. */
  baseline?: Baseline;
  /** The admin listener (metrics, status, the live page), served by the recorder thread; undefined: none. */
  admin?: AdminSettings;
  /** Status lines and warnings (the CLI writes them to stderr). */
  log?: (line: string) => void;
}

export interface ProxySummary extends RecorderSummary {
  /** Flows whose bodies were not captured because the recorder was too far behind. */
  shed: number;
}

/** The proxy could not start; `code` is the system error code when there is one (EADDRINUSE…). */
export class ProxyStartError extends Error {
  override name = 'ProxyStartError';
  constructor(
    message: string,
    readonly code?: string,
  ) {
    super(message);
  }
}

export interface RunningProxy {
  /** What clients connect to: http://HOST:PORT, or https://HOST:PORT with TLS. */
  url: string;
  /** The same as url. */
  origin: string;
  /** With TLS from the local CA: the absolute path of the CA certificate (PEM) clients must trust. */
  caPath?: string;
  host: string;
  port: number;
  /** With --admin: the admin listener's URL (http://HOST:PORT). */
  adminUrl?: string;
  /** What the recorder has counted so far (refusals included). */
  counts(): StatusCounts;
  /** Exchanges judged and written to the journal so far (recording follows the responses). */
  readonly recorded: number;
  /** Finishes in-flight exchanges (at most drainTimeoutMs), then writes everything. Idempotent. */
  stop(): Promise<ProxySummary>;
  /** Makes a running stop() cut in-flight exchanges now instead of waiting. */
  hurry(): void;
}

export async function startProxy(options: ProxySessionOptions): Promise<RunningProxy> {
  const log = options.log ?? (() => {});
  const upstreamTimeoutMs = options.upstreamTimeoutMs ?? DEFAULT_UPSTREAM_TIMEOUT_MS;
  const drainTimeoutMs = options.drainTimeoutMs ?? upstreamTimeoutMs + 500;
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;

  await checkBeforeStart(options);
  const certificate = await listenerCertificateOf(options, log);
  // Listen first: a busy port must fail before anything on disk (journal, reports) is touched.
  // Exchanges that finish before the recorder is ready wait for it.
  let recorder: Recorder | undefined;
  const early: Flow[] = [];
  let refused = 0;
  const server = new ProxyServer({
    target: options.target,
    maxBodyBytes,
    upstreamTimeoutMs,
    onFlowDone: (flow) => (recorder ? recorder.record(flow) : early.push(flow)),
    onRefused: () => {
      refused++;
      if (options.admin) recorder?.refusedSoFar(refused);
    },
    ...(certificate ? { tls: { cert: certificate.cert, key: certificate.key }, onTlsClientError: tlsClientErrorOnce(certificate.caPath, log) } : {}),
  });
  await listen(server, options.host, options.port);
  recorder = await startRecorder(server, options, maxBodyBytes, log);
  for (const flow of early.splice(0)) recorder.record(flow);
  if (options.admin && refused > 0) recorder.refusedSoFar(refused);
  const running = recorder;
  const { port } = server.server.address() as AddressInfo;
  const origin = `${certificate ? 'https' : 'http'}://${urlHost(options.host)}:${port}`;
  const counts = (): StatusCounts => ({ ...running.counts, refused });
  const statusTimer = startStatusLine(counts, options.statusIntervalMs ?? DEFAULT_STATUS_INTERVAL_MS, log);

  let hurry: (() => void) | undefined;
  const hurried = new Promise<void>((resolve) => (hurry = resolve));
  let stopping: Promise<ProxySummary> | undefined;
  const stop = async (): Promise<ProxySummary> => {
    await drain(server, drainTimeoutMs, hurried);
    clearInterval(statusTimer);
    const summary = await running.stop();
    return { ...summary, counts: { ...summary.counts, refused }, shed: running.shed };
  };

  return {
    url: origin,
    origin,
    ...(certificate?.caPath !== undefined ? { caPath: certificate.caPath } : {}),
    ...(options.admin && running.adminPort !== undefined ? { adminUrl: `http://${urlHost(options.admin.host)}:${running.adminPort}` } : {}),
    host: options.host,
    port,
    counts,
    get recorded() {
      return running.processed;
    },
    stop: () => (stopping ??= stop()),
    hurry: () => hurry?.(),
  };
}

/** A HAR with rotation is refused, and everything that could fail at stop is tried now: hours of traffic must not end in "cannot write". */
async function checkBeforeStart(options: ProxySessionOptions): Promise<void> {
  if (options.rotation && options.harPath !== undefined)
    throw new ProxyStartError('a HAR of the whole run is not written with rotation: the journal segments are the recording');
  try {
    await checkReportDir(options.reportDir);
    await checkReportDir(dirname(options.journalPath), 'the journal');
    if (options.harPath !== undefined) await checkReportDir(dirname(options.harPath), 'the HAR');
  } catch (error) {
    if (error instanceof UsageError) throw new ProxyStartError(error.message);
    throw error;
  }
}

type ListenerCertificate = Awaited<ReturnType<typeof listenerCertificate>>;

/** With TLS: the certificate to present, and what the user must do to trust it (said once here). */
async function listenerCertificateOf(options: ProxySessionOptions, log: (line: string) => void): Promise<ListenerCertificate | undefined> {
  let certificate: ListenerCertificate | undefined;
  try {
    certificate = options.tls ? await listenerCertificate(options.tls, options.host) : undefined;
  } catch (error) {
    if (error instanceof TlsSetupError) throw new ProxyStartError(error.message);
    throw error;
  }
  if (certificate) {
    for (const note of certificate.notes) log(note);
    if (certificate.caPath !== undefined) for (const line of howToTrust(certificate.caPath)) log(line);
  }
  return certificate;
}

/** A client that does not trust the certificate fails in its own words; say once what to check. */
function tlsClientErrorOnce(caPath: string | undefined, log: (line: string) => void): (error: NodeJS.ErrnoException) => void {
  let told = false;
  return (error) => {
    if (told) return;
    told = true;
    log(`a client broke off the TLS handshake (${error.code ?? error.message})${caPath !== undefined ? `: does it trust ${caPath}?` : ''} (said once)`);
  };
}

/** Listens on host:port; a failure (address in use…) is a ProxyStartError naming the cause. */
async function listen(server: ProxyServer, host: string, port: number): Promise<void> {
  try {
    await new Promise<void>((resolve, reject) => {
      server.server.once('error', reject);
      server.server.listen(port, host, () => {
        server.server.off('error', reject);
        resolve();
      });
    });
  } catch (error) {
    server.closeAll();
    const code = (error as NodeJS.ErrnoException).code;
    throw new ProxyStartError(listenFailure(code, host, port, error as Error), code);
  }
}

/** The recorder thread, started with the session's options; when it cannot start, the listening server is closed. */
async function startRecorder(server: ProxyServer, options: ProxySessionOptions, maxBodyBytes: number, log: (line: string) => void): Promise<Recorder> {
  try {
    return await Recorder.start(
      {
        targetOrigin: options.target.origin,
        reportTarget: options.target.origin + options.target.basePath,
        targetBasePath: options.target.basePath,
        journalPath: options.journalPath,
        appendToJournal: options.appendToJournal === true,
        ...(options.harPath !== undefined ? { harPath: options.harPath } : {}),
        ...(options.rotation ? { rotation: options.rotation } : {}),
        ...(options.reportIntervalMs !== undefined ? { reportIntervalMs: options.reportIntervalMs } : {}),
        reportDir: options.reportDir,
        failOn: options.failOn,
        nonGlobalClients: options.nonGlobalClients ?? [],
        maxBodyBytes,
        ...(options.tenant ? { tenant: options.tenant } : {}),
        ...(options.openapiPath !== undefined ? { openapiPath: options.openapiPath } : {}),
        ...(options.baseline ? { baseline: options.baseline } : {}),
        ...(options.admin ? { admin: options.admin } : {}),
      },
      log,
    );
  } catch (error) {
    server.stopAccepting();
    server.abortInFlight('the proxy did not start');
    server.closeAll();
    if (error instanceof RecorderStartError) throw new ProxyStartError(error.message);
    throw error;
  }
}

/** The status line every intervalMs (0: none), quiet while nothing happens. */
function startStatusLine(counts: () => StatusCounts, intervalMs: number, log: (line: string) => void): NodeJS.Timeout | undefined {
  if (intervalMs <= 0) return undefined;
  let lastLine = statusLine(counts());
  const timer = setInterval(() => {
    const line = statusLine(counts());
    if (line === lastLine) return;
    lastLine = line;
    log(line);
  }, intervalMs);
  timer.unref();
  return timer;
}

/**
 * Stops accepting, waits for the exchanges in flight (at most drainTimeoutMs, or until hurried),
 * cuts those left, and closes every connection.
 */
async function drain(server: ProxyServer, drainTimeoutMs: number, hurried: Promise<void>): Promise<void> {
  server.stopAccepting();
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<void>((resolve) => (timer = setTimeout(resolve, drainTimeoutMs)));
  await Promise.race([server.whenIdle(), deadline, hurried]);
  clearTimeout(timer);
  if (server.inFlightCount > 0) {
    const reason = 'the proxy stopped before the exchange finished';
    server.abortInFlight(reason);
    // Most cut exchanges close at once; those that never will (a response queued on a reset
    // connection) are finished here, so that no client can keep the proxy from stopping.
    let abortTimer: NodeJS.Timeout | undefined;
    await Promise.race([server.whenIdle(), new Promise<void>((resolve) => (abortTimer = setTimeout(resolve, ABORT_GRACE_MS)))]);
    clearTimeout(abortTimer);
    server.finishAllAbandoned(reason);
  }
  server.closeAll();
}

function urlHost(host: string): string {
  if (host === '0.0.0.0') return '127.0.0.1';
  if (host === '::') return '[::1]';
  return host.includes(':') ? `[${host}]` : host;
}

function listenFailure(code: string | undefined, host: string, port: number, error: Error): string {
  if (code === 'EADDRINUSE') return `cannot listen on ${host}:${port}: the address is in use (try --listen ${host.includes(':') ? `[${host}]` : host}:0)`;
  if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND' || code === 'EAI_AGAIN') return `cannot listen on ${host}:${port}: no such local address`;
  if (code === 'EACCES') return `cannot listen on ${host}:${port}: permission denied`;
  return `cannot listen on ${host}:${port}: ${error.message}`;
}
