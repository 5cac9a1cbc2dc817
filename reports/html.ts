// report.html: one self-contained file a person opens in a browser. The verdict and summary,
// a table per operation, the X-RateLimit-* chart for observed traffic, then the requirement
// matrix in sections per operation, coloured by status, with the document's words and the
// evidence behind each verdict (redacted request/response, collapsible), filterable by status,
// level and operation. Every string from a report is escaped: reports carry hostile text
// from real traffic.
import { curlCommand, curlVariableMeanings, curlVariables, reproducible } from './curl.ts';
import { CONTENT_SECURITY_POLICY, SCRIPT, STYLE } from './html-assets.ts';
import type { Evidence, ExchangeEvidence, OperationTraffic, Report, RequirementResult, Status, Summary, TestResult } from './model.ts';
import { exchangesByStatus, OPERATIONS, operationsCalled } from './operations.ts';
import { renderRateLimitChart } from './rate-limit-chart.ts';
import { conclusionOf, interruptedSources, STATUS_ORDER } from './status.ts';
import { escapeXml as esc } from './xml.ts';
import { coverageHtml } from './coverage-render.ts';

const STATUS_LABEL: Record<Status, string> = { pass: 'Pass', fail: 'Fail', warn: 'Warn', skip: 'Skip' };

/** The document's words: escaped, with its `code` spans shown as code. */
const quoteHtml = (quote: string) => esc(quote).replace(/`([^`]+)`/g, '<code>$1</code>');

const chip = (status: Status) => `<span class="chip ${esc(status)}">${esc(STATUS_LABEL[status] ?? status)}</span>`;

/** A body as a reader wants it: JSON indented, anything else as it came. */
function prettyBody(body: string): string {
  try {
    return JSON.stringify(JSON.parse(body), null, 2);
  } catch {
    return body;
  }
}

function headerLines(headers: Record<string, string> | undefined): string[] {
  return Object.entries(headers ?? {}).map(([name, value]) => `${name}: ${value}`);
}

function exchangeBlock(x: ExchangeEvidence): string {
  const request = [`${x.request.method} ${x.request.url}`, ...headerLines(x.request.headers)];
  if (x.request.body !== undefined) request.push('', prettyBody(x.request.body));
  const response = x.response ? [`HTTP ${x.response.status}`, ...headerLines(x.response.headers)] : [`no response: ${x.error ?? 'unknown'}`];
  if (x.response?.body !== undefined) response.push('', prettyBody(x.response.body));
  return `<div class="exchange"><div><h4>Request${x.id ? ` ${esc(x.id)}` : ''} · ${esc(x.startedAt)}</h4><pre>${esc(request.join('\n'))}</pre></div><div><h4>Response</h4><pre>${esc(response.join('\n'))}</pre></div></div>`;
}

function evidenceItem(e: Evidence): string {
  const where = e.exchange
    ? `<span class="where">${esc(`${e.exchange.request.method} ${e.exchange.request.url}`)} → ${esc(String(e.exchange.response?.status ?? e.exchange.error ?? 'no response'))}</span>`
    : `test <b>${esc(e.test ?? '')}</b>`;
  const headline = (e.message ?? '').split('\n', 1)[0] ?? '';
  const body: string[] = [];
  body.push(
    `<p class="note"><b>Source</b> ${esc(e.source)}${e.kind === 'exchange' && e.test ? ` · <b>test</b> ${esc(e.test)}` : ''}${e.findings ? ` · <b>checks</b> ${esc(e.findings.map((f) => f.check).join(', '))}` : ''}</p>`,
  );
  if (e.message) body.push(`<pre class="message ${esc(e.status)}">${esc(e.message)}</pre>`);
  if (e.counterexample) body.push(`<h4>Counterexample</h4><pre>${esc(e.counterexample)}</pre>`);
  if (e.exchange) body.push(exchangeBlock(e.exchange));
  return `<details class="evidence"><summary>${chip(e.status)} ${where}${headline ? ` <span class="muted">— ${esc(headline.length > 160 ? `${headline.slice(0, 160)}…` : headline)}</span>` : ''}</summary><div class="evidence-body">${body.join('')}</div></details>`;
}

/** The curl command that sends one failing exchange again, with the variables to set first. */
function reproduceBlock(r: RequirementResult, target: string | undefined): string {
  const failing = reproducible(r);
  if (!failing) return '';
  const command = curlCommand(failing.exchange, target);
  const variables = curlVariables(command);
  const meanings = curlVariableMeanings(command);
  const set =
    variables.length === 0
      ? ''
      : ` (set ${variables.map((v) => `<code>${esc(v)}</code>`).join(', ')} first${meanings ? `: ${esc(meanings)}` : ''}; the report masks credentials)`;
  return `<div class="reproduce"><p class="note"><b>Reproduce</b>${set}</p><pre class="curl">${esc(command)}</pre></div>`;
}

function requirementRow(r: RequirementResult, target?: string): string {
  const against = r.evidence.filter((e) => e.status === 'fail' || e.status === 'warn');
  const supporting = r.evidence.filter((e) => e.status === 'pass' || e.status === 'skip');
  const notes: string[] = [];
  if (r.inferred) notes.push(`<p class="note"><b>Inferred:</b> ${quoteHtml(r.inferred)}</p>`);
  if (r.reason) notes.push(`<p class="note"><b>Skipped:</b> ${esc(r.reason)}</p>`);
  if (r.accepted)
    notes.push(`<p class="note"><b>Accepted by the baseline:</b> ${esc(r.accepted.reason)}${r.accepted.until ? ` (until ${esc(r.accepted.until)})` : ''}</p>`);
  const evidence = against.map(evidenceItem);
  if (supporting.length > 0) {
    const label = `${supporting.length} passing example${supporting.length === 1 ? '' : 's'}`;
    evidence.push(
      `<details class="evidence passing"><summary class="muted">${label}</summary><div class="evidence-body">${supporting.map(evidenceItem).join('')}</div></details>`,
    );
  }
  const counts = [
    `${r.counts.exchanges} exchange${r.counts.exchanges === 1 ? '' : 's'}`,
    `${r.counts.tests} test${r.counts.tests === 1 ? '' : 's'}`,
    `${r.counts.findings} against`,
  ];
  if (r.counts.clientFindings > 0) counts.push(`${r.counts.clientFindings} client finding${r.counts.clientFindings === 1 ? '' : 's'}`);
  const security = (r.counts.security ?? 0) > 0;
  if (security) counts.push(`${r.counts.security} security finding${r.counts.security === 1 ? '' : 's'}`);
  return [
    `<tr class="req ${esc(r.status)}" id="req-${esc(r.id)}" data-status="${esc(r.status)}" data-level="${esc(r.level)}" data-security="${security}" data-operations="${esc(r.operations.join(' '))}">`,
    `<td class="status">${chip(r.status)}</td>`,
    `<td class="req-id"><div class="id">${esc(r.id)}</div><span class="level ${esc(r.level)}">${esc(r.level)}</span>${security ? ' <span class="security" title="The target carried out a request it should have refused">security</span>' : ''} ${r.operations.map((op) => `<span class="op">${esc(op === 'all' ? 'every operation' : op)}</span>`).join('')}</td>`,
    `<td><div class="title">${esc(r.title)}</div><blockquote>${quoteHtml(r.quote)}</blockquote>${notes.join('')}${evidence.join('')}${reproduceBlock(r, target)}</td>`,
    `<td class="counts">${counts.map(esc).join('<br>')}</td>`,
    '</tr>',
  ].join('');
}

/** Sections of the matrix: every operation, several operations, then one per operation. */
function matrixSections(report: Report): string {
  const forAll = report.requirements.filter((r) => r.operations.includes('all'));
  const several = report.requirements.filter((r) => !r.operations.includes('all') && r.operations.length > 1);
  const single = report.requirements.filter((r) => !r.operations.includes('all') && r.operations.length === 1);
  const sections = [
    { key: 'all', title: 'Every operation', route: 'whichever operation an exchange was', rows: forAll },
    { key: 'several', title: 'Several operations', route: 'requirements named by more than one operation', rows: several },
    ...OPERATIONS.map((op) => ({ key: op.id, title: op.title, route: op.route, rows: single.filter((r) => r.operations[0] === op.id) })),
  ];
  const known = new Set<string>(OPERATIONS.map((o) => o.id));
  const unknown = single.filter((r) => !known.has(r.operations[0]!));
  if (unknown.length > 0) sections.push({ key: 'other', title: 'Other', route: '', rows: unknown });
  return sections
    .filter((s) => s.rows.length > 0)
    .map(
      (s) => `<section class="group" data-group="${esc(s.key)}">
<h2>${esc(s.title)}<span class="route">${esc(s.route)}</span></h2>
<div class="panel"><table class="matrix"><thead><tr><th>Status</th><th>Requirement</th><th>The document says · evidence</th><th>Examined by</th></tr></thead><tbody>
${s.rows.map((r) => requirementRow(r, report.target)).join('\n')}
</tbody></table></div>
</section>`,
    )
    .join('\n');
}

function summaryBar(summary: Summary): string {
  const total = STATUS_ORDER.reduce((n, s) => n + summary[s], 0) || 1;
  let x = 0;
  const rects = (['pass', 'warn', 'fail', 'skip'] as const).map((status) => {
    const width = (summary[status] / total) * 160;
    const rect =
      width > 0
        ? `<rect class="${status}" x="${x.toFixed(2)}" y="0" width="${width.toFixed(2)}" height="10"><title>${summary[status]} ${status}</title></rect>`
        : '';
    x += width;
    return rect;
  });
  return `<svg class="bar" viewBox="0 0 160 10" preserveAspectRatio="none" xmlns="http://www.w3.org/2000/svg">${rects.join('')}</svg>`;
}

function operationsTable(report: Report): string {
  const traffic = report.traffic;
  const rows = report.operations.map((group) => {
    const route = OPERATIONS.find((o) => o.id === group.operation)?.route;
    const statuses = traffic ? exchangesByStatus(traffic, group.operation) : [];
    const trafficCell = traffic
      ? `<td>${statuses.length > 0 ? statuses.map(([status, n]) => `<span class="code">${esc(status)} × ${n}</span>`).join('') : '<span class="muted">none</span>'}</td>`
      : '';
    const { pass, fail, warn, skip } = group.summary;
    return `<tr><td><div class="title">${esc(group.title)}</div>${route ? `<span class="muted code">${esc(route)}</span>` : '<span class="muted">general rules and rate limits</span>'}</td><td>${chip(group.status)}</td><td>${summaryBar(group.summary)}</td><td class="num">${pass}</td><td class="num">${fail}</td><td class="num">${warn}</td><td class="num">${skip}</td>${trafficCell}</tr>`;
  });
  return `<div class="panel"><table><thead><tr><th>Operation</th><th>Status</th><th>Requirements</th><th class="num">Pass</th><th class="num">Fail</th><th class="num">Warn</th><th class="num">Skip</th>${traffic ? '<th>Exchanges by status code</th>' : ''}</tr></thead><tbody>${rows.join('')}</tbody></table></div>`;
}

function filters(report: Report): string {
  const toggles = STATUS_ORDER.map(
    (s) =>
      `<label class="toggle"><input type="checkbox" name="status" value="${s}" checked><span class="${s}">${STATUS_LABEL[s]} ${report.summary[s]}</span></label>`,
  ).join('');
  const operations = report.operations.map((o) => `<option value="${esc(o.operation)}">${esc(o.title)}</option>`).join('');
  return `<form id="filters" class="filters panel" role="search" aria-label="Filter requirements">
<fieldset><legend class="flabel">Status</legend>${toggles}</fieldset>
<label><span class="flabel">Level</span><select id="filter-level"><option value="">all levels</option><option value="must">must</option><option value="should">should</option></select></label>
<label><span class="flabel">Operation</span><select id="filter-operation"><option value="">every operation</option>${operations}</select></label>
<label class="toggle"><input type="checkbox" id="filter-security"><span>Security findings only (${report.requirements.filter((r) => (r.counts.security ?? 0) > 0).length})</span></label>
<input type="search" id="filter-search" placeholder="Search id, text, evidence" aria-label="Search">
<button type="button" class="reset" id="filter-reset">Reset</button>
<span class="count" id="filter-count" aria-live="polite">${report.requirements.length} of ${report.requirements.length} shown</span>
</form>`;
}

function testsSection(tests: TestResult[]): string {
  if (tests.length === 0) return '';
  const count = (s: Status) => tests.filter((t) => t.status === s).length;
  const rows = [...tests]
    .sort((a, b) => STATUS_ORDER.indexOf(a.status) - STATUS_ORDER.indexOf(b.status))
    .map(
      (t) =>
        `<tr><td>${chip(t.status)}</td><td><div>${esc(t.name)}</div><span class="muted">${esc(t.file ?? t.source)}</span>${t.message ? `<pre class="message ${esc(t.status)}">${esc(t.message)}</pre>` : ''}${t.counterexample ? `<pre>${esc(t.counterexample)}</pre>` : ''}</td><td>${t.requirements.map((id) => `<a class="code" href="#req-${esc(id)}">${esc(id)}</a>`).join('')}</td><td class="num nowrap">${t.durationMs === undefined ? '' : `${Math.round(t.durationMs)} ms`}</td></tr>`,
    );
  return `<details class="fold"${count('fail') + count('warn') > 0 ? ' open' : ''}><summary>Suite tests: ${tests.length} (${count('pass')} passed, ${count('fail')} failed, ${count('warn')} warned, ${count('skip')} skipped)</summary>
<div class="panel"><table><thead><tr><th>Status</th><th>Test</th><th>Requirements</th><th class="num">Time</th></tr></thead><tbody>${rows.join('')}</tbody></table></div></details>`;
}

function clientFindingsSection(report: Report): string {
  if (report.clientFindings.length === 0) return '';
  const rows = report.clientFindings.map(
    (f) =>
      `<tr><td class="id">${esc(f.requirement)}</td><td class="num">${f.count}</td><td>${esc(f.message)}${f.example ? `<details class="evidence"><summary>Example</summary><div class="evidence-body">${exchangeBlock(f.example)}</div></details>` : ''}</td></tr>`,
  );
  return `<h2>Client findings <span class="route">what callers sent; never part of the verdict</span></h2>
<div class="panel"><table><thead><tr><th>Requirement</th><th class="num">Count</th><th>Example</th></tr></thead><tbody>${rows.join('')}</tbody></table></div>`;
}

function sourcesSection(report: Report): string {
  const rows = report.sources.map(
    (s) =>
      `<tr><td class="id">${esc(s.name)}</td><td>${esc(s.kind)}</td><td>${esc(s.target ?? '')}</td><td>${esc(s.startedAt ?? '')}</td><td>${esc(s.finishedAt ?? '')}</td><td>${esc(s.origin ?? '')}</td></tr>`,
  );
  return `<details class="fold"><summary>Sources (${report.sources.length})</summary><div class="panel"><table><thead><tr><th>Name</th><th>Kind</th><th>Target</th><th>Started</th><th>Finished</th><th>Read from</th></tr></thead><tbody>${rows.join('')}</tbody></table></div></details>`;
}

/** Every operation the traffic called, with its exchanges by status and the requirements judged on it. */
function operationsCalledSection(rows: readonly OperationTraffic[]): string {
  const body = rows.map(
    (row) =>
      `<tr><td><span class="code">${esc(row.name)}</span>${row.operation === 'otherOperation' ? '' : ' <span class="muted">(the document\'s)</span>'}</td><td class="num">${row.exchanges}</td><td>${Object.entries(
        row.byStatus,
      )
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([status, n]) => `<span class="code">${esc(status)} × ${n}</span>`)
        .join(' ')}</td><td class="muted">${row.requirements.map(esc).join(', ') || 'none'}</td></tr>`,
  );
  return `<h2>Operations called <span class="route">${esc(operationsCalled(rows))}</span></h2>
<div class="panel"><table class="operations-called"><thead><tr><th>Operation</th><th class="num">Exchanges</th><th>By status code</th><th>Requirements judged</th></tr></thead><tbody>${body.join('')}</tbody></table></div>`;
}

export function renderHtml(report: Report): string {
  const { summary } = report;
  const conclusion = conclusionOf(report);
  const verdict = conclusion === 'interrupted' ? 'Interrupted: no verdict' : conclusion === 'conforming' ? 'Conforming' : 'Not conforming';
  const meta: Array<[string, string]> = [];
  if (report.target) meta.push(['Target', report.target]);
  meta.push(['Sources', report.sources.map((s) => s.name).join(', ')]);
  meta.push(['Fail on', report.failOn]);
  meta.push(['Period', `${report.startedAt} – ${report.finishedAt}`]);
  meta.push(['Tool', `${report.tool.name} ${report.tool.version}`]);
  const cards = STATUS_ORDER.map(
    (s) =>
      `<button type="button" class="card ${s}" data-status="${s}" title="Show only ${s}"><div class="n">${summary[s]}</div><div class="label">${STATUS_LABEL[s]}</div></button>`,
  ).join('');
  const facts: string[] = [];
  if (conclusion === 'interrupted') facts.push(`interrupted (${interruptedSources(report).join(', ')}): what it did not reach is skipped, not run`);
  facts.push(`${report.requirements.length} requirements`);
  if (report.tests.length > 0) facts.push(`${report.tests.length} suite tests`);
  if (report.traffic)
    facts.push(`${report.traffic.exchanges} exchanges (${report.traffic.notCovered} not operation calls: outside the API base path, or CORS preflights)`);
  for (const { reason, count, exchanges } of report.traffic?.notJudged ?? [])
    facts.push(`not judged: ${count} × ${reason}${exchanges.length > 0 ? ` (exchanges ${exchanges.join(', ')}${count > exchanges.length ? ', …' : ''})` : ''}`);
  if (report.baseline)
    facts.push(
      `baseline ${report.baseline.source}: ${report.baseline.accepted.length} failure(s) accepted, ${report.baseline.fixed.length} fixed, ${report.baseline.expired.length} expired`,
    );
  if (report.clientFindings.length > 0) facts.push(`${report.clientFindings.reduce((n, f) => n + f.count, 0)} client findings`);
  const chart = report.traffic ? renderRateLimitChart(report.traffic.rateLimitSeries) : '';
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${esc(CONTENT_SECURITY_POLICY)}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<link rel="icon" href="data:,">
<title>${esc(`tmi-conform ${report.kind} report: ${verdict.toLowerCase()}${report.target ? ` · ${report.target}` : ''}`)}</title>
<style>${STYLE}</style>
</head>
<body>
<header class="top">
<div class="row"><h1>tmi-conform <span class="kind">${esc(report.kind)} report</span></h1><div class="verdict ${conclusion === 'interrupted' ? 'interrupted' : conclusion === 'conforming' ? 'ok' : 'bad'}">${verdict}</div></div>
<dl class="meta">${meta.map(([k, v]) => `<div><dt>${esc(k)}</dt><dd>${esc(v)}</dd></div>`).join('')}</dl>
</header>
<main>
<section class="cards" aria-label="Requirements by status">${cards}</section>
<p class="facts">${facts.map(esc).join(' · ')}. A failed <b>must</b> fails the run; a <b>should</b> is inferred and only warns${report.failOn === 'should' ? ' (here it fails too: fail-on should)' : ''}.</p>
<h2>Operations</h2>
${operationsTable(report)}
${report.traffic?.operations ? operationsCalledSection(report.traffic.operations) : ''}
${coverageHtml(report)}
${chart ? `<h2>Rate limits <span class="route">X-RateLimit-* headers over time</span></h2>\n<div class="panel">${chart}</div>` : ''}
${filters(report)}
<p class="empty panel" id="filter-empty" hidden>No requirement matches these filters.</p>
${matrixSections(report)}
${testsSection(report.tests)}
${clientFindingsSection(report)}
${sourcesSection(report)}
</main>
<footer>Generated by ${esc(report.tool.name)} ${esc(report.tool.version)} at ${esc(report.finishedAt)}. report.json holds the complete model; junit.xml and report.md summarise it.</footer>
<script>${SCRIPT}</script>
</body>
</html>
`;
}
