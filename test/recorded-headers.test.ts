// Recordings are judged for what each entry kept. A recorder that keeps no response header but
// Content-Type (go-vcr's cassettes of real tenants) shows a 429 without X-RateLimit-*: that is
// not judged, and said once; a 429 that kept its other headers but not these still fails, in the
// same file. And a scope outside the catalog is named once, however many exchanges carried it.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { BASE, claims, deleteExchange, errorExchange, getExchange, jwt, resourceServer, STARTED_AT } from '../fixtures/exchanges.ts';
import { ReportBuilder } from '../reports/builder.ts';
import type { Report } from '../reports/model.ts';
import { buildExchange } from '../rules/exchange.ts';
import { judgeExchange } from '../rules/index.ts';
import type { Exchange } from '../rules/types.ts';

const BIN = fileURLToPath(new URL('../bin/tmi-conform.js', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'tmi-recorded-headers-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A HAR entry keeping only the response headers `keep` names; with `mimeType` '' it keeps no media type either. */
function harEntry(e: Exchange, keep: (name: string) => boolean, mimeType = 'application/json'): Record<string, unknown> {
  const headers = (h: Record<string, string>) => Object.entries(h).map(([name, value]) => ({ name, value }));
  const kept = Object.fromEntries(Object.entries(e.response!.headers).filter(([name]) => keep(name)));
  return {
    startedDateTime: e.startedAt,
    time: e.durationMs ?? 0,
    request: { method: e.request.method, url: e.request.url, httpVersion: 'HTTP/1.1', headers: headers(e.request.headers) },
    response: {
      status: e.response!.status,
      httpVersion: 'HTTP/1.1',
      headers: headers(kept),
      content: { size: e.response!.body?.text.length ?? 0, mimeType, ...(e.response!.body ? { text: e.response!.body.text } : {}) },
    },
  };
}

function validateHar(name: string, entries: Array<Record<string, unknown>>) {
  const path = join(dir, `${name}.har`);
  writeFileSync(path, JSON.stringify({ log: { version: '1.2', creator: { name: 'go-vcr', version: '4' }, entries } }));
  const reportDir = join(dir, name);
  const result = spawnSync(process.execPath, [BIN, 'validate', path, '--report-dir', reportDir], {
    encoding: 'utf8',
    env: { ...process.env, GITHUB_STEP_SUMMARY: '' },
  });
  return { code: result.status, stdout: result.stdout, report: JSON.parse(readFileSync(join(reportDir, 'report.json'), 'utf8')) as Report };
}

/** A 429 of a real tenant as it was sent (its headers all there), on an operation the document does not detail. */
const throttled = (i: number) =>
  errorExchange(
    buildExchange({ startedAt: STARTED_AT, method: 'GET', url: `${BASE}/users/auth0%7C${i}`, requestHeaders: { authorization: `Bearer ${jwt(claims())}` } }),
    429,
    { statusCode: 429, message: 'Too Many Requests' },
    {
      date: 'Fri, 15 Jan 2027 08:00:00 GMT',
      'x-ratelimit-limit': '10',
      'x-ratelimit-remaining': '0',
      'x-ratelimit-reset': '1800000000',
    },
  );
const onlyContentType = (name: string) => name === 'content-type';
const noHeader = () => false;
const everyHeader = () => true;
const noRateLimitHeaders = (name: string) => !name.startsWith('x-ratelimit-');
const RL_NOT_RECORDED = 'its response headers (RL-429-HEADERS): the recording kept no response header but Content-Type';

describe('a recording that kept no response header but Content-Type', () => {
  it('gives no header finding on its 429s, and says once why', () => {
    const entries = [getExchange(), ...[1, 2, 3].map(throttled), deleteExchange()].map((e) => harEntry(e, onlyContentType));
    const { code, stdout, report } = validateHar('go-vcr', entries);
    expect(code, stdout).toBe(0);
    expect(report.requirements.find((r) => r.id === 'RL-429-HEADERS')!.counts.findings).toBe(0);
    expect(report.traffic!.notJudged).toEqual([
      { reason: expect.stringContaining('the recording kept no response header but Content-Type'), count: 3, exchanges: ['1', '2', '3'] },
    ]);
    expect(stdout.match(/kept no response header but Content-Type/g)).toHaveLength(1);
    expect(stdout).toContain('not judged: 3 exchange(s), its response headers (RL-429-HEADERS)');
  });

  it('the same 429s stripped of their rate-limit headers, in a recording that keeps headers elsewhere, still fail', () => {
    const entries = [...[1, 2, 3].map(throttled).map((e) => harEntry(e, noRateLimitHeaders)), harEntry(getExchange(), () => true)];
    const { code, report } = validateHar('stripped', entries);
    expect(code).toBe(1);
    expect(report.requirements.find((r) => r.id === 'RL-429-HEADERS')).toMatchObject({ status: 'fail', counts: { findings: 3 } });
    expect(report.traffic!.notJudged).toBeUndefined();
  });

  it('the same 429s with every header but Content-Type dropped, after a response that kept its headers, are not judged either: each entry shows what it kept', () => {
    const entries = [harEntry(getExchange(), everyHeader), ...[1, 2].map(throttled).map((e) => harEntry(e, onlyContentType))];
    const { code, report } = validateHar('dropped-later', entries);
    expect(code).toBe(0);
    expect(report.requirements.find((r) => r.id === 'RL-429-HEADERS')!.counts.findings).toBe(0);
    expect(report.traffic!.notJudged).toEqual([{ reason: RL_NOT_RECORDED, count: 2, exchanges: ['1', '2'] }]);
  });
});

describe('one recording holding the entries of several recorders', () => {
  it('judges each entry for what it kept: header-less and Content-Type-only 429s are not charged, a complete 429 without the headers is, in the same file', () => {
    const entries = [
      harEntry(throttled(1), noHeader, ''), // a mocking library's: no header, no media type
      harEntry(throttled(2), onlyContentType),
      harEntry(getExchange(), everyHeader),
      harEntry(throttled(3), noRateLimitHeaders), // kept Date and Content-Type: the tenant sent no X-RateLimit-*
      harEntry(getExchange(resourceServer({ id: 'rs_2' }), 'rs_2'), noHeader, ''), // a JSON body with no Content-Type recorded
    ];
    const { code, stdout, report } = validateHar('mixed', entries);
    expect(code, stdout).toBe(1);
    const rl429 = report.requirements.find((r) => r.id === 'RL-429-HEADERS')!;
    expect(rl429).toMatchObject({ status: 'fail', counts: { findings: 1 } });
    expect(report.requirements.filter((r) => r.status === 'fail').map((r) => r.id)).toEqual(['RL-429-HEADERS']);
    expect(rl429.evidence.filter((e) => e.status === 'fail').map((e) => e.exchange?.id)).toEqual(['3']);
    expect(report.requirements.find((r) => r.id === 'GEN-JSON-RESPONSE')).toMatchObject({ status: 'pass', counts: { findings: 0 } });
    expect(report.traffic!.notJudged).toEqual([{ reason: RL_NOT_RECORDED, count: 2, exchanges: ['0', '1'] }]);
    expect(stdout.match(/kept no response header but Content-Type/g)).toHaveLength(1);
    expect(stdout).toContain(`not judged: 2 exchange(s), ${RL_NOT_RECORDED}`);
  });
});

describe('a scope outside the catalog', () => {
  it('is named once in the report, however many exchanges carried it; two such scopes, twice', () => {
    const builder = new ReportBuilder({ kind: 'validate', source: 'test' });
    const token = jwt(claims('read:resource_servers read:starships read:planets'));
    for (let i = 0; i < 50; i++) {
      const exchange = getExchange(undefined, `rs_${i}`, { requestHeaders: { authorization: `Bearer ${token}` }, id: String(i) });
      builder.addExchange(exchange, judgeExchange(exchange));
    }
    const named = builder.build({ failOn: 'must' }).clientFindings.filter((f) => f.requirement === 'SCOPE-IN-CATALOG');
    expect(named.map((f) => [f.received, f.count])).toEqual([
      ['"read:starships"', 50],
      ['"read:planets"', 50],
    ]);
  });
});
