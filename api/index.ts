// The library API: what the commands do, from code, each returning the one report model.
//   import { runSuites, judgeRecording, startProxy, loadReport, conformanceDispatcher } from 'tmi-conform';
// Each calls what its command calls (runConformance, judgeRecording, the proxy session, the
// report schema); nothing here prints unless asked to.
import { type FaultName, type RateLimitOptions, startReference } from '../reference/index.ts';
import { ReportBuilder } from '../reports/builder.ts';
import type { FailOn } from '../reports/fail-on.ts';
import type { Baseline, Report } from '../reports/model.ts';
import { readReport } from '../reports/read.ts';
import { judgeRecordings } from '../judging/recordings.ts';
import { UsageError } from '../core/errors.ts';
import { learnTenant, tenantTokensData } from '../keys/tenant.ts';
import { loadOpenApiFile } from '../rules/openapi/load.ts';
import { embeddedReferenceConfig, refuseTargetKeysWithoutBaseUrl, resolveConfig, type RawConfig } from '../suites/config.ts';
import { runConformance } from '../suites/conformance.ts';
import { refuseUnknownRequirements } from '../suites/requirement-tags.ts';
import { startProxy as startProxySession, type RunningProxy } from '../proxy/session.ts';
import { parseTarget } from '../proxy/forward/target.ts';

export type { Baseline, FailOn, FaultName, RawConfig, Report, RunningProxy };
export { loadBaseline } from '../reports/baseline.ts';
export { writeReports } from '../reports/write.ts';
export { conformanceDispatcher, type ConformanceDispatcher, type ConformanceDispatcherOptions } from './conformance-dispatcher.ts';

export interface RunSuitesOptions {
  /**
   * The implementation under test, with the keys of the config file (`base_url`, `credentials`,
   * `fixtures`, …; see schemas/conformance.schema.json). Without `base_url`: the embedded
   * reference implementation, started on a free loopback port and stopped at the end.
   */
  config?: RawConfig;
  /** Deliberate non-conformities of the embedded reference (`tmi-conform serve --list-faults`). */
  faults?: FaultName[];
  /** The embedded reference's rate limit; false: none. */
  rateLimit?: RateLimitOptions | false;
  /** Only the tests that cover these requirements (default: all); an id the catalog does not have is refused (UsageError). */
  requirements?: string[];
  failOn?: FailOn;
  baseline?: Baseline;
  /** Progress lines (default: none). */
  print?: (line: string) => void;
}

/** Runs the conformance suites and returns the report (`report.passed` is the verdict). */
export async function runSuites(options: RunSuitesOptions = {}): Promise<Report> {
  const raw = options.config ?? {};
  refuseTargetKeysWithoutBaseUrl(raw, 'runSuites');
  refuseUnknownRequirements(options.requirements ?? [], 'runSuites');
  const embedded = raw.base_url === undefined;
  const reference = embedded
    ? await startReference({ faults: options.faults ?? [], ...(options.rateLimit !== undefined ? { rateLimit: options.rateLimit } : {}) })
    : undefined;
  const print = options.print ?? (() => {});
  // vitest sets the process's exit code when a suite fails: the verdict is the caller's to act on.
  const exitCode = process.exitCode;
  try {
    const config = reference ? embeddedReferenceConfig(reference.config(), raw) : resolveConfig(raw);
    const builder = new ReportBuilder({ kind: 'run', source: 'run', target: config.baseUrl, seed: config.seed });
    // No interrupt to listen for: the caller owns the process and its signals.
    const listenForInterrupt = () => ({ promise: new Promise<never>(() => {}), dispose: () => {} });
    await runConformance(config, { requirements: options.requirements ?? [], builder, print, warn: print, listenForInterrupt });
    return builder.build({ failOn: options.failOn ?? 'must', baseline: options.baseline });
  } finally {
    process.exitCode = exitCode;
    await reference?.close();
  }
}

export interface JudgeRecordingOptions {
  failOn?: FailOn;
  baseline?: Baseline;
  /** An OpenAPI 3.0/3.1 description of the operations the document does not detail. */
  openapi?: string;
  /** Bytes of each body judged (default 1 MiB). */
  maxBodyBytes?: number;
  /** The tenant's keys (a JWKS URL or file), to verify the tokens a recording kept whole. */
  jwks?: string;
  /** The issuer the tenant's tokens carry. */
  issuer?: string;
  /** Clients (token azp) that are not global, so that "a non-global client cannot delete" is judged. */
  nonGlobalClients?: string[];
}

/**
 * Judges recordings (HAR 1.2 files, the proxy's JSONL journals, folders of them) as one, by the
 * same function as `tmi-conform validate`, and returns the report. Input that cannot be read in
 * full is no verdict: the promise is rejected with one line naming each file.
 */
export async function judgeRecording(paths: string | string[], options: JudgeRecordingOptions = {}): Promise<Report> {
  const openapi = options.openapi === undefined ? undefined : await loadOpenApiFile(options.openapi);
  const files = Array.isArray(paths) ? paths : [paths];
  const { report, unreadable } = await judgeRecordings(files, {
    who: 'judgeRecording',
    source: `validate:${files.join(',')}`,
    failOn: options.failOn ?? 'must',
    ...(options.baseline !== undefined ? { baseline: options.baseline } : {}),
    ...(openapi ? { openapi } : {}),
    ...(options.jwks !== undefined ? { jwks: options.jwks } : {}),
    ...(options.issuer !== undefined ? { issuer: options.issuer } : {}),
    ...(options.nonGlobalClients !== undefined ? { nonGlobalClients: options.nonGlobalClients } : {}),
    ...(options.maxBodyBytes !== undefined ? { maxBodyBytes: options.maxBodyBytes } : {}),
  });
  if (report === undefined) throw new UsageError(`judgeRecording: cannot read ${unreadable.join('; ')}`);
  return report;
}

export interface StartProxyOptions {
  /** The tenant or implementation to forward to: https://tenant.example.com. */
  target: string;
  /** Default 127.0.0.1 and a free port (see `url` of the result). */
  host?: string;
  port?: number;
  /** The JSONL journal, appended to as exchanges finish. */
  journalPath: string;
  /** A HAR file written at stop. */
  harPath?: string;
  /** Where report.json, junit.xml, report.md, report.html and report.sarif are written at stop. */
  reportDir: string;
  failOn?: FailOn;
  baseline?: Baseline;
  openapi?: string;
  /** Clients (token azp) that are not global, so that "a non-global client cannot delete" is judged. */
  nonGlobalClients?: string[];
  /** The tenant's keys (a JWKS URL or file); default: the jwks_uri of the target's discovery document, as the command's. */
  jwks?: string;
  /** The issuer the tenant's tokens carry; default: the discovery document's. */
  issuer?: string;
}

/** Starts the recording proxy; `stop()` writes the HAR and the reports and returns their summary (its `report`). */
export async function startProxy(options: StartProxyOptions): Promise<RunningProxy> {
  if (options.openapi !== undefined) await loadOpenApiFile(options.openapi); // a bad description is refused before anything starts
  const target = parseTarget(options.target);
  // What is known of the tenant's tokens, learned as the command learns it: every route judges with the same knowledge.
  const tenant = await learnTenant({
    ...(options.issuer !== undefined ? { issuer: options.issuer } : {}),
    ...(options.jwks !== undefined ? { jwks: options.jwks } : {}),
    wellKnownAt: target.origin,
  });
  if (options.jwks !== undefined && tenant.keys && 'problem' in tenant.keys) throw new UsageError(`startProxy: jwks: ${tenant.keys.problem}`);
  return startProxySession({
    target,
    tenant: tenantTokensData(tenant),
    host: options.host ?? '127.0.0.1',
    port: options.port ?? 0,
    journalPath: options.journalPath,
    ...(options.harPath !== undefined ? { harPath: options.harPath } : {}),
    reportDir: options.reportDir,
    failOn: options.failOn ?? 'must',
    statusIntervalMs: 0,
    ...(options.baseline ? { baseline: options.baseline } : {}),
    ...(options.openapi !== undefined ? { openapiPath: options.openapi } : {}),
    ...(options.nonGlobalClients !== undefined ? { nonGlobalClients: options.nonGlobalClients } : {}),
  });
}

/** Reads a report.json (or the one in a report directory), checked against its schema; a UsageError (one line) when it cannot be. */
export function loadReport(location: string): Promise<Report> {
  return readReport(location, 'loadReport');
}
