// The live page's coverage, in headless Chromium (the system's, never a download): the figures
// the reports will count (the document's parts and, with --openapi, the description's) from
// before the first exchange, rising as traffic comes in, equal to the coverage gauges of /metrics
// (one source: the recorder thread's report builder), readable in the light and the dark scheme.
// With SHOTS_DIR set, a screenshot of each scheme is written there for people to look at.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claims, jwt, rateLimitHeaders, resourceServer } from '../fixtures/exchanges.ts';
import { CHROMIUM_ARGS, findChromium } from './helpers/chromium.ts';
import { lowContrastText } from './helpers/contrast.ts';
import { recorded, startTestProxy, type ProxyUnderTest } from './helpers/proxy.ts';

const TOKEN = jwt(claims());
const chromiumPath = findChromium();
const suite = chromiumPath
  ? 'the live page shows the coverage rising, in headless Chromium'
  : 'the live page coverage: SKIPPED, no chromium binary found (apt-get install chromium, or set CHROMIUM_PATH)';
const dir = mkdtempSync(join(tmpdir(), 'tmi-admin-coverage-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Two operations of the user's own, and one of the document's: three operations, four statuses. */
const DESCRIPTION = `openapi: 3.1.0
info: { title: Users API, version: '1.2' }
servers:
  - url: /api/v2
paths:
  /users/{id}:
    get:
      responses:
        '200': { description: the user }
        '404': { description: no such user }
  /users:
    post:
      responses:
        '201': { description: created }
  /resource-servers/{id}:
    get:
      responses:
        '200': { description: the resource server }
`;
const descriptionPath = join(dir, 'users.yaml');
writeFileSync(descriptionPath, DESCRIPTION);

async function startTarget(): Promise<{ origin: string; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const path = (req.url ?? '/').split('?')[0]!;
      const [status, body] =
        path === '/api/v2/resource-servers/rs_1'
          ? [200, resourceServer()]
          : path === '/api/v2/users/u1'
            ? [200, { user_id: 'u1' }]
            : [404, { statusCode: 404, error: 'Not Found', message: 'Not Found' }];
      res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...rateLimitHeaders(40) });
      res.end(JSON.stringify(body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

/** The gauges of /metrics by part: "description" → examined. */
async function gauges(adminUrl: string): Promise<Record<string, number>> {
  const text = await fetch(`${adminUrl}/metrics`).then((r) => r.text());
  return Object.fromEntries([...text.matchAll(/^tmi_conform_coverage_examined\{part="([^"]+)"\} (\d+)$/gm)].map((m) => [m[1]!, Number(m[2])]));
}

describe.skipIf(!chromiumPath)(suite, () => {
  let target: Awaited<ReturnType<typeof startTarget>>;
  let under: ProxyUnderTest;
  let browser: Browser;
  let page: Page;
  let sent = 0;
  const send = async (method: string, path: string) => {
    await fetch(`${under.proxy.url}${path}`, { method, headers: { authorization: `Bearer ${TOKEN}` } }).then((r) => r.text());
    sent++;
  };
  /** The figure of a part as the page shows it: "2/3 (66 %)". */
  const figure = (part: string) => page.locator(`#coverage .figure[data-part="${part}"] .n`).textContent();

  beforeAll(async () => {
    target = await startTarget();
    under = await startTestProxy(target.origin, { admin: { host: '127.0.0.1', port: 0 }, openapiPath: descriptionPath });
    browser = await chromium.launch({ executablePath: chromiumPath, args: CHROMIUM_ARGS });
    page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
    await page.goto(`${under.proxy.adminUrl}/`);
    await page.locator('#live', { hasText: 'live' }).waitFor();
  });

  afterAll(async () => {
    await browser?.close();
    await under?.dispose();
    await target?.close();
  });

  it("before any traffic: every part at 0, the description's too", async () => {
    await expect.poll(() => figure('description')).toBe('0/3 (0 %)');
    expect(await figure('description-responses')).toBe('0/4 (0 %)');
    expect(await figure('operations')).toBe('0/3 (0 %)');
    expect(await figure('document')).toMatch(/^0\/\d+ \(0 %\)$/);
    expect(await page.locator('#no-coverage').isHidden()).toBe(true);
    expect(await page.locator('#coverage .figure[data-part="description"] .label').textContent()).toBe(
      'description: operations of the description Users API 1.2 exercised',
    );
  });

  it('rises as traffic comes in, figure by figure equal to the gauges of /metrics', async () => {
    await send('GET', '/api/v2/users/u1');
    await recorded(under.proxy, sent);
    await expect.poll(() => figure('description')).toBe('1/3 (33 %)');
    expect(await figure('description-responses')).toBe('1/4 (25 %)');
    const documentBefore = Number((await figure('document'))!.split('/')[0]);
    await send('GET', '/api/v2/resource-servers/rs_1');
    await send('GET', '/api/v2/users/u2');
    await recorded(under.proxy, sent);
    await expect.poll(() => figure('description')).toBe('2/3 (66 %)');
    expect(await figure('description-responses')).toBe('3/4 (75 %)');
    expect(await figure('operations')).toBe('1/3 (33 %)');
    expect(Number((await figure('document'))!.split('/')[0])).toBeGreaterThan(documentBefore);
    const shown = Object.fromEntries(
      await page
        .locator('#coverage .figure')
        .evaluateAll((figures) => figures.map((f) => [(f as HTMLElement).dataset['part'], Number(f.querySelector('.n')!.textContent!.split('/')[0])])),
    );
    expect(await gauges(under.proxy.adminUrl!)).toEqual(shown);
    expect(Object.keys(shown)).toEqual(['document', 'responses', 'values', 'operations', 'description', 'description-responses']);
  });

  it('reads at 4.5:1 or more in the light and the dark scheme', async () => {
    for (const colorScheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme });
      const { measured, low } = await lowContrastText(page);
      expect(measured).toBeGreaterThan(12);
      expect(low, colorScheme).toEqual([]);
      const shots = process.env['SHOTS_DIR'];
      if (shots) {
        mkdirSync(shots, { recursive: true });
        await page.screenshot({ path: join(shots, `proxy-live-coverage-${colorScheme}.png`), fullPage: true });
      }
    }
    await page.emulateMedia({ colorScheme: 'light' });
  });
});
