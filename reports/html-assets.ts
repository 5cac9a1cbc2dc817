// The stylesheet and the filter script of report.html, inlined into the file. The page's
// Content-Security-Policy allows exactly these two by hash and nothing else: no request can
// leave the file, and no script but this one can run, whatever a report contains.
import { createHash } from 'node:crypto';
import { COVERAGE_STYLE } from './coverage-render.ts';

export const STYLE =
  `
:root{color-scheme:light dark;--pass:#15803d;--pass-bg:#dcfce7;--fail:#b91c1c;--fail-bg:#fee2e2;--warn:#b45309;--warn-bg:#fef3c7;--skip:#475569;--skip-bg:#e2e8f0;
--ink:#0f172a;--muted:#5b6b80;--line:#e2e8f0;--panel:#fff;--page:#f4f6f9;--accent:#1d4ed8;--mono:ui-monospace,SFMono-Regular,Menlo,Consolas,"Liberation Mono",monospace;
--top:#0f172a;--top-ink:#e2e8f0;--top-muted:#94a3b8;--top-strong:#fff;--soft:#f8fafc;--code-bg:#f1f5f9;--code-ink:#334155;--field:#fff;--field-line:#cbd5e1;
--row-fail:#fffafa;--row-warn:#fffdf5;--msg-fail-bg:#fff7f7;--msg-fail:#7f1d1d;--msg-fail-line:#fecaca;--msg-warn-bg:#fffbeb;--msg-warn:#78350f;--msg-warn-line:#fde68a;
--pre-bg:#0f172a;--pre-ink:#e2e8f0;--security-bg:#7f1d1d;--security:#fff;--neutral-bg:#334155;--neutral:#f1f5f9;--mark-429:#dc2626}
@media (prefers-color-scheme:dark){:root{--pass:#4ade80;--pass-bg:#052e16;--fail:#fca5a5;--fail-bg:#450a0a;--warn:#fcd34d;--warn-bg:#422006;--skip:#cbd5e1;--skip-bg:#334155;
--ink:#e2e8f0;--muted:#94a3b8;--line:#334155;--panel:#111827;--page:#0b1120;--accent:#93c5fd;
--top:#020617;--soft:#1e293b;--code-bg:#1e293b;--code-ink:#cbd5e1;--field:#0f172a;--field-line:#475569;
--row-fail:#1f1315;--row-warn:#1f1a12;--msg-fail-bg:#2a1215;--msg-fail:#fecaca;--msg-fail-line:#7f1d1d;--msg-warn-bg:#2a2110;--msg-warn:#fde68a;--msg-warn-line:#78350f;
--pre-bg:#020617;--pre-ink:#e2e8f0;--security-bg:#fecaca;--security:#7f1d1d;--neutral-bg:#334155;--neutral:#f1f5f9;--mark-429:#f87171}}
*{box-sizing:border-box}
[hidden]{display:none!important}
html{background:var(--page)}
body{margin:0;font:14px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;color:var(--ink)}
header.top{background:var(--top);color:var(--top-ink);padding:20px 32px 18px}
header.top .row{display:flex;align-items:center;gap:16px;flex-wrap:wrap}
header.top h1{font-size:20px;font-weight:600;margin:0;color:var(--top-strong);letter-spacing:.2px}
header.top h1 .kind{font-weight:400;color:var(--top-muted)}
.verdict{margin-left:auto;font-weight:700;font-size:13px;letter-spacing:.4px;text-transform:uppercase;padding:6px 14px;border-radius:999px}
.verdict.ok{background:var(--pass-bg);color:var(--pass)}
.verdict.bad{background:var(--fail-bg);color:var(--fail)}
.verdict.none{background:var(--neutral-bg);color:var(--neutral)}
.verdict.interrupted{background:var(--skip-bg);color:var(--skip)}
dl.meta{display:flex;flex-wrap:wrap;gap:6px 28px;margin:12px 0 0;font-size:13px}
dl.meta div{display:flex;gap:6px}
dl.meta dt{color:var(--top-muted)}
dl.meta dd{margin:0;color:var(--top-ink);word-break:break-all}
main{max-width:1280px;margin:0 auto;padding:24px 32px 48px}
h2{font-size:17px;margin:32px 0 12px}
h2 .route,code,pre,.id{font-family:var(--mono)}
h2 .route{font-size:12px;font-weight:400;color:var(--muted);margin-left:8px}
.panel{background:var(--panel);border:1px solid var(--line);border-radius:10px}
.cards{display:grid;grid-template-columns:repeat(4,1fr);gap:12px}
.card{display:block;width:100%;text-align:left;font:inherit;cursor:pointer;background:var(--panel);border:1px solid var(--line);border-left:5px solid;border-radius:10px;padding:14px 16px;color:inherit}
.card:hover{box-shadow:0 1px 6px rgba(15,23,42,.12)}
.card .n{font-size:28px;font-weight:700;line-height:1.1}
.card .label{color:var(--muted);font-size:12px;text-transform:uppercase;letter-spacing:.5px}
.card.pass{border-left-color:var(--pass)}.card.pass .n{color:var(--pass)}
.card.fail{border-left-color:var(--fail)}.card.fail .n{color:var(--fail)}
.card.warn{border-left-color:var(--warn)}.card.warn .n{color:var(--warn)}
.card.skip{border-left-color:var(--skip)}.card.skip .n{color:var(--skip)}
.facts{color:var(--muted);margin:10px 2px 0;font-size:13px}
table{border-collapse:collapse;width:100%}
th{text-align:left;font-size:12px;text-transform:uppercase;letter-spacing:.4px;color:var(--muted);font-weight:600;padding:10px 12px;border-bottom:1px solid var(--line);background:var(--soft)}
td{padding:10px 12px;border-bottom:1px solid var(--line);vertical-align:top}
tr:last-child td{border-bottom:0}
.panel table{border-radius:10px;overflow:hidden}
.num{text-align:right;font-variant-numeric:tabular-nums}
.chip{display:inline-block;font-size:11px;font-weight:700;text-transform:uppercase;letter-spacing:.4px;padding:2px 8px;border-radius:999px;white-space:nowrap}
.chip.pass{background:var(--pass-bg);color:var(--pass)}.chip.fail{background:var(--fail-bg);color:var(--fail)}
.chip.warn{background:var(--warn-bg);color:var(--warn)}.chip.skip{background:var(--skip-bg);color:var(--skip)}
.level{display:inline-block;font-size:11px;font-weight:600;padding:1px 6px;border-radius:4px;border:1px solid var(--line);color:var(--muted)}
.level.must{border-color:var(--muted);color:var(--ink)}
.security{display:inline-block;font-size:11px;font-weight:700;padding:1px 6px;border-radius:4px;background:var(--security-bg);color:var(--security)}
.op{display:inline-block;font-size:11px;color:var(--code-ink);background:var(--code-bg);border-radius:4px;padding:1px 6px;margin:2px 4px 0 0}
.nowrap{white-space:nowrap}
a.code{color:var(--accent);text-decoration:none}
a.code:hover{text-decoration:underline}
.code{display:inline-block;white-space:nowrap;font-family:var(--mono);font-size:12px;background:var(--code-bg);border-radius:4px;padding:1px 6px;margin:1px 4px 1px 0}
.bar{display:block;width:160px;height:10px;border-radius:5px;overflow:hidden}
.bar .pass{fill:var(--pass)}.bar .fail{fill:var(--fail)}.bar .warn{fill:#f59e0b}.bar .skip{fill:var(--field-line)}
.filters{position:sticky;top:0;z-index:5;display:flex;flex-wrap:wrap;align-items:center;gap:10px 14px;padding:12px 16px;margin-top:28px;box-shadow:0 2px 8px rgba(15,23,42,.06)}
.filters fieldset{border:0;margin:0;padding:0;display:flex;gap:6px;align-items:center}
.filters label{display:flex;align-items:center;gap:6px}
.flabel{float:left;font-size:11px;font-weight:600;color:var(--muted);margin-right:4px;text-transform:uppercase;letter-spacing:.4px}
.toggle{position:relative}
.toggle input{position:absolute;opacity:0;width:1px;height:1px}
.toggle span{display:inline-block;cursor:pointer;user-select:none;font-size:12px;font-weight:600;padding:4px 10px;border-radius:999px;border:1px solid var(--line);color:var(--muted);background:var(--field)}
.toggle input:checked+span.pass{background:var(--pass-bg);color:var(--pass);border-color:transparent}
.toggle input:checked+span.fail{background:var(--fail-bg);color:var(--fail);border-color:transparent}
.toggle input:checked+span.warn{background:var(--warn-bg);color:var(--warn);border-color:transparent}
.toggle input:checked+span.skip{background:var(--skip-bg);color:var(--skip);border-color:transparent}
.toggle input:focus-visible+span{outline:2px solid var(--accent);outline-offset:1px}
select,input[type=search],button.reset{font:inherit;font-size:13px;padding:4px 8px;border:1px solid var(--field-line);border-radius:6px;background:var(--field);color:var(--ink)}
input[type=search]{width:170px}
select{max-width:200px}
button.reset{cursor:pointer}
.count{margin-left:auto;color:var(--muted);font-size:13px}
section.group{margin-top:8px}
table.matrix td.status{width:72px}
table.matrix td.req-id{width:230px}
table.matrix td.counts{width:150px;color:var(--muted);font-size:12px}
tr.req td:first-child{border-left:4px solid transparent}
tr.req.fail td:first-child{border-left-color:var(--fail)}tr.req.warn td:first-child{border-left-color:#f59e0b}
tr.req.pass td:first-child{border-left-color:var(--pass)}tr.req.skip td:first-child{border-left-color:var(--field-line)}
tr.req.fail{background:var(--row-fail)}tr.req.warn{background:var(--row-warn)}
.id{font-size:12.5px;font-weight:600}
.title{font-weight:600}
blockquote{margin:6px 0 0;padding:2px 0 2px 10px;border-left:3px solid var(--field-line);color:var(--code-ink)}
blockquote code{font-size:12.5px;background:var(--code-bg);border-radius:3px;padding:0 3px}
.note{margin:6px 0 0;color:var(--muted);font-size:13px}
.note b{color:var(--code-ink);font-weight:600}
details.evidence{margin-top:8px;border:1px solid var(--line);border-radius:8px;background:var(--panel)}
details.evidence>summary{cursor:pointer;padding:6px 10px;font-size:13px;list-style-position:inside}
details.evidence>summary .where{font-family:var(--mono);font-size:12px}
details.evidence[open]>summary{border-bottom:1px solid var(--line)}
details.evidence.passing{border-style:dashed;background:transparent}
details.evidence.passing>.evidence-body{padding-top:0}
.evidence-body{padding:8px 10px 10px}
.evidence-body h4{margin:10px 0 4px;font-size:11px;text-transform:uppercase;letter-spacing:.4px;color:var(--muted)}
.exchange{display:grid;grid-template-columns:1fr 1fr;gap:10px}
pre{margin:0;padding:8px 10px;background:var(--pre-bg);color:var(--pre-ink);border:1px solid var(--line);border-radius:6px;font-size:12px;line-height:1.45;white-space:pre-wrap;word-break:break-word;max-height:360px;overflow:auto}
pre.message{background:var(--soft);color:var(--code-ink);border:1px solid var(--line)}
pre.message.fail{background:var(--msg-fail-bg);color:var(--msg-fail);border-color:var(--msg-fail-line)}
pre.message.warn{background:var(--msg-warn-bg);color:var(--msg-warn);border-color:var(--msg-warn-line)}
.muted{color:var(--muted)}
.empty{padding:24px;text-align:center;color:var(--muted)}
figure.rate-limits{margin:0;padding:14px 16px}
figure.rate-limits figcaption,figure.rate-limits .chart-title{font-size:13px;color:var(--muted);margin:4px 0}
svg.chart{display:block;width:100%;height:auto}
svg.chart .grid{stroke:var(--line);stroke-width:1}
svg.chart .tick{fill:var(--muted);font-size:11px;font-family:var(--mono)}
svg.chart .axis-label{fill:var(--muted);font-size:11px}
svg.chart path{fill:none;stroke-width:1.8;stroke-linejoin:round}
svg.chart path.limit{stroke-dasharray:6 4;stroke-width:1.2;opacity:.7}
svg.chart path.reset{stroke-width:1.4}
svg.chart .point-429{fill:var(--mark-429);stroke:var(--panel);stroke-width:1.5}
svg.chart .count-429{fill:var(--fail);font-size:12px;font-weight:700;font-family:var(--mono)}
svg.chart .pause rect{fill:var(--soft);stroke:var(--line);stroke-dasharray:3 3}
svg.chart .pause-label{fill:var(--muted);font-size:11px}
.dot-429{display:inline-block;width:9px;height:9px;border-radius:50%;background:var(--mark-429);vertical-align:middle}
ul.legend{list-style:none;display:flex;flex-wrap:wrap;gap:6px 20px;padding:0;margin:8px 0 0;font-size:13px}
.swatch{display:inline-block;width:18px;height:4px;border-radius:2px;margin-right:6px;vertical-align:middle}
.swatch[data-color="0"]{background:#2563eb}.swatch[data-color="1"]{background:#7c3aed}.swatch[data-color="2"]{background:#0891b2}
.swatch[data-color="3"]{background:#db2777}.swatch[data-color="4"]{background:#ea580c}.swatch[data-color="5"]{background:#65a30d}
details.fold>summary{cursor:pointer;font-size:17px;font-weight:600;margin:32px 0 12px}
footer{color:var(--muted);font-size:12px;text-align:center;padding:24px}
@media (max-width:900px){.cards{grid-template-columns:repeat(2,1fr)}.exchange{grid-template-columns:1fr}table.matrix td.req-id,table.matrix td.counts{width:auto}}
@media print{.filters{display:none}details.evidence{break-inside:avoid}}
` + COVERAGE_STYLE;

/** Filters the requirement matrix by status, level, operation, security findings and text; the cards pick one status. */
export const SCRIPT = `
(function () {
  var form = document.getElementById('filters');
  if (!form) return;
  var rows = Array.prototype.slice.call(document.querySelectorAll('tr.req'));
  var groups = Array.prototype.slice.call(document.querySelectorAll('section.group'));
  var statusBoxes = Array.prototype.slice.call(form.querySelectorAll('input[name="status"]'));
  var level = document.getElementById('filter-level');
  var operation = document.getElementById('filter-operation');
  var search = document.getElementById('filter-search');
  var security = document.getElementById('filter-security');
  var count = document.getElementById('filter-count');
  var empty = document.getElementById('filter-empty');
  function apply() {
    var statuses = {};
    statusBoxes.forEach(function (box) { if (box.checked) statuses[box.value] = true; });
    var text = search.value.trim().toLowerCase();
    var shown = 0;
    rows.forEach(function (row) {
      var ops = row.getAttribute('data-operations').split(' ');
      var visible = statuses[row.getAttribute('data-status')] === true &&
        (level.value === '' || row.getAttribute('data-level') === level.value) &&
        (!security.checked || row.getAttribute('data-security') === 'true') &&
        (operation.value === '' || ops.indexOf(operation.value) !== -1 || ops.indexOf('all') !== -1) &&
        (text === '' || row.textContent.toLowerCase().indexOf(text) !== -1);
      row.hidden = !visible;
      if (visible) shown++;
    });
    groups.forEach(function (group) { group.hidden = group.querySelector('tr.req:not([hidden])') === null; });
    count.textContent = shown + ' of ' + rows.length + ' shown';
    empty.hidden = shown !== 0;
  }
  form.addEventListener('input', apply);
  form.addEventListener('change', apply);
  form.addEventListener('submit', function (event) { event.preventDefault(); });
  document.getElementById('filter-reset').addEventListener('click', function () {
    statusBoxes.forEach(function (box) { box.checked = true; });
    level.value = ''; operation.value = ''; search.value = ''; security.checked = false;
    apply();
  });
  Array.prototype.slice.call(document.querySelectorAll('button.card')).forEach(function (card) {
    card.addEventListener('click', function () {
      var only = card.getAttribute('data-status');
      statusBoxes.forEach(function (box) { box.checked = box.value === only; });
      apply();
      form.scrollIntoView({ block: 'start' });
    });
  });
  apply();
})();
`;

const sha256 = (text: string) => `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;

/** Nothing may load; only the stylesheet and script above may apply. */
export const CONTENT_SECURITY_POLICY = `default-src 'none'; style-src ${sha256(STYLE)}; script-src ${sha256(SCRIPT)}; img-src data:; base-uri 'none'; form-action 'none'`;
