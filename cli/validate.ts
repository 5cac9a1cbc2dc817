// `tmi-conform validate FILE|DIR... [--report-dir DIR] [--fail-on must|should]`:
// judges recorded traffic offline with the same rule engine as the suites and the proxy, through
// judging/recordings.ts, which the library's judgeRecording uses too.
import { NO_JWKS_NOTE } from '../keys/tenant-keys.ts';
import { judgeRecordings, type RecordingsSummary } from '../judging/recordings.ts';
import { notJudgedLine, renderSummary, underGitHubActions } from '../reports/console.ts';
import type { Report } from '../reports/model.ts';
import { parseFailOn } from '../reports/fail-on.ts';
import { checkReportDir, writeReports } from '../reports/write.ts';
import { bytesFlag, parseArgs, stringFlag } from './args.ts';
import { sayReportEnd } from './events.ts';
import { OUTPUT_FLAGS, OUTPUT_HELP, Terminal } from './terminal.ts';
import { baselineOption } from './baseline-option.ts';
import { coverageGateOption, exitWithCoverageGate } from './coverage-option.ts';
import { openApiLine, openApiOption, openApiProblemLines } from './openapi-option.ts';
import { DEFAULT_MAX_BODY_BYTES } from '../core/body-limit.ts';
import { EXIT_FAILED, EXIT_OK, EXIT_USAGE, UsageError } from '../core/errors.ts';
import { MAX_JSON_DEPTH } from '../core/json-depth.ts';

export const help = `Usage: tmi-conform validate FILE|DIR... [--report-dir DIR] [--fail-on must|should] [--jwks URL|FILE] [--issuer ISSUER] [--max-body-bytes N]
                            [--openapi FILE] [--baseline FILE] [--non-global-client CLIENT_ID]...

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
  --min-coverage N|PART=N,…
                     exit 1 unless the report examined N % of the document's requirements; PART=N for
                     document, responses, values, operations, and with --openapi description (its
                     operations exercised) and description-responses (its declared statuses seen)
                     (docs/reports.md: Coverage)
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
  --non-global-client ID
                     a client (token azp) that is not global, so that "a non-global client cannot delete"
                     is judged (no token claim says it; a journal keeps what the proxy was told); repeatable

${OUTPUT_HELP}

Exit codes: 0 no violation at the fail-on level, 1 some, 2 unreadable input or usage error.`;

export async function run(argv: string[]): Promise<number> {
  const args = parseArgs('validate', argv, {
    'report-dir': { value: true },
    'fail-on': { value: true },
    jwks: { value: true },
    issuer: { value: true },
    'max-body-bytes': { value: true },
    openapi: { value: true },
    baseline: { value: true },
    'min-coverage': { value: true },
    'non-global-client': { value: true, repeat: true },
    ...OUTPUT_FLAGS,
  });
  const terminal = Terminal.of('validate', args);
  if (args.positionals.length === 0) throw new UsageError('validate: name at least one recording (HAR or JSONL journal)');
  const failOn = parseFailOn(stringFlag(args, 'fail-on'));
  const reportDir = stringFlag(args, 'report-dir') ?? 'reports/latest';
  const maxBodyBytes = bytesFlag('validate', args, 'max-body-bytes', DEFAULT_MAX_BODY_BYTES);
  await checkReportDir(reportDir);
  const baseline = await baselineOption(stringFlag(args, 'baseline'));
  const coverageGate = coverageGateOption(stringFlag(args, 'min-coverage'), 'validate: --min-coverage');
  const openapi = await openApiOption(stringFlag(args, 'openapi'));
  // What of the description cannot be used at all (a path item's $ref leading nowhere) is said now; a
  // schema that cannot be compiled is said once an exchange needs it, with the exchanges.
  if (openapi) for (const line of [openApiLine(openapi), ...openApiProblemLines(openapi)]) terminal.line(line);
  const jwks = stringFlag(args, 'jwks');
  const issuer = stringFlag(args, 'issuer');
  const { report, partial, summary, unreadable } = await judgeRecordings(args.positionals, {
    who: 'validate',
    source: `validate:${args.positionals.join(',')}`,
    failOn,
    maxBodyBytes,
    ...(baseline !== undefined ? { baseline } : {}),
    ...(openapi ? { openapi } : {}),
    ...(jwks !== undefined ? { jwks } : {}),
    ...(issuer !== undefined ? { issuer } : {}),
    nonGlobalClients: (args.flags['non-global-client'] as string[] | undefined) ?? [],
    note: (line) => terminal.line(line),
    warn: (line) => process.stderr.write(`tmi-conform validate: ${line}\n`),
  });
  if (report === undefined) {
    // Input that could not be read is no verdict, and no report replaces the last one.
    const verdict = `verdict: none: ${unreadable.length} file(s) could not be read in full (below); no report written`;
    sayReportEnd(terminal, partial, summary.exchanges > 0 ? summaryLines(summary, partial, verdict) : [], { written: [], passed: null, more: { unreadable } });
    for (const line of unreadable) process.stderr.write(`tmi-conform validate: cannot read ${line}\n`);
    return EXIT_USAGE;
  }
  const written = await writeReports(report, reportDir);
  sayReportEnd(terminal, report, summaryLines(summary, report, undefined, written), {
    written,
    more: { exchanges: summary.exchanges, judged: summary.judged },
  });
  return exitWithCoverageGate(report.passed ? EXIT_OK : EXIT_FAILED, report, coverageGate, 'validate');
}

function summaryLines(summary: RecordingsSummary, report: Report, verdict: string | undefined, written?: string[]): string[] {
  const lead: string[] = [];
  const notJudged = [...summary.notJudged.values()].reduce((sum, { count }) => sum + count, 0);
  lead.push(
    `${summary.exchanges} exchanges in ${summary.files} file(s): ${summary.judged} judged, ${notJudged > 0 ? `${notJudged} not judged, ` : ''}${summary.notCovered} not operation calls`,
  );
  for (const [reason, { count, where }] of summary.notJudged) {
    lead.push(notJudgedLine('not judged', count, reason, where));
  }
  for (const [reason, { count, where }] of summary.partsNotJudged) lead.push(notJudgedLine('not judged', count, reason, where));
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
  return renderSummary(report, {
    lead,
    detail: 'table',
    notJudgedSaid: true,
    workflowCommands: underGitHubActions(),
    ...(verdict !== undefined ? { verdict } : {}),
    ...(written ? { written } : {}),
  });
}
