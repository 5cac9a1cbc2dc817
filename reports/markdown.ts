// report.md: short enough for a CI job summary. The verdict, a summary table, a table per
// operation, then every failed or warned requirement with the document's words and the
// evidence behind it; skipped requirements and client findings folded away at the end.
// Text from traffic is escaped, so a hostile string cannot restructure the page.
import { curlCommand, curlVariableMeanings, curlVariables, reproducible } from './curl.ts';
import { coverageMarkdown, coverageSummaryLine } from './coverage-render.ts';
import type { BaselineOutcome, Evidence, OperationTraffic, Report, RequirementResult, TestResult } from './model.ts';
import { exchangesByStatus, OPERATIONS, operationsCalled, statusCounts } from './operations.ts';
import { byStatus, conclusionOf, INTERRUPTED_VERDICT, interruptedSources } from './status.ts';

const ICON = { fail: '❌', warn: '⚠️', pass: '✅', skip: '⏭️' } as const;
/** A CI job summary is limited (1 MiB on GitHub); stay far below. */
const MAX_REQUIREMENTS_LISTED = 40;
const MAX_SECTION_BYTES = 60_000;
const MAX_EVIDENCE_LISTED = 3;
const MAX_TESTS_LISTED = 20;
const MAX_TEXT = 300;

const oneLine = (text: string, max: number) => {
  const flat = text.replace(/\s*\n\s*/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max)}…` : flat;
};

/** Text from a report as inline Markdown: no HTML, no emphasis, no links, one line. */
export function inline(text: string, max = MAX_TEXT): string {
  return oneLine(text, max)
    .replace(/[\\`*_[\]|#~]/g, (c) => `\\${c}`)
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;');
}

/**
 * Text as code. A plain code span when the text allows it; otherwise an HTML <code> element
 * with the text escaped, since a code span can neither escape "<" nor hold "|" in a table.
 */
export function code(text: string, max = MAX_TEXT): string {
  const cut = oneLine(text, max);
  if (!/[<&`|]/.test(cut)) return `\`${cut}\``;
  return `<code>${cut.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/\|/g, '&#124;')}</code>`;
}

function evidenceLine(e: Evidence): string {
  const where = e.exchange
    ? `${code(`${e.exchange.request.method} ${e.exchange.request.url}`, 160)} → ${e.exchange.response?.status ?? inline(e.exchange.error ?? 'no response', 80)}`
    : `test "${inline(e.test ?? '', 120)}"`;
  const context = e.exchange && e.test ? `${inline(e.source, 80)}, test "${inline(e.test, 120)}"` : inline(e.source, 80);
  const lines = [`- ${where} (${context}): ${inline((e.message ?? '').split('\n')[0] ?? '')}`];
  if (e.counterexample) lines.push(`  - counterexample: ${code(e.counterexample)}`);
  return lines.join('\n');
}

/**
 * A code block: fenced (no run of backticks in `text` can close the fence); a
 * <pre> element with the text escaped when it holds "<" or "&", so that no renderer can take
 * text from traffic for HTML (as `code` does for inline text).
 */
function codeBlock(text: string, language: string): string {
  if (/[<&]/.test(text)) return `<pre><code>${text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')}</code></pre>`;
  const longest = Math.max(2, ...[...text.matchAll(/`+/g)].map((m) => m[0].length));
  const fence = '`'.repeat(longest + 1);
  return `${fence}${language}\n${text}\n${fence}`;
}

/** The curl command that sends one failing exchange again, and the variables to set first. */
export function reproduceBlock(command: string): string[] {
  const variables = curlVariables(command);
  const meanings = curlVariableMeanings(command);
  const set =
    variables.length === 0 ? '' : ` (set ${variables.map((v) => `\`${v}\``).join(', ')} first${meanings ? `: ${meanings}` : ''}; the report masks credentials)`;
  return [`Reproduce${set}:`, '', codeBlock(command, 'sh')];
}

/** The message of the first security finding in a requirement's evidence. */
function firstSecurityMessage(r: RequirementResult): string | undefined {
  for (const e of r.evidence) for (const f of e.findings ?? []) if (f.security !== undefined) return f.message;
  return undefined;
}

function requirementSection(r: RequirementResult, target?: string): string {
  const lines = [
    `#### ${ICON[r.status]} ${r.id} (${r.level})${(r.counts.security ?? 0) > 0 ? ' 🛑 security' : ''}: ${inline(r.title)}`,
    '',
    `> ${r.quote.replace(/\s*\n\s*/g, ' ')}`,
    '',
  ];
  if (r.inferred) lines.push(`Inferred: ${inline(r.inferred)}`, '');
  lines.push(`Examined by ${r.counts.exchanges} exchange(s) and ${r.counts.tests} test(s); ${r.counts.findings} against it.`, '');
  const against = r.evidence.filter((e) => e.status === r.status);
  for (const e of against.slice(0, MAX_EVIDENCE_LISTED)) lines.push(evidenceLine(e));
  if (against.length > MAX_EVIDENCE_LISTED) lines.push(`- … ${against.length - MAX_EVIDENCE_LISTED} more in report.html`);
  const failing = reproducible(r);
  if (failing) lines.push('', ...reproduceBlock(curlCommand(failing.exchange, target)));
  lines.push('');
  return lines.join('\n');
}

function operationsTable(report: Report): string[] {
  const withTraffic = report.traffic !== undefined;
  const out = [
    '| operation | status | pass | fail | warn | skip |' + (withTraffic ? ' exchanges by status |' : ''),
    '|---|---|---:|---:|---:|---:|' + (withTraffic ? '---|' : ''),
  ];
  for (const group of report.operations) {
    const route = OPERATIONS.find((o) => o.id === group.operation)?.route;
    const statuses = (report.traffic ? exchangesByStatus(report.traffic, group.operation) : [])
      .map(([status, count]) => `${inline(status, 8)}: ${count}`)
      .join(', ');
    const { pass, fail, warn, skip } = group.summary;
    out.push(
      `| ${inline(group.title)}${route ? ` ${code(route)}` : ''} | ${ICON[group.status]} ${group.status} | ${pass} | ${fail} | ${warn} | ${skip} |` +
        (withTraffic ? ` ${statuses || '–'} |` : ''),
    );
  }
  return out;
}

/** Operation rows listed in report.md: a pull-request comment stays short; report.html lists them all. */
const OPERATIONS_CALLED_LISTED = 25;

function operationsCalledTable(rows: readonly OperationTraffic[]): string[] {
  const out = [`${operationsCalled(rows)}.`, '', '| operation | exchanges | by status | requirements judged |', '|---|---:|---|---:|'];
  for (const row of rows.slice(0, OPERATIONS_CALLED_LISTED)) {
    out.push(`| ${code(row.name, 120)} | ${row.exchanges} | ${inline(statusCounts(row.byStatus), 200)} | ${row.requirements.length} |`);
  }
  if (rows.length > OPERATIONS_CALLED_LISTED) out.push('', `… and ${rows.length - OPERATIONS_CALLED_LISTED} more operations in report.html and report.json.`);
  return out;
}

/** What --baseline did, short: a pull-request comment names what was accepted and why. */
function baselineSection(b: BaselineOutcome): string[] {
  const until = (e: { until?: string }) => (e.until ? ` (until ${inline(e.until, 20)})` : '');
  const out = [
    `### Baseline ${code(b.source, 200)}`,
    '',
    `${b.accepted.length} failure(s) accepted, ${b.fixed.length} fixed, ${b.expired.length} expired.`,
    '',
  ];
  for (const e of b.accepted) out.push(`- accepted: **${inline(e.requirement, 60)}**: ${inline(e.reason, 300)}${until(e)}`);
  for (const e of b.fixed) out.push(`- fixed: **${inline(e.requirement, 60)}** passes now: remove ${code(e.remove, 100)}`);
  for (const e of b.expired) out.push(`- expired: **${inline(e.requirement, 60)}**${until(e)}: counts again`);
  out.push('');
  return out;
}

function testsSummary(tests: TestResult[]): string {
  const count = (status: string) => tests.filter((t) => t.status === status).length;
  return `Suite tests: ${tests.length} (${count('pass')} passed, ${count('fail')} failed, ${count('warn')} warned, ${count('skip')} skipped).`;
}

export function renderMarkdown(report: Report): string {
  const { summary } = report;
  const conclusion = conclusionOf(report);
  const verdict =
    conclusion === 'interrupted' ? `⏹ ${INTERRUPTED_VERDICT}` : conclusion === 'conforming' ? '✅ conforming' : `❌ NOT conforming (fail-on ${report.failOn})`;
  const context = [
    report.target ? `Target ${code(report.target, 200)}` : undefined,
    `sources: ${report.sources.map((s) => inline(s.name, 120)).join(', ')}`,
    `tmi-conform ${inline(report.tool.version, 40)}`,
    inline(report.finishedAt, 40),
  ].filter((x) => x !== undefined);
  const out = [
    `## tmi-conform ${report.kind}: ${verdict}`,
    '',
    context.join(' · '),
    '',
    ...(conclusion === 'interrupted'
      ? [
          `**Interrupted** (${interruptedSources(report)
            .map((s) => inline(s, 120))
            .join(', ')}): what it did not reach is skipped, not run; the counts below are of what it reached.`,
          '',
        ]
      : []),
    '| pass | fail | warn | skip |',
    '|---:|---:|---:|---:|',
    `| ${summary.pass} | ${summary.fail} | ${summary.warn} | ${summary.skip} |`,
    '',
    ...coverageSummaryLine(report),
  ];
  const security = report.requirements.filter((r) => (r.counts.security ?? 0) > 0);
  if (security.length > 0) {
    out.push('### 🛑 Security findings', '', 'The target carried out requests it should have refused:', '');
    for (const r of security) out.push(`- **${r.id}** (${r.level}): ${r.counts.security} exchange(s), e.g. ${inline(firstSecurityMessage(r) ?? r.title, 300)}`);
    out.push('');
  }
  if (report.tests.length > 0) out.push(testsSummary(report.tests), '');
  if (report.traffic)
    out.push(
      `Traffic: ${report.traffic.exchanges} exchanges, ${report.traffic.notCovered} not operation calls (outside the API base path, or CORS preflights).`,
      '',
    );
  for (const { reason, count, exchanges } of report.traffic?.notJudged ?? [])
    out.push(
      `Not judged: ${count} × ${inline(reason, 400)}${exchanges.length > 0 ? ` (exchanges ${exchanges.map((id) => inline(id, 20)).join(', ')}${count > exchanges.length ? ', …' : ''})` : ''}.`,
      '',
    );
  if (report.operations.length > 0) out.push('### Per operation', '', ...operationsTable(report), '');
  if (report.traffic?.operations) out.push('### Operations called', '', ...operationsCalledTable(report.traffic.operations), '');
  out.push(...coverageMarkdown(report));

  if (report.baseline) out.push(...baselineSection(report.baseline));
  const problems = report.requirements.filter((r) => (r.status === 'fail' || r.status === 'warn') && r.accepted === undefined).sort(byStatus);
  if (problems.length > 0) {
    out.push('### Requirements not met', '');
    let listed = 0;
    let bytes = 0;
    for (const r of problems) {
      const section = requirementSection(r, report.target);
      bytes += Buffer.byteLength(section);
      if (listed === MAX_REQUIREMENTS_LISTED || bytes > MAX_SECTION_BYTES) break;
      out.push(section);
      listed++;
    }
    if (problems.length > listed) out.push(`… and ${problems.length - listed} more in report.html and report.json.`, '');
  }
  const failedTests = report.tests.filter((t) => t.status === 'fail' || t.status === 'warn').sort(byStatus);
  if (failedTests.length > 0) {
    out.push('<details><summary>Failed suite tests</summary>', '');
    for (const t of failedTests.slice(0, MAX_TESTS_LISTED)) out.push(`- ${ICON[t.status]} ${inline(t.name, 160)}: ${inline(t.message ?? '')}`);
    if (failedTests.length > MAX_TESTS_LISTED) out.push(`- … and ${failedTests.length - MAX_TESTS_LISTED} more in junit.xml`);
    out.push('', '</details>', '');
  }
  const skipped = report.requirements.filter((r) => r.status === 'skip');
  if (skipped.length > 0) {
    out.push(`<details><summary>Skipped requirements (${skipped.length})</summary>`, '', '| requirement | level | reason |', '|---|---|---|');
    for (const r of skipped) out.push(`| ${r.id} | ${r.level} | ${inline(r.reason ?? '', 200)} |`);
    out.push('', '</details>', '');
  }
  if (report.clientFindings.length > 0) {
    out.push('### Client findings (not part of the verdict)', '', '| requirement | count | example |', '|---|---:|---|');
    for (const f of report.clientFindings.slice(0, 20)) out.push(`| ${inline(f.requirement, 60)} | ${f.count} | ${inline(f.message)} |`);
    out.push('');
  }
  out.push('Details: report.html (open in a browser), report.json, junit.xml.', '');
  return out.filter((line, i, all) => !(line === '' && all[i - 1] === '')).join('\n');
}
