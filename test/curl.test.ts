// The curl command of a failing exchange: method, URL, headers and body as sent, quoted for a
// POSIX shell, the bearer token as $TOKEN and no secret; and which exchange a requirement's
// command sends.
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { exchangeEvidence } from '../reports/builder.ts';
import { curlCommand, curlVariables, reproducible } from '../reports/curl.ts';
import type { Evidence, RequirementResult } from '../reports/model.ts';
import { getExchange, jwt, claims, updateExchange } from '../fixtures/exchanges.ts';

/** The words a shell makes of `command` (echoed back by printf), with TOKEN set. */
const words = (command: string, env: Record<string, string> = {}) =>
  execFileSync('sh', ['-c', `set -- ${command.replace(/^curl /, '')}; printf '%s\\n' "$@"`], { env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', ...env }, encoding: 'utf8' }).split('\n').slice(0, -1);

describe('curlCommand', () => {
  it('a GET: the URL and the headers as sent, the bearer token as $TOKEN, nothing curl sets itself', () => {
    const token = jwt(claims());
    const exchange = getExchange(undefined, 'rs_1', { requestHeaders: { Authorization: `Bearer ${token}`, Accept: 'application/json', Host: 'tenant.example.com', 'Content-Length': '0', 'User-Agent': 'sdk/1.0' } });
    const command = curlCommand(exchangeEvidence(exchange));
    expect(command).toBe(`curl -i 'https://tenant.example.com/api/v2/resource-servers/rs_1' -H "authorization: Bearer $TOKEN" -H 'accept: application/json'`);
    expect(command).not.toContain(token.split('.')[1]!);
    expect(curlVariables(command)).toEqual(['TOKEN']);
    expect(words(command, { TOKEN: 'abc' })).toEqual(['-i', 'https://tenant.example.com/api/v2/resource-servers/rs_1', '-H', 'authorization: Bearer abc', '-H', 'accept: application/json']);
  });

  it('a PATCH with a body: -X and --data-raw, quotes in the body and the URL survive the shell', () => {
    const sent = { session_metadata: { note: `it's "quoted" $HOME \`x\`` } };
    const exchange = updateExchange(sent, undefined, { url: "https://tenant.example.com/api/v2/sessions/it's" });
    const command = curlCommand(exchangeEvidence(exchange));
    expect(command).toMatch(/^curl -i -X 'PATCH' /);
    const argv = words(command, { TOKEN: 't' });
    expect(argv).toContain("https://tenant.example.com/api/v2/sessions/it's");
    expect(JSON.parse(argv[argv.indexOf('--data-raw') + 1]!)).toEqual(sent);
    expect(argv).toContain('content-type: application/json');
  });

  it('other masked credentials become variables too; a URL without its origin takes the target', () => {
    const evidence = { startedAt: '2027-01-15T08:00:00.000Z', request: { method: 'GET', url: '/api/v2/resource-servers/[x]', headers: { 'x-api-key': '[REDACTED]******', authorization: 'Basic [REDACTED]' } } };
    const command = curlCommand(evidence, 'http://127.0.0.1:4010/api/v2');
    expect(command).toBe(`curl -i --globoff 'http://127.0.0.1:4010/api/v2/resource-servers/[x]' -H "x-api-key: $X_API_KEY" -H "authorization: Basic $BASIC_CREDENTIALS"`);
    expect(curlVariables(command)).toEqual(['X_API_KEY', 'BASIC_CREDENTIALS']);
    expect(curlCommand(evidence)).toContain(`"$TARGET_ORIGIN"'/api/v2/resource-servers/[x]'`);
  });

  it('says so when the report cut the body it would send', () => {
    const exchange = updateExchange({ session_metadata: { v: 'a'.repeat(3000) } });
    expect(curlCommand(exchangeEvidence(exchange))).toMatch(/ {2}# the body was cut in the report: send the full body from the recording$/);
  });
});

describe('reproducible', () => {
  const exchange = exchangeEvidence(getExchange());
  const requirement = (status: RequirementResult['status'], evidence: Evidence[]) => ({ status, evidence }) as RequirementResult;

  it("a failed test's own exchange first, else the first failing exchange; none for a passing requirement", () => {
    const byExchange: Evidence = { source: 'run', kind: 'exchange', status: 'fail', exchange };
    const byTest: Evidence = { source: 'run', kind: 'test', status: 'fail', exchange: { ...exchange, id: 'test' } };
    const withoutExchange: Evidence = { source: 'run', kind: 'test', status: 'fail' };
    expect(reproducible(requirement('fail', [withoutExchange, byExchange, byTest]))).toBe(byTest);
    expect(reproducible(requirement('fail', [withoutExchange, byExchange]))).toBe(byExchange);
    expect(reproducible(requirement('fail', [withoutExchange]))).toBeUndefined();
    expect(reproducible(requirement('pass', [{ ...byExchange, status: 'pass' }]))).toBeUndefined();
  });
});
