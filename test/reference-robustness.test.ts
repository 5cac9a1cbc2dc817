// Bad input never crashes the reference: whatever arrives (malformed HTTP, huge bodies, odd ids,
// random JSON), the answer is a clear 4xx with a JSON error body, and the server keeps serving.
// Random updates are judged by the rule engine, which is the oracle for what must be refused.
import { connect } from 'node:net';
import { request as httpRequest } from 'node:http';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { judgeExchange } from '../rules/index.ts';
import { Authority } from '../reference/auth.ts';
import { startReference, type RunningReference } from '../reference/index.ts';
import { bearer, call, json, paths, tokenFor, type Answer } from './helpers/reference.ts';

let ref: RunningReference;
let token = '';

beforeAll(async () => {
  ref = await startReference({ rateLimit: false });
  token = await tokenFor(ref, 'full');
});
afterAll(async () => {
  await ref?.close();
});

/** Sends raw bytes and returns the raw answer (the server closes the connection). */
function raw(bytes: string | Buffer, endAfterWrite = true): Promise<string> {
  const { port } = new URL(ref.origin);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), '127.0.0.1', () => {
      socket.write(bytes);
      if (endAfterWrite) socket.end();
    });
    let text = '';
    socket.on('data', (chunk) => (text += chunk.toString('utf8')));
    socket.on('close', () => resolve(text));
    socket.on('error', (error: NodeJS.ErrnoException) => (error.code === 'ECONNRESET' || error.code === 'EPIPE' ? resolve(text) : reject(error)));
  });
}

function parseRaw(text: string): { status: number; headers: string; body: unknown } {
  const [head, ...rest] = text.split('\r\n\r\n');
  return { status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head ?? '')?.[1]), headers: head ?? '', body: JSON.parse(rest.join('\r\n\r\n')) };
}

function expectJsonError(a: Answer, status?: number): void {
  if (status !== undefined) expect(a.status).toBe(status);
  expect(a.status).toBeGreaterThanOrEqual(400);
  expect(a.status).toBeLessThan(500);
  expect(a.headers.get('content-type')).toMatch(/^application\/json/);
  expect(a.json).toMatchObject({ statusCode: a.status, error: expect.any(String), message: expect.any(String), errorCode: expect.any(String) });
}

async function stillServes(): Promise<void> {
  const a = await call(ref, { method: 'GET', path: paths.resourceServer(ref.fixtures.resource_servers[0]!), headers: bearer(token) });
  expect(a.status).toBe(200);
}

describe('malformed HTTP', () => {
  it('answers a request line it cannot parse with a JSON 400', async () => {
    const answer = parseRaw(await raw('GARBAGE\r\n\r\n'));
    expect(answer.status).toBe(400);
    expect(answer.headers).toMatch(/content-type: application\/json/i);
    expect(answer.body).toMatchObject({ statusCode: 400, errorCode: 'bad_request' });
    await stillServes();
  });

  it('answers a URL larger than the header limit (an id of 100 000 characters) with a JSON 431', async () => {
    const answer = parseRaw(await raw(`GET /api/v2/resource-servers/${'r'.repeat(100_000)} HTTP/1.1\r\nHost: x\r\n\r\n`));
    expect(answer.status).toBe(431);
    expect(answer.body).toMatchObject({ statusCode: 431, errorCode: 'headers_too_large' });
    await stillServes();
  });
});

describe('bodies', () => {
  const sessionPath = () => paths.session(ref.fixtures.sessions[0]!);

  it('refuses a body over 1 MiB with 413, whether its length is declared or streamed', async () => {
    const declared = await call(ref, {
      method: 'PATCH',
      path: sessionPath(),
      headers: json(token),
      body: `{"session_metadata":{"a":"${'x'.repeat(1024 * 1024)}"}}`,
    });
    expectJsonError(declared, 413);

    const streamed = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = httpRequest(`${ref.origin}${sessionPath()}`, { method: 'PATCH', headers: { ...json(token), 'transfer-encoding': 'chunked' } }, (res) => {
        let body = '';
        res.on('data', (c) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode!, body }));
      });
      req.on('error', reject);
      const chunk = 'y'.repeat(64 * 1024);
      for (let i = 0; i < 40; i++) req.write(chunk); // 2.5 MiB, no Content-Length
      req.end();
    });
    expect(streamed.status).toBe(413);
    expect(JSON.parse(streamed.body)).toMatchObject({ statusCode: 413, errorCode: 'payload_too_large' });
    await stillServes();
  });

  it('answers at once, and closes, when a client announces a body over 16 MiB', async () => {
    const head = `PATCH ${sessionPath()} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: ${64 * 1024 * 1024}\r\n\r\n{"session_metadata":`;
    const answer = parseRaw(await raw(head, false));
    expect(answer.status).toBe(413);
    expect(answer.headers).toMatch(/connection: close/i);
    await stillServes();
  });

  it('refuses invalid JSON, a wrong content type and a missing body with a JSON 400', async () => {
    for (const [headers, body] of [
      [json(token), '{"session_metadata": '],
      [json(token), '\u0000\u0001binary'],
      [{ ...bearer(token), 'content-type': 'application/x-www-form-urlencoded' }, 'session_metadata=x'],
      [{ ...bearer(token), 'content-type': 'application/jsonp' }, '{"session_metadata":null}'],
      [json(token), ''],
    ] as const) {
      expectJsonError(await call(ref, { method: 'PATCH', path: sessionPath(), headers, body }), 400);
    }
  });

  it('accepts application/json with a charset parameter', async () => {
    const a = await call(ref, {
      method: 'PATCH',
      path: sessionPath(),
      headers: { ...bearer(token), 'content-type': 'Application/JSON; charset=utf-8' },
      body: '{"session_metadata":null}',
    });
    expect(a.status).toBe(200);
  });

  it('judges random update bodies: anything it accepts conforms, nothing crashes it', async () => {
    const metadataValue = fc.oneof(fc.string({ maxLength: 300, unit: 'grapheme' }), fc.integer(), fc.constant(null), fc.boolean());
    const body = fc.oneof(
      fc.record({ session_metadata: fc.oneof(fc.constant(null), fc.dictionary(fc.string({ maxLength: 12 }), metadataValue, { maxKeys: 30 })) }),
      fc.jsonValue({ maxDepth: 3 }),
    );
    await fc.assert(
      fc.asyncProperty(body, async (value) => {
        const a = await call(ref, { method: 'PATCH', path: sessionPath(), headers: json(token), body: JSON.stringify(value) });
        expect([200, 400]).toContain(a.status);
        if (a.status === 400) expectJsonError(a);
        const implementation = judgeExchange(a.exchange).findings.filter((f) => f.subject === 'implementation');
        expect(implementation).toEqual([]);
      }),
      { numRuns: 150 },
    );
  });
});

describe('odd ids and queries', () => {
  // Segments as they appear in the path (encoded); "." and ".." are left out because URL
  // parsers resolve them before sending.
  const segment = fc.oneof(
    fc
      .string({ minLength: 1, maxLength: 40, unit: 'binary' })
      .filter((s) => s !== '.' && s !== '..')
      .map(encodeURIComponent),
    fc.constantFrom('%2F', 'a%2Fb', '%00', '%', '%25', '%ZZ', '%E0%A4%A', '%F0%9F%98%80', encodeURIComponent('<script>')),
    fc.constant('x'.repeat(5000)),
  );

  it('answers every operation on random ids with 204 (idempotent delete) or a JSON 404; never 5xx', async () => {
    await fc.assert(
      fc.asyncProperty(segment, async (id) => {
        const del = await call(ref, { method: 'DELETE', path: `/api/v2/token-exchange-profiles/${id}`, headers: bearer(token) });
        expect(del.status).toBe(204);
        expectJsonError(await call(ref, { method: 'PATCH', path: `/api/v2/sessions/${id}`, headers: json(token), body: '{"session_metadata":null}' }), 404);
        expectJsonError(await call(ref, { method: 'GET', path: `/api/v2/resource-servers/${id}`, headers: bearer(token) }), 404);
      }),
      { numRuns: 60 },
    );
    await stillServes();
  });

  it('answers random queries on get resource server with 200 or a JSON 400', async () => {
    const query = fc.dictionary(fc.constantFrom('fields', 'include_fields', 'page', 'x'), fc.string({ maxLength: 30 }), { maxKeys: 4 });
    await fc.assert(
      fc.asyncProperty(query, async (params) => {
        const a = await call(ref, {
          method: 'GET',
          path: paths.resourceServer(ref.fixtures.resource_servers[1]!, `?${new URLSearchParams(params)}`),
          headers: bearer(token),
        });
        if (a.status !== 200) expectJsonError(a, 400);
        const implementation = judgeExchange(a.exchange).findings.filter((f) => f.subject === 'implementation' && f.level === 'must');
        expect(implementation).toEqual([]);
      }),
      { numRuns: 60 },
    );
  });

  it('answers paths and methods it does not serve with a JSON 404 or 405', async () => {
    expectJsonError(await call(ref, { method: 'GET', path: '/api/v2/users', headers: bearer(token) }), 404);
    expectJsonError(await call(ref, { method: 'GET', path: '/', headers: {} }), 404);
    expectJsonError(await call(ref, { method: 'GET', path: '/api/v2/sessions/', headers: bearer(token) }), 404);
    const put = await call(ref, { method: 'PUT', path: paths.session('x'), headers: json(token), body: '{}' });
    expectJsonError(put, 405);
    expect(put.headers.get('allow')).toBe('PATCH');
    expect((await call(ref, { method: 'GET', path: '/oauth/token' })).status).toBe(405);
  });
});

describe('token verification', () => {
  it('refuses a token signed by the reference for another audience, an alg "none" token and a tampered claim', async () => {
    const now = Date.now;
    const authority = await Authority.create({
      definitions: {
        full: { client_id: 'c_full', global: true, scopes: ['update:sessions'] },
        no_scope: { client_id: 'c_none', global: true, scopes: [] },
        non_global: { client_id: 'c_ng', global: false, scopes: [] },
      },
      issuer: 'http://127.0.0.1:1/',
      audiences: ['http://127.0.0.1:1/api/v2/'],
      now,
    });
    const good = await authority.issueToken(authority.clients.full, 'http://127.0.0.1:1/api/v2/', ['update:sessions']);
    expect(await authority.verify(`Bearer ${good}`)).toMatchObject({ ok: true, principal: { clientId: 'c_full', global: true } });

    const foreign = await authority.issueToken(authority.clients.full, 'https://other.example.com/api/v2/', ['update:sessions']);
    expect(await authority.verify(`Bearer ${foreign}`)).toEqual({ ok: false, message: 'Bad audience', errorCode: 'invalid_token' });

    const [header, payload] = good.split('.');
    const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
    const none = `${b64({ alg: 'none', typ: 'JWT' })}.${payload}.`;
    expect(await authority.verify(`Bearer ${none}`)).toMatchObject({ ok: false, errorCode: 'invalid_token' });

    const claims = JSON.parse(Buffer.from(payload!, 'base64url').toString());
    const escalated = `${header}.${b64({ ...claims, scope: 'update:sessions delete:token_exchange_profiles' })}.${good.split('.')[2]}`;
    expect(await authority.verify(`Bearer ${escalated}`)).toMatchObject({ ok: false, message: expect.stringMatching(/invalid signature/i) });

    expect(await authority.verify(undefined)).toMatchObject({ ok: false, errorCode: 'missing_authentication' });
    expect(await authority.verify('Bearer')).toMatchObject({ ok: false, errorCode: 'invalid_authorization_header' });
  });

  it('accepts the tenant-domain audience the official SDK asks for, and only when configured', async () => {
    const withDomain = await startReference({ tenantDomain: 'tenant.example.test', rateLimit: false });
    try {
      const body = (audience: string) =>
        new URLSearchParams({
          grant_type: 'client_credentials',
          client_id: withDomain.clients.full.client_id,
          client_secret: withDomain.clients.full.client_secret,
          audience,
        });
      const ok = await fetch(`${withDomain.authUrl}/oauth/token`, { method: 'POST', body: body('https://tenant.example.test/api/v2/') });
      expect(ok.status).toBe(200);
      const { access_token } = (await ok.json()) as { access_token: string };
      const read = await call(withDomain, {
        method: 'GET',
        path: paths.resourceServer(withDomain.fixtures.resource_servers[0]!),
        headers: bearer(access_token),
      });
      expect(read.status).toBe(200);
      // That token is refused by a reference without the tenant domain.
      const elsewhere = await call(ref, { method: 'GET', path: paths.resourceServer(ref.fixtures.resource_servers[0]!), headers: bearer(access_token) });
      expectJsonError(elsewhere, 401);
      const refused = await fetch(`${ref.authUrl}/oauth/token`, {
        method: 'POST',
        body: new URLSearchParams({
          grant_type: 'client_credentials',
          client_id: ref.clients.full.client_id,
          client_secret: ref.clients.full.client_secret,
          audience: 'https://tenant.example.test/api/v2/',
        }),
      });
      expect(refused.status).toBe(403);
    } finally {
      await withDomain.close();
    }
  });
});
