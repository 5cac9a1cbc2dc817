// report.md: short enough for a CI job summary. The verdict and a summary table, then every
// failed or warned requirement with the document's words and the evidence behind it.
import type { Report, RequirementResult } from './model.ts';

const ICON = { fail: '❌', warn: '⚠️', pass: '✅', skip: '⏭️' } as const;
/** A CI job summary is limited (1 MiB on GitHub); stay far below. */
const MAX_FINDINGS_LISTED = 40;

const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');

function section(r: RequirementResult): string {
  const lines = [`### ${ICON[r.status]} ${r.id} (${r.level}): ${r.title}`, '', `> ${r.quote}`, ''];
  if (r.inferred) lines.push(`Inferred: ${r.inferred}`, '');
  for (const e of r.evidence.filter((x) => x.status === r.status).slice(0, 3)) {
    const where = e.test ? `test "${e.test}"` : e.exchange ? `\`${e.exchange.request.method} ${e.exchange.request.url}\` → ${e.exchange.response?.status ?? e.exchange.error}` : e.source;
    lines.push(`- ${where}: ${(e.message ?? '').split('\n')[0]}`);
    if (e.counterexample) lines.push(`  - counterexample: \`${e.counterexample.slice(0, 300)}\``);
  }
  lines.push('');
  return lines.join('\n');
}

export function renderMarkdown(report: Report): string {
  const { summary } = report;
  const verdict = report.passed ? '✅ conforming' : `❌ NOT conforming (fail-on ${report.failOn})`;
  const out = [
    `## tmi-conform ${report.kind}: ${verdict}`,
    '',
    report.target ? `Target: \`${report.target}\` · ` : '',
    `tmi-conform ${report.tool.version} · ${report.finishedAt}`,
    '',
    '| pass | fail | warn | skip |',
    '|---:|---:|---:|---:|',
    `| ${summary.pass} | ${summary.fail} | ${summary.warn} | ${summary.skip} |`,
    '',
  ];
  if (report.traffic) {
    out.push(`Traffic: ${report.traffic.exchanges} exchanges, ${report.traffic.notCovered} not covered by the document.`, '');
  }
  const problems = report.requirements.filter((r) => r.status === 'fail' || r.status === 'warn').sort((a, b) => (a.status === b.status ? 0 : a.status === 'fail' ? -1 : 1));
  if (problems.length > 0) {
    out.push('### Requirements not met', '');
    for (const r of problems.slice(0, MAX_FINDINGS_LISTED)) out.push(section(r));
    if (problems.length > MAX_FINDINGS_LISTED) out.push(`… and ${problems.length - MAX_FINDINGS_LISTED} more in report.json.`, '');
  }
  const skipped = report.requirements.filter((r) => r.status === 'skip');
  if (skipped.length > 0) {
    out.push('<details><summary>Skipped requirements</summary>', '', '| requirement | reason |', '|---|---|');
    for (const r of skipped) out.push(`| ${r.id} | ${cell(r.reason ?? '')} |`);
    out.push('', '</details>', '');
  }
  if (report.clientFindings.length > 0) {
    out.push('### Client findings (not part of the verdict)', '', '| requirement | count | example |', '|---|---:|---|');
    for (const f of report.clientFindings.slice(0, 20)) out.push(`| ${f.requirement} | ${f.count} | ${cell(f.message)} |`);
    out.push('');
  }
  return out.filter((line, i, all) => !(line === '' && all[i - 1] === '')).join('\n') + '\n';
}
