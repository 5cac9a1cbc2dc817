// report.html: one self-contained file. Checked as text (structure, escaping, nothing
// external), then in headless Chromium: it loads without a console error, no request leaves
// the file, hostile strings stay inert, the filters hide rows, and a screenshot is written to
// .tmp/report-html/report.png (git ignores .tmp/) for people to look at.
import { mkdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packageRoot } from '../core/paths.ts';
import { ReportBuilder } from '../reports/builder.ts';
import { CONTENT_SECURITY_POLICY } from '../reports/html-assets.ts';
import { renderHtml } from '../reports/html.ts';
import { renderRateLimitChart } from '../reports/rate-limit-chart.ts';
import { writeReports } from '../reports/write.ts';
import { findChromium } from './helpers/chromium.ts';
import { LEAKED_TOKEN, sampleReport, XSS } from './report-fixtures.ts';

const OUT = join(packageRoot, '.tmp', 'report-html');

const rowsOf = (html: string) =>
  [...html.matchAll(/<tr class="req (\w+)" id="req-([A-Z0-9-]+)" data-status="(\w+)" data-level="(\w+)"/g)].map((m) => ({
    id: m[2]!,
    status: m[3]!,
    level: m[4]!,
  }));

describe('report.html as a file', () => {
  const report = sampleReport();
  const html = renderHtml(report);

  it('is self-contained: one inline style and script allowed by hash, nothing else may load', () => {
    expect(html.match(/<style>/g)).toHaveLength(1);
    expect(html.match(/<script>/g)).toHaveLength(1);
    expect(html).toContain(`<meta http-equiv="Content-Security-Policy" content="${CONTENT_SECURITY_POLICY.replace(/'/g, '&#39;')}">`);
    expect(CONTENT_SECURITY_POLICY).toMatch(/^default-src 'none'; style-src 'sha256-[A-Za-z0-9+/=]+'; script-src 'sha256-[A-Za-z0-9+/=]+'/);
    // No attribute points anywhere but into the page (or at an empty data: icon).
    for (const [, attribute, value] of html.matchAll(/\s(src|href|action|srcset|poster)="([^"]*)"/g)) expect(value, attribute).toMatch(/^(#|data:,$)/);
    expect(html).not.toMatch(/@import|url\(/);
  });

  it('has a row per requirement, in a section per operation, carrying its status and level for the filters', () => {
    const rows = rowsOf(html);
    expect(rows.map((r) => r.id).sort()).toEqual(report.requirements.map((r) => r.id).sort());
    for (const r of report.requirements)
      expect(
        rows.find((row) => row.id === r.id),
        r.id,
      ).toMatchObject({ status: r.status, level: r.level });
    expect([...html.matchAll(/<section class="group" data-group="(\w+)">/g)].map((m) => m[1])).toEqual([
      'all',
      'several',
      'deleteTokenExchangeProfile',
      'updateSession',
      'getResourceServer',
      'getToken',
    ]);
    for (const status of ['pass', 'fail', 'warn', 'skip'] as const) expect(html).toContain(`<div class="n">${report.summary[status]}</div><div class="label">`);
  });

  it('shows the quote, and the failing evidence with its redacted request and response', () => {
    const row = html.slice(html.indexOf('id="req-RS-SIGNING-ALG"'), html.indexOf('</tr>', html.indexOf('id="req-RS-SIGNING-ALG"')));
    expect(row).toContain('<blockquote>Allowed: <code>HS256</code>');
    expect(row).toMatch(
      /<details class="evidence"><summary><span class="chip fail">Fail<\/span> <span class="where">GET https:\/\/tenant\.example\.com\/api\/v2\/resource-servers\/rs_1 → 200<\/span>/,
    );
    expect(row).toContain('authorization: Bearer [REDACTED]');
    expect(row).toContain('&quot;signing_alg&quot;: &quot;HS512&quot;');
    expect(html).not.toContain(LEAKED_TOKEN);
    expect(html).not.toContain('a-secret-of-32-characters-length');
  });

  it('escapes every hostile string from traffic and tests', () => {
    for (const payload of Object.values(XSS)) expect(html).not.toContain(payload);
    expect(html).toContain('&lt;script&gt;window.__xss = \\&quot;script\\&quot;&lt;/script&gt;');
    expect(html).toContain(`resource servers &gt; &lt;/script&gt;&lt;script&gt;window.__xss = &quot;test-name&quot;&lt;/script&gt;`);
    expect(html).not.toMatch(/<(img|svg onload|iframe)/i);
  });

  it('draws the X-RateLimit-* chart from the traffic series, and none without traffic', () => {
    expect(html).toContain('<svg class="chart"');
    expect(html.match(/class="point-429"/g)).toHaveLength(10);
    expect(renderHtml(new ReportBuilder({ kind: 'run', source: 'run' }).build({ failOn: 'must' }))).not.toContain('<svg class="chart"');
    const crowd = Array.from({ length: 9 }, (_, i) => ({
      t: `2027-01-15T08:00:0${i}.000Z`,
      client: `client-${i}`,
      status: 200,
      limit: 10,
      remaining: 9,
      reset: 1_800_000_060,
    }));
    const chart = renderRateLimitChart(crowd);
    expect(chart.match(/<li>/g)).toHaveLength(6);
    expect(chart).toContain('3 more client(s) not drawn');
    expect(renderRateLimitChart([])).toBe('');
  });
});

const chromiumPath = findChromium();
const browserSuite = chromiumPath
  ? 'report.html in headless Chromium'
  : 'report.html in headless Chromium: SKIPPED, no chromium binary found (apt-get install chromium, or set CHROMIUM_PATH)';

describe.skipIf(!chromiumPath)(browserSuite, () => {
  let browser: Browser;
  let page: Page;
  const requests: string[] = [];
  const errors: string[] = [];
  const report = sampleReport();
  let fileUrl: string;

  const visibleRows = () =>
    page.$$eval('tr.req', (rows) =>
      rows
        .filter((r) => !(r as HTMLElement).hidden && (r as HTMLElement).offsetParent !== null)
        .map((r) => ({
          id: r.id.slice(4),
          status: r.getAttribute('data-status')!,
          level: r.getAttribute('data-level')!,
          operations: r.getAttribute('data-operations')!.split(' '),
        })),
    );

  beforeAll(async () => {
    mkdirSync(OUT, { recursive: true });
    const written = await writeReports(report, OUT);
    fileUrl = pathToFileURL(written.find((p) => p.endsWith('report.html'))!).href;
    browser = await chromium.launch({ executablePath: chromiumPath, args: ['--headless', '--no-sandbox', '--disable-gpu'] });
    page = await browser.newPage({ viewport: { width: 1360, height: 900 } });
    page.on('request', (request) => requests.push(request.url()));
    page.on('console', (message) => {
      if (message.type() === 'error' || message.type() === 'warning') errors.push(`${message.type()}: ${message.text()}`);
    });
    page.on('pageerror', (error) => errors.push(`pageerror: ${error.message}`));
    await page.goto(fileUrl, { waitUntil: 'load' });
  });
  afterAll(async () => {
    await browser?.close();
  });

  it('loads with no console error, and no request but the file itself', () => {
    expect(errors).toEqual([]);
    expect(requests).toEqual([fileUrl]);
  });

  it('keeps hostile strings inert: shown as text, no element or script made of them', async () => {
    expect(await page.evaluate(() => (window as unknown as { __xss?: string }).__xss)).toBeUndefined();
    expect(await page.locator('[onerror], [onload], img, iframe').count()).toBe(0);
    expect(await page.locator('script').count()).toBe(1);
    // The response body, pretty-printed JSON, shows the payload as the server sent it.
    expect(await page.locator('pre', { hasText: JSON.stringify(XSS.script).slice(1, -1) }).count()).toBeGreaterThan(0);
    expect(await page.locator('td', { hasText: XSS.test }).count()).toBeGreaterThan(0);
  });

  it('filters by status: unticking a status hides its rows, a card shows only its status', async () => {
    expect(await visibleRows()).toHaveLength(report.requirements.length);
    await page.locator('label.toggle', { hasText: 'Pass' }).click();
    let rows = await visibleRows();
    expect(rows.length).toBe(report.requirements.length - report.summary.pass);
    expect(rows.every((r) => r.status !== 'pass')).toBe(true);
    expect(await page.locator('#filter-count').textContent()).toBe(`${rows.length} of ${report.requirements.length} shown`);
    await page.locator('button.card.fail').click();
    rows = await visibleRows();
    expect(rows.map((r) => r.status)).toEqual(Array(report.summary.fail).fill('fail'));
    // A section with nothing left to show is hidden with its rows.
    expect(await page.locator('section.group[data-group="deleteTokenExchangeProfile"]').isHidden()).toBe(true);
    await page.locator('#filter-reset').click();
    expect(await visibleRows()).toHaveLength(report.requirements.length);
  });

  it('filters by level and by operation, and says so when nothing matches', async () => {
    await page.selectOption('#filter-level', 'should');
    let rows = await visibleRows();
    expect(rows.length).toBe(report.requirements.filter((r) => r.level === 'should').length);
    expect(rows.every((r) => r.level === 'should')).toBe(true);
    await page.selectOption('#filter-level', '');
    await page.selectOption('#filter-operation', 'getResourceServer');
    rows = await visibleRows();
    expect(rows.every((r) => r.operations.includes('getResourceServer') || r.operations.includes('all'))).toBe(true);
    expect(rows.map((r) => r.id)).toContain('RS-SIGNING-ALG');
    expect(rows.map((r) => r.id)).not.toContain('TEP-DELETE-204');
    await page.fill('#filter-search', 'no requirement says this');
    expect(await visibleRows()).toHaveLength(0);
    expect(await page.locator('#filter-empty').isVisible()).toBe(true);
    await page.locator('#filter-reset').click();
    expect(await visibleRows()).toHaveLength(report.requirements.length);
  });

  it('evidence is collapsed until opened, then shows the redacted exchange', async () => {
    const evidence = page.locator('#req-RS-SIGNING-ALG details.evidence').first();
    const request = evidence.locator('.exchange pre').first();
    expect(await request.isVisible()).toBe(false);
    await evidence.locator('summary').first().click();
    expect(await request.isVisible()).toBe(true);
    expect(await request.textContent()).toContain('authorization: Bearer [REDACTED]');
  });

  it('writes a full-page screenshot for people to look at', async () => {
    const path = join(OUT, 'report.png');
    // From the top, so the sticky filter bar sits where a reader first sees it.
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.screenshot({ path, fullPage: true });
    const png = readFileSync(path);
    expect(png.subarray(1, 4).toString('latin1')).toBe('PNG');
    expect(png.readUInt32BE(16)).toBe(1360); // width from the IHDR chunk
    expect(statSync(path).size).toBeGreaterThan(50_000);
  });
});
