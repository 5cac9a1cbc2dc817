// The preflight calls an operation not served only after trying it the way the configuration and
// the document allow: a target that routes the delete only for the declared fixture profile, or
// the resource server read only with include_fields present, is served, and a run finds what is
// wrong with it. Each target here is a small router in front of the reference: it answers the
// routes it lacks with a plain-text 404, as a router does, and passes everything else on.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { startReference, type RunningReference } from '../reference/index.ts';
import { runCli } from './helpers/cli.ts';
import type { Report } from '../reports/model.ts';

const dir = mkdtempSync(join(tmpdir(), 'tmi-preflight-probes-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const run = (args: string[]) => runCli(['run', ...args]);

const readReport = (reportDir: string) => JSON.parse(readFileSync(join(reportDir, 'report.json'), 'utf8')) as Report;
const byId = (report: Report) => new Map(report.requirements.map((r) => [r.id, r]));
const findingsOf = (report: Report, id: string) =>
  byId(report)
    .get(id)!
    .evidence.flatMap((e) => (e.findings ?? []).filter((f) => f.requirement === id).map((f) => ({ ...f, url: e.exchange?.request.url ?? '' })));

/** A router's answer for a route it does not have. */
function noStubMatched(res: ServerResponse): void {
  res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' });
  res.end('no stub matched');
}

/** Passes the request on to the reference; `rewrite` may change a JSON answer's body. */
function forward(req: IncomingMessage, res: ServerResponse, port: number, rewrite?: (body: Record<string, unknown>) => void): void {
  const upstream = httpRequest({ host: '127.0.0.1', port, method: req.method, path: req.url, headers: req.headers }, (answer) => {
    if (!rewrite || !answer.headers['content-type']?.includes('json')) {
      res.writeHead(answer.statusCode!, answer.headers);
      answer.pipe(res);
      return;
    }
    const chunks: Buffer[] = [];
    answer.on('data', (c: Buffer) => chunks.push(c));
    answer.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
      rewrite(body);
      const text = JSON.stringify(body);
      res.writeHead(answer.statusCode!, { ...answer.headers, 'content-length': String(Buffer.byteLength(text)) });
      res.end(text);
    });
  });
  upstream.on('error', () => res.destroy());
  req.pipe(upstream);
}

interface StubTarget {
  ref: RunningReference;
  baseUrl: string;
  close(): Promise<void>;
}

/** A router in front of a fresh reference: `route` answers what it handles itself and returns true; the rest goes to the reference. */
async function stubTarget(
  route: (req: IncomingMessage, res: ServerResponse, path: string, query: URLSearchParams, port: number) => boolean,
): Promise<StubTarget> {
  const ref = await startReference();
  const port = Number(new URL(ref.origin).port);
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://stub');
    if (!route(req, res, url.pathname, url.searchParams, port)) forward(req, res, port);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    ref,
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v2`,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await ref.close();
    },
  };
}

function writeConfig(name: string, target: StubTarget, fixtures: Record<string, unknown> = {}): string {
  const { rate_limit_probe: _, ...config } = target.ref.config();
  const path = join(dir, name);
  writeFileSync(
    path,
    stringify({ ...config, base_url: target.baseUrl, fixtures: { ...config.fixtures, ...fixtures }, allow_destructive: true, property_runs: 2 }),
    { mode: 0o600 },
  );
  return path;
}

const PROFILE_PATH = /^\/api\/v2\/token-exchange-profiles\/([^/]+)$/;
const RESOURCE_SERVER_PATH = /^\/api\/v2\/resource-servers\/[^/]+$/;

describe('tmi-conform run against a target that routes an operation only as the config and the document allow', () => {
  let target: StubTarget | undefined;
  afterEach(async () => {
    await target?.close();
    target = undefined;
  });

  it('a delete routed only for the declared profiles (200, no token checked) is served: its 200 and its missing token check are found, and the profile the preflight saw deleted is never sent again', {
    timeout: 180_000,
  }, async () => {
    const declared = ['tep_01HQ90A1', 'tep_01HQ90A2'];
    const routed = new Set(declared);
    const deletes: Array<{ id: string; token: boolean }> = [];
    target = await stubTarget((req, res, path) => {
      const match = req.method === 'DELETE' ? PROFILE_PATH.exec(path) : null;
      if (!match) return false;
      const id = decodeURIComponent(match[1]!);
      deletes.push({ id, token: req.headers.authorization !== undefined });
      if (!routed.delete(id)) noStubMatched(res);
      else res.writeHead(200).end();
      return true;
    });
    const reportDir = join(dir, 'delete-by-fixture');
    const { code, stdout, stderr } = await run([
      '--config',
      writeConfig('delete-by-fixture.yaml', target, { token_exchange_profiles: declared }),
      '--report-dir',
      reportDir,
    ]);
    expect(stderr).toBe('');
    expect(code, stdout).toBe(1);
    expect(stdout).not.toMatch(/^not served/m);
    // The last declared profile got one request, the preflight's, without a token; carried out, it is gone.
    expect(deletes.filter((d) => d.id === 'tep_01HQ90A2')).toEqual([{ id: 'tep_01HQ90A2', token: false }]);
    expect(stdout).toMatch(
      /^carried out although a conforming target refuses it: the preflight's DELETE of fixture profile tep_01HQ90A2 .*the suites leave it out$/m,
    );
    const report = readReport(reportDir);
    const requirements = byId(report);
    expect(requirements.get('GEN-OPERATION-SERVED')!.status).toBe('pass');
    // The true faults: 200 instead of 204, and no token checked.
    expect(requirements.get('TEP-DELETE-204')!.status).toBe('fail');
    expect(findingsOf(report, 'TEP-DELETE-204').map((f) => f.received)).toContain('200');
    expect(requirements.get('AUTH-CREDENTIAL-REQUIRED')!.status).toBe('fail');
    expect(
      findingsOf(report, 'AUTH-CREDENTIAL-REQUIRED').some((f) => f.security !== undefined && f.url.endsWith('/token-exchange-profiles/tep_01HQ90A2')),
    ).toBe(true);
    // The delete's tests ran: none is skipped as not served.
    const deleteTests = report.tests.filter((t) => t.file?.includes('delete-token-exchange-profile') || t.name.startsWith('delete refuses'));
    expect(deleteTests.length).toBeGreaterThan(0);
    for (const t of deleteTests) expect(t.message ?? '', t.name).not.toContain('not served');
    expect(report.tests.find((t) => t.name.includes('delete refuses no Authorization header'))!.status).toBe('fail');
  });

  it('a delete routed as SDK stubs route it (the declared id and any bearer token, 204) is served: the no_scope token carried out is found, and the profile it deleted is never sent again', {
    timeout: 180_000,
  }, async () => {
    const declared = ['tep_01HQ91B1', 'tep_01HQ91B2'];
    const routed = new Set(declared);
    const deletes: Array<{ id: string; token: boolean }> = [];
    target = await stubTarget((req, res, path) => {
      const match = req.method === 'DELETE' ? PROFILE_PATH.exec(path) : null;
      if (!match) return false;
      const id = decodeURIComponent(match[1]!);
      const bearer = /^Bearer .+/.test(req.headers.authorization ?? '');
      deletes.push({ id, token: bearer });
      if (!bearer || !routed.delete(id)) noStubMatched(res);
      else res.writeHead(204).end();
      return true;
    });
    const reportDir = join(dir, 'delete-by-fixture-and-bearer');
    const { code, stdout, stderr } = await run([
      '--config',
      writeConfig('delete-by-fixture-and-bearer.yaml', target, { token_exchange_profiles: declared }),
      '--report-dir',
      reportDir,
    ]);
    expect(stderr).toBe('');
    expect(code, stdout).toBe(1);
    expect(stdout).not.toMatch(/^not served/m);
    // The last profile: without a token (not matched), then with the no_scope token (carried out); nothing after.
    expect(deletes.filter((d) => d.id === 'tep_01HQ91B2')).toEqual([
      { id: 'tep_01HQ91B2', token: false },
      { id: 'tep_01HQ91B2', token: true },
    ]);
    const report = readReport(reportDir);
    const requirements = byId(report);
    expect(requirements.get('GEN-OPERATION-SERVED')!.status).toBe('pass');
    expect(requirements.get('SCOPE-DELETE-REQUIRED')!.status).toBe('fail');
    expect(findingsOf(report, 'SCOPE-DELETE-REQUIRED').some((f) => f.security !== undefined && f.url.endsWith('/token-exchange-profiles/tep_01HQ91B2'))).toBe(
      true,
    );
  });

  it('a target that refuses the unknown-id requests gets no request for a fixture profile from the preflight', { timeout: 180_000 }, async () => {
    const deleted: string[] = [];
    target = await stubTarget((req, _res, path) => {
      const match = req.method === 'DELETE' ? PROFILE_PATH.exec(path) : null;
      if (match) deleted.push(decodeURIComponent(match[1]!));
      return false;
    });
    // Only the read's tests run: every DELETE is the preflight's.
    const { code, stdout, stderr } = await run([
      '--config',
      writeConfig('conforming.yaml', target),
      '--requirement',
      'RS-RESPONSE-SCHEMA',
      '--report-dir',
      join(dir, 'conforming'),
    ]);
    expect(stderr).toBe('');
    expect(code, stdout).toBe(0);
    expect(deleted.length).toBeGreaterThan(0);
    for (const id of deleted) expect(id).toMatch(/^tmi-conform-preflight-/);
  });

  it('a resource server read routed only with include_fields present is served: the short signing_secret in its answer is found', {
    timeout: 180_000,
  }, async () => {
    target = await stubTarget((req, res, path, query, port) => {
      if (req.method !== 'GET' || !RESOURCE_SERVER_PATH.test(path)) return false;
      if (!query.has('include_fields')) noStubMatched(res);
      else
        forward(req, res, port, (body) => {
          if (typeof body['signing_secret'] === 'string') body['signing_secret'] = body['signing_secret'].slice(0, 14);
        });
      return true;
    });
    const reportDir = join(dir, 'read-with-include-fields');
    const { code, stdout, stderr } = await run(['--config', writeConfig('read-with-include-fields.yaml', target), '--report-dir', reportDir]);
    expect(stderr).toBe('');
    expect(code, stdout).toBe(1);
    expect(stdout).not.toMatch(/^not served/m);
    const report = readReport(reportDir);
    const requirements = byId(report);
    expect(requirements.get('GEN-OPERATION-SERVED')!.status).toBe('pass');
    expect(requirements.get('RS-SIGNING-SECRET-LENGTH')!.status).toBe('fail');
    const short = findingsOf(report, 'RS-SIGNING-SECRET-LENGTH');
    expect(short.length).toBeGreaterThan(0);
    for (const f of short) {
      expect(f.url).toContain('include_fields=');
      expect(f.received).toMatch(/\b14\b/);
    }
    // The read's tests ran: those with include_fields were answered.
    expect(report.tests.filter((t) => t.name.includes('include_fields=')).map((t) => t.status)).toEqual(['pass', 'pass']);
  });
});
