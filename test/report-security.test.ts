// A security finding (the target carried out a request it should have refused) is a field, not
// words in a message: every report format counts it, shows it and lets a reader pick it out.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { CHROMIUM_ARGS, findChromium } from './helpers/chromium.ts';
import { deleteExchange } from '../fixtures/exchanges.ts';
import { ReportBuilder } from '../reports/builder.ts';
import { renderSummary } from '../reports/console.ts';
import { renderHtml } from '../reports/html.ts';
import { renderJunit } from '../reports/junit.ts';
import { renderMarkdown } from '../reports/markdown.ts';
import { reportSchemaError } from '../reports/schema.ts';
import { judgeExchange } from '../rules/index.ts';

function reportOf(withCredential: boolean) {
  const builder = new ReportBuilder({ kind: 'validate', source: 'validate:test' });
  // A DELETE carried out (204) with no credential at all, or with one.
  const exchange = deleteExchange(withCredential ? {} : { requestHeaders: {} });
  exchange.id = '7';
  builder.addExchange(exchange, judgeExchange(exchange));
  return builder.build({ failOn: 'must' });
}

describe('security findings in the reports', () => {
  const report = reportOf(false);
  const flagged = report.requirements.filter((r) => (r.counts.security ?? 0) > 0);

  it("report.json counts them per requirement, and keeps the finding's security field", () => {
    expect(reportSchemaError(report)).toBeUndefined();
    // The credential rule and the 401 rule the same 204 broke: each is charged with the exchange.
    expect(flagged.map((r) => [r.id, r.status, r.counts.security])).toEqual([
      ['AUTH-CREDENTIAL-REQUIRED', 'fail', 1],
      ['AUTH-MISSING-TOKEN-401', 'fail', 1],
    ]);
    for (const r of flagged) expect(r.evidence[0]!.findings![0]!.security, r.id).toBe('the target carried out a DELETE sent with no Authorization header');
  });

  it('the console says them first; report.md has a section; JUnit marks the failure type; report.html badges and filters', () => {
    expect(renderSummary(report, { detail: 'table' })).toContain(
      'SECURITY: the target carried out requests it should have refused: AUTH-CREDENTIAL-REQUIRED (1 exchange(s)), AUTH-MISSING-TOKEN-401 (1 exchange(s))',
    );
    const md = renderMarkdown(report);
    expect(md).toContain('### 🛑 Security findings');
    expect(md).toMatch(/- \*\*AUTH-CREDENTIAL-REQUIRED\*\* \(must\): 1 exchange\(s\), e\.g\. AUTH-CREDENTIAL-REQUIRED: security: /);
    expect(md).toMatch(/- \*\*AUTH-MISSING-TOKEN-401\*\* \(must\): 1 exchange\(s\), e\.g\. AUTH-MISSING-TOKEN-401: security: /);
    expect(renderJunit(report)).toMatch(/<failure message="[^"]*" type="must security">/);
    const html = renderHtml(report);
    expect(html).toContain('id="req-AUTH-CREDENTIAL-REQUIRED" data-status="fail" data-level="must" data-security="true"');
    expect(html).toContain('id="req-AUTH-MISSING-TOKEN-401" data-status="fail" data-level="must" data-security="true"');
    expect(html).toContain('Security findings only (2)');
    expect(html).toContain("(!security.checked || row.getAttribute('data-security') === 'true')");
  });

  it('a refusal or a conforming exchange has none, and no format says any', () => {
    const conforming = reportOf(true);
    expect(conforming.requirements.every((r) => r.counts.security === 0)).toBe(true);
    expect(renderSummary(conforming, { detail: 'table' }).join('\n')).not.toContain('SECURITY');
    expect(renderMarkdown(conforming)).not.toContain('Security findings');
    expect(renderJunit(conforming)).not.toContain('security');
    expect(renderHtml(conforming)).toContain('Security findings only (0)');
    expect(renderHtml(conforming)).not.toContain('data-security="true"');
  });
});

describe.skipIf(!findChromium())('report.html in headless Chromium: the security filter', () => {
  it('"security findings only" shows the requirements with one, and unticking shows all again', async () => {
    const report = reportOf(false);
    const dir = mkdtempSync(join(tmpdir(), 'tmi-security-html-'));
    const browser = await chromium.launch({ executablePath: findChromium(), args: CHROMIUM_ARGS });
    try {
      const file = join(dir, 'report.html');
      writeFileSync(file, renderHtml(report));
      const page = await browser.newPage();
      await page.goto(pathToFileURL(file).href);
      const visible = () => page.$$eval('tr.req', (rows) => rows.filter((r) => !(r as HTMLElement).hidden).map((r) => r.id.slice(4)));
      expect(await visible()).toHaveLength(report.requirements.length);
      await page.locator('#filter-security').check();
      expect(await visible()).toEqual(['AUTH-CREDENTIAL-REQUIRED', 'AUTH-MISSING-TOKEN-401']);
      expect(await page.locator('#filter-count').textContent()).toBe(`2 of ${report.requirements.length} shown`);
      await page.locator('#filter-reset').click();
      expect(await page.locator('#filter-security').isChecked()).toBe(false);
      expect(await visible()).toHaveLength(report.requirements.length);
    } finally {
      await browser.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
