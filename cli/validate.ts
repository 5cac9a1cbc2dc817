// `tmi-conform validate FILE|DIR... [--report-dir DIR] [--fail-on must|should]`:
// judges recorded traffic offline with the same rule engine as the suites and the proxy.
import { access, stat } from 'node:fs/promises';
import { journalOfSegment, recordingsInFolder } from '../recordings/segments.ts';
import type { RecordingFormat } from '../recordings/detect-format.ts';
import { NO_JWKS_NOTE } from '../keys/tenant-keys.ts';
import { learnTenant, TenantTokens } from '../keys/tenant.ts';
import { credentialState } from '../rules/credential.ts';
import type { Judgement } from '../rules/index.ts';
import { judgeRecording } from '../recordings/judge-recording.ts';
import { bearerCredential } from '../rules/token.ts';
import { detectFormat, RecordingError, type ReadProgress } from '../recordings/read.ts';
import type { Exchange } from '../rules/types.ts';
import { ReportBuilder } from '../reports/builder.ts';
import { notJudgedLine, renderSummary, underGitHubActions } from '../reports/console.ts';
import type { Report } from '../reports/model.ts';
import { notRecordedReasons } from '../reports/traffic.ts';
import { parseFailOn } from '../reports/fail-on.ts';
import { checkReportDir, writeReports } from '../reports/write.ts';
import { bytesFlag, parseArgs, stringFlag } from './args.ts';
import { sayReportEnd } from './events.ts';
import { OUTPUT_FLAGS, OUTPUT_HELP, Terminal } from './terminal.ts';
import { baselineOption } from './baseline-option.ts';
import { ApiLayout } from '../rules/api-layout.ts';
import { openApiLine, openApiOption, openApiProblemLines } from './openapi-option.ts';
import { DEFAULT_MAX_BODY_BYTES, describeBytes } from '../core/body-limit.ts';
import { EXIT_FAILED, EXIT_OK, EXIT_USAGE, UsageError } from '../core/errors.ts';
import { MAX_JSON_DEPTH } from '../core/json-depth.ts';

export const help = `Usage: tmi-conform validate FILE|DIR... [--report-dir DIR] [--fail-on must|should] [--jwks URL|FILE] [--issuer ISSUER] [--max-body-bytes N]
                            [--openapi FILE] [--baseline FILE]

Judges recorded traffic offline: HAR 1.2 files (browser DevTools, mitmproxy, other proxies,
converted cassettes) and the proxy's JSONL journal (one HAR entry per line), plain or gzipped
(told by its first bytes, whatever its name). Files are read as streams, so their size does not
matter. A folder stands for its .jsonl, .jsonl.gz and .har files, in name order. The segments of a
rotated journal (NAME.000001.jsonl, NAME.000002.jsonl.gz...) named one after the other, or in one
folder, are one recording: judged as if never split, with the verdict the proxy gave at stop.
Every exchange under the API base path is judged: the document's three operations by all of
its rules, any other operation (named by its templated path, "GET /users/{id}") by the rules the
document states for every operation; with --openapi, also against the user's OpenAPI
description. Exchanges outside the API base path are counted, never judged. The API base path
is the one the --openapi description's servers declare, else /api/v2 after any tenant path.

Credentials: the proxy's journal and HAR keep whether each request had an Authorization header,
its shape and the token's non-secret claims (the token itself never), and whether its signature
verified when the proxy saw it. A recording from another recorder that dropped the header or
masked the token does not show what was sent: those exchanges are not judged for authentication
("credentials not recorded: N exchanges …").

Unreadable input is never a verdict: a file that is empty, is not a HAR document, or holds no
complete journal entry, or a gzip file that is damaged or cut short, exits 2 with one line
naming the file and what is wrong, and no report is written (an earlier report in --report-dir
stays as it was). A journal whose last line was cut short (a recorder stopped mid-write) is
judged, and the line is said skipped. Lines in the middle of a journal that are not entries:
the other lines are judged and summed up on the console, the bad lines are named (the first few, "and N more"), the exit code is 2 and no
report is written. An exchange with a body nested deeper than ${MAX_JSON_DEPTH} levels is not judged
("not judged: … nested deeper than ${MAX_JSON_DEPTH} levels"); the rest of the recording is. A body over
--max-body-bytes keeps its size, SHA-256 and first bytes; its content is not judged ("content not
judged: … over the body limit"), its exchange's status, headers and credential are. Memory stays
flat whatever one entry holds.

Each entry is judged for what it kept. One that kept no response header but Content-Type and
Content-Length (HTTP mocking libraries' cassettes) is not judged for the headers it dropped
("not judged: … its response headers (RL-429-HEADERS)"), and with no Content-Type, a body that
parses as JSON is JSON. A response body kept only as its size (HAR content.size above 0 or -1
without text, or a Content-Length with no body) is not judged ("not judged: … its response body").

Options:
  --report-dir DIR   where report.json, junit.xml, report.md, report.html, report.sarif go (default reports/latest)
  --fail-on LEVEL    must (default): exit 1 on a failed "must" requirement; should: also on warnings
  --jwks URL|FILE    the tenant's JSON Web Key Set: tokens a recording kept whole have their signature
                     checked against it (without it: "signatures not verified: no JWKS"); one that
                     cannot be read is a usage error
  --issuer ISSUER    the issuer the tenant's tokens carry: a token naming another is judged as from another
                     issuer (without it the issuer is not judged)
  --max-body-bytes N the body limit: bytes of each body judged (default ${DEFAULT_MAX_BODY_BYTES}, as the proxy's)
  --baseline FILE    accepted failures: an earlier report.json, or a YAML list (tmi-conform report baseline);
                     only failures it does not accept count in the verdict
  --openapi FILE     an OpenAPI 3.0 or 3.1 description (YAML or JSON) of the operations the document does
                     not detail: their status codes and bodies are checked against it (OAS-*, warnings);
                     one that cannot be read is a usage error

${OUTPUT_HELP}

Exit codes: 0 no violation at the fail-on level, 1 some, 2 unreadable input or usage error.`;

export interface ValidateSummary {
  files: number;
  exchanges: number;
  judged: number;
  notCovered: number;
  /** Judged exchanges whose recording does not show the credential sent. */
  credentialsNotRecorded: number;
  /** Judged exchanges with a JWT whose signature nobody checked (no JWKS, or a signature the recording masked). */
  signaturesUnverified: number;
  /** Of those, the exchanges whose recording kept the token whole (so that --jwks could check it). */
  tokensKeptWhole: number;
  jwksGiven: boolean;
  /** Exchanges on covered paths the engine declined to judge, by reason: how many, and where the first few are. */
  notJudged: Map<string, { count: number; where: string[] }>;
  /** Judged exchanges with a body over the body limit, whose content was not judged: by reason, as above. */
  contentNotJudged: Map<string, { count: number; where: string[] }>;
  /** What of the --openapi description could not be used, one line each. */
  openapiNotes: string[];
  /** Judged exchanges of which the recording did not keep a part (response headers, response body), so it was not judged: by reason, as above. */
  partsNotRecorded: Map<string, { count: number; where: string[] }>;
}

function countPlace(places: Map<string, { count: number; where: string[] }>, reason: string, where: string): void {
  const entry = places.get(reason) ?? { count: 0, where: [] };
  entry.count++;
  if (entry.where.length < NOT_JUDGED_PLACES) entry.where.push(where);
  places.set(reason, entry);
}

/** Exchanges listed by place when the console says some were not judged. */
const NOT_JUDGED_PLACES = 3;

/** A compact JWS whose signature a recording kept as it was (base64url), so that checking it means something. */
const COMPACT_JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*\.[A-Za-z0-9_-]+$/;

/** The token of an exchange whose recording kept it whole (a masked one cannot be checked), or undefined. */
function wholeToken(exchange: Exchange): string | undefined {
  const credential = bearerCredential(exchange.request.headers['authorization']);
  return credential !== undefined && COMPACT_JWS.test(credential) ? credential : undefined;
}

/** Settles each exchange's token against what is known of the tenant's tokens (--jwks, --issuer); a verdict a recorder kept stays. */
async function settleTokens(batch: readonly Exchange[], tenant: TenantTokens): Promise<void> {
  await tenant.prepare(batch.map((exchange) => (exchange.token.signatureValid === undefined && exchange.token.claims ? wholeToken(exchange) : undefined)));
  for (const exchange of batch) tenant.settle(exchange.token, wholeToken(exchange));
}

function judgeInto(exchange: Exchange, judgement: Judgement, place: (id: string | undefined) => string, builder: ReportBuilder, summary: ValidateSummary): void {
  summary.exchanges++;
  builder.addExchange(exchange, judgement);
  if (!judgement.operation) {
    summary.notCovered++;
    return;
  }
  if (judgement.notJudged !== undefined) {
    countPlace(summary.notJudged, judgement.notJudged, place(exchange.id));
    return;
  }
  summary.judged++;
  for (const reason of notRecordedReasons(judgement)) countPlace(summary.partsNotRecorded, reason, place(exchange.id));
  for (const over of judgement.bodiesOverLimit ?? []) {
    countPlace(summary.contentNotJudged, `${over.body} body over the ${describeBytes(over.limit)} body limit`, `${place(exchange.id)} (${describeBytes(over.bytes)})`);
  }
  const state = credentialState(exchange);
  if (state === 'not-recorded') summary.credentialsNotRecorded++;
  else if (state === 'unverified') {
    summary.signaturesUnverified++;
    if (COMPACT_JWS.test(bearerCredential(exchange.request.headers['authorization']) ?? '')) summary.tokensKeptWhole++;
  }
}

export async function run(argv: string[]): Promise<number> {
  const args = parseArgs('validate', argv, { 'report-dir': { value: true }, 'fail-on': { value: true }, jwks: { value: true }, issuer: { value: true }, 'max-body-bytes': { value: true }, openapi: { value: true }, baseline: { value: true }, ...OUTPUT_FLAGS });
  const terminal = Terminal.of('validate', args);
  if (args.positionals.length === 0) throw new UsageError('validate: name at least one recording (HAR or JSONL journal)');
  const failOn = parseFailOn(stringFlag(args, 'fail-on'));
  const reportDir = stringFlag(args, 'report-dir') ?? 'reports/latest';
  const maxBodyBytes = bytesFlag('validate', args, 'max-body-bytes', DEFAULT_MAX_BODY_BYTES);
  await checkReportDir(reportDir);
  const files: string[] = [];
  for (const file of args.positionals) {
    let isFolder: boolean;
    try {
      await access(file);
      isFolder = (await stat(file)).isDirectory();
    } catch {
      throw new UsageError(`validate: cannot read ${file}: no such file or not readable`);
    }
    if (!isFolder) {
      files.push(file);
      continue;
    }
    const inFolder = recordingsInFolder(file);
    if (inFolder.length === 0) throw new UsageError(`validate: ${file} is a folder with no recording in it (a .jsonl, .jsonl.gz or .har file)`);
    files.push(...inFolder);
  }

  const jwksSource = stringFlag(args, 'jwks');
  const issuer = stringFlag(args, 'issuer');
  // Offline there is no tenant to ask: only what the user named is known.
  const knowledge = await learnTenant({ ...(jwksSource !== undefined ? { jwks: jwksSource } : {}), ...(issuer !== undefined ? { issuer } : {}) });
  if (knowledge.keys && 'problem' in knowledge.keys) throw new UsageError(`validate: --jwks: ${knowledge.keys.problem}`);
  const tenant = TenantTokens.of(knowledge);

  const baseline = await baselineOption(stringFlag(args, 'baseline'));
  const openapiPath = stringFlag(args, 'openapi');
  const openapi = await openApiOption(openapiPath);
  if (openapi) terminal.line(openApiLine(openapi));
  // The API base path: the servers the description declares, else the document's /api/v2.
  const layout = new ApiLayout(openapi ? { openapi } : {});
  const builder = new ReportBuilder({ kind: 'validate', source: `validate:${args.positionals.join(',')}`, maskLearnedSecrets: true, openapi: openapi !== undefined });
  const summary: ValidateSummary = { files: 0, exchanges: 0, judged: 0, notCovered: 0, credentialsNotRecorded: 0, signaturesUnverified: 0, tokensKeptWhole: 0, jwksGiven: jwksSource !== undefined, notJudged: new Map(), contentNotJudged: new Map(), partsNotRecorded: new Map(), openapiNotes: [] };
  const unreadable: string[] = [];
  const failed = (file: string, error: unknown) => {
    if (!(error instanceof RecordingError) && !isFsError(error)) {
      // Not the recording's fault but the kit's: still say which file it was reading.
      if (error instanceof Error) error.message = `${file}: ${error.message}`;
      throw error;
    }
    unreadable.push(`${file}: ${isFsError(error) ? fsReason(error) : (error as Error).message}`);
  };
  const formats = new Map<string, RecordingFormat>();
  for (const file of files) {
    try {
      formats.set(file, await detectFormat(file));
    } catch (error) {
      failed(file, error);
    }
  }
  summary.files = files.length;
  for (const recording of recordingsOf(files.filter((file) => formats.has(file)))) {
    // Where each exchange came from, for the console: a recording may span several files.
    const fileOf = new WeakMap<Exchange, string>();
    let current = recording[0]!;
    const progressOf = new Map(recording.map((file) => [file, { truncatedTail: false } as ReadProgress]));
    await judgeRecording(
      recording,
      {
        progressOf: (file) => progressOf.get(file)!,
        onFile: (file) => (current = file),
        onFileError: failed,
        maxBodyBytes,
        layout,
        beforeJudging: (batch) => {
          for (const exchange of batch) fileOf.set(exchange, current);
          return settleTokens(batch, tenant);
        },
      },
      (exchange, judgement) => {
        const file = fileOf.get(exchange) ?? current;
        judgeInto(exchange, judgement!, placeIn(file, formats.get(file)!), builder, summary);
      },
    );
    for (const [file, progress] of progressOf) {
      if (progress.truncatedTail) process.stderr.write(`tmi-conform validate: ${file}: the last line was cut short (a recorder stopped mid-write); it was skipped\n`);
    }
  }

  summary.openapiNotes = openApiProblemLines(openapi);
  if (unreadable.length > 0) {
    // Input that could not be read is no verdict, and no report replaces the last one.
    const verdict = `verdict: none: ${unreadable.length} file(s) could not be read in full (below); no report written`;
    const report = builder.build({ failOn });
    sayReportEnd(terminal, report, summary.exchanges > 0 ? summaryLines(summary, report, verdict) : [], { written: [], passed: null, more: { unreadable } });
    for (const line of unreadable) process.stderr.write(`tmi-conform validate: cannot read ${line}\n`);
    return EXIT_USAGE;
  }
  const report = builder.build({ failOn, baseline });
  const written = await writeReports(report, reportDir);
  sayReportEnd(terminal, report, summaryLines(summary, report, undefined, written), { written, more: { exchanges: summary.exchanges, judged: summary.judged } });
  return report.passed ? EXIT_OK : EXIT_FAILED;
}

/**
 * The files grouped into recordings, in order: the segments of one rotated journal given one
 * after the other (NAME.000001.jsonl, NAME.000002.jsonl.gz…) are one recording, judged with one
 * rate-limit history as if never split; any other file is a recording of its own.
 */
function recordingsOf(files: string[]): string[][] {
  const recordings: string[][] = [];
  let journal: string | undefined;
  for (const file of files) {
    const of = journalOfSegment(file);
    if (of !== undefined && of === journal) recordings.at(-1)!.push(file);
    else recordings.push([file]);
    journal = of;
  }
  return recordings;
}

/** Where an exchange is in its file, for the console: a journal's line, a HAR's entry index. */
function placeIn(file: string, format: RecordingFormat): (id: string | undefined) => string {
  return (id) => `${file} ${format === 'jsonl' ? 'line' : 'log.entries'} ${format === 'jsonl' ? id : `[${id}]`}`;
}

function fsReason(error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'EISDIR') return 'it is a directory, not a recording';
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied';
  return (error as Error).message;
}

function isFsError(error: unknown): boolean {
  return typeof (error as NodeJS.ErrnoException)?.code === 'string';
}

function summaryLines(summary: ValidateSummary, report: Report, verdict: string | undefined, written?: string[]): string[] {
  const lead: string[] = [];
  const notJudged = [...summary.notJudged.values()].reduce((sum, { count }) => sum + count, 0);
  lead.push(`${summary.exchanges} exchanges in ${summary.files} file(s): ${summary.judged} judged, ${notJudged > 0 ? `${notJudged} not judged, ` : ''}${summary.notCovered} not operation calls`);
  for (const [reason, { count, where }] of summary.notJudged) {
    lead.push(notJudgedLine('not judged', count, reason, where));
  }
  for (const [reason, { count, where }] of summary.partsNotRecorded) lead.push(notJudgedLine('not judged', count, reason, where));
  lead.push(...summary.openapiNotes);
  for (const [reason, { count, where }] of summary.contentNotJudged) {
    lead.push(notJudgedLine('content not judged', count, reason, where));
  }
  if (summary.credentialsNotRecorded > 0) lead.push(`credentials not recorded: ${summary.credentialsNotRecorded} exchanges not judged for authentication`);
  if (summary.signaturesUnverified > 0) {
    // A token the recording kept whole can be checked with --jwks; the kit's recordings keep none (they were checked live, if keys were there).
    const hint = !summary.jwksGiven && summary.tokensKeptWhole > 0 ? ` (--jwks URL|FILE checks the ${summary.tokensKeptWhole} the recording kept whole)` : '';
    lead.push(
      summary.jwksGiven
        ? `signatures not verified: ${summary.signaturesUnverified} exchanges whose recording kept no token to check`
        : `${NO_JWKS_NOTE}: ${summary.signaturesUnverified} exchanges${hint}`,
    );
  }
  return renderSummary(report, { lead, detail: 'table', notJudgedSaid: true, workflowCommands: underGitHubActions(), ...(verdict !== undefined ? { verdict } : {}), ...(written ? { written } : {}) });
}
