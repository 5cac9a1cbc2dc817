// conformanceDispatcher judges an application's own calls, made with undici or with fetch through
// the global dispatcher, as the proxy judges what it observes: a conforming tenant passes, a
// fault fails the verdict naming its requirement, a forged token carried out is a security
// finding, other origins pass unseen, and no secret reaches the report.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fetch as undiciFetch, getGlobalDispatcher, request, setGlobalDispatcher } from 'undici';
import { conformanceDispatcher, type ConformanceDispatcher } from '../api/conformance-dispatcher.ts';
import { startReference, type RunningReference } from '../reference/index.ts';
import type { Report } from '../reports/model.ts';

let other: Server;
let otherOrigin: string;
beforeAll(async () => {
  other = createServer((_req, res) => res.writeHead(500, { 'content-type': 'text/plain' }).end('not the tenant'));
  await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
  otherOrigin = `http://127.0.0.1:${(other.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => other.close(() => resolve())));

async function tokenOf(reference: RunningReference, dispatcher: ConformanceDispatcher): Promise<string> {
  const { client_id, client_secret } = reference.clients.full;
  const response = await request(`${reference.authUrl}/oauth/token/`, {
    method: 'POST',
    dispatcher,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ grant_type: 'client_credentials', client_id, client_secret, audience: reference.audience }),
  });
  return ((await response.body.json()) as { access_token: string }).access_token;
}

/** The application's calls: one of each operation, by undici.request and by fetch. */
async function callEachOperation(reference: RunningReference, dispatcher: ConformanceDispatcher, token: string): Promise<void> {
  const authorization = `Bearer ${token}`;
  const read = await request(`${reference.baseUrl}/resource-servers/${encodeURIComponent(reference.fixtures.resource_servers[0]!)}`, { dispatcher, headers: { authorization } });
  await read.body.text();
  const update = await undiciFetch(`${reference.baseUrl}/sessions/${encodeURIComponent(reference.fixtures.sessions[0]!)}`, {
    dispatcher,
    method: 'PATCH',
    headers: { authorization, 'content-type': 'application/json' },
    body: JSON.stringify({ session_metadata: { team: 'blue' } }),
  });
  await update.text();
  const remove = await request(`${reference.baseUrl}/token-exchange-profiles/${encodeURIComponent(reference.fixtures.token_exchange_profiles[0]!)}`, { dispatcher, method: 'DELETE', headers: { authorization } });
  await remove.body.text();
}

const failed = (report: Report) => report.requirements.filter((r) => r.status === 'fail').map((r) => r.id);

describe('conformanceDispatcher', () => {
  it('a conforming tenant passes: every call judged, the verdict conforming, no secret in the report', async () => {
    const reference = await startReference({ rateLimit: false });
    try {
      const dispatcher = await conformanceDispatcher({ target: reference.origin });
      const token = await tokenOf(reference, dispatcher);
      await callEachOperation(reference, dispatcher, token);
      const report = await dispatcher.report();
      expect(dispatcher.exchanges).toBe(4);
      expect(failed(report)).toEqual([]);
      expect(report.passed).toBe(true);
      const examined = report.requirements.filter((r) => r.status === 'pass').map((r) => r.id);
      expect(examined).toEqual(expect.arrayContaining(['TEP-DELETE-204', 'SES-SUCCESS-200', 'RS-SUCCESS-200']));
      const text = JSON.stringify(report);
      expect(text).not.toContain(token);
      expect(text).not.toContain(reference.clients.full.client_secret);
      await dispatcher.close();
    } finally {
      await reference.close();
    }
  });

  it('a faulty tenant fails the verdict, naming the requirement and the exchange', async () => {
    const reference = await startReference({ rateLimit: false, faults: ['delete-returns-200'] });
    try {
      const dispatcher = await conformanceDispatcher({ target: reference.origin });
      await callEachOperation(reference, dispatcher, await tokenOf(reference, dispatcher));
      const report = await dispatcher.report();
      expect(report.passed).toBe(false);
      expect(failed(report)).toEqual(['TEP-DELETE-204']);
      const evidence = report.requirements.find((r) => r.id === 'TEP-DELETE-204')!.evidence.find((e) => e.status === 'fail')!;
      expect(evidence.exchange).toMatchObject({ id: expect.any(String), request: { method: 'DELETE' }, response: { status: 200 } });
      expect(evidence.findings?.[0]).toMatchObject({ expected: expect.stringContaining('204'), received: expect.stringContaining('200') });
      await dispatcher.close();
    } finally {
      await reference.close();
    }
  });

  it('a forged token the tenant carries out is a security finding', async () => {
    const reference = await startReference({ rateLimit: false, faults: ['alg-none-accepted'] });
    try {
      const dispatcher = await conformanceDispatcher({ target: reference.origin });
      const token = await tokenOf(reference, dispatcher);
      const unsigned = `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url')}.${token.split('.')[1]}.`;
      const response = await request(`${reference.baseUrl}/resource-servers/${encodeURIComponent(reference.fixtures.resource_servers[0]!)}`, { dispatcher, headers: { authorization: `Bearer ${unsigned}` } });
      expect(response.statusCode).toBe(200);
      await response.body.text();
      const report = await dispatcher.report();
      expect(report.passed).toBe(false);
      const security = report.requirements.flatMap((r) => r.evidence.flatMap((e) => (e.findings ?? []).filter((f) => f.security !== undefined)));
      expect(security.length).toBeGreaterThan(0);
      expect(JSON.stringify(report)).not.toContain(unsigned);
      await dispatcher.close();
    } finally {
      await reference.close();
    }
  });

  it('judges the global fetch once installed with setGlobalDispatcher, and lets other origins pass unseen', async () => {
    const reference = await startReference({ rateLimit: false, faults: ['delete-returns-200'] });
    const previous = getGlobalDispatcher();
    try {
      const dispatcher = await conformanceDispatcher({ target: reference.origin });
      const token = await tokenOf(reference, dispatcher);
      setGlobalDispatcher(dispatcher);
      const elsewhere = await fetch(`${otherOrigin}/api/v2/token-exchange-profiles/x`, { method: 'DELETE' });
      expect(await elsewhere.text()).toBe('not the tenant');
      const removed = await fetch(`${reference.baseUrl}/token-exchange-profiles/${encodeURIComponent(reference.fixtures.token_exchange_profiles[0]!)}`, { method: 'DELETE', headers: { authorization: `Bearer ${token}` } });
      expect(removed.status).toBe(200);
      await removed.text();
      const report = await dispatcher.report();
      expect(dispatcher.exchanges).toBe(2); // the token request and the delete; the other origin's 500 is not judged
      expect(failed(report)).toEqual(['TEP-DELETE-204']);
      await dispatcher.close();
    } finally {
      setGlobalDispatcher(previous);
      await reference.close();
    }
  });

  it('a target that is not a URL is a usage error', async () => {
    await expect(conformanceDispatcher({ target: 'tenant.example.com' })).rejects.toThrow('conformanceDispatcher: target "tenant.example.com" is not a URL');
  });
});
