// validate and the credentials a recording kept: a foreign recorder that dropped the
// Authorization header or masked the token proves nothing about what was sent (said once, not
// judged); the kit's own recordings say whether the header was there; a token kept whole is
// judged without keys for what needs none (alg none) and, with --jwks, for its signature.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { exportJWK, generateKeyPair, SignJWT, UnsecuredJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BASE, claims, STARTED_AT } from '../fixtures/exchanges.ts';

const BIN = fileURLToPath(new URL('../bin/tmi-conform.js', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'tmi-validate-credentials-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function validate(...args: string[]) {
  const result = spawnSync(process.execPath, [BIN, 'validate', ...args], { encoding: 'utf8', env: { ...process.env, GITHUB_STEP_SUMMARY: '' } });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

interface Entry {
  method: string;
  path: string;
  status: number;
  authorization?: string;
  conformanceToken?: Record<string, unknown>;
}

/** A HAR of deletes and reads as a recorder writes them; `conformanceToken`: the kit's own note of the credential. */
function har(name: string, entries: Entry[]): string {
  const path = join(dir, name);
  const now = Date.parse(STARTED_AT);
  const log = {
    version: '1.2',
    creator: { name: 'recorder', version: '1' },
    entries: entries.map((e, i) => ({
      startedDateTime: new Date(now + i * 1000).toISOString(),
      time: 10,
      request: {
        method: e.method,
        url: `${BASE}${e.path}`,
        httpVersion: 'HTTP/1.1',
        headers: e.authorization === undefined ? [] : [{ name: 'Authorization', value: e.authorization }],
      },
      response: {
        status: e.status,
        httpVersion: 'HTTP/1.1',
        headers: e.status === 204 ? [] : [{ name: 'content-type', value: 'application/json' }],
        content: e.status === 204 ? { size: 0, mimeType: 'x-unknown' } : { size: 2, mimeType: 'application/json', text: '{}' },
      },
      ...(e.conformanceToken ? { _conformance: { operation: null, findings: [], token: e.conformanceToken } } : {}),
    })),
  };
  writeFileSync(path, JSON.stringify({ log }));
  return path;
}

const DELETE = '/token-exchange-profiles/tep_1';
let tenantJwksFile: string;
let signedByTenant: string;
let signedByOther: string;

beforeAll(async () => {
  const [tenant, other] = await Promise.all([generateKeyPair('RS256', { extractable: true }), generateKeyPair('RS256')]);
  tenantJwksFile = join(dir, 'jwks.json');
  writeFileSync(tenantJwksFile, JSON.stringify({ keys: [{ ...(await exportJWK(tenant.publicKey)), kid: 'tenant', alg: 'RS256', use: 'sig' }] }));
  signedByTenant = await new SignJWT(claims()).setProtectedHeader({ alg: 'RS256', kid: 'tenant' }).sign(tenant.privateKey);
  signedByOther = await new SignJWT(claims()).setProtectedHeader({ alg: 'RS256', kid: 'tenant' }).sign(other.privateKey);
});

describe('validate: credentials in recordings', () => {
  it('a foreign recording without the header, or with a masked token: not judged for authentication, said once, exit 0', () => {
    const file = har('cassette.har', [
      { method: 'DELETE', path: DELETE, status: 204 },
      { method: 'DELETE', path: DELETE, status: 204, authorization: 'Bearer [REDACTED]' },
      { method: 'DELETE', path: DELETE, status: 204, authorization: 'Bearer <ACCESS_TOKEN>' },
      { method: 'DELETE', path: DELETE, status: 204, authorization: 'Bearer ********' },
      { method: 'DELETE', path: DELETE, status: 204, authorization: 'REDACTED' },
    ]);
    const { code, stdout, stderr } = validate(file, '--report-dir', join(dir, 'cassette'));
    expect(stderr).toBe('');
    expect(code, stdout).toBe(0);
    expect(stdout.match(/credentials not recorded/g)).toHaveLength(1);
    expect(stdout).toContain('credentials not recorded: 5 exchanges not judged for authentication');
    expect(stdout).not.toMatch(/AUTH-/);
    // Every report says so too, with the exchanges.
    const reason = 'its credential (authentication): the recording does not show the Authorization header sent';
    const report = JSON.parse(readFileSync(join(dir, 'cassette', 'report.json'), 'utf8')) as { traffic: { notJudged?: unknown[] } };
    expect(report.traffic.notJudged).toEqual([{ reason, count: 5, exchanges: ['0', '1', '2', '3', '4'] }]);
    for (const file of ['report.md', 'report.html', 'junit.xml', 'report.sarif'])
      expect(readFileSync(join(dir, 'cassette', file), 'utf8'), file).toContain('the recording does not show the Authorization header sent');
  });

  it("the kit's own recording says no header was sent: a 2xx is a security finding, exit 1", () => {
    const file = har('own.har', [{ method: 'DELETE', path: DELETE, status: 204, conformanceToken: { headerPresent: false, wellFormed: false } }]);
    const { code, stdout } = validate(file, '--report-dir', join(dir, 'own'));
    expect(code, stdout).toBe(1);
    expect(stdout).toMatch(/AUTH-CREDENTIAL-REQUIRED\s+must\s+implementation\s+1/);
    expect(stdout).not.toContain('credentials not recorded');
    // Refused, but with 404: the caller was not refused with 401.
    const notRefused = validate(
      har('own-404.har', [{ method: 'DELETE', path: DELETE, status: 404, conformanceToken: { headerPresent: false, wellFormed: false } }]),
      '--report-dir',
      join(dir, 'own-404'),
    );
    expect(notRefused.code, notRefused.stdout).toBe(1);
    expect(notRefused.stdout).toMatch(/AUTH-MISSING-TOKEN-401\s+must\s+implementation\s+1/);
    // What was seen, not a guess at why: a router or a stub's matcher answers 404 too.
    const report = JSON.parse(readFileSync(join(dir, 'own-404', 'report.json'), 'utf8')) as {
      requirements: Array<{ id: string; evidence: Array<{ findings?: Array<{ received: string }> }> }>;
    };
    const received = report.requirements.find((r) => r.id === 'AUTH-MISSING-TOKEN-401')!.evidence[0]!.findings!.map((f) => f.received);
    expect(received).toEqual(['404 for a request without a valid token: the caller was not refused with 401']);
  });

  it('a foreign recording that kept an unsigned token (alg none) that got a 2xx: exit 1 without any keys', () => {
    const unsigned = new UnsecuredJWT(claims()).encode();
    const file = har('unsigned.har', [{ method: 'DELETE', path: DELETE, status: 204, authorization: `Bearer ${unsigned}` }]);
    const { code, stdout } = validate(file, '--report-dir', join(dir, 'unsigned'));
    expect(code, stdout).toBe(1);
    expect(stdout).toMatch(/AUTH-CREDENTIAL-REQUIRED\s+must/);
  });

  it('a token signed by another key: never called invalid without keys; with --jwks, a security finding', () => {
    const file = har('foreign-key.har', [
      { method: 'DELETE', path: DELETE, status: 204, authorization: `Bearer ${signedByOther}` },
      { method: 'DELETE', path: DELETE, status: 204, authorization: `Bearer ${signedByTenant}` },
    ]);
    const without = validate(file, '--report-dir', join(dir, 'no-keys'));
    expect(without.code, without.stdout).toBe(0);
    expect(without.stdout).toContain('signatures not verified: no JWKS');
    expect(without.stdout).not.toMatch(/AUTH-/);
    const withKeys = validate(file, '--jwks', tenantJwksFile, '--report-dir', join(dir, 'keys'));
    expect(withKeys.stderr).toBe('');
    expect(withKeys.code, withKeys.stdout).toBe(1);
    expect(withKeys.stdout).toMatch(/AUTH-CREDENTIAL-REQUIRED\s+must\s+implementation\s+1/);
    expect(withKeys.stdout).not.toContain('signatures not verified');
  });

  it('the issuer is judged only when named (--issuer): a token naming another is a security finding', () => {
    const file = har('issuer.har', [{ method: 'DELETE', path: DELETE, status: 204, authorization: `Bearer ${signedByTenant}` }]);
    const unnamed = validate(file, '--jwks', tenantJwksFile, '--report-dir', join(dir, 'issuer-unnamed'));
    expect(unnamed.code, unnamed.stdout).toBe(0);
    const same = validate(file, '--jwks', tenantJwksFile, '--issuer', 'https://tenant.example.com/', '--report-dir', join(dir, 'issuer-same'));
    expect(same.code, same.stdout).toBe(0);
    const other = validate(file, '--jwks', tenantJwksFile, '--issuer', 'https://other-tenant.example.com/', '--report-dir', join(dir, 'issuer-other'));
    expect(other.code, other.stdout).toBe(1);
    expect(other.stdout).toMatch(/AUTH-CREDENTIAL-REQUIRED\s+must\s+implementation\s+1/);
  });
});
