// The admin listener's live page in headless Chromium (the system's, never a download): behind
// the token form, a violating exchange sent through the proxy appears on the open page without
// reload within a second, with its requirement id; opened, it shows its redacted exchange and curl
// line; and neither the page's HTML nor the event stream holds any secret the exchange carried.
import { request } from 'node:http';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claims, jwt } from '../fixtures/exchanges.ts';
import { findChromium, CHROMIUM_ARGS } from './helpers/chromium.ts';
import { ECHOED_SECRET, RESPONSE_SECRET, startAdminTarget } from './helpers/admin-target.ts';
import { readJournal, recorded, startTestProxy, type ProxyUnderTest } from './helpers/proxy.ts';

const ADMIN_TOKEN = 'page-admin-token-5b1e0c9f7a2d';
/** A token of its own (its signature is a value found nowhere else) and a secret in the request body. */
const TOKEN = jwt({ ...claims(), jti: 'live-page-token-3c8e1f' });
const BODY_SECRET = ECHOED_SECRET;
const SECRETS = [TOKEN, TOKEN.split('.')[1]!, BODY_SECRET, RESPONSE_SECRET, ADMIN_TOKEN];

const chromiumPath = findChromium();
const suite = chromiumPath
  ? 'the live page in headless Chromium'
  : 'the live page in headless Chromium: SKIPPED, no chromium binary found (apt-get install chromium, or set CHROMIUM_PATH)';

describe.skipIf(!chromiumPath)(suite, () => {
  let target: Awaited<ReturnType<typeof startAdminTarget>>;
  let under: ProxyUnderTest;
  let browser: Browser;
  let page: Page;
  const requests: string[] = [];
  const errors: string[] = [];

  beforeAll(async () => {
    target = await startAdminTarget();
    under = await startTestProxy(target.origin, { admin: { host: '127.0.0.1', port: 0, token: ADMIN_TOKEN } });
    browser = await chromium.launch({ executablePath: chromiumPath, args: CHROMIUM_ARGS });
    page = await (await browser.newContext()).newPage();
    page.on('request', (r) => requests.push(r.url()));
    page.on('console', (m) => {
      if (m.type() === 'error') errors.push(m.text());
    });
    page.on('pageerror', (error) => errors.push(error.message));
    // The token form first: the page asks once and keeps a cookie.
    await page.goto(under.proxy.adminUrl!);
    await page.fill('input[name="token"]', ADMIN_TOKEN);
    await Promise.all([page.waitForURL(`${under.proxy.adminUrl}/`), page.click('button[type="submit"]')]);
    await page.locator('#live', { hasText: 'live' }).waitFor();
    errors.splice(0); // the form's own 401
    // The rule engine loads its catalogs on its first exchange (about a second on a busy machine):
    // one exchange first, so that what is timed below is the page's path, not the engine's start.
    await fetch(`${under.proxy.url}/api/v2/resource-servers/rs_1`, { headers: { authorization: `Bearer ${TOKEN}` } }).then((r) => r.text());
    await recorded(under.proxy, 1);
    await page.locator('#status-line', { hasText: '1 exchanges' }).waitFor();
  });

  afterAll(async () => {
    await browser?.close();
    await under?.dispose();
    await target?.close();
  });

  it('shows a violating exchange without reload within a second, with its requirement id, and no secret in its HTML', async () => {
    await page.evaluate(() => ((window as unknown as { stillThisPage: boolean }).stillThisPage = true));
    const patchFindings = page.locator('.finding', { hasText: 'PATCH' });
    expect(await patchFindings.count()).toBe(0);
    const response = await fetch(`${under.proxy.url}/api/v2/sessions/sess_1`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ session_metadata: { plan: 'gold' }, client_secret: BODY_SECRET }),
    });
    expect(await response.text()).toContain(RESPONSE_SECRET); // the client gets the answer untouched
    const answered = performance.now();
    await patchFindings.first().waitFor({ timeout: 1000 });
    expect(performance.now() - answered).toBeLessThan(1000);
    expect(await page.evaluate(() => (window as unknown as { stillThisPage?: boolean }).stillThisPage)).toBe(true);

    // The requirement ids shown are those the journal recorded for the exchange.
    await recorded(under.proxy, 2);
    const recordedIds = readJournal(under.journalPath)[1]!._conformance.findings.map((f) => f.requirement);
    expect(recordedIds.length).toBeGreaterThan(0);
    await expect.poll(() => patchFindings.count()).toBe(recordedIds.length);
    const shown = await patchFindings.evaluateAll((items) => items.map((item) => (item as HTMLElement).dataset['requirement']));
    expect(shown.sort()).toEqual([...recordedIds].sort());

    // Opened: its redacted exchange and its curl line, still no secret anywhere in the page.
    await patchFindings.first().locator('summary').click();
    await page.locator('.finding pre', { hasText: 'curl' }).waitFor({ timeout: 2000 });
    const html = await page.content();
    expect(html).toContain('[REDACTED]');
    expect(html).toContain('$TOKEN');
    for (const secret of SECRETS) expect(html).not.toContain(secret);
    // Its findings are warnings (should): the verdict so far is the reports' own.
    expect(await page.locator('#verdict').textContent()).toBe('Conforming so far');
    await fetch(`${under.proxy.url}/api/v2/resource-servers/rs_bad`, { headers: { authorization: `Bearer ${TOKEN}` } }).then((r) => r.text());
    await expect.poll(() => page.locator('#verdict').textContent(), { timeout: 3000 }).toBe('Not conforming so far');
    // The secret sent earlier, echoed by the target in a field that is no secret (a name): masked
    // by what the recording learned of the session, as in the journal and the reports.
    const echoed = page.locator('.finding', { hasText: 'rs_bad' }).first();
    await echoed.locator('summary').click();
    await echoed.locator('pre', { hasText: 'curl' }).waitFor({ timeout: 2000 });
    expect(await echoed.textContent()).toContain('\\"name\\":\\"[REDACTED]');
    // The report's rate-limit chart, drawn from the X-RateLimit-* headers so far.
    await expect.poll(() => page.locator('#chart svg.chart').count()).toBe(2);
    for (const secret of SECRETS) expect(await page.content()).not.toContain(secret);
    // Named as the console names them, not by the rule engine's ids.
    expect(await page.locator('#operations').textContent()).toContain('PATCH /sessions/{id}');
  });

  it('catches up a page opened late with the findings so far', async () => {
    const late = await page.context().newPage(); // the same cookie
    await late.goto(under.proxy.adminUrl!);
    await expect.poll(() => late.locator('.finding').count()).toBe(await page.locator('.finding').count());
    await late.close();
  });

  it('never sends a secret on the event stream, and loads nothing from elsewhere', async () => {
    const origin = new URL(under.proxy.adminUrl!);
    const stream = await new Promise<string>((resolve, reject) => {
      const req = request({ host: origin.hostname, port: origin.port, path: '/events', headers: { authorization: `Bearer ${ADMIN_TOKEN}` } }, (res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => {
          text += chunk.toString();
          if (text.includes('event: status')) {
            req.destroy();
            resolve(text);
          }
        });
      });
      req.on('error', (error: NodeJS.ErrnoException) => (error.code === 'ECONNRESET' ? undefined : reject(error)));
      req.end();
    });
    expect(stream).toContain('event: finding');
    for (const secret of SECRETS) expect(stream).not.toContain(secret);
    expect(requests.every((url) => url.startsWith(under.proxy.adminUrl!))).toBe(true);
    expect(errors).toEqual([]);
  });
});
