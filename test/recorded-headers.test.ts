// Recordings are judged for what they kept. A recorder that keeps no response header but
// Content-Type (go-vcr's cassettes of real tenants) shows a 429 without X-RateLimit-*: that is
// not judged, and said once; the same 429s stripped from a recording that keeps headers elsewhere
// still fail. And a scope outside the catalog is named once, however many exchanges carried it.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { BASE, claims, deleteExchange, errorExchange, getExchange, jwt, STARTED_AT } from '../fixtures/exchanges.ts';
import { HELD_AT_MOST, KeptHeadersGate } from '../recordings/kept-headers.ts';
import { ReportBuilder } from '../reports/builder.ts';
import type { Report } from '../reports/model.ts';
import { buildExchange } from '../rules/exchange.ts';
import { judgeExchange, type Judgement } from '../rules/index.ts';
import type { Exchange } from '../rules/types.ts';

const BIN = fileURLToPath(new URL('../bin/tmi-conform.js', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'tmi-recorded-headers-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A HAR entry keeping only the response headers `keep` names. */
function harEntry(e: Exchange, keep: (name: string) => boolean): Record<string, unknown> {
  const headers = (h: Record<string, string>) => Object.entries(h).map(([name, value]) => ({ name, value }));
  const kept = Object.fromEntries(Object.entries(e.response!.headers).filter(([name]) => keep(name)));
  return {
    startedDateTime: e.startedAt,
    time: e.durationMs ?? 0,
    request: { method: e.request.method, url: e.request.url, httpVersion: 'HTTP/1.1', headers: headers(e.request.headers) },
    response: { status: e.response!.status, httpVersion: 'HTTP/1.1', headers: headers(kept), content: { size: e.response!.body?.text.length ?? 0, mimeType: 'application/json', ...(e.response!.body ? { text: e.response!.body.text } : {}) } },
  };
}

function validateHar(name: string, entries: Array<Record<string, unknown>>) {
  const path = join(dir, `${name}.har`);
  writeFileSync(path, JSON.stringify({ log: { version: '1.2', creator: { name: 'go-vcr', version: '4' }, entries } }));
  const reportDir = join(dir, name);
  const result = spawnSync(process.execPath, [BIN, 'validate', path, '--report-dir', reportDir], { encoding: 'utf8', env: { ...process.env, GITHUB_STEP_SUMMARY: '' } });
  return { code: result.status, stdout: result.stdout, report: JSON.parse(readFileSync(join(reportDir, 'report.json'), 'utf8')) as Report };
}

/** A 429 of a real tenant as it was sent (its headers all there), on an operation the document does not detail. */
const throttled = (i: number) =>
  errorExchange(buildExchange({ startedAt: STARTED_AT, method: 'GET', url: `${BASE}/users/auth0%7C${i}`, requestHeaders: { authorization: `Bearer ${jwt(claims())}` } }), 429, { statusCode: 429, message: 'Too Many Requests' }, {
    date: 'Fri, 15 Jan 2027 08:00:00 GMT',
    'x-ratelimit-limit': '10',
    'x-ratelimit-remaining': '0',
    'x-ratelimit-reset': '1800000000',
  });
const onlyContentType = (name: string) => name === 'content-type';
const noRateLimitHeaders = (name: string) => !name.startsWith('x-ratelimit-');

describe('a recording that kept no response header but Content-Type', () => {
  it('gives no header finding on its 429s, and says once why', () => {
    const entries = [getExchange(), ...[1, 2, 3].map(throttled), deleteExchange()].map((e) => harEntry(e, onlyContentType));
    const { code, stdout, report } = validateHar('go-vcr', entries);
    expect(code, stdout).toBe(0);
    expect(report.requirements.find((r) => r.id === 'RL-429-HEADERS')!.counts.findings).toBe(0);
    expect(report.traffic!.notJudged).toEqual([{ reason: expect.stringContaining('the recording kept no response header but Content-Type'), count: 3, exchanges: ['1', '2', '3'] }]);
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

  it('the same 429s with every header but Content-Type dropped, after a response that kept its headers, fail too', () => {
    const entries = [harEntry(getExchange(), () => true), ...[1, 2].map(throttled).map((e) => harEntry(e, onlyContentType))];
    const { code, report } = validateHar('dropped-later', entries);
    expect(code).toBe(1);
    expect(report.requirements.find((r) => r.id === 'RL-429-HEADERS')!.counts.findings).toBe(2);
  });
});

describe('KeptHeadersGate', () => {
  const handed: Array<[string, Judgement | undefined]> = [];
  const gateOf = () => {
    handed.length = 0;
    return new KeptHeadersGate((exchange, judgement) => handed.push([exchange.id!, judgement]));
  };
  const stripped = (e: Exchange, id: string): Exchange => ({ ...e, id, response: { ...e.response!, headers: { 'content-type': 'application/json' } } });

  it('hands exchanges on in order, holding only those that judge response headers until the recording shows it keeps them', () => {
    const gate = gateOf();
    const first = stripped(throttled(1), 'a');
    const plain = stripped(getExchange(), 'b');
    const kept = { ...getExchange(), id: 'c' };
    gate.pass(first, judgeExchange(first));
    gate.pass(plain, judgeExchange(plain));
    expect(handed.map(([id]) => id)).toEqual(['b']);
    gate.pass(kept, judgeExchange(kept));
    expect(handed.map(([id]) => id)).toEqual(['b', 'a', 'c']);
    expect(handed[1]![1]!.findings.map((f) => f.requirement)).toContain('RL-429-HEADERS');
    gate.end();
    expect(handed).toHaveLength(3);
  });

  it(`gives up waiting after ${HELD_AT_MOST} held exchanges: the recording keeps no headers`, () => {
    const gate = gateOf();
    const one = stripped(throttled(1), 'x');
    const judgement = judgeExchange(one);
    for (let i = 0; i < HELD_AT_MOST - 1; i++) gate.pass(one, judgement);
    expect(handed).toHaveLength(0);
    gate.pass(one, judgement);
    expect(handed).toHaveLength(HELD_AT_MOST);
    expect(handed.every(([, j]) => j!.responseHeadersNotKept === true && !j!.examined.includes('RL-429-HEADERS'))).toBe(true);
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
