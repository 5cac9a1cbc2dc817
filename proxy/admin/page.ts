// The admin listener's page (/): self-contained (no CDN, nothing loaded from elsewhere), styled
// with report.html's own stylesheet, with one script that follows /events (server-sent events):
// the verdict so far, the findings as they arrive (each opens to its redacted exchange and curl
// line from /findings/N), the exchanges per operation and the report's rate-limit chart
// (/rate-limits, drawn on the server by reports/rate-limit-chart.ts). The script builds the page
// with textContent only; the chart is the one markup inserted, made and escaped on the server.
// The login page asks for the admin token when there is one (the cookie it sets is not the token).
import { createHash } from 'node:crypto';
import { STYLE } from '../../reports/html-assets.ts';
import { escapeXml as esc } from '../../reports/xml.ts';
import { RECENT_FINDINGS } from './live.ts';

const PAGE_STYLE = `
.live{display:inline-block;font-size:12px;color:var(--muted);margin-left:8px}
.live.down{color:var(--fail)}
.finding{border-bottom:1px solid var(--line);padding:8px 12px}
.finding summary{cursor:pointer}
.finding pre{white-space:pre-wrap;word-break:break-all;background:#f8fafc;border:1px solid var(--line);border-radius:6px;padding:8px;font-size:12px}
.finding .security{color:var(--fail);font-weight:600}
#findings:empty::after{content:"No finding yet.";display:block;padding:12px;color:var(--muted)}
form.login{max-width:420px;margin:60px auto;padding:20px}
form.login input{width:100%;box-sizing:border-box;font:inherit;padding:6px;margin:8px 0}
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
  const onStatus = (s) => {
    const verdict = $('verdict');
    verdict.textContent = s.verdict.passed ? 'Conforming so far' : 'Not conforming so far';
    verdict.className = 'verdict ' + (s.verdict.passed ? 'ok' : 'bad');
    $('status-line').textContent = s.line;
    const rows = $('operations');
    rows.replaceChildren();
    for (const [name, count] of Object.entries(s.counts.byOperation)) {
      const tr = el('tr');
      tr.append(el('td', 'code', name), el('td', 'num', String(count)));
      rows.append(tr);
    }
    if (s.chartVersion !== chartShown) {
      chartShown = s.chartVersion;
      fetch('rate-limits', { credentials: 'same-origin' }).then((r) => (r.ok ? r.text() : '')).then((html) => {
        $('chart').innerHTML = html;
      });
    }
  };
  const onFinding = (f) => {
    const item = el('details', 'finding');
    item.dataset.requirement = f.requirement;
    const summary = el('summary');
    summary.append(el('span', 'id', f.requirement), ' ', el('span', 'level ' + f.level, f.level), ' ', el('span', 'muted', f.subject), ' ');
    if (f.security) summary.append(el('span', 'security', 'security: ' + f.security), ' ');
    summary.append(el('span', 'code', f.method + ' ' + f.url + (f.status === undefined ? '' : ' → ' + f.status)), ' ', el('span', '', f.message));
    item.append(summary);
    item.addEventListener('toggle', () => {
      if (!item.open || item.dataset.loaded) return;
      item.dataset.loaded = '1';
      fetch('findings/' + f.n, { credentials: 'same-origin' }).then((r) => (r.ok ? r.json() : null)).then((d) => {
        if (!d) {
          item.append(el('p', 'muted', 'No longer kept here: the journal and the reports have it.'));
          return;
        }
        item.append(el('p', 'muted', 'Exchange (redacted, as in the reports)'), el('pre', '', JSON.stringify(d.exchange, null, 2)), el('p', 'muted', 'curl'), el('pre', '', d.curl));
      });
    });
    const list = $('findings');
    list.prepend(item);
    while (list.children.length > ${RECENT_FINDINGS}) list.lastElementChild.remove();
    $('finding-count').textContent = String(f.n);
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
<div class="row"><h1>tmi-conform <span class="kind">proxy, live</span><span class="live" id="live">connecting…</span></h1><div class="verdict" id="verdict">…</div></div>
<dl class="meta"><div><dt>Target</dt><dd>${esc(target)}</dd></div><div><dt>Status</dt><dd id="status-line"></dd></div></dl>
</header>
<main>
<h2>Findings <span class="route"><span id="finding-count">0</span> so far; the last ${RECENT_FINDINGS} are listed, the journal and the reports hold all</span></h2>
<div class="panel" id="findings"></div>
<h2>Operations <span class="route">exchanges per operation</span></h2>
<div class="panel"><table><thead><tr><th>Operation</th><th class="num">Exchanges</th></tr></thead><tbody id="operations"></tbody></table></div>
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
