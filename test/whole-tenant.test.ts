// The whole tenant: a target that serves three operations the document does not detail
// (GET /users/{id}, GET /clients, GET /logs) besides the document's, behind the proxy and then
// through validate of what it recorded. The rules the document states for every operation hold
// on them (credential, JSON, 429 headers), and the reports name them.
import { spawnSync } from 'node:child_process';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { learnTenant, tenantTokensData } from '../keys/tenant.ts';
import { startReference, type RunningReference } from '../reference/index.ts';
import type { Report, RequirementResult } from '../reports/model.ts';
import { unsignedToken } from '../suites/tokens.ts';
import { startTestProxy, type ProxyUnderTest } from './helpers/proxy.ts';
import { forged, tokenFor } from './helpers/reference.ts';

const BIN = fileURLToPath(new URL('../bin/tmi-conform.js', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'tmi-whole-tenant-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

type Mode = 'conforming' | 'faulty';

interface Tenant {
  origin: string;
  close(): Promise<void>;
}

const sendJson = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers });
  res.end(JSON.stringify(body));
};

/**
 * The reference, with three more operations in front of it. Conforming: they check the caller's
 * credential as the reference does (by asking it), answer JSON, and a 429 carries its headers.
 * Faulty: /users/{id} answers anyone, /clients throttles without the headers, /logs answers HTML.
 */
async function startTenant(ref: RunningReference, mode: Mode): Promise<Tenant> {
  let clientsCalls = 0;
  const credentialRefused = async (req: IncomingMessage): Promise<boolean> => {
    const authorization = req.headers.authorization;
    const probe = await fetch(`${ref.origin}/api/v2/resource-servers/whole-tenant-probe`, { headers: authorization ? { authorization } : {} });
    await probe.arrayBuffer();
    return probe.status === 401;
  };
  const extra = async (req: IncomingMessage, res: ServerResponse, path: string): Promise<boolean> => {
    const route = /^\/api\/v2\/(users\/[^/]+|clients|logs)$/.exec(path)?.[1]?.split('/')[0];
    if (req.method !== 'GET' || route === undefined) return false;
    if (mode === 'conforming' && (await credentialRefused(req))) {
      sendJson(res, 401, { statusCode: 401, error: 'Unauthorized', message: 'Invalid token' });
      return true;
    }
    const reset = String(Math.floor(Date.now() / 1000) + 30);
    if (route === 'users') sendJson(res, 200, { user_id: decodeURIComponent(path.split('/')[4]!), email: 'someone@example.com' });
    else if (route === 'clients' && ++clientsCalls % 2 === 0) {
      const headers: Record<string, string> =
        mode === 'conforming' ? { 'x-ratelimit-limit': '10', 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': reset } : {};
      sendJson(res, 429, { statusCode: 429, error: 'Too Many Requests', message: 'Global limit has been reached' }, headers);
    } else if (route === 'clients') sendJson(res, 200, [{ client_id: 'c1', name: 'App' }]);
    else if (mode === 'conforming') sendJson(res, 200, [{ type: 's', date: new Date().toISOString() }]);
    else {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<html><body>logs</body></html>');
    }
    return true;
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const path = (req.url ?? '/').split('?')[0]!;
      if (await extra(req, res, path)) return;
      // Everything else is the reference's.
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers))
        if (typeof v === 'string' && k !== 'host' && k !== 'connection' && k !== 'content-length') headers[k] = v;
      const answer = await fetch(`${ref.origin}${req.url}`, { method: req.method, headers, ...(chunks.length > 0 ? { body: Buffer.concat(chunks) } : {}) });
      const body = Buffer.from(await answer.arrayBuffer());
      const out: Record<string, string> = {};
      answer.headers.forEach((v, k) => {
        if (k !== 'content-length' && k !== 'transfer-encoding' && k !== 'connection' && k !== 'keep-alive' && k !== 'content-encoding') out[k] = v;
      });
      res.writeHead(answer.status, out);
      res.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { origin: `http://127.0.0.1:${port}`, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

async function proxyWithKeys(tenant: Tenant, ref: RunningReference): Promise<ProxyUnderTest> {
  const knowledge = await learnTenant({ wellKnownAt: ref.origin });
  if (!knowledge.keys || !('jwks' in knowledge.keys)) throw new Error(knowledge.keys?.problem ?? 'no keys');
  return startTestProxy(tenant.origin, { tenant: tenantTokensData(knowledge) });
}

/** The same calls a client of the whole tenant makes, through the proxy. */
async function traffic(proxyUrl: string, token: string): Promise<number[]> {
  const calls: Array<[string, Record<string, string>]> = [
    ['/api/v2/users/auth0%7C1001', { authorization: `Bearer ${token}` }],
    ['/api/v2/users/auth0%7C1002', { authorization: `Bearer ${token}` }],
    ['/api/v2/clients', { authorization: `Bearer ${token}` }],
    ['/api/v2/clients', { authorization: `Bearer ${token}` }],
    ['/api/v2/logs', { authorization: `Bearer ${token}` }],
    ['/api/v2/users/auth0%7C1003', {}],
  ];
  const statuses: number[] = [];
  for (const [path, headers] of calls) {
    const answer = await fetch(`${proxyUrl}${path}`, { headers });
    await answer.arrayBuffer();
    statuses.push(answer.status);
  }
  return statuses;
}

const readReport = (reportDir: string): Report => JSON.parse(readFileSync(join(reportDir, 'report.json'), 'utf8')) as Report;
const requirementOf = (report: Report, id: string): RequirementResult => report.requirements.find((r) => r.id === id)!;
/** The URL of the exchange behind each failure of a requirement. */
const failedOn = (report: Report, id: string): string[] =>
  requirementOf(report, id)
    .evidence.filter((e) => e.status === 'fail')
    .map((e) => e.exchange?.request.url ?? '');

function validate(...args: string[]) {
  const result = spawnSync(process.execPath, [BIN, 'validate', ...args], { encoding: 'utf8', env: { ...process.env, GITHUB_STEP_SUMMARY: '' } });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

const EXTRA_OPERATIONS = ['GET /users/{id}', 'GET /clients', 'GET /logs'];

describe('the proxy in front of a tenant with operations the document does not detail', () => {
  let ref: RunningReference;
  let token: string;
  beforeAll(async () => {
    ref = await startReference({ rateLimit: false });
    token = await tokenFor(ref, 'full');
  });
  afterAll(async () => {
    await ref?.close();
  });

  it('conforming: exit 0, and the three operations named in report.json, report.md and on the console', async () => {
    const tenant = await startTenant(ref, 'conforming');
    const under = await proxyWithKeys(tenant, ref);
    try {
      expect(await traffic(under.proxy.url, token)).toEqual([200, 200, 200, 429, 200, 401]);
      await under.proxy.stop();
      const report = readReport(under.reportDir);
      expect(report.passed).toBe(true);
      const rows = new Map(report.traffic!.operations!.map((r) => [r.name, r]));
      expect(rows.get('GET /users/{id}')).toMatchObject({ operation: 'otherOperation', exchanges: 3, byStatus: { '200': 2, '401': 1 } });
      expect(rows.get('GET /clients')).toMatchObject({ exchanges: 2, byStatus: { '200': 1, '429': 1 } });
      expect(rows.get('GET /logs')!.requirements).toEqual(expect.arrayContaining(['AUTH-BEARER-HEADER', 'AUTH-TOKEN-IS-JWT', 'GEN-JSON-RESPONSE']));
      // Judged on the extra operations, and passed: the 429's headers, the refusal of no credential.
      for (const id of ['RL-429-HEADERS', 'AUTH-MISSING-TOKEN-401-OTHER', 'GEN-JSON-RESPONSE']) expect(requirementOf(report, id).status, id).toBe('pass');
      const markdown = readFileSync(join(under.reportDir, 'report.md'), 'utf8');
      for (const name of EXTRA_OPERATIONS) expect(markdown).toContain(`\`${name}\``);
      expect(readFileSync(join(under.reportDir, 'report.html'), 'utf8')).toContain('GET /users/{id}');
      const validated = validate(under.journalPath, '--report-dir', join(dir, 'conforming-validate'));
      expect(validated.code, validated.stdout + validated.stderr).toBe(0);
      for (const name of EXTRA_OPERATIONS) expect(validated.stdout).toContain(name);
      expect(readReport(join(dir, 'conforming-validate')).traffic!.operations).toEqual(report.traffic!.operations);
    } finally {
      await under.dispose();
      await tenant.close();
    }
  });

  it('faulty: carried out without a credential (security), a 429 without its headers and an HTML body each fail on that exchange, live and through validate', async () => {
    const tenant = await startTenant(ref, 'faulty');
    const under = await proxyWithKeys(tenant, ref);
    try {
      expect(await traffic(under.proxy.url, token)).toEqual([200, 200, 200, 429, 200, 200]);
      await under.proxy.stop();
      const live = readReport(under.reportDir);
      const validated = validate(under.harPath, '--report-dir', join(dir, 'faulty-har'));
      const fromJournal = validate(under.journalPath, '--report-dir', join(dir, 'faulty-journal'));
      expect(validated.code).toBe(1);
      expect(fromJournal.code).toBe(1);
      for (const report of [live, readReport(join(dir, 'faulty-har')), readReport(join(dir, 'faulty-journal'))]) {
        expect(report.passed).toBe(false);
        const credential = requirementOf(report, 'AUTH-CREDENTIAL-REQUIRED-OTHER');
        expect(credential.status).toBe('fail');
        expect(credential.counts.security).toBe(1);
        expect(failedOn(report, 'AUTH-CREDENTIAL-REQUIRED-OTHER')).toEqual([expect.stringContaining('/api/v2/users/auth0%7C1003')]);
        expect(failedOn(report, 'RL-429-HEADERS')).toEqual([expect.stringContaining('/api/v2/clients')]);
        expect(failedOn(report, 'GEN-JSON-RESPONSE')).toEqual([expect.stringContaining('/api/v2/logs')]);
        expect(report.traffic!.operations!.map((r) => r.name)).toEqual(expect.arrayContaining(EXTRA_OPERATIONS));
      }
      expect(validated.stdout).toMatch(/SECURITY: .*AUTH-CREDENTIAL-REQUIRED-OTHER/);
    } finally {
      await under.dispose();
      await tenant.close();
    }
  });

  it('a forged and an unsigned token carried out on an extra operation: caught live with the keys; without them the forged one is not judged, and said so', async () => {
    const tenant = await startTenant(ref, 'faulty');
    const calls = async (proxyUrl: string) => {
      for (const credential of [await forged(token), unsignedToken(token)]) {
        const answer = await fetch(`${proxyUrl}/api/v2/users/auth0%7C2001`, { headers: { authorization: `Bearer ${credential}` } });
        expect(answer.status).toBe(200);
        await answer.arrayBuffer();
      }
    };
    const withKeys = await proxyWithKeys(tenant, ref);
    const withoutKeys = await startTestProxy(tenant.origin);
    try {
      await calls(withKeys.proxy.url);
      await withKeys.proxy.stop();
      const caught = requirementOf(readReport(withKeys.reportDir), 'AUTH-CREDENTIAL-REQUIRED-OTHER');
      expect(caught.counts.security).toBe(2);
      const said = caught.evidence.filter((e) => e.status === 'fail').map((e) => e.message);
      expect(said).toEqual(
        expect.arrayContaining([expect.stringMatching(/whose signature does not verify against the tenant's keys/), expect.stringMatching(/unsigned/i)]),
      );

      await calls(withoutKeys.proxy.url);
      await withoutKeys.proxy.stop();
      const unknown = requirementOf(readReport(withoutKeys.reportDir), 'AUTH-CREDENTIAL-REQUIRED-OTHER');
      // The unsigned token is caught by what it shows; the forged one's signature nobody could check.
      expect(unknown.counts.security).toBe(1);
      const validated = validate(withoutKeys.journalPath, '--report-dir', join(dir, 'no-keys'));
      expect(validated.stdout).toContain('signatures not verified: no JWKS: 1 exchanges');
    } finally {
      await withKeys.dispose();
      await withoutKeys.dispose();
      await tenant.close();
    }
  });
});
