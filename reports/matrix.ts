// Many targets, one view: the requirement × target table of several reports (one CI job per
// implementation or tenant), each cell the requirement's status in that target's report and, in
// HTML, a link to it there. Each column is named by the label the user gave its report, else by
// its target's host. The HTML links only inside the matrix's own folder (each target's
// report.html is copied there, into a folder named after the column), so the folder can be
// uploaded alone.
import type { Report, Status } from './model.ts';
import { INTERRUPTED_VERDICT } from './status.ts';
import { coverageCell } from './coverage.ts';

export interface MatrixTarget {
  /** Its column's name: the label given, else the report's target host, else its source. */
  name: string;
  /** The report.json it was read from, as the user named it. */
  origin: string;
  /** The folder of the matrix that holds a copy of its report.html: a file-name-safe form of `name`. */
  folder: string;
  passed: boolean;
  /** Its report was interrupted: no verdict. */
  interrupted?: true;
  failOn: Report['failOn'];
  /** What its report examined (reports/coverage.ts coverageCell); absent for a report of an earlier version. */
  coverage?: string;
}

export interface MatrixRow {
  requirement: string;
  level: 'must' | 'should';
  title: string;
  /** One per target, in column order; undefined: that report does not have the requirement (another kit version). */
  cells: Array<{ status: Status; accepted?: boolean } | undefined>;
}

export interface Matrix {
  targets: MatrixTarget[];
  rows: MatrixRow[];
}

/** The host (and port) of a target URL; the text itself when it is no URL. */
function hostOf(target: string): string {
  try {
    return new URL(target).host || target;
  } catch {
    return target;
  }
}

/** A column's default name: its target's host, else the sources that made the report. */
const defaultName = (report: Report): string => (report.target !== undefined ? hostOf(report.target) : report.sources.map((s) => s.name).join(', '));

/** A folder name for a column: letters, digits, '.', '-' and '_' only. */
const folderOf = (name: string): string => name.replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^[.-]+|-+$/g, '') || 'target';

/** The matrix of `reports` (`origin`: where each was read from; `label`: its column's name), requirements in the first report's order. */
export function buildMatrix(reports: Array<{ report: Report; origin: string; label?: string }>): Matrix {
  const names = reports.map(({ report, label }) => label ?? defaultName(report));
  // Two columns of one name (two runs against the same target) are told apart by where they came from.
  const unique = names.map((name, i) => (names.filter((n) => n === name).length > 1 ? `${name} (${reports[i]!.origin})` : name));
  const folders: string[] = [];
  for (const name of unique) {
    const base = folderOf(name);
    let folder = base;
    for (let n = 2; folders.includes(folder); n++) folder = `${base}-${n}`;
    folders.push(folder);
  }
  const targets = reports.map(
    ({ report, origin }, i): MatrixTarget => ({
      name: unique[i]!,
      origin,
      folder: folders[i]!,
      passed: report.passed,
      ...(report.interrupted === true ? { interrupted: true as const } : {}),
      failOn: report.failOn,
      ...(report.coverage ? { coverage: coverageCell(report.coverage) } : {}),
    }),
  );
  const order: string[] = [];
  const facts = new Map<string, { level: 'must' | 'should'; title: string }>();
  for (const { report } of reports) {
    for (const r of report.requirements) {
      if (facts.has(r.id)) continue;
      facts.set(r.id, { level: r.level, title: r.title });
      order.push(r.id);
    }
  }
  const byReport = reports.map(({ report }) => new Map(report.requirements.map((r) => [r.id, r])));
  const rows = order.map((id) => ({
    requirement: id,
    ...facts.get(id)!,
    cells: byReport.map((requirements) => {
      const r = requirements.get(id);
      return r && { status: r.status, ...(r.accepted ? { accepted: true } : {}) };
    }),
  }));
  return { targets, rows };
}

const ICON: Record<Status, string> = { pass: '✅', fail: '❌', warn: '⚠️', skip: '➖' };
const cellText = (cell: MatrixRow['cells'][number], icons: boolean): string => {
  if (!cell) return icons ? '·' : 'absent';
  const word = icons ? ICON[cell.status] : cell.status;
  return cell.accepted ? `${word} (accepted)` : word;
};

/** Markdown for a pull-request comment: one row per requirement, the verdicts on top. */
export function renderMatrixMarkdown(matrix: Matrix): string {
  const escapeCell = (text: string) => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');
  const out = [
    '## tmi-conform: requirements × targets',
    '',
    ...matrix.targets.map(
      (t) => `- ${escapeCell(t.name)}: ${t.interrupted ? `⏹ ${INTERRUPTED_VERDICT}` : t.passed ? '✅ conforming' : `❌ NOT conforming (fail-on ${t.failOn})`}`,
    ),
    '',
    `| requirement | ${matrix.targets.map((t) => escapeCell(t.name)).join(' | ')} |`,
    `|---|${matrix.targets.map(() => ':---:').join('|')}|`,
  ];
  out.push(coverageRowMarkdown(matrix));
  for (const row of matrix.rows) out.push(`| \`${row.requirement}\` ${row.level} | ${row.cells.map((c) => cellText(c, true)).join(' | ')} |`);
  out.push('', '✅ pass · ❌ fail · ⚠️ warn · ➖ not examined · · not in that report (another kit version)');
  return `${out.join('\n')}\n`;
}

/** The console's table: the verdict of each target, then the requirements whose status is not the same pass everywhere. */
export function renderMatrixConsole(matrix: Matrix): string[] {
  const out = matrix.targets.map((t) => `${t.name}: ${t.interrupted ? INTERRUPTED_VERDICT : t.passed ? 'conforming' : 'NOT conforming'}`);
  const width = Math.max(...matrix.rows.map((r) => r.requirement.length));
  const columns = matrix.targets.map((t) => Math.max(8, t.name.length));
  const differing = matrix.rows.filter((r) => !r.cells.every((c) => c?.status === 'pass'));
  out.push(`${''.padEnd(width)}  ${matrix.targets.map((t, i) => t.name.padEnd(columns[i]!)).join(' ')}`);
  for (const row of differing) out.push(`${row.requirement.padEnd(width)}  ${row.cells.map((c, i) => cellText(c, false).padEnd(columns[i]!)).join(' ')}`);
  out.push(`${matrix.rows.length - differing.length} requirement(s) pass for every target`);
  for (const t of matrix.targets) out.push(`coverage ${t.name}: ${t.coverage ?? 'not in its report (an earlier version)'}`);
  return out;
}

/**
 * The HTML page: each cell links to the requirement in the copy of that target's report.html in
 * the matrix's folder (`linked`: the targets whose report.html was copied; the others get no link).
 */
export function renderMatrixHtml(matrix: Matrix, linked: ReadonlySet<string>): string {
  const esc = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
  const link = (t: MatrixTarget, text: string, anchor = '') =>
    linked.has(t.folder) ? `<a href="${esc(`${encodeURIComponent(t.folder)}/report.html${anchor}`)}">${text}</a>` : text;
  const head = matrix.targets
    .map(
      (t) =>
        `<th>${link(t, esc(t.name))}<div class="${t.interrupted ? 'skip' : t.passed ? 'pass' : 'fail'}">${t.interrupted ? INTERRUPTED_VERDICT : t.passed ? 'conforming' : 'NOT conforming'}</div></th>`,
    )
    .join('');
  const rows = matrix.rows
    .map((row) => {
      const cells = row.cells
        .map((c, i) =>
          c ? `<td class="${c.status}">${link(matrix.targets[i]!, esc(cellText(c, false)), `#req-${row.requirement}`)}</td>` : '<td class="absent">·</td>',
        )
        .join('');
      return `<tr><th scope="row"><code>${esc(row.requirement)}</code> <span class="muted">${row.level}</span><div class="muted">${esc(row.title)}</div></th>${cells}</tr>`;
    })
    .join('\n');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<title>tmi-conform: requirements × targets</title>
<style>body{font:14px system-ui,sans-serif;margin:24px;color:#1f2328}table{border-collapse:collapse}th,td{border:1px solid #d0d7de;padding:4px 8px;text-align:left;vertical-align:top}td{text-align:center}.pass{background:#dafbe1}.fail{background:#ffebe9}.warn{background:#fff8c5}.skip,.absent{background:#f6f8fa}.muted{color:#59636e;font-weight:normal}a{color:inherit}</style>
</head>
<body>
<h1>tmi-conform: requirements × targets</h1>
<table>
<thead><tr><th>Requirement</th>${head}</tr></thead>
<tbody>
${coverageRowHtml(matrix, esc)}
${rows}
</tbody>
</table>
</body>
</html>
`;
}

/** The coverage row: what each target's report examined. */
function coverageRowMarkdown(matrix: Matrix): string {
  return `| **coverage** | ${matrix.targets.map((t) => t.coverage ?? '·').join(' | ')} |`;
}

function coverageRowHtml(matrix: Matrix, esc: (text: string) => string): string {
  return `<tr class="coverage"><th scope="row">Coverage<div class="muted">what each report examined</div></th>${matrix.targets.map((t) => `<td>${esc(t.coverage ?? '·')}</td>`).join('')}</tr>`;
}
