// The live page as an operator reads it, in headless Chromium (the system's, never a download):
// before any traffic it says so, neutral; the findings are grouped by requirement with their
// count, each opening to its latest exchange and curl line; the operations are named as the
// console names them, in aligned rows; the header says "live" once; and every visible text is
// readable (contrast 4.5:1 or more) in the light and the dark colour scheme, on the live page
// with findings, a security finding, an opened group and the chart, and on report.html, which
// shares the stylesheet and the chart.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claims, jwt, rateLimitHeaders, resourceServer } from '../fixtures/exchanges.ts';
import { renderHtml } from '../reports/html.ts';
import { CHROMIUM_ARGS, findChromium } from './helpers/chromium.ts';
import { lowContrastText } from './helpers/contrast.ts';
import { recorded, startTestProxy, type ProxyUnderTest } from './helpers/proxy.ts';
import { sampleReport } from './report-fixtures.ts';

const TOKEN = jwt(claims());
const chromiumPath = findChromium();
const suite = chromiumPath
  ? 'the live page for an operator, in headless Chromium'
  : 'the live page for an operator: SKIPPED, no chromium binary found (apt-get install chromium, or set CHROMIUM_PATH)';

/** A target that answers each path as the tests need: conforming, violating, carried out without a token, throttled, or another operation. */
async function startTarget(): Promise<{ origin: string; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const json = (status: number, body: unknown, headers: Record<string, string> = {}) => {
        res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers });
        res.end(JSON.stringify(body));
      };
      const path = (req.url ?? '/').split('?')[0]!;
      if (path === '/oauth/token') return json(200, { access_token: TOKEN, token_type: 'Bearer', expires_in: 86400 });
      if (path === '/api/v2/resource-servers/rs_1') return json(200, resourceServer(), rateLimitHeaders(41));
      // signing_alg outside its enum: a must finding on every call.
      if (path === '/api/v2/resource-servers/rs_bad') return json(200, resourceServer({ id: 'rs_bad', signing_alg: 'none' }), rateLimitHeaders(40));
      if (path === '/api/v2/resource-servers/rs_busy')
        return json(429, { statusCode: 429, error: 'Too Many Requests', message: 'Global limit has been reached' }, rateLimitHeaders(0));
      if (path.startsWith('/api/v2/token-exchange-profiles/')) {
        res.writeHead(204, rateLimitHeaders(39)); // carried out whatever the credential: a security finding without one
        res.end();
        return;
      }
      if (path.startsWith('/api/v2/clients/')) return json(200, { client_id: 'cl_1', name: 'app' }, rateLimitHeaders(38));
      json(404, { statusCode: 404, error: 'Not Found', message: 'Not Found', errorCode: 'not_found' });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

describe.skipIf(!chromiumPath)(suite, () => {
  let target: Awaited<ReturnType<typeof startTarget>>;
  let under: ProxyUnderTest;
  let browser: Browser;
  let page: Page;
  let sent = 0;
  /** `token` null: no Authorization header. */
  const send = async (method: string, path: string, token: string | null = TOKEN) => {
    await fetch(`${under.proxy.url}${path}`, { method, headers: token === null ? {} : { authorization: `Bearer ${token}` } }).then((r) => r.text());
    sent++;
  };

  beforeAll(async () => {
    target = await startTarget();
    under = await startTestProxy(target.origin, { admin: { host: '127.0.0.1', port: 0 } });
    browser = await chromium.launch({ executablePath: chromiumPath, args: CHROMIUM_ARGS });
    page = await (await browser.newContext()).newPage();
    await page.goto(`${under.proxy.adminUrl}/`);
    await page.locator('#live', { hasText: 'live' }).waitFor();
  });

  afterAll(async () => {
    await browser?.close();
    await under?.dispose();
    await target?.close();
  });

  it('says "no traffic yet", neutral, before any exchange, and is readable so in both colour schemes', async () => {
    await expect.poll(() => page.locator('#status-line').textContent()).toContain('0 exchanges');
    const verdict = page.locator('#verdict');
    expect((await verdict.textContent())?.toLowerCase()).toBe('no traffic yet');
    expect(await verdict.getAttribute('class')).toBe('verdict none');
    expect(await page.locator('main').textContent()).toMatch(/No finding yet[\s\S]*No operation called yet[\s\S]*No X-RateLimit-\* header yet/);
    for (const colorScheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme });
      const { measured, low } = await lowContrastText(page);
      expect(measured).toBeGreaterThan(8);
      expect(low, colorScheme).toEqual([]);
    }
    await page.emulateMedia({ colorScheme: 'light' });
  });

  it('says "live" once in its header', async () => {
    expect(await page.locator('header.top h1').textContent()).toBe('tmi-conform proxy');
    expect((await page.locator('header.top .row').textContent())?.match(/live/g)).toHaveLength(1);
  });

  it('groups the findings by requirement, with their count, each opening to its latest exchange and curl line', async () => {
    for (const id of ['rs_bad?round=1', 'rs_bad?round=2', 'rs_bad?round=3']) await send('GET', `/api/v2/resource-servers/${id}`);
    await send('DELETE', '/api/v2/token-exchange-profiles/tep_1', null); // no token, carried out: a security finding
    await recorded(under.proxy, sent);
    const group = page.locator('details.finding[data-requirement="RS-SIGNING-ALG"]');
    await expect.poll(() => group.getAttribute('data-count')).toBe('3');
    expect(await group.count()).toBe(1);
    expect(await group.locator('summary').textContent()).toMatch(/^3 ×\s+RS-SIGNING-ALG/);
    // Opened: the latest of the three, and its curl line.
    await group.locator('summary').click();
    const curl = group.locator('pre', { hasText: 'curl ' });
    await curl.waitFor({ timeout: 2000 });
    expect(await curl.textContent()).toContain('round=3');
    expect(await group.locator('pre').first().textContent()).toContain('round=3');
    // Another one comes while it is open: the count goes up and the open group shows the newest.
    await send('GET', '/api/v2/resource-servers/rs_bad?round=4');
    await expect.poll(() => group.getAttribute('data-count')).toBe('4');
    await expect.poll(() => curl.textContent()).toContain('round=4');
    // The header counts every finding and the requirements they fell under.
    const groups = await page.locator('details.finding').count();
    expect(await page.locator('#group-count').textContent()).toBe(String(groups));
    const total = await page
      .locator('details.finding')
      .evaluateAll((items) => items.reduce((sum, item) => sum + Number((item as HTMLElement).dataset['count']), 0));
    expect(await page.locator('#finding-count').textContent()).toBe(String(total));
    expect(await page.locator('.finding .security').count()).toBeGreaterThanOrEqual(1);
  });

  it('names the operations as the console does, in aligned rows', async () => {
    await send('GET', '/api/v2/resource-servers/rs_1');
    await send('GET', '/api/v2/clients/cl_1');
    await send('POST', '/oauth/token', null);
    await recorded(under.proxy, sent);
    const names = () => page.locator('#operations tr td:first-child').allTextContents();
    await expect.poll(names).toContain('POST /oauth/token');
    expect(await names()).toEqual(['GET /resource-servers/{id}', 'DELETE /token-exchange-profiles/{id}', 'POST /oauth/token', 'GET /clients/{id}']);
    expect(await page.locator('#operations').textContent()).not.toMatch(/getResourceServer|deleteTokenExchangeProfile|getToken|otherOperation/);
    expect(await page.locator('#status-line').textContent()).not.toMatch(/getResourceServer|otherOperation/);
    // Each row's cells start on one line.
    const tops = await page
      .locator('#operations tr')
      .evaluateAll((rows) => rows.map((row) => [...row.children].map((cell) => Math.round(cell.getBoundingClientRect().top))));
    for (const row of tops) expect(new Set(row).size, JSON.stringify(tops)).toBe(1);
  });

  it('reads at 4.5:1 or more, every text, in the light and the dark scheme: findings, a security finding, an opened exchange and curl, the chart', async () => {
    // 429s at once: marks on one spot, drawn with their count (report.html's test below draws one for certain).
    await Promise.all(Array.from({ length: 6 }, () => send('GET', '/api/v2/resource-servers/rs_busy')));
    await recorded(under.proxy, sent);
    await expect.poll(() => page.locator('#chart svg.chart').count()).toBe(2);
    // Measured with the count drawn (asserted after the measure, so that the measure is what fails first).
    await page
      .locator('#chart .count-429')
      .first()
      .waitFor({ timeout: 3000 })
      .catch(() => undefined);
    const security = page.locator('details.finding', { has: page.locator('.security') }).first();
    await security.locator('summary').click();
    await security.locator('pre', { hasText: 'curl ' }).waitFor({ timeout: 2000 });
    for (const colorScheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme });
      const { measured, low } = await lowContrastText(page);
      expect(measured).toBeGreaterThan(40);
      expect(low, colorScheme).toEqual([]);
    }
    await page.emulateMedia({ colorScheme: 'light' });
    expect(await page.locator('#chart .count-429').count()).toBeGreaterThan(0);
  });

  it('keeps report.html, which shares the stylesheet and the chart, at 4.5:1 or more in both schemes', async () => {
    const report = sampleReport();
    // A pause in the traffic and a burst of 429s on one spot: the chart's own labels are measured too.
    const series = report.traffic!.rateLimitSeries;
    const last = Date.parse(series[series.length - 1]!.t);
    for (let i = 0; i < 5; i++)
      series.push({
        t: new Date(last + 60_000 + i * 50).toISOString(),
        client: 'orders-service',
        status: 429,
        limit: 30,
        remaining: 0,
        reset: Math.round(last / 1000) + 90,
      });
    const html = renderHtml(report);
    const reportPage = await (await browser.newContext()).newPage();
    await reportPage.setContent(html);
    await reportPage.evaluate(() => {
      for (const details of document.querySelectorAll('details')) details.open = true;
    });
    for (const colorScheme of ['light', 'dark'] as const) {
      await reportPage.emulateMedia({ colorScheme });
      const { measured, low } = await lowContrastText(reportPage);
      expect(measured).toBeGreaterThan(100);
      expect(low, colorScheme).toEqual([]);
    }
    // The chart's own labels were among the texts measured.
    expect(await reportPage.locator('.pause-label').count()).toBeGreaterThan(0);
    expect(await reportPage.locator('.count-429').allTextContents()).toContain('5 × 429');
    await reportPage.close();
  });
});
