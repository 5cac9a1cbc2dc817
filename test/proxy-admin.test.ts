// The proxy's admin listener: /metrics (read back with a Prometheus text-format parser) equals
// /status.json and the status line after a known traffic mix; the token is checked on every
// request; the command refuses an address other than loopback without a token; nothing it
// serves holds a secret the reports would not.
import { Tally } from '../judging/tally.ts';
import { createServer, get } from 'node:http';
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startProxy } from '../proxy/session.ts';
import { parseTarget } from '../proxy/forward/target.ts';
import parsePrometheus from 'parse-prometheus-text-format';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { statusLine, type StatusCounts } from '../proxy/record/status.ts';
import { claims, FULL_SCOPES, getExchange, jwt, rateLimitHeaders, resourceServer } from '../fixtures/exchanges.ts';
import { MAX_CLIENTS, MAX_REQUIREMENTS, OVERFLOW_LABEL, ProxyMetrics } from '../proxy/admin/metrics.ts';
import type { Judgement } from '../rules/index.ts';
import type { Finding } from '../rules/types.ts';
import { startAdminTarget } from './helpers/admin-target.ts';
import { rawExchange, recorded, startTestProxy, type ProxyUnderTest } from './helpers/proxy.ts';
import { runCli } from './helpers/cli.ts';

const TOKEN = jwt(claims());
const ADMIN_TOKEN = 'admin-token-0123456789abcdef';

describe('the admin listener after a known traffic mix', () => {
  let target: Awaited<ReturnType<typeof startAdminTarget>>;
  let under: ProxyUnderTest;
  const lines: string[] = [];

  beforeAll(async () => {
    target = await startAdminTarget();
    under = await startTestProxy(target.origin, { admin: { host: '127.0.0.1', port: 0 }, statusIntervalMs: 20, log: (line) => lines.push(line) });
    const send = (method: string, path: string, headers: Record<string, string> = {}) =>
      fetch(under.proxy.url + path, { method, headers }).then((r) => r.text());
    const bearer = { authorization: `Bearer ${TOKEN}` };
    await send('GET', '/api/v2/resource-servers/rs_1', bearer);
    await send('GET', '/api/v2/resource-servers/rs_1', bearer);
    await send('GET', '/api/v2/resource-servers/rs_bad', bearer);
    await send('DELETE', '/api/v2/token-exchange-profiles/tep_1', bearer);
    await send('DELETE', '/api/v2/token-exchange-profiles/tep_2'); // no token, carried out: a security finding
    await send('GET', '/health');
    // Refused before it became an exchange (absolute-form): counted on the forwarding thread.
    await rawExchange(under.proxy.url, 'GET http://elsewhere.example/ HTTP/1.1\r\nHost: elsewhere.example\r\n\r\n', { endAfterWrite: true });
    await recorded(under.proxy, 6);
  });

  afterAll(async () => {
    await under?.dispose();
    await target?.close();
  });

  const admin = (path: string, init: RequestInit = {}) => fetch(under.proxy.adminUrl + path, init);

  /** /status.json once it has counted everything sent. */
  async function statusJson(): Promise<{ counts: StatusCounts; line: string; verdict: { passed: boolean } }> {
    for (;;) {
      const status = (await (await admin('/status.json')).json()) as { counts: StatusCounts; line: string; verdict: { passed: boolean } };
      if (status.counts.exchanges === 6 && status.counts.refused === 1) return status;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  it('serves /metrics in the text format, its counters equal to /status.json and to the status line', async () => {
    const { counts, line } = await statusJson();
    const response = await admin('/metrics');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('text/plain');
    const families = parsePrometheus(await response.text());
    const family = (name: string) => families.find((f) => f.name === name)!;
    const sum = (name: string, where: (labels: Record<string, string>) => boolean = () => true) =>
      family(name)
        .metrics.filter((m) => where(m.labels ?? {}))
        .reduce((n, m) => n + Number(m.value), 0);

    expect(counts).toMatchObject({ exchanges: 6, notCovered: 1, failed: 0, byOperation: { getResourceServer: 3, deleteTokenExchangeProfile: 2 } });
    expect(family('tmi_conform_exchanges_total').type).toBe('COUNTER');
    expect(sum('tmi_conform_exchanges_total')).toBe(counts.exchanges);
    expect(sum('tmi_conform_exchanges_total', (l) => l['operation'] === 'outside_api')).toBe(counts.notCovered);
    for (const [operation, n] of Object.entries(counts.byOperation)) expect(sum('tmi_conform_exchanges_total', (l) => l['operation'] === operation)).toBe(n);
    expect(sum('tmi_conform_exchanges_total', (l) => l['status'] === '204')).toBe(2);
    expect(sum('tmi_conform_exchanges_failed_total')).toBe(counts.failed);
    expect(sum('tmi_conform_requests_refused_total')).toBe(counts.refused);

    // Findings by requirement, level and subject: as many as the status counts have, requirement by requirement.
    expect(sum('tmi_conform_findings_total', (l) => l['subject'] === 'implementation' && l['level'] === 'must')).toBe(counts.findings.must);
    expect(sum('tmi_conform_findings_total', (l) => l['subject'] === 'implementation' && l['level'] === 'should')).toBe(counts.findings.should);
    expect(sum('tmi_conform_findings_total', (l) => l['subject'] === 'client')).toBe(counts.findings.client);
    expect(Object.keys(counts.byRequirement).length).toBeGreaterThan(1);
    for (const [requirement, { count }] of Object.entries(counts.byRequirement))
      expect(sum('tmi_conform_findings_total', (l) => l['requirement'] === requirement)).toBe(count);

    // The DELETE without a token that the target carried out.
    expect(sum('tmi_conform_security_findings_total')).toBeGreaterThanOrEqual(1);

    // One latency observation per exchange the target answered (all six).
    const latency = family('tmi_conform_upstream_latency_seconds');
    expect(latency.type).toBe('HISTOGRAM');
    expect(Number(latency.metrics[0]!.count)).toBe(counts.exchanges);

    // The last X-RateLimit-Remaining of the client the token names.
    expect(family('tmi_conform_rate_limit_remaining').metrics).toEqual([{ labels: { client: 'client-full' }, value: '39' }]);
    // The journal's gauges follow what it wrote.
    expect(Number(family('tmi_conform_journal_segments').metrics[0]!.value)).toBe(1);
    expect(Number(family('tmi_conform_journal_bytes').metrics[0]!.value)).toBeGreaterThan(0);

    // The status line says the same numbers.
    expect(line).toBe(statusLine(counts));
    expect(line).toMatch(
      new RegExp(
        `^6 exchanges \\(1 outside the API, 1 refused\\); findings: ${counts.findings.must} must, ${counts.findings.should} should, ${counts.findings.client} client`,
      ),
    );
    await expect.poll(() => lines.includes(line)).toBe(true);
  });

  it('says the verdict so far, as the reports would', async () => {
    const { verdict } = await statusJson();
    expect(verdict.passed).toBe(false);
  });

  it('keeps the findings for a page opened late, each with its redacted exchange and curl line, never the token', async () => {
    const detail = await admin('/findings/1');
    expect(detail.status).toBe(200);
    const text = await detail.text();
    const { finding, exchange, curl } = JSON.parse(text) as {
      finding: { requirement: string };
      exchange: { request: { headers: Record<string, string> } };
      curl: string;
    };
    expect(finding.requirement).toMatch(/^[A-Z]/);
    expect(exchange.request.headers['authorization']).toBe('Bearer [REDACTED]');
    expect(curl).toContain('$TOKEN');
    expect(text).not.toContain(TOKEN.split('.')[1]!);
    expect((await admin('/findings/999')).status).toBe(404);
  });

  it('answers with security headers, and refuses a request for another host name (DNS rebinding)', async () => {
    const page = await admin('/');
    expect(page.status).toBe(200);
    const csp = page.headers.get('content-security-policy')!;
    expect(csp).toContain("default-src 'none'");
    expect(csp).toMatch(/script-src 'sha256-[^']+';/);
    expect(csp).not.toContain('unsafe-inline');
    expect(page.headers.get('x-content-type-options')).toBe('nosniff');
    const html = await page.text();
    expect(html).not.toMatch(/<script src|<link rel="stylesheet"|https?:\/\/(?!127\.0\.0\.1)[a-z]/);
    // fetch may not set Host: node:http may.
    const statusFor = (host: string) =>
      new Promise<number | undefined>((resolve, reject) =>
        get(`${under.proxy.adminUrl}/status.json`, { headers: { host } }, (res) => resolve(res.resume().statusCode)).on('error', reject),
      );
    expect(await statusFor('attacker.example:80')).toBe(403);
    expect(await statusFor(`localhost:${new URL(under.proxy.adminUrl!).port}`)).toBe(200);
  });
});

describe('the admin token', () => {
  let target: Awaited<ReturnType<typeof startAdminTarget>>;
  let under: ProxyUnderTest;

  beforeAll(async () => {
    target = await startAdminTarget();
    under = await startTestProxy(target.origin, { admin: { host: '127.0.0.1', port: 0, token: ADMIN_TOKEN } });
  });

  afterAll(async () => {
    await under?.dispose();
    await target?.close();
  });

  const admin = (path: string, init: RequestInit = {}) => fetch(under.proxy.adminUrl + path, { redirect: 'manual', ...init });

  it('answers 401 without it or with a wrong one, on every endpoint, and 200 with it', async () => {
    for (const path of ['/metrics', '/status.json', '/events', '/findings/1', '/rate-limits']) {
      expect((await admin(path)).status, path).toBe(401);
      expect((await admin(path, { headers: { authorization: 'Bearer admin-token-0123456789abcdeX' } })).status, path).toBe(401);
      expect((await admin(path, { headers: { authorization: `Bearer ${ADMIN_TOKEN}x` } })).status, path).toBe(401);
    }
    expect((await admin('/metrics')).headers.get('www-authenticate')).toContain('Bearer');
    expect((await admin('/metrics', { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).status).toBe(200);
    expect((await admin('/status.json', { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).status).toBe(200);
  });

  it('asks for it on the page; the right one gets a cookie (not the token) that opens the page and its events', async () => {
    const page = await admin('/');
    expect(page.status).toBe(401);
    expect(await page.text()).toContain('name="token"');
    const form = (token: string) =>
      admin('/login', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ token }).toString() });
    const wrong = await form('not-the-token-at-all');
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get('set-cookie')).toBeNull();
    const right = await form(ADMIN_TOKEN);
    expect(right.status).toBe(303);
    const cookie = right.headers.get('set-cookie')!;
    expect(cookie).toMatch(/HttpOnly; SameSite=Strict/);
    expect(cookie).not.toContain(ADMIN_TOKEN);
    const session = cookie.split(';')[0]!;
    expect((await admin('/', { headers: { cookie: session } })).status).toBe(200);
    expect((await admin('/status.json', { headers: { cookie: session.replace(/.$/, (c) => (c === '0' ? '1' : '0')) } })).status).toBe(401);
    const events = await admin('/events', { headers: { cookie: session } });
    expect(events.status).toBe(200);
    expect(events.headers.get('content-type')).toContain('text/event-stream');
    await events.body?.cancel();
  });
});

describe('an admin address in use', () => {
  it('stops the start with one line naming --admin, before the journal is touched', async () => {
    const busy = createServer();
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
    const port = (busy.address() as AddressInfo).port;
    const dir = mkdtempSync(join(tmpdir(), 'tmi-admin-busy-'));
    try {
      await expect(
        startProxy({
          target: parseTarget('http://127.0.0.1:9'),
          host: '127.0.0.1',
          port: 0,
          journalPath: join(dir, 'traffic.jsonl'),
          reportDir: join(dir, 'reports'),
          failOn: 'must',
          statusIntervalMs: 0,
          admin: { host: '127.0.0.1', port },
        }),
      ).rejects.toThrow(`cannot listen on --admin 127.0.0.1:${port}: the address is in use`);
      expect(existsSync(join(dir, 'traffic.jsonl'))).toBe(false);
    } finally {
      busy.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('tmi-conform proxy --admin', () => {
  it('refuses an address other than loopback without --admin-token: exit 2, one line', async () => {
    const result = await runCli(['proxy', '--target', 'http://127.0.0.1:9', '--listen', '127.0.0.1:0', '--admin', '0.0.0.0:0']);
    expect(result.code).toBe(2);
    expect(result.stderr.trim().split('\n')).toEqual([expect.stringMatching(/--admin 0\.0\.0\.0:0 is reachable from other machines: give --admin-token/)]);
  });

  it('refuses a short token, and a token without --admin', async () => {
    const short = await runCli(['proxy', '--target', 'http://127.0.0.1:9', '--admin', '0.0.0.0:0', '--admin-token', 'short']);
    expect(short.code).toBe(2);
    expect(short.stderr).toMatch(/at least 16 characters/);
    // The environment variable is read and held to the same rule: it keeps the token off the command line.
    const shortInEnvironment = await runCli(['proxy', '--target', 'http://127.0.0.1:9', '--admin', '0.0.0.0:0'], { TMI_ADMIN_TOKEN: 'short' });
    expect(shortInEnvironment.code).toBe(2);
    expect(shortInEnvironment.stderr).toMatch(/the admin token \(--admin-token or TMI_ADMIN_TOKEN\) must be at least 16 characters/);
    const alone = await runCli(['proxy', '--target', 'http://127.0.0.1:9', '--admin-token', ADMIN_TOKEN]);
    expect(alone.code).toBe(2);
    expect(alone.stderr).toMatch(/--admin-token goes with --admin/);
  });
});

describe('the journal gauges, with rotation', () => {
  it('count the segments written and their bytes', async () => {
    const target = await startAdminTarget();
    const under = await startTestProxy(target.origin, {
      harPath: undefined,
      admin: { host: '127.0.0.1', port: 0 },
      rotation: { maxBytes: 4000, compress: false },
    });
    try {
      for (let i = 0; i < 8; i++)
        await fetch(`${under.proxy.url}/api/v2/resource-servers/rs_1`, { headers: { authorization: `Bearer ${TOKEN}` } }).then((r) => r.text());
      await recorded(under.proxy, 8);
      const segments = readdirSync(under.dir).filter((name) => /\.\d{6}\.jsonl$/.test(name));
      expect(segments.length).toBeGreaterThan(1);
      const bytes = segments.reduce((sum, name) => sum + statSync(join(under.dir, name)).size, 0);
      let families: ReturnType<typeof parsePrometheus> = [];
      const gauge = (name: string) => Number(families.find((f) => f.name === name)?.metrics[0]?.value);
      // The gauges follow each journal write, which follows the exchange's recording.
      for (let tries = 0; tries < 200 && gauge('tmi_conform_journal_bytes') !== bytes; tries++) {
        families = parsePrometheus(await (await fetch(`${under.proxy.adminUrl}/metrics`)).text());
        if (gauge('tmi_conform_journal_bytes') !== bytes) await new Promise((resolve) => setTimeout(resolve, 10));
      }
      expect(gauge('tmi_conform_journal_bytes')).toBe(bytes);
      expect(gauge('tmi_conform_journal_segments')).toBe(segments.length);
    } finally {
      await under.dispose();
      await target.close();
    }
  });
});

describe('the metrics keep their labels bounded', () => {
  const judged = (findings: Finding[] = []): Judgement => ({
    operation: { operation: 'getResourceServer', name: 'GET /resource-servers/{id}', query: {}, prefix: '/api/v2' },
    findings,
    examined: [],
  });
  const finding = (requirement: string): Finding => ({ requirement, level: 'should', subject: 'implementation', check: 'test', expected: 'x', received: 'y' });
  const families = async (metrics: ProxyMetrics) => parsePrometheus(await metrics.text());

  it('names the first clients of X-RateLimit-Remaining, and counts the others as one', async () => {
    const metrics = new ProxyMetrics();
    for (let i = 0; i < MAX_CLIENTS + 10; i++) {
      const exchange = getExchange(resourceServer(), 'rs_1', {
        requestHeaders: { Authorization: `Bearer ${jwt(claims(FULL_SCOPES, `client-${i}`))}` },
        responseHeaders: rateLimitHeaders(i),
      });
      metrics.observe({ exchange, judgement: judged() });
    }
    const series = (await families(metrics)).find((f) => f.name === 'tmi_conform_rate_limit_remaining')!.metrics;
    expect(series).toHaveLength(MAX_CLIENTS + 1);
    expect(series.find((m) => m.labels?.['client'] === 'client-0')?.value).toBe('0');
    expect(series.find((m) => m.labels?.['client'] === OVERFLOW_LABEL)?.value).toBe(String(MAX_CLIENTS + 9));
  });

  it('names the first requirement ids of the findings, and counts the others as one', async () => {
    const metrics = new ProxyMetrics();
    const tally = new Tally();
    metrics.countsFrom(() => tally.counts);
    for (let i = 0; i < MAX_REQUIREMENTS + 5; i++) tally.count({ status: 200, failed: false, internalError: false }, judged([finding(`OAS-TEST-${i}`)]));
    const series = (await families(metrics)).find((f) => f.name === 'tmi_conform_findings_total')!.metrics;
    expect(series).toHaveLength(MAX_REQUIREMENTS + 1);
    expect(series.find((m) => m.labels?.['requirement'] === OVERFLOW_LABEL)?.value).toBe('5');
  });
});
