// The run's preflight: setup errors (a stale fixture id, a base_url off by /api/v2, a token
// endpoint nowhere) end the run with one line and exit 2, no verdict and no report; an
// operation the target does not serve is one GEN-OPERATION-SERVED finding and nothing else; the
// token endpoint without its trailing slash and token_url work. Targets that route an operation
// only for a fixture or with an optional parameter: test/preflight-probes.test.ts.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStubTarget } from '../fixtures/stub-target.ts';
import { startReference, type RunningReference } from '../reference/index.ts';
import type { Report } from '../reports/model.ts';
import { buildExchange } from '../rules/exchange.ts';
import { answeredOnlyNoRoute, operationIsServed, type ServedProbe } from '../rules/checks/served.ts';
import { loadRequirements } from '../rules/requirements.ts';
import { baseUrlProblem } from '../suites/preflight.ts';

const BIN = fileURLToPath(new URL('../bin/tmi-conform.js', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'tmi-preflight-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function cleanEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !k.startsWith('VITEST') && !k.startsWith('TMI_') && k !== 'NODE_ENV' && k !== 'GITHUB_STEP_SUMMARY'),
  );
}

function run(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [BIN, 'run', ...args], { env: cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c) => (stdout += c));
  child.stderr.on('data', (c) => (stderr += c));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}

function writeConfig(name: string, config: unknown): string {
  const path = join(dir, name);
  writeFileSync(path, stringify(config), { mode: 0o600 });
  return path;
}

/** A report directory holding an earlier run's report.json, which a setup error must not leave behind. */
function reportDirWithEarlierReport(name: string): string {
  const reportDir = join(dir, name);
  mkdirSync(reportDir, { recursive: true });
  writeFileSync(join(reportDir, 'report.json'), '{"earlier": true}');
  return reportDir;
}

/** Exit 2, one line on stderr, no verdict on stdout, no report left in the directory. */
function expectSetupError(result: { code: number | null; stdout: string; stderr: string }, reportDir: string, message: RegExp): void {
  expect(result.code, result.stdout + result.stderr).toBe(2);
  expect(result.stderr.trim().split('\n'), result.stderr).toHaveLength(1);
  expect(result.stderr).toMatch(message);
  expect(result.stderr).not.toMatch(/\n\s+at /);
  expect(result.stdout).not.toMatch(/FAIL|verdict|requirements:/);
  expect(existsSync(join(reportDir, 'report.json')), 'no report of this run, and none of an earlier one').toBe(false);
}

const exchange = (method: string, path: string, status: number, contentType: string, body: string, authorization?: string) =>
  buildExchange({
    method,
    url: `http://127.0.0.1:4010/api/v2${path}`,
    requestHeaders: authorization ? { authorization } : {},
    status,
    responseHeaders: { 'content-type': contentType },
    responseBody: body,
  });

describe('operationIsServed', () => {
  const router404 = (what: string, authorization?: string): ServedProbe => ({
    what,
    exchange: exchange('PATCH', '/sessions/x', 404, 'text/plain', 'Not Found', authorization),
  });

  it('finds an operation answered 404 whatever the token and the id not served', () => {
    const findings = operationIsServed('updateSession', [
      router404('without a token, for an unknown id'),
      router404('with the full token, for an unknown id', 'Bearer a.b.c'),
      router404('with the full token, for fixture s1', 'Bearer a.b.c'),
    ]);
    expect(findings).toHaveLength(1);
    expect(findings![0]).toMatchObject({ requirement: 'GEN-OPERATION-SERVED', level: 'must', subject: 'implementation', check: 'operationIsServed' });
    expect(findings![0]!.received).toMatch(/^PATCH \/sessions\/\{id\} is not served by the target: 404 "text\/plain" to every request \(without a token/);
  });

  it('finds an operation that refuses a request without a token served, even when it answers a JSON 404 for an unknown id', () => {
    const probes: ServedProbe[] = [
      { what: 'without a token, for an unknown id', exchange: exchange('GET', '/resource-servers/x', 401, 'application/json', '{"statusCode":401}') },
      {
        what: 'with the full token, for an unknown id',
        exchange: exchange('GET', '/resource-servers/x', 404, 'application/json', '{"statusCode":404}', 'Bearer a.b.c'),
      },
    ];
    expect(operationIsServed('getResourceServer', probes)).toEqual([]);
  });

  it('finds an operation served that a router answers only with a documented optional parameter, or only for a fixture', () => {
    const router404 = (what: string, path: string, authorization?: string): ServedProbe => ({
      what,
      exchange: exchange('GET', path, 404, 'text/plain', 'no stub matched', authorization),
    });
    const withoutParameter = [
      router404('without a token, for an unknown id', '/resource-servers/x'),
      router404('with the full token, for fixture rs_1', '/resource-servers/rs_1', 'Bearer a.b.c'),
    ];
    expect(operationIsServed('getResourceServer', withoutParameter)).toHaveLength(1);
    const withParameter: ServedProbe = {
      what: 'with the full token, for fixture rs_1, with include_fields=true',
      exchange: exchange('GET', '/resource-servers/rs_1?include_fields=true', 200, 'application/json', '{"id":"rs_1"}', 'Bearer a.b.c'),
    };
    expect(operationIsServed('getResourceServer', [...withoutParameter, withParameter])).toEqual([]);
    const fixtureDeleted: ServedProbe = {
      what: 'without a token, for fixture tep_1',
      exchange: exchange('DELETE', '/token-exchange-profiles/tep_1', 200, 'text/plain', ''),
    };
    expect(
      operationIsServed('deleteTokenExchangeProfile', [router404('without a token, for an unknown id', '/token-exchange-profiles/x'), fixtureDeleted]),
    ).toEqual([]);
  });

  it('tells apart answers that are all 404 or 405, JSON or not (nothing told the operation from a missing route yet), from any other', () => {
    const answer = (status: number, type: string): ServedProbe => ({ what: 'a request', exchange: exchange('GET', '/resource-servers/x', status, type, '{}') });
    expect(answeredOnlyNoRoute([answer(404, 'application/json'), answer(405, 'text/plain')])).toBe(true);
    expect(answeredOnlyNoRoute([answer(404, 'text/plain'), answer(401, 'application/json')])).toBe(false);
    expect(answeredOnlyNoRoute([])).toBe(false);
  });

  it('judges nothing without an answer', () => {
    expect(operationIsServed('getResourceServer', [])).toBeUndefined();
  });

  it('names what is wrong with a base_url: /api/v2 missing or repeated', () => {
    expect(baseUrlProblem('https://tenant.example.com')).toMatch(/\/api\/v2 is missing; .*probably https:\/\/tenant\.example\.com\/api\/v2$/);
    expect(baseUrlProblem('https://tenant.example.com/api/v2/api/v2/')).toMatch(/\/api\/v2 is repeated; .*probably https:\/\/tenant\.example\.com\/api\/v2$/);
    expect(baseUrlProblem('https://tenant.example.com/api/v2')).toMatch(/check the tenant address$/);
    expect(baseUrlProblem('https://tenant.example.com/api/v2', 'https://tenant.example.com')).toMatch(
      /: they answer at https:\/\/tenant\.example\.com, without \/api\/v2; probably base_url https:\/\/tenant\.example\.com$/,
    );
  });
});

describe('tmi-conform run against a target that serves the operations at its root', () => {
  it('a base_url ending in /api/v2 there says where they answer and what base_url probably should be', async () => {
    const target = await startStubTarget({ prefix: '' });
    try {
      const token = `${Buffer.from('{"alg":"RS256","typ":"JWT"}').toString('base64url')}.${Buffer.from(JSON.stringify({ sub: 'c@clients', scope: 'read:resource_servers' })).toString('base64url')}.c2ln`;
      const path = writeConfig('at-root.yaml', {
        base_url: `${target.origin}/api/v2`,
        credentials: { full: { token } },
        fixtures: { resource_servers: ['rs_1'] },
      });
      const reportDir = reportDirWithEarlierReport('at-root');
      const origin = target.origin.replace(/[.]/g, '\\.');
      expectSetupError(
        await run(['--config', path, '--report-dir', reportDir]),
        reportDir,
        new RegExp(
          `none of the three operations is served at base_url ${origin}/api/v2 .*: they answer at ${origin}, without /api/v2; probably base_url ${origin}$`,
          'm',
        ),
      );
    } finally {
      await target.close();
    }
  });
});

describe('tmi-conform run: setup errors found by the preflight (exit 2, one line, no report)', () => {
  let ref: RunningReference;
  beforeAll(async () => {
    ref = await startReference();
  });
  afterAll(() => ref.close());

  const base = () => {
    const { rate_limit_probe: _, ...config } = ref.config();
    return { ...config, allow_destructive: false, property_runs: 2 };
  };

  it('a resource server id the target does not hold names the id and the key to fix', async () => {
    const config = base();
    const path = writeConfig('stale-rs.yaml', {
      ...config,
      fixtures: { ...config.fixtures, resource_servers: [...config.fixtures.resource_servers, 'rs_gone'] },
    });
    const reportDir = reportDirWithEarlierReport('stale-rs');
    expectSetupError(
      await run(['--config', path, '--report-dir', reportDir]),
      reportDir,
      /^tmi-conform: run: fixtures\.resource_servers: "rs_gone" was not found by the target \(404\): fix the id or remove it$/m,
    );
  });

  it('a session id the target does not hold names the id and the key to fix', async () => {
    const config = base();
    const path = writeConfig('stale-session.yaml', {
      ...config,
      fixtures: { ...config.fixtures, sessions: [{ id: 'sess_gone', session_metadata: null }, ...config.fixtures.sessions] },
    });
    const reportDir = reportDirWithEarlierReport('stale-session');
    expectSetupError(
      await run(['--config', path, '--report-dir', reportDir]),
      reportDir,
      /fixtures\.sessions: "sess_gone" was not found by the target \(404\): fix the id or remove it/,
    );
  });

  it('a base_url without /api/v2 says so and what it probably should be', async () => {
    const path = writeConfig('no-prefix.yaml', { ...base(), base_url: ref.origin });
    const reportDir = reportDirWithEarlierReport('no-prefix');
    const expected = `${ref.origin}/api/v2`.replace(/[.]/g, '\\.');
    expectSetupError(
      await run(['--config', path, '--report-dir', reportDir]),
      reportDir,
      new RegExp(`none of the three operations is served at base_url ${ref.origin.replace(/[.]/g, '\\.')} .*/api/v2 is missing; .*probably ${expected}$`, 'm'),
    );
  });

  it('a base_url with /api/v2 twice says so and what it probably should be', async () => {
    const path = writeConfig('twice.yaml', { ...base(), base_url: `${ref.baseUrl}/api/v2` });
    const reportDir = reportDirWithEarlierReport('twice');
    expectSetupError(
      await run(['--config', path, '--report-dir', reportDir]),
      reportDir,
      new RegExp(`/api/v2 is repeated; .*probably ${ref.baseUrl.replace(/[.]/g, '\\.')}$`, 'm'),
    );
  });
});

describe('tmi-conform run against a target that serves one of the three operations', () => {
  it('one finding per operation not served, "not served" said, their other requirements and tests skipped with the reason, exit 1', {
    timeout: 120_000,
  }, async () => {
    const reportDir = join(dir, 'one-served');
    const { code, stdout, stderr } = await run([
      '--fault',
      'update-session-not-served',
      '--fault',
      'delete-token-exchange-profile-not-served',
      '--property-runs',
      '3',
      '--report-dir',
      reportDir,
    ]);
    expect(stderr).toBe('');
    expect(code, stdout).toBe(1);
    expect(stdout).toMatch(/^not served: PATCH \/sessions\/\{id\}/m);
    expect(stdout).toMatch(/^not served: DELETE \/token-exchange-profiles\/\{id\}/m);
    expect(stdout).toMatch(/update-session\s+0 passed · 0 failed · 0 warned · 8 skipped/);
    const report = JSON.parse(readFileSync(join(reportDir, 'report.json'), 'utf8')) as Report;
    const byId = new Map(report.requirements.map((r) => [r.id, r]));
    // The one requirement failed, once per operation not served.
    expect(report.requirements.filter((r) => r.status === 'fail' || r.status === 'warn').map((r) => r.id)).toEqual(['GEN-OPERATION-SERVED']);
    const findings = byId
      .get('GEN-OPERATION-SERVED')!
      .evidence.flatMap((e) => e.findings ?? [])
      .map((f) => f.received);
    expect(findings).toHaveLength(2);
    expect(findings.some((m) => m.startsWith('PATCH /sessions/{id} is not served by the target'))).toBe(true);
    expect(findings.some((m) => m.startsWith('DELETE /token-exchange-profiles/{id} is not served by the target'))).toBe(true);
    // Nothing else is charged to, or passed on, the two operations: their own requirements are not examined.
    const notServed = ['deleteTokenExchangeProfile', 'updateSession'];
    const theirs = loadRequirements().filter((r) => r.id !== 'GEN-OPERATION-SERVED' && r.operations.every((op) => notServed.includes(op)));
    expect(theirs.map((r) => r.id)).toContain('SCOPE-UPDATE-SESSION');
    for (const r of theirs)
      expect(byId.get(r.id), r.id).toMatchObject({ status: 'skip', reason: expect.stringContaining('not examined: the operation is not served') });
    // The operation served is tested as ever.
    expect(byId.get('RS-RESPONSE-SCHEMA')!.status).toBe('pass');
    expect(byId.get('SCOPE-READ-RESOURCE-SERVER')!.status).toBe('pass');
    expect(report.clientFindings).toEqual([]);
  });
});

describe('tmi-conform run: where tokens come from', () => {
  const refs: RunningReference[] = [];
  afterAll(() => Promise.all(refs.map((r) => r.close())));
  const reference = async (tokenPaths: string[]) => {
    const ref = await startReference({ tokenPaths });
    refs.push(ref);
    const { rate_limit_probe: _, ...config } = ref.config();
    return { ref, config: { ...config, allow_destructive: false, property_runs: 2 } };
  };

  it('a token endpoint served only without the trailing slash works, with one note', async () => {
    const { ref, config } = await reference(['/oauth/token']);
    const { code, stdout, stderr } = await run([
      '--config',
      writeConfig('no-slash.yaml', config),
      '--requirement',
      'RS-RESPONSE-SCHEMA',
      '--report-dir',
      join(dir, 'no-slash'),
    ]);
    expect(code, stdout + stderr).toBe(0);
    expect(stderr.trim().split('\n'), stderr).toEqual([
      `tmi-conform run: note: the token endpoint answered 404 at ${ref.origin}/oauth/token/; tokens come from ${ref.origin}/oauth/token (set token_url to say so)`,
    ]);
  });

  it('token_url names a token endpoint served elsewhere', async () => {
    const { ref, config } = await reference(['/custom/oauth/token']);
    const { code, stdout, stderr } = await run([
      '--config',
      writeConfig('token-url.yaml', { ...config, token_url: `${ref.origin}/custom/oauth/token` }),
      '--requirement',
      'RS-RESPONSE-SCHEMA',
      '--report-dir',
      join(dir, 'token-url'),
    ]);
    expect(stderr).toBe('');
    expect(code, stdout).toBe(0);
  });

  it('--token-url does too', async () => {
    const { ref, config } = await reference(['/custom/oauth/token']);
    const { code, stdout, stderr } = await run([
      '--config',
      writeConfig('token-url-flag.yaml', config),
      '--token-url',
      `${ref.origin}/custom/oauth/token`,
      '--requirement',
      'RS-RESPONSE-SCHEMA',
      '--report-dir',
      join(dir, 'token-url-flag'),
    ]);
    expect(stderr).toBe('');
    expect(code, stdout).toBe(0);
  });

  it('404 at every candidate is a setup error naming the URLs tried, not refused credentials', async () => {
    const { ref, config } = await reference(['/custom/oauth/token']);
    const reportDir = reportDirWithEarlierReport('token-nowhere');
    const result = await run(['--config', writeConfig('token-nowhere.yaml', config), '--report-dir', reportDir]);
    expectSetupError(
      result,
      reportDir,
      new RegExp(
        `the token endpoint was not found \\(404\\) at ${ref.origin.replace(/[.]/g, '\\.')}/oauth/token/ nor at ${ref.origin.replace(/[.]/g, '\\.')}/oauth/token: set token_url`,
      ),
    );
    expect(result.stderr).not.toContain('refused');
  });
});
