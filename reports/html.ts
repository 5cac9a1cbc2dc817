// report.html: one self-contained file (no external requests): the requirement matrix with
// the document's words, coloured by status.
import type { Report } from './model.ts';
import { escapeXml as esc } from './xml.ts';

export function renderHtml(report: Report): string {
  const rows = report.requirements
    .map(
      (r) => `<tr class="${r.status}"><td>${esc(r.status)}</td><td>${esc(r.id)}</td><td>${esc(r.level)}</td><td>${esc(r.title)}<blockquote>${esc(r.quote)}</blockquote>${r.reason ? `<p>${esc(r.reason)}</p>` : ''}${r.evidence
        .filter((e) => e.status === 'fail' || e.status === 'warn')
        .slice(0, 3)
        .map((e) => `<pre>${esc(e.message ?? '')}</pre>`)
        .join('')}</td></tr>`,
    )
    .join('\n');
  const { summary } = report;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>tmi-conform ${esc(report.kind)} report</title>
<style>
body{font:14px system-ui,sans-serif;margin:2rem;color:#222}table{border-collapse:collapse;width:100%}td{border-bottom:1px solid #ddd;padding:.4rem;vertical-align:top}
tr.fail td:first-child{background:#f8d0d0}tr.warn td:first-child{background:#fbeec0}tr.pass td:first-child{background:#d4f0d4}tr.skip td:first-child{background:#e8e8e8}
blockquote{margin:.3rem 0;color:#555;font-style:italic}pre{white-space:pre-wrap;background:#f6f6f6;padding:.3rem}
</style></head><body>
<h1>tmi-conform ${esc(report.kind)}: ${report.passed ? 'conforming' : 'NOT conforming'}</h1>
<p>${report.target ? `Target ${esc(report.target)} · ` : ''}pass ${summary.pass} · fail ${summary.fail} · warn ${summary.warn} · skip ${summary.skip}</p>
<table><thead><tr><th>status</th><th>id</th><th>level</th><th>requirement</th></tr></thead><tbody>
${rows}
</tbody></table></body></html>
`;
}
