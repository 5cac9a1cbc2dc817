// The coverage as report.md, report.html and junit.xml show it, read from report.json's `coverage`
// (reports/coverage.ts): the figures, the document's status codes per operation seen and not, the
// values reached, the user's description's operations and declared statuses (--openapi), and the
// requirement × operation table, greyed where nothing examined it.
import type { Coverage, CoverageCount, DescriptionCoverage, Report } from './model.ts';
import { COVERAGE_PARTS, type CoveragePart, countOf, fraction, coverageLine } from './coverage.ts';
import { descriptionName } from './description-coverage.ts';
import { OPERATIONS, statusOn } from './operations.ts';
import { escapeXml as esc } from './xml.ts';

/** One figure of a coverage: its part, its count and what it counts. */
export interface CoverageFigure extends CoverageCount {
  part: CoveragePart;
  text: string;
}

/** What each part's figure counts. */
const TEXT_OF = (c: Coverage): Record<CoveragePart, string> => ({
  document: `requirements (must ${c.document.must.examined}/${c.document.must.applicable}, should ${c.document.should.examined}/${c.document.should.applicable})`,
  responses: 'status codes the document names',
  values: 'enumeration values and limit edges',
  operations: "of the document's operations called",
  description: `operations of the description ${c.description ? descriptionName(c.description) : ''} exercised`,
  'description-responses': 'status codes the description declares, seen',
});

/** The figures of a coverage, each part it counts (the description's only with one): what every format and the live page show. */
export function coverageFigures(coverage: Coverage): CoverageFigure[] {
  const text = TEXT_OF(coverage);
  return COVERAGE_PARTS.flatMap((part) => {
    const count = countOf(coverage, part);
    return count ? [{ part, examined: count.examined, applicable: count.applicable, text: text[part] }] : [];
  });
}

/** Operations of a description report.md lists, at most (a CI job summary is short); report.html lists all. */
const DESCRIBED_LISTED = 30;

const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');

/** report.md's section: the figures, then what was not reached, each with why where the report knows. */
export function coverageMarkdown({ coverage }: Pick<Report, 'coverage'>): string[] {
  if (!coverage) return [];
  const out = [
    '### Coverage',
    '',
    '| part | examined |',
    '|---|---|',
    ...coverageFigures(coverage).map((f) => `| ${f.part} | ${fraction(f)} ${cell(f.text)} |`),
    '',
  ];
  if (coverage.descriptionsNotMerged)
    out.push(`The merged reports judged different OpenAPI descriptions (${coverage.descriptionsNotMerged.map(cell).join(', ')}): none is counted.`, '');
  if (coverage.responses.byOperation.length > 0) {
    out.push('| operation | status codes the document names |', '|---|---|');
    for (const o of coverage.responses.byOperation)
      out.push(`| ${cell(o.route)} | ${o.named.map((s) => `${s} ${o.seen.includes(s) ? '✓' : '✗'}`).join(' ')} |`);
    out.push('');
  }
  out.push('| operation | value | reached |', '|---|---|---|');
  for (const d of coverage.values.byName)
    out.push(`| ${d.operation} (${d.in}) | \`${d.name}\` | ${d.values.map((v) => `${cell(v)} ${d.reached.includes(v) ? '✓' : '✗'}`).join(' · ')} |`);
  out.push('');
  if (coverage.description) out.push(...describedMarkdown(coverage.description));
  for (const g of coverage.accepted ?? []) out.push(`- gap accepted by the baseline: ${cell(g.gap)}: ${cell(g.reason)}${g.until ? ` (until ${g.until})` : ''}`);
  if ((coverage.accepted ?? []).length > 0) out.push('');
  return out;
}

/** The description's operations, those least covered first, each with its declared statuses seen (✓) and not (✗). */
function describedMarkdown(description: DescriptionCoverage): string[] {
  const rows = [...description.byOperation].sort(
    (a, b) => Number(a.exercised) - Number(b.exercised) || a.seen.length - a.statuses.length - (b.seen.length - b.statuses.length),
  );
  const out = [`| operation of ${cell(descriptionName(description))} | exercised | status codes it declares |`, '|---|---|---|'];
  for (const o of rows.slice(0, DESCRIBED_LISTED))
    out.push(
      `| ${cell(o.operation)}${o.operationId !== undefined ? ` (${cell(o.operationId)})` : ''} | ${o.exercised ? '✓' : '✗'} | ${o.statuses.map((s) => `${cell(s)} ${o.seen.includes(s) ? '✓' : '✗'}`).join(' ') || 'none declared'} |`,
    );
  if (rows.length > DESCRIBED_LISTED) out.push(`| … and ${rows.length - DESCRIBED_LISTED} more operations (report.html lists all) | | |`);
  out.push('');
  return out;
}

/** report.md's and the job summary's first word on coverage: the console's line, under the verdict. */
export function coverageSummaryLine({ coverage }: Pick<Report, 'coverage'>): string[] {
  return coverage ? [`**Coverage**: ${cell(coverageLine(coverage).replace(/^coverage: /, ''))} (below: what was not reached).`, ''] : [];
}

/** junit.xml's properties of the requirements suite: each part's figure. */
export function coverageProperties({ coverage }: Pick<Report, 'coverage'>): Record<string, string> {
  if (!coverage) return {};
  return Object.fromEntries(coverageFigures(coverage).map((f) => [`coverage.${f.part}`, fraction(f)]));
}

/** Styles of the section, added to report.html's one stylesheet (allowed by its hash). */
export const COVERAGE_STYLE = `
.coverage .figures{display:grid;grid-template-columns:repeat(auto-fit,minmax(170px,1fr));gap:8px;margin:8px 0 12px}
.coverage .figure{padding:8px 12px}.coverage .figure .n{font-size:20px;font-weight:700}.coverage .figure .label{color:var(--muted);font-size:12px}
table.cov{border-collapse:collapse;margin:6px 0 14px;font-size:12.5px}
table.cov th,table.cov td{border:1px solid var(--line);padding:3px 8px;text-align:center}
table.cov th[scope=row]{text-align:left;font-weight:600}
table.cov td.seen{background:var(--pass-bg);color:var(--pass);font-weight:700}
table.cov td.unseen{background:var(--skip-bg);color:var(--skip)}
table.cov td.pass{background:var(--pass-bg);color:var(--pass)}table.cov td.fail{background:var(--fail-bg);color:var(--fail)}
table.cov td.warn{background:var(--warn-bg);color:var(--warn)}table.cov td.skip{background:var(--skip-bg);color:var(--skip)}
table.cov td.na{background:transparent;color:var(--muted)}
table.cov td.statuses{text-align:left}table.cov td.statuses span{display:inline-block;padding:0 5px;margin:1px;border-radius:3px}
table.cov td.statuses span.seen{background:var(--pass-bg);color:var(--pass);font-weight:700}table.cov td.statuses span.unseen{background:var(--skip-bg);color:var(--skip)}
`;

const OPERATION_COLUMNS = OPERATIONS.filter((o) => o.id !== 'otherOperation');
const mark = (seen: boolean) => `<td class="${seen ? 'seen' : 'unseen'}">${seen ? '✓' : '✗'}</td>`;

/** report.html's section: the figures, operation × status, each enumeration's values, requirement × operation. */
export function coverageHtml(report: Pick<Report, 'coverage' | 'requirements'>): string {
  const { coverage } = report;
  if (!coverage) return '';
  const figures = coverageFigures(coverage)
    .map((f) => `<div class="figure panel"><div class="n">${esc(fraction(f))}</div><div class="label">${esc(f.part)}: ${esc(f.text)}</div></div>`)
    .join('');
  return `<section class="coverage" id="coverage">
<h2>Coverage <span class="route">what this report examined of the document; grey: not examined</span></h2>
<div class="figures">${figures}</div>
${responsesTable(coverage)}
${valuesTable(coverage)}
${describedTable(coverage)}
${requirementsTable(report)}
${(coverage.accepted ?? []).map((g) => `<p class="muted">Gap accepted by the baseline: ${esc(g.gap)}: ${esc(g.reason)}${g.until ? ` (until ${esc(g.until)})` : ''}</p>`).join('\n')}
</section>`;
}

function responsesTable(coverage: Coverage): string {
  const statuses = [...new Set(coverage.responses.byOperation.flatMap((o) => o.named))].sort();
  if (statuses.length === 0) return '';
  const rows = coverage.responses.byOperation.map(
    (o) =>
      `<tr><th scope="row">${esc(o.route)}</th>${statuses.map((s) => (o.named.includes(s) ? mark(o.seen.includes(s)) : '<td class="na">·</td>')).join('')}</tr>`,
  );
  const notShown = OPERATION_COLUMNS.filter((op) => op.id !== 'getToken' && !coverage.responses.byOperation.some((o) => o.operation === op.id)).map((op) =>
    op.route.replace('/api/v2', ''),
  );
  return `<h3>Status codes the document names, per operation</h3>
<table class="cov"><thead><tr><th>Operation</th>${statuses.map((s) => `<th>${esc(s)}</th>`).join('')}</tr></thead><tbody>${rows.join('')}</tbody></table>
${notShown.length > 0 ? `<p class="muted">Status codes not shown in the document (none counted): ${esc(notShown.join(', '))}.</p>` : ''}`;
}

function valuesTable(coverage: Coverage): string {
  const rows = coverage.values.byName.map(
    (d) =>
      `<tr><th scope="row"><code>${esc(d.name)}</code> <span class="muted">${esc(d.operation)}, ${esc(d.in)}</span></th>${d.values.map((v) => `<td class="${d.reached.includes(v) ? 'seen' : 'unseen'}">${esc(v)}</td>`).join('')}</tr>`,
  );
  return `<h3>Enumeration values and limit edges reached</h3>
<table class="cov"><tbody>${rows.join('')}</tbody></table>`;
}

/** The description's operations (open when few), each with its declared statuses seen and not. */
function describedTable(coverage: Coverage): string {
  if (coverage.descriptionsNotMerged)
    return `<p class="muted">The merged reports judged different OpenAPI descriptions (${esc(coverage.descriptionsNotMerged.join(', '))}): none is counted.</p>`;
  const { description } = coverage;
  if (!description) return '';
  const rows = description.byOperation.map(
    (o) =>
      `<tr><th scope="row">${esc(o.operation)}${o.operationId !== undefined ? ` <span class="muted">${esc(o.operationId)}</span>` : ''}</th>${mark(o.exercised)}<td class="statuses">${o.statuses.map((s) => `<span class="${o.seen.includes(s) ? 'seen' : 'unseen'}">${esc(s)}</span>`).join(' ') || '<span class="muted">none declared</span>'}</td></tr>`,
  );
  return `<details${description.byOperation.length <= DESCRIBED_LISTED ? ' open' : ''}><summary>Operations of the description ${esc(descriptionName(description))}: exercised, and the status codes each declares seen</summary>
<table class="cov"><thead><tr><th>Operation</th><th>Exercised</th><th>Status codes declared</th></tr></thead><tbody>${rows.join('\n')}</tbody></table></details>`;
}

function requirementsTable({ requirements }: Pick<Report, 'requirements'>): string {
  const rows = requirements.map((r) => {
    const cells = OPERATION_COLUMNS.map((op) => {
      if (!r.operations.includes('all') && !r.operations.includes(op.id)) return '<td class="na">·</td>';
      const status = statusOn(r, r.operations.includes('all') ? 'all' : op.id);
      return `<td class="${esc(status)}" title="${esc(status === 'skip' ? (r.reason ?? 'not examined') : status)}">${esc(status === 'skip' ? 'not examined' : status)}</td>`;
    });
    return `<tr><th scope="row"><a href="#req-${esc(r.id)}">${esc(r.id)}</a> <span class="muted">${esc(r.level)}</span></th>${cells.join('')}</tr>`;
  });
  return `<details open><summary>Requirements × operations</summary>
<table class="cov"><thead><tr><th>Requirement</th>${OPERATION_COLUMNS.map((op) => `<th>${esc(op.route.replace('/api/v2', ''))}</th>`).join('')}</tr></thead><tbody>${rows.join('\n')}</tbody></table></details>`;
}
