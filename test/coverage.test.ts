// Coverage as a number: what a run, a proxy's traffic or a recording examined of the document
// (requirements, the status codes it names, the values of its enumerations and the edges of its
// limits, its operations), how `report merge` adds it up, and what it reads in one exchange.
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claims, deleteExchange, errorExchange, getExchange, jwt, rateLimitHeaders, resourceServer, session, updateExchange } from '../fixtures/exchanges.ts';
import { ReportBuilder } from '../reports/builder.ts';
import { diffReports, renderDiff } from '../reports/diff.ts';
import { buildMatrix, renderMatrixConsole, renderMatrixMarkdown } from '../reports/matrix.ts';
import { mergeReports } from '../reports/merge.ts';
import type { Coverage, Report } from '../reports/model.ts';
import { reportSchemaError } from '../reports/schema.ts';
import { writeReports } from '../reports/write.ts';
import { chromium } from 'playwright-core';
import { pathToFileURL } from 'node:url';
import { findChromium } from './helpers/chromium.ts';
import { judgeExchange } from '../rules/index.ts';
import type { Exchange } from '../rules/types.ts';
import { recorded, startTestProxy } from './helpers/proxy.ts';

const BIN = fileURLToPath(new URL('../bin/tmi-conform.js', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'tmi-coverage-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const readReport = (reportDir: string) => JSON.parse(readFileSync(join(reportDir, 'report.json'), 'utf8')) as Report;
const reachedBy = (coverage: Coverage) => Object.fromEntries(coverage.values.byName.map((d) => [d.name, d.reached]));
const seenBy = (coverage: Coverage) => Object.fromEntries(coverage.responses.byOperation.map((o) => [o.operation, o.seen]));

function cli(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [BIN, ...args], { env: { ...process.env, GITHUB_STEP_SUMMARY: '' }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c) => (stdout += c));
  child.stderr.on('data', (c) => (stderr += c));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}

function reportOf(exchanges: Exchange[]): Report {
  const builder = new ReportBuilder({ kind: 'validate', source: 'validate:chosen' });
  for (const exchange of exchanges) builder.addExchange(exchange, judgeExchange(exchange));
  return builder.build({ failOn: 'must' });
}

function harOf(exchanges: Exchange[]): string {
  const headers = (h: Record<string, string>) => Object.entries(h).map(([name, value]) => ({ name, value }));
  const entries = exchanges.map((e) => ({
    startedDateTime: e.startedAt,
    time: e.durationMs ?? 0,
    request: {
      method: e.request.method,
      url: e.request.url,
      httpVersion: 'HTTP/1.1',
      headers: headers(e.request.headers),
      ...(e.request.body ? { postData: { mimeType: 'application/json', text: e.request.body.text } } : {}),
    },
    response: {
      status: e.response!.status,
      httpVersion: 'HTTP/1.1',
      headers: headers(e.response!.headers),
      content: { size: e.response!.body?.text.length ?? 0, mimeType: 'application/json', ...(e.response!.body ? { text: e.response!.body.text } : {}) },
    },
  }));
  return JSON.stringify({ log: { version: '1.2', creator: { name: 'test', version: '1' }, entries } });
}

const metadataOf = (properties: number, length = 1) => Object.fromEntries(Array.from({ length: properties }, (_, i) => [`k${i}`, 'v'.repeat(length)]));

describe('what one exchange reaches of the document (Judgement.reached)', () => {
  it('a resource server names its signing_alg and token_dialect; a value outside the enumeration, or an error, reaches none', () => {
    expect(judgeExchange(getExchange(resourceServer({ signing_alg: 'PS256', token_dialect: 'rfc9068_profile' }))).reached).toEqual([
      'signing_alg=PS256',
      'token_dialect=rfc9068_profile',
    ]);
    expect(judgeExchange(getExchange(resourceServer({ signing_alg: 'none' }))).reached).toEqual(['token_dialect=access_token']);
    expect(judgeExchange(errorExchange(getExchange(), 404, { message: 'no such resource server' })).reached).toEqual([]);
  });

  it('session_metadata sent reaches the edges of its limits and its ways of clearing, when the target read the body', () => {
    const reached = (metadata: unknown, status = 200) =>
      judgeExchange(
        status === 200
          ? updateExchange({ session_metadata: metadata }, session(metadata))
          : errorExchange(updateExchange({ session_metadata: metadata }), status, { message: 'x' }),
      ).reached ?? [];
    expect(reached(null)).toEqual(['session_metadata=null']);
    expect(reached({})).toEqual(['session_metadata={}']);
    expect(reached(metadataOf(25))).toEqual(['session_metadata=25 properties']);
    expect(reached(metadataOf(24))).toEqual([]);
    expect(reached(metadataOf(26), 400)).toEqual(['session_metadata=over 25 properties']);
    expect(reached(metadataOf(1, 255))).toEqual(['session_metadata=a value of 255 characters']);
    expect(reached(metadataOf(2, 256), 400)).toEqual(['session_metadata=a value over 255 characters']);
    // Refused before the body mattered: no credential, no such session.
    expect(reached(metadataOf(25), 401)).toEqual([]);
    expect(reached(metadataOf(25), 404)).toEqual([]);
  });
});

describe('coverage of a report built from chosen exchanges', () => {
  const report = reportOf([
    deleteExchange(),
    errorExchange(deleteExchange(), 403, { message: 'Insufficient scope, expected: delete:token_exchange_profiles' }),
    getExchange(resourceServer({ signing_alg: 'RS512' })),
  ]);
  const { coverage } = report;

  it('counts what they examined and nothing else, and report.json holds it under its schema', () => {
    expect(reportSchemaError(JSON.parse(JSON.stringify(report)))).toBeUndefined();
    expect(seenBy(coverage!)).toEqual({ deleteTokenExchangeProfile: ['204', '403'] });
    expect(coverage!.responses).toMatchObject({ examined: 2, applicable: 4 });
    expect(reachedBy(coverage!)).toEqual({ signing_alg: ['RS512'], token_dialect: ['access_token'], session_metadata: [] });
    expect(coverage!.operations).toMatchObject({ examined: 2, applicable: 3, notCalled: ['PATCH /sessions/{id}'] });
    const examined = report.requirements.filter((r) => r.status !== 'skip');
    expect(coverage!.document).toMatchObject({ examined: examined.length, applicable: report.requirements.length });
    expect(coverage!.document.notExamined.map((n) => n.requirement)).toEqual(report.requirements.filter((r) => r.status === 'skip').map((r) => r.id));
    expect(coverage!.document.must.applicable + coverage!.document.should.applicable).toBe(report.requirements.length);
  });

  it('per operation: the requirements of the session update, never called, none examined', () => {
    const session = coverage!.document.byOperation.find((o) => o.operation === 'updateSession')!;
    expect(session.examined).toBe(0);
    expect(session.applicable).toBeGreaterThan(0);
    const deleted = coverage!.document.byOperation.find((o) => o.operation === 'deleteTokenExchangeProfile')!;
    expect(deleted.examined).toBeGreaterThan(0);
  });
});

describe('report merge adds coverage up', () => {
  it('a report that never saw a 429 merged with one that did covers the 429, and the values either reached', () => {
    const run = reportOf([deleteExchange(), getExchange()]);
    const recording = reportOf([
      errorExchange(deleteExchange(), 429, { message: 'Too Many Requests' }, rateLimitHeaders(0)),
      getExchange(resourceServer({ signing_alg: 'RS256' })),
    ]);
    expect(seenBy(run.coverage!).deleteTokenExchangeProfile).toEqual(['204']);
    const merged = mergeReports([{ report: run }, { report: recording }], { failOn: 'must' });
    expect(seenBy(merged.coverage!).deleteTokenExchangeProfile).toEqual(['204', '429']);
    expect(reachedBy(merged.coverage!).signing_alg).toEqual(['HS256', 'RS256']);
    expect(reportSchemaError(JSON.parse(JSON.stringify(merged)))).toBeUndefined();
  });

  it('the command: a narrow run merged with a recorded 429 reports the 429 seen', { timeout: 120_000 }, async () => {
    const runDir = join(dir, 'narrow');
    const narrow = await cli(['run', '--requirement', 'TEP-DELETE-204', '--report-dir', runDir]);
    expect(narrow.code, narrow.stdout + narrow.stderr).toBe(0);
    const run = readReport(runDir);
    // The narrow coverage it had: what its few exchanges examined, the rest not selected.
    expect(run.coverage!.document.examined).toBeLessThan(run.coverage!.document.applicable);
    expect(run.coverage!.document.notExamined.length).toBe(run.coverage!.document.applicable - run.coverage!.document.examined);
    for (const n of run.coverage!.document.notExamined) expect(n.reason, n.requirement).toBe('not selected (--requirement TEP-DELETE-204)');
    expect(narrow.stdout).toContain(`coverage: document ${run.coverage!.document.examined}/${run.coverage!.document.applicable} requirements`);
    expect(seenBy(run.coverage!).deleteTokenExchangeProfile).not.toContain('429');

    const har = join(dir, 'day.har');
    writeFileSync(har, harOf([errorExchange(deleteExchange(), 429, { message: 'Too Many Requests' }, rateLimitHeaders(0))]));
    const validated = join(dir, 'day');
    expect((await cli(['validate', har, '--report-dir', validated])).code).toBe(0);
    const mergedDir = join(dir, 'merged');
    const merge = await cli(['report', 'merge', runDir, validated, '--out', mergedDir]);
    expect(merge.code, merge.stderr).toBe(0);
    expect(seenBy(readReport(mergedDir).coverage!).deleteTokenExchangeProfile).toContain('429');
  });
});

describe('a proxy fed a handful of chosen exchanges', () => {
  let target: Server;
  let origin: string;
  beforeAll(async () => {
    target = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        const json = (status: number, value: unknown) => {
          res.writeHead(status, { 'content-type': 'application/json', ...rateLimitHeaders(status === 429 ? 0 : 50) });
          res.end(JSON.stringify(value));
        };
        const path = req.url ?? '/';
        if (path === '/api/v2/resource-servers/rs_1') return json(200, resourceServer({ signing_alg: 'PS256', token_dialect: 'access_token_authz' }));
        if (path === '/api/v2/token-exchange-profiles/tep_busy') return json(429, { message: 'Too Many Requests' });
        if (path.startsWith('/api/v2/token-exchange-profiles/')) {
          res.writeHead(204, rateLimitHeaders(50));
          return res.end();
        }
        if (path === '/api/v2/sessions/sess_1') return json(200, session(JSON.parse(body).session_metadata));
        json(404, { message: 'Not Found' });
      });
    });
    await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(target.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => target.close(() => resolve())));

  const promtool = spawnSync('promtool', ['--version']).status === 0;
  const scrape = async (adminUrl: string) => {
    const text = await (await fetch(`${adminUrl}/metrics`)).text();
    const gauge = (name: string, part: string) => Number(new RegExp(`^${name}\\{part="${part}"\\} (\\S+)$`, 'm').exec(text)?.[1]);
    return { text, gauge };
  };

  it.skipIf(!promtool)(
    promtool
      ? '/metrics exposes the coverage gauges, rising as traffic comes in (promtool check metrics)'
      : '/metrics coverage gauges: SKIPPED, no promtool found (apt-get install prometheus)',
    async () => {
      const under = await startTestProxy(origin, { admin: { host: '127.0.0.1', port: 0 } });
      try {
        const before = await scrape(under.proxy.adminUrl!);
        expect(before.gauge('tmi_conform_coverage_examined', 'responses')).toBe(0);
        expect(before.gauge('tmi_conform_coverage_applicable', 'responses')).toBe(4);
        await fetch(`${under.proxy.url}/api/v2/token-exchange-profiles/tep_busy`, {
          method: 'DELETE',
          headers: { authorization: `Bearer ${jwt(claims())}` },
        }).then((r) => r.text());
        await fetch(`${under.proxy.url}/api/v2/resource-servers/rs_1`, { headers: { authorization: `Bearer ${jwt(claims())}` } }).then((r) => r.text());
        await recorded(under.proxy, 2);
        const after = await scrape(under.proxy.adminUrl!);
        expect(after.gauge('tmi_conform_coverage_examined', 'responses')).toBe(1);
        expect(after.gauge('tmi_conform_coverage_ratio', 'responses')).toBe(0.25);
        expect(after.gauge('tmi_conform_coverage_examined', 'values')).toBe(2);
        expect(after.gauge('tmi_conform_coverage_examined', 'operations')).toBe(2);
        expect(after.gauge('tmi_conform_coverage_examined', 'document')).toBeGreaterThan(before.gauge('tmi_conform_coverage_examined', 'document'));
        const check = spawnSync('promtool', ['check', 'metrics'], { input: after.text, encoding: 'utf8' });
        expect(check.status, check.stdout + check.stderr).toBe(0);
      } finally {
        await under.dispose();
      }
    },
  );

  it('reports exactly the statuses, values and operations they carried', async () => {
    const under = await startTestProxy(origin);
    try {
      const bearer = { authorization: `Bearer ${jwt(claims())}` };
      const send = (method: string, path: string, body?: unknown) =>
        fetch(under.proxy.url + path, {
          method,
          headers: { ...bearer, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
          ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
        }).then((r) => r.text());
      await send('GET', '/api/v2/resource-servers/rs_1');
      await send('DELETE', '/api/v2/token-exchange-profiles/tep_1');
      await send('DELETE', '/api/v2/token-exchange-profiles/tep_busy');
      await send('PATCH', '/api/v2/sessions/sess_1', { session_metadata: metadataOf(25) });
      await send('PATCH', '/api/v2/sessions/sess_1', { session_metadata: {} });
      await recorded(under.proxy, 5);
      await under.proxy.stop();
      const { coverage } = readReport(under.reportDir);
      expect(seenBy(coverage!)).toEqual({ deleteTokenExchangeProfile: ['204', '429'] });
      expect(reachedBy(coverage!)).toEqual({ signing_alg: ['PS256'], token_dialect: ['access_token_authz'], session_metadata: ['{}', '25 properties'] });
      expect(coverage!.operations).toMatchObject({ examined: 3, applicable: 3, notCalled: [] });
      expect(coverage!.values).toMatchObject({ examined: 4, applicable: 14 });
    } finally {
      await under.dispose();
    }
  });
});

describe('report diff and report matrix say coverage', () => {
  const before = reportOf([deleteExchange(), getExchange()]);
  const after = reportOf([
    deleteExchange(),
    errorExchange(deleteExchange(), 429, { message: 'Too Many Requests' }, rateLimitHeaders(0)),
    updateExchange({ session_metadata: null }, session(null)),
  ]);

  it('report diff names each part gained and lost', () => {
    const diff = diffReports(before, after);
    expect(diff.coverage!.gained).toEqual(
      expect.arrayContaining(['response DELETE /token-exchange-profiles/{id} 429', 'value session_metadata null', 'operation PATCH /sessions/{id}']),
    );
    expect(diff.coverage!.lost).toEqual(
      expect.arrayContaining(['value signing_alg HS256', 'value token_dialect access_token', 'operation GET /resource-servers/{id}']),
    );
    // Requirements only the resource server's exchange examined are lost; the session update's are gained.
    expect(diff.coverage!.lost).toContain('requirement RS-SIGNING-ALG');
    expect(diff.coverage!.gained).toContain('requirement SES-METADATA-CLEARED');
    expect(diff.coverage!.gained.filter((item) => diff.coverage!.lost.includes(item))).toEqual([]);
    const lines = renderDiff(diff);
    expect(lines).toContain(`  before: ${diff.coverage!.before}`);
    expect(lines.find((l) => l.startsWith('  gained: '))).toContain('response DELETE /token-exchange-profiles/{id} 429');
    expect(lines.find((l) => l.startsWith('  lost: '))).toContain('value signing_alg HS256');
    expect(diffReports(after, after).coverage).toMatchObject({ gained: [], lost: [] });
  });

  it('report matrix has a coverage row per target', () => {
    const matrix = buildMatrix([
      { report: before, origin: 'a/report.json', label: 'a' },
      { report: after, origin: 'b/report.json', label: 'b' },
    ]);
    const cell = (r: Report) => `${r.coverage!.document.examined}/${r.coverage!.document.applicable}`;
    expect(renderMatrixMarkdown(matrix)).toMatch(
      new RegExp(
        `\\| \\*\\*coverage\\*\\* \\| ${cell(before)} \\(\\d+ %\\) requirements · responses 1/4 · values 2/14 · operations 2/3 \\| ${cell(after)} .* responses 2/4 · values 1/14 · operations 2/3 \\|`,
      ),
    );
    expect(renderMatrixConsole(matrix)).toContain(`coverage a: ${matrix.targets[0]!.coverage}`);
  });
});

describe('the coverage gate (--min-coverage)', () => {
  // Three exchanges: 204 and 403 of the delete, one resource server; the session update never called.
  const har = () => {
    const path = join(dir, 'gate.har');
    writeFileSync(
      path,
      harOf([
        deleteExchange(),
        errorExchange(deleteExchange(), 403, { message: 'Insufficient scope, expected: delete:token_exchange_profiles' }),
        getExchange(),
      ]),
    );
    return path;
  };
  const validate = (...args: string[]) => cli(['validate', har(), '--report-dir', join(dir, 'gate'), ...args]);

  it('exits 0 at or above it, 1 below it with one line naming the number and the largest gap', async () => {
    const free = await validate();
    expect(free.code, free.stderr).toBe(0);
    const { document } = readReport(join(dir, 'gate')).coverage!;
    const share = Math.floor((document.examined * 100) / document.applicable);
    expect(share).toBeLessThan(100);
    expect((await validate('--min-coverage', String(share))).code).toBe(0);
    const below = await validate('--min-coverage', String(share + 1));
    expect(below.code).toBe(1);
    const lines = below.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      new RegExp(
        `^tmi-conform validate: coverage below --min-coverage: document ${document.examined}/${document.applicable} \\(${share} %\\) < ${share + 1} %; largest gap: \\d+ requirement\\(s\\) not examined \\(.+\\): no test or exchange examined it$`,
      ),
    );
    const responses = await validate('--min-coverage', `document=${share},responses=75`);
    expect(responses.code).toBe(1);
    expect(responses.stderr.trim()).toBe(
      'tmi-conform validate: coverage below --min-coverage: responses 2/4 (50 %) < 75 %; largest gap: DELETE /token-exchange-profiles/{id}: 401, 429 not seen',
    );
  });

  it('a baseline accepts a known gap with a reason; past its until: it counts again', async () => {
    const baseline = join(dir, 'gaps.yaml');
    const gaps = (until: string) =>
      [
        'gaps:',
        '  - gap: response DELETE /token-exchange-profiles/{id} 429',
        '    reason: the tenant has never been pushed to its rate limit',
        `    until: ${until}`,
        '  - gap: response DELETE /token-exchange-profiles/{id} 401',
        '    reason: tokens of the CI client are always valid',
      ].join('\n');
    writeFileSync(baseline, gaps('2999-12-31'));
    const accepted = await validate('--min-coverage', 'document=0,responses=100', '--baseline', baseline);
    expect(accepted.code, accepted.stderr).toBe(0);
    const report = readReport(join(dir, 'gate'));
    expect(report.coverage!.accepted!.map((g) => g.gap)).toEqual([
      'response DELETE /token-exchange-profiles/{id} 429',
      'response DELETE /token-exchange-profiles/{id} 401',
    ]);
    // The figures stay what was examined.
    expect(report.coverage!.responses).toMatchObject({ examined: 2, applicable: 4 });
    expect(reportSchemaError(report)).toBeUndefined();
    writeFileSync(baseline, gaps('2020-01-01'));
    const expired = await validate('--min-coverage', 'responses=100', '--baseline', baseline);
    expect(expired.code).toBe(1);
    expect(expired.stderr.trim()).toBe(
      'tmi-conform validate: coverage below --min-coverage: responses 3/4 (75 %) with 1 accepted gap(s) < 100 %; largest gap: DELETE /token-exchange-profiles/{id}: 429 not seen',
    );
  });

  it('a value that is no percentage is a usage error: exit 2, one line', async () => {
    const bad = await validate('--min-coverage', 'responses=101');
    expect(bad.code).toBe(2);
    expect(bad.stderr.trim().split('\n')).toHaveLength(1);
    expect(bad.stderr).toContain('validate: --min-coverage: "responses=101" is not a percentage');
  });

  it('report merge and run take it too', { timeout: 120_000 }, async () => {
    const merged = await cli(['report', 'merge', join(dir, 'gate'), '--out', join(dir, 'gate-merged'), '--min-coverage', 'operations=100']);
    expect(merged.code).toBe(1);
    expect(merged.stderr.trim()).toBe(
      'tmi-conform report merge: coverage below --min-coverage: operations 2/3 (66 %) < 100 %; largest gap: PATCH /sessions/{id} not called',
    );
    const run = await cli(['run', '--requirement', 'TEP-DELETE-204', '--report-dir', join(dir, 'gate-run'), '--min-coverage', '90']);
    expect(run.code).toBe(1);
    expect(run.stderr.trim()).toMatch(
      /^tmi-conform run: coverage below --min-coverage: document \d+\/\d+ \(\d+ %\) < 90 %; largest gap: \d+ requirement\(s\) not examined \(.+\): not selected \(--requirement TEP-DELETE-204\)$/,
    );
  });
});

const chromiumPath = findChromium();
describe.skipIf(!chromiumPath)(
  chromiumPath
    ? 'report.html shows the coverage table in headless Chromium'
    : 'report.html coverage: SKIPPED, no chromium binary found (apt-get install chromium, or set CHROMIUM_PATH)',
  () => {
    it('operation × status and requirement × operation, greyed where not examined; a screenshot for people to look at', { timeout: 60_000 }, async () => {
      const report = reportOf([
        deleteExchange(),
        errorExchange(deleteExchange(), 403, { message: 'Insufficient scope, expected: delete:token_exchange_profiles' }),
        getExchange(resourceServer({ signing_alg: 'RS256' })),
        updateExchange({ session_metadata: null }, session(null)),
      ]);
      const out = join(dir, 'html');
      const written = await writeReports(report, out);
      const browser = await chromium.launch({ executablePath: chromiumPath!, args: ['--headless', '--no-sandbox', '--disable-gpu'] });
      try {
        const page = await browser.newPage({ viewport: { width: 1360, height: 900 } });
        const errors: string[] = [];
        page.on('console', (message) => {
          if (message.type() === 'error') errors.push(message.text());
        });
        await page.goto(pathToFileURL(written.find((p) => p.endsWith('report.html'))!).href, { waitUntil: 'load' });
        expect(errors).toEqual([]);
        const section = page.locator('#coverage');
        expect(await section.isVisible()).toBe(true);
        // The delete's row: 204 and 403 seen, 401 and 429 not, in grey.
        const cells = await section
          .locator('table.cov')
          .first()
          .locator('tbody tr td')
          .evaluateAll((tds) => tds.map((td) => [td.textContent, td.className, getComputedStyle(td).backgroundColor]));
        expect(cells.map(([text, cls]) => `${text} ${cls}`)).toEqual(['✓ seen', '✗ unseen', '✓ seen', '✗ unseen']);
        expect(cells[1]![2]).not.toBe(cells[0]![2]);
        const notExamined = await section.locator('table.cov td.skip').count();
        expect(notExamined).toBeGreaterThan(0);
        await page.locator('#coverage').scrollIntoViewIfNeeded();
        mkdirSync('/work/shots', { recursive: true });
        await section.screenshot({ path: '/work/shots/coverage-report-html.png' });
      } finally {
        await browser.close();
      }
    });
  },
);
