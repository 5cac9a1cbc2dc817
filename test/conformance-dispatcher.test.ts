// conformanceDispatcher judges an application's own calls, made with undici or with fetch through
// the global dispatcher, as the proxy judges what it observes: a conforming tenant passes, a
// fault fails the verdict naming its requirement, a forged token carried out is a security
// finding, other origins pass unseen, and no secret reaches the report.
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fetch as undiciFetch, getGlobalDispatcher, request, setGlobalDispatcher } from 'undici';
import { conformanceDispatcher, undiciHeaders, type ConformanceDispatcher } from '../api/conformance-dispatcher.ts';
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
  const read = await request(`${reference.baseUrl}/resource-servers/${encodeURIComponent(reference.fixtures.resource_servers[0]!)}`, {
    dispatcher,
    headers: { authorization },
  });
  await read.body.text();
  const update = await undiciFetch(`${reference.baseUrl}/sessions/${encodeURIComponent(reference.fixtures.sessions[0]!)}`, {
    dispatcher,
    method: 'PATCH',
    headers: { authorization, 'content-type': 'application/json' },
    body: JSON.stringify({ session_metadata: { team: 'blue' } }),
  });
  await update.text();
  const remove = await request(`${reference.baseUrl}/token-exchange-profiles/${encodeURIComponent(reference.fixtures.token_exchange_profiles[0]!)}`, {
    dispatcher,
    method: 'DELETE',
    headers: { authorization },
  });
  await remove.body.text();
}

const failed = (report: Report) => report.requirements.filter((r) => r.status === 'fail').map((r) => r.id);
const statusOf = (report: Report, id: string) => report.requirements.find((r) => r.id === id)?.status;

type Coding = 'gzip' | 'deflate' | 'br';
const encode: Record<Coding, (data: Buffer) => Buffer> = { gzip: gzipSync, deflate: deflateSync, br: brotliCompressSync };

/** An answer of a tenant that compresses its bodies, as tenants behind gateways do. */
interface EncodedAnswer {
  status: number;
  body: string;
  coding: Coding;
}

/** A tenant on 127.0.0.1 answering each request as `answer` says, its body content-encoded; what it sent, by path. */
async function compressingTenant(
  answer: (request: IncomingMessage) => EncodedAnswer,
): Promise<{ origin: string; sent: Map<string, Buffer>; close: () => Promise<void> }> {
  const sent = new Map<string, Buffer>();
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      const { status, body, coding } = answer(request);
      const bytes = encode[coding](Buffer.from(body));
      sent.set(request.url!, bytes);
      response.writeHead(status, { 'content-type': 'application/json', 'content-encoding': coding, 'content-length': bytes.length }).end(bytes);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    sent,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The three operations answered with JSON: the resource server gzip-encoded, the session deflate-encoded, the delete's error brotli-encoded. */
const encodedJson = (request: IncomingMessage): EncodedAnswer => {
  if (request.url!.includes('/resource-servers/'))
    return { status: 200, coding: 'gzip', body: JSON.stringify({ id: 'rs_1', identifier: 'https://api.example.com', name: 'API' }) };
  if (request.url!.includes('/sessions/')) return { status: 200, coding: 'deflate', body: JSON.stringify({ id: 's_1', session_metadata: { team: 'blue' } }) };
  return { status: 403, coding: 'br', body: JSON.stringify({ statusCode: 403, error: 'Forbidden', message: 'Insufficient scope' }) };
};

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
      const response = await request(`${reference.baseUrl}/resource-servers/${encodeURIComponent(reference.fixtures.resource_servers[0]!)}`, {
        dispatcher,
        headers: { authorization: `Bearer ${unsigned}` },
      });
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
      const removed = await fetch(`${reference.baseUrl}/token-exchange-profiles/${encodeURIComponent(reference.fixtures.token_exchange_profiles[0]!)}`, {
        method: 'DELETE',
        headers: { authorization: `Bearer ${token}` },
      });
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

  it('judges content-encoded JSON answers after decoding them (undici.request), and hands the application the bytes as sent', async () => {
    const tenant = await compressingTenant(encodedJson);
    try {
      const dispatcher = await conformanceDispatcher({ target: tenant.origin });
      const received = new Map<string, Buffer>();
      for (const [method, path, body] of [
        ['GET', '/api/v2/resource-servers/rs_1', undefined],
        ['PATCH', '/api/v2/sessions/s_1', JSON.stringify({ session_metadata: { team: 'blue' } })],
        ['DELETE', '/api/v2/token-exchange-profiles/tep_1', undefined],
      ] as const) {
        const response = await request(`${tenant.origin}${path}`, {
          dispatcher,
          method,
          headers: { 'content-type': 'application/json', 'accept-encoding': 'gzip, deflate, br' },
          body,
        });
        received.set(path, Buffer.from(await response.body.arrayBuffer()));
      }
      const report = await dispatcher.report();
      expect(dispatcher.exchanges).toBe(3);
      expect(statusOf(report, 'GEN-JSON-RESPONSE')).toBe('pass');
      // The dispatcher only watches: undici.request does not decode, so the application gets the encoded bytes.
      expect(received.size).toBe(3);
      for (const [path, bytes] of received) expect(bytes.equals(tenant.sent.get(path)!)).toBe(true);
      await dispatcher.close();
    } finally {
      await tenant.close();
    }
  });

  it('judges content-encoded JSON answers after decoding them (fetch), and fetch still decodes them for the application', async () => {
    const tenant = await compressingTenant(encodedJson);
    try {
      const dispatcher = await conformanceDispatcher({ target: tenant.origin });
      const read = await undiciFetch(`${tenant.origin}/api/v2/resource-servers/rs_1`, { dispatcher });
      expect(await read.json()).toMatchObject({ id: 'rs_1' });
      const update = await undiciFetch(`${tenant.origin}/api/v2/sessions/s_1`, {
        dispatcher,
        method: 'PATCH',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ session_metadata: { team: 'blue' } }),
      });
      expect(await update.json()).toMatchObject({ id: 's_1' });
      const remove = await undiciFetch(`${tenant.origin}/api/v2/token-exchange-profiles/tep_1`, { dispatcher, method: 'DELETE' });
      expect(await remove.json()).toMatchObject({ statusCode: 403 });
      const report = await dispatcher.report();
      expect(dispatcher.exchanges).toBe(3);
      expect(statusOf(report, 'GEN-JSON-RESPONSE')).toBe('pass');
      await dispatcher.close();
    } finally {
      await tenant.close();
    }
  });

  it('a gzip-encoded answer that is not JSON still fails GEN-JSON-RESPONSE, shown decoded', async () => {
    const tenant = await compressingTenant(() => ({ status: 200, coding: 'gzip', body: '<html>gateway error page</html>' }));
    try {
      const dispatcher = await conformanceDispatcher({ target: tenant.origin });
      const response = await request(`${tenant.origin}/api/v2/resource-servers/rs_1`, { dispatcher });
      await response.body.arrayBuffer();
      const report = await dispatcher.report();
      expect(failed(report)).toContain('GEN-JSON-RESPONSE');
      const findings = report.requirements.find((r) => r.id === 'GEN-JSON-RESPONSE')!.evidence.flatMap((e) => e.findings ?? []);
      expect(findings).toEqual([expect.objectContaining({ expected: 'a body that parses as JSON', received: expect.stringContaining('gateway error page') })]);
      await dispatcher.close();
    } finally {
      await tenant.close();
    }
  });

  it('a body over maxBodyBytes, sent or once decoded, is not judged, and the report says so', async () => {
    const notJson = '<html>not json</html>'.repeat(20);
    const hashes = Array.from({ length: 8 }, (_, i) => createHash('sha256').update(String(i)).digest('hex')).join('');
    // Over the limit on the wire (brotli barely shrinks hex of hashes), and under it on the wire but over it decoded (gzip of a repeated text).
    const tenant = await compressingTenant((req) =>
      req.url!.includes('/wire') ? { status: 200, coding: 'br', body: hashes } : { status: 200, coding: 'gzip', body: notJson },
    );
    try {
      const maxBodyBytes = 64;
      expect(gzipSync(Buffer.from(notJson)).length).toBeLessThan(maxBodyBytes);
      const dispatcher = await conformanceDispatcher({ target: tenant.origin, maxBodyBytes });
      for (const id of ['wire', 'decoded']) {
        const response = await request(`${tenant.origin}/api/v2/resource-servers/${id}`, { dispatcher });
        await response.body.arrayBuffer();
      }
      expect(tenant.sent.get('/api/v2/resource-servers/wire')!.length).toBeGreaterThan(maxBodyBytes);
      const report = await dispatcher.report();
      expect(dispatcher.exchanges).toBe(2);
      expect(failed(report)).not.toContain('GEN-JSON-RESPONSE');
      expect(report.traffic?.notJudged).toEqual([
        expect.objectContaining({ reason: expect.stringContaining('response body over the 64 bytes body limit'), exchanges: ['dispatcher-1'] }),
      ]);
      await dispatcher.close();
    } finally {
      await tenant.close();
    }
  });

  it("reads undici's header shapes alike: a flat list, pairs, an iterable of pairs, a record with a list value", () => {
    const expected = { 'content-type': 'application/json', accept: 'application/json, text/plain', 'x-count': '2' };
    expect(undiciHeaders(['Content-Type', 'application/json', 'Accept', 'application/json', 'accept', 'text/plain', 'X-Count', '2'])).toEqual(expected);
    expect(
      undiciHeaders([
        ['Content-Type', 'application/json'],
        ['Accept', 'application/json'],
        ['accept', 'text/plain'],
        ['X-Count', '2'],
      ] as unknown as string[]),
    ).toEqual(expected);
    expect(
      undiciHeaders(
        new Map<string, string | string[]>([
          ['Content-Type', 'application/json'],
          ['Accept', ['application/json', 'text/plain']],
          ['X-Count', '2'],
        ]),
      ),
    ).toEqual(expected);
    expect(
      undiciHeaders({
        'Content-Type': 'application/json',
        Accept: ['application/json', 'text/plain'],
        'X-Count': 2,
        'x-absent': undefined,
      } as unknown as Record<string, string>),
    ).toEqual(expected);
    expect(undiciHeaders(null)).toEqual({});
  });

  it("judges the query undici's query option adds to the path: a client's include_fields=yes is a client finding, a boolean none", async () => {
    const reference = await startReference({ rateLimit: false });
    try {
      const dispatcher = await conformanceDispatcher({ target: reference.origin });
      const authorization = `Bearer ${await tokenOf(reference, dispatcher)}`;
      const path = `/api/v2/resource-servers/${encodeURIComponent(reference.fixtures.resource_servers[0]!)}`;
      for (const include_fields of ['yes', true]) {
        const answer = await request(`${reference.origin}${path}`, { dispatcher, query: { include_fields, fields: 'name' }, headers: { authorization } });
        await answer.body.text();
      }
      const report = await dispatcher.report();
      expect(report.clientFindings.map((f) => [f.requirement, f.received, f.count])).toEqual([['RS-INCLUDE-FIELDS-BOOLEAN', 'include_fields="yes"', 1]]);
      expect(report.clientFindings[0]!.example?.request.url).toBe(`${reference.origin}${path}?include_fields=yes&fields=name`);
      await dispatcher.close();
    } finally {
      await reference.close();
    }
  });

  it('a target that is not a URL is a usage error', async () => {
    await expect(conformanceDispatcher({ target: 'tenant.example.com' })).rejects.toThrow('conformanceDispatcher: target "tenant.example.com" is not a URL');
  });
});
