// `tmi-conform validate`: judges recordings offline, prints a summary, writes the reports,
// and answers with the contract's exit codes.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import type { Exchange } from '../rules/types.ts';
import type { Report } from '../reports/model.ts';
import { deleteExchange, errorExchange, getExchange, resourceServer, updateExchange } from '../fixtures/exchanges.ts';

const BIN = fileURLToPath(new URL('../bin/tmi-conform.js', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'tmi-validate-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function harEntry(e: Exchange): Record<string, unknown> {
  const headers = (h: Record<string, string>) => Object.entries(h).map(([name, value]) => ({ name, value }));
  return {
    startedDateTime: e.startedAt,
    time: e.durationMs ?? 0,
    request: { method: e.request.method, url: e.request.url, httpVersion: 'HTTP/1.1', headers: headers(e.request.headers), ...(e.request.body ? { postData: { mimeType: 'application/json', text: e.request.body.text } } : {}) },
    response: { status: e.response!.status, httpVersion: 'HTTP/1.1', headers: headers(e.response!.headers), content: { size: e.response!.body?.text.length ?? 0, mimeType: 'application/json', ...(e.response!.body ? { text: e.response!.body.text } : {}) } },
  };
}

function writeHar(name: string, exchanges: Exchange[]): string {
  const path = join(dir, name);
  writeFileSync(path, JSON.stringify({ log: { version: '1.2', creator: { name: 'test', version: '1' }, entries: exchanges.map(harEntry) } }));
  return path;
}

function validate(...args: string[]) {
  const result = spawnSync(process.execPath, [BIN, 'validate', ...args], { encoding: 'utf8', env: { ...process.env, GITHUB_STEP_SUMMARY: '' } });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

const readReport = (reportDir: string) => JSON.parse(readFileSync(join(reportDir, 'report.json'), 'utf8')) as Report;
const uncovered = { ...getExchange(), request: { ...getExchange().request, url: 'https://tenant.example.com/api/v2/users/u1' } };

describe('tmi-conform validate', () => {
  it('conforming traffic: exit 0, summary, reports with passes and the uncovered exchange counted', () => {
    const file = writeHar('good.har', [deleteExchange(), updateExchange(), getExchange(), uncovered]);
    const reportDir = join(dir, 'good');
    const { code, stdout, stderr } = validate(file, '--report-dir', reportDir);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout).toContain('4 exchanges in 1 file(s): 3 judged, 1 not covered by the document');
    expect(stdout).toContain('verdict: conforming');
    const report = readReport(reportDir);
    expect(report.passed).toBe(true);
    expect(report.summary.fail).toBe(0);
    expect(report.traffic).toMatchObject({ exchanges: 4, notCovered: 1, byOperation: { deleteTokenExchangeProfile: { '204': 1 }, updateSession: { '200': 1 }, getResourceServer: { '200': 1 } } });
    const byId = new Map(report.requirements.map((r) => [r.id, r]));
    expect(byId.get('TEP-DELETE-204')!.status).toBe('pass');
    expect(byId.get('SES-RESPONSE-SCHEMA')!.status).toBe('pass');
    // Nothing in this traffic was a 429: the 429 rule was not examined, so it is not "pass".
    expect(byId.get('RL-429-HEADERS')!.status).toBe('skip');
    expect(byId.get('RL-429-HEADERS')!.reason).toMatch(/no test or exchange examined it/);
    expect(readFileSync(join(reportDir, 'junit.xml'), 'utf8')).toContain('<testsuites');
  });

  it('a must violation: exit 1, the requirement failed with its evidence, secrets redacted', () => {
    const file = writeHar('bad.har', [getExchange(resourceServer({ signing_alg: 'HS512' })), errorExchange(deleteExchange(), 429, { message: 'slow down' }, { 'x-ratelimit-reset': '' })]);
    const reportDir = join(dir, 'bad');
    const { code, stdout } = validate(file, '--report-dir', reportDir);
    expect(code).toBe(1);
    expect(stdout).toContain('verdict: NOT conforming');
    expect(stdout).toMatch(/RS-SIGNING-ALG\s+must\s+implementation\s+1/);
    const report = readReport(reportDir);
    const alg = report.requirements.find((r) => r.id === 'RS-SIGNING-ALG')!;
    expect(alg.status).toBe('fail');
    expect(alg.evidence[0]!.message).toContain('expected signing_alg to be one of "HS256", "RS256", "RS512", "PS256"; received "HS512"');
    expect(report.requirements.find((r) => r.id === 'RL-429-HEADERS')!.status).toBe('fail');
    const text = readFileSync(join(reportDir, 'report.json'), 'utf8');
    expect(text).not.toContain('a-secret-of-32-characters-length'); // signing_secret
    expect(text).not.toMatch(/Bearer eyJ/);
  });

  it('--fail-on should turns warnings into a failing exit code', () => {
    const file = writeHar('warn.har', [errorExchange(getExchange(), 418, { message: 'teapot' })]);
    expect(validate(file, '--report-dir', join(dir, 'warn')).code).toBe(0);
    expect(readReport(join(dir, 'warn')).summary.warn).toBeGreaterThan(0);
    expect(validate(file, '--report-dir', join(dir, 'warn2'), '--fail-on', 'should').code).toBe(1);
  });

  it('unreadable input: exit 2 and one line naming the file, no stack trace', () => {
    const broken = join(dir, 'broken.har');
    writeFileSync(broken, '{"log": {"entries": [{"request": }]}}');
    for (const args of [[broken], [join(dir, 'missing.har')], [], ['--fail-on', 'sometimes', broken]]) {
      const { code, stderr } = validate(...args, '--report-dir', join(dir, 'x'));
      expect(code, args.join(' ')).toBe(2);
      expect(stderr.trim().split('\n'), stderr).toHaveLength(1);
      expect(stderr).not.toMatch(/\n\s+at /);
    }
    expect(validate(broken).stderr).toContain('broken.har');
  });
});
