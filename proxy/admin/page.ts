// The admin listener's page (/): self-contained (no CDN, nothing loaded from elsewhere), styled
// with report.html's own stylesheet (light and dark), with one script that follows /events
// (server-sent events): the verdict so far ("no traffic yet" before any), the findings grouped by
// requirement as they arrive, each group with its count and opening to its latest redacted
// exchange and curl line (/findings/N), the coverage's figures rising as traffic comes in (the
// report builder's, which the coverage gauges of /metrics read too), the operations named as the
// console names them, and the report's rate-limit chart (/rate-limits, drawn on the server by reports/rate-limit-chart.ts).
// The script builds the page with textContent only; the chart is the one markup inserted, made
// and escaped on the server. The login page asks for the admin token when there is one (the
// cookie it sets is not the token).
import { createHash } from 'node:crypto';
import { STYLE } from '../../reports/html-assets.ts';
import { escapeXml as esc } from '../../reports/xml.ts';

// The header is dark in both colour schemes: its own colours.
const PAGE_STYLE = `
.live{display:inline-block;font-size:12px;color:var(--top-muted)}
.live.down{color:#fca5a5}
details.finding{border-bottom:1px solid var(--line)}
details.finding:last-child{border-bottom:0}
details.finding>summary{cursor:pointer;padding:8px 12px}
details.finding>summary .times{font-weight:700;font-variant-numeric:tabular-nums;margin-right:4px}
details.finding>summary .message{display:block;margin:2px 0 0 18px}
details.finding .latest{display:block;margin:2px 0 0 18px;font-size:12px;color:var(--muted)}
details.finding .latest .code{margin-left:4px}
details.finding .body{padding:0 12px 12px 30px}
details.finding .body h4{margin:10px 0 4px;font-size:11px;text-transform:uppercase;letter-spacing:.4px;color:var(--muted)}
.coverage progress{display:block;width:100%;height:6px;margin:6px 0 4px;accent-color:var(--pass)}
form.login{max-width:420px;margin:60px auto;padding:20px}
form.login input{width:100%;box-sizing:border-box;font:inherit;padding:6px;margin:8px 0;background:var(--field);color:var(--ink);border:1px solid var(--field-line);border-radius:6px}
form.login button{font:inherit;padding:4px 12px;background:var(--field);color:var(--ink);border:1px solid var(--field-line);border-radius:6px}
`;

const SCRIPT = `
(() => {
  'use strict';
  const $ = (id) => document.getElementById(id);
  const el = (tag, cls, text) => {
    const node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined) node.textContent = text;
    return node;
  };
  let chartShown = -1;
  // One figure per part: examined of applicable, its share rounded down (as the reports and the gate count it).
  const showCoverage = (figures) => {
    const box = $('coverage');
    box.replaceChildren();
    for (const f of figures) {
      const share = f.applicable === 0 ? 100 : Math.floor((f.examined * 100) / f.applicable);
      const figure = el('div', 'figure panel');
      figure.dataset.part = f.part;
      const bar = el('progress');
      bar.max = Math.max(f.applicable, 1);
      bar.value = f.applicable === 0 ? 1 : f.examined;
      figure.append(el('div', 'n', f.examined + '/' + f.applicable + (f.applicable > 0 ? ' (' + share + ' %)' : '')), bar, el('div', 'label', f.part + ': ' + f.text));
      box.append(figure);
    }
    $('no-coverage').hidden = figures.length > 0;
  };
  const verdictOf = (s) => {
    if (s.counts.exchanges === 0) return ['No traffic yet', 'none'];
    if (Object.keys(s.counts.byOperation).length === 0) return ['Nothing judged yet', 'none'];
    return s.verdict.passed ? ['Conforming so far', 'ok'] : ['Not conforming so far', 'bad'];
  };
  const onStatus = (s) => {
    const [text, kind] = verdictOf(s);
    $('verdict').textContent = text;
    $('verdict').className = 'verdict ' + kind;
    $('status-line').textContent = s.counted;
    const rows = $('operations');
    rows.replaceChildren();
    for (const op of s.operations.rows) {
      const tr = el('tr');
      const name = el('td');
      name.append(el('span', 'code', op.name));
      tr.append(name, el('td', 'num', String(op.exchanges)), el('td', 'muted', op.statuses));
      rows.append(tr);
    }
    if (s.operations.more > 0) {
      const tr = el('tr');
      const more = el('td', 'muted', '… and ' + s.operations.more + ' more operations in the reports');
      more.colSpan = 3;
      tr.append(more);
      rows.append(tr);
    }
    $('no-operations').hidden = s.operations.rows.length > 0;
    showCoverage(s.coverage || []);
    if (s.chartVersion !== chartShown) {
      chartShown = s.chartVersion;
      fetch('rate-limits', { credentials: 'same-origin' }).then((r) => (r.ok ? r.text() : '')).then((html) => {
        $('chart').innerHTML = html;
      });
    }
  };
  // One group per requirement and subject: its count, its latest finding, opening to that exchange.
  const groups = new Map();
  const load = (group) => {
    const f = group.latest;
    group.loaded = f.n;
    fetch('findings/' + f.n, { credentials: 'same-origin' }).then((r) => (r.ok ? r.json() : null)).then((d) => {
      if (group.loaded !== f.n) return;
      if (!d) {
        group.body.replaceChildren(el('p', 'muted', 'No longer kept here: the journal and the reports have it.'));
        return;
      }
      group.body.replaceChildren(el('h4', '', 'Latest exchange, ' + f.at + ' (redacted, as in the reports)'), el('pre', '', JSON.stringify(d.exchange, null, 2)), el('h4', '', 'curl'), el('pre', '', d.curl));
    });
  };
  const groupOf = (key) => {
    let group = groups.get(key);
    if (group) return group;
    const item = el('details', 'finding');
    group = { item, summary: el('summary'), body: el('div', 'body'), loaded: 0, latest: undefined };
    item.append(group.summary, group.body);
    item.addEventListener('toggle', () => {
      if (item.open && group.loaded !== group.latest.n) load(group);
    });
    groups.set(key, group);
    return group;
  };
  const onFinding = (f) => {
    const group = groupOf(f.requirement + ' ' + f.subject);
    group.latest = f;
    const { item, summary } = group;
    item.dataset.requirement = f.requirement;
    item.dataset.count = String(f.count);
    summary.replaceChildren(el('span', 'times', f.count + ' ×'), ' ', el('span', 'id', f.requirement), ' ', el('span', 'level ' + f.level, f.level), ' ', el('span', 'muted', f.subject));
    if (f.securityCount > 0) summary.append(' ', el('span', 'security', 'security' + (f.securityCount > 1 ? ' × ' + f.securityCount : '')));
    summary.append(el('span', 'message', f.message));
    const latest = el('span', 'latest', 'latest ' + f.at);
    latest.append(el('span', 'code', f.method + ' ' + f.url + (f.status === undefined ? '' : ' → ' + f.status)));
    summary.append(latest);
    if (item.open) load(group);
    $('findings').prepend(item);
    $('no-findings').hidden = true;
    $('finding-count').textContent = String(Math.max(f.n, Number($('finding-count').textContent)));
    $('group-count').textContent = String(groups.size);
  };
  const events = new EventSource('events');
  events.addEventListener('status', (e) => onStatus(JSON.parse(e.data)));
  events.addEventListener('finding', (e) => onFinding(JSON.parse(e.data)));
  events.addEventListener('open', () => {
    $('live').textContent = 'live';
    $('live').className = 'live';
  });
  events.addEventListener('error', () => {
    $('live').textContent = 'disconnected, retrying…';
    $('live').className = 'live down';
  });
})();
`;

const sha256 = (text: string) => `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;

/** Nothing loads from elsewhere; only the page's own stylesheets and script apply; it talks to its own origin only and is framed nowhere. */
export const PAGE_CONTENT_SECURITY_POLICY = `default-src 'none'; style-src ${sha256(STYLE)} ${sha256(PAGE_STYLE)}; script-src ${sha256(SCRIPT)}; connect-src 'self'; img-src data:; base-uri 'none'; form-action 'self'; frame-ancestors 'none'`;

/** Headers every answer of the admin listener carries. */
export const SECURITY_HEADERS = {
  'content-security-policy': PAGE_CONTENT_SECURITY_POLICY,
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
} as const;

const head = (title: string) => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<title>${esc(title)}</title>
<style>${STYLE}</style>
<style>${PAGE_STYLE}</style>
</head>`;

/** The live page; `target` is what the proxy forwards to. */
export function livePage(target: string): string {
  return `${head(`tmi-conform proxy · ${target}`)}
<body>
<header class="top">
<div class="row"><h1>tmi-conform <span class="kind">proxy</span></h1><span class="live" id="live">connecting…</span><div class="verdict none" id="verdict">…</div></div>
<dl class="meta"><div><dt>Target</dt><dd>${esc(target)}</dd></div><div><dt>Status</dt><dd id="status-line"></dd></div></dl>
</header>
<main>
<h2>Findings <span class="route"><span id="finding-count">0</span> findings of <span id="group-count">0</span> requirements so far, each with its latest exchange; the journal and the reports hold all</span></h2>
<div class="panel"><p class="empty" id="no-findings">No finding yet.</p><div id="findings"></div></div>
<section class="coverage">
<h2>Coverage <span class="route">what the traffic examined so far, as the reports will count it</span></h2>
<div class="figures" id="coverage"></div><p class="empty" id="no-coverage">No coverage yet.</p>
</section>
<h2>Operations <span class="route">exchanges per operation, as the console names them</span></h2>
<div class="panel"><table><thead><tr><th>Operation</th><th class="num">Exchanges</th><th>Status codes</th></tr></thead><tbody id="operations"></tbody></table><p class="empty" id="no-operations">No operation called yet.</p></div>
<h2>Rate limits <span class="route">X-RateLimit-* headers over time</span></h2>
<div class="panel" id="chart"></div>
</main>
<script>${SCRIPT}</script>
</body>
</html>
`;
}

/** The form asking for the admin token; `wrong`: the last one given was not it. */
export function loginPage(wrong: boolean): string {
  return `${head('tmi-conform proxy · admin token')}
<body>
<form class="login panel" method="post" action="login">
<h1>tmi-conform proxy</h1>
<p>This page needs the admin token (--admin-token).${wrong ? ' <b>That was not it.</b>' : ''}</p>
<label>Admin token <input type="password" name="token" autocomplete="current-password" autofocus required></label>
<button type="submit">Open</button>
</form>
</body>
</html>
`;
}
