// A secret the proxy has seen once (a client secret sent to the token endpoint) is masked
// wherever it turns up later in the session: in another exchange's body, the journal, the HAR
// and every report. Values too short or too common to be secrets stay readable.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KnownSecrets, redactExchange } from '../core/redact.ts';
import { startReference, type RunningReference } from '../reference/index.ts';
import { buildExchange } from '../rules/exchange.ts';
import { startTestProxy, type ProxyUnderTest } from './helpers/proxy.ts';

describe('the proxy masks a secret it has seen wherever it turns up later', () => {
  let ref: RunningReference;
  let under: ProxyUnderTest;
  beforeAll(async () => {
    ref = await startReference({ rateLimit: false });
    under = await startTestProxy(ref.origin);
  });
  afterAll(async () => {
    await under?.dispose();
    await ref?.close();
  });

  it('a client secret put into session_metadata after the token request: on no file the proxy writes', async () => {
    const { client_id, client_secret } = ref.clients.full;
    const origin = under.proxy.url;
    const tokenAnswer = await fetch(`${origin}/oauth/token/`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'client_credentials', client_id, client_secret, audience: `${ref.origin}/api/v2/` }),
    });
    const token = ((await tokenAnswer.json()) as { access_token: string }).access_token;
    const session = ref.config().fixtures.sessions[0]!;
    const patched = await fetch(`${origin}/api/v2/sessions/${session.id}`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ session_metadata: { note: client_secret, plan: 'gold' } }),
    });
    expect(patched.status).toBe(200);
    await patched.text();
    await under.proxy.stop();
    const files = [under.journalPath, under.harPath, ...readdirSync(under.reportDir).map((f) => join(under.reportDir, f))].filter((f) => existsSync(f));
    expect(files.length).toBeGreaterThanOrEqual(5);
    for (const file of files) {
      const text = readFileSync(file, 'utf8');
      expect(text.includes(client_secret), file).toBe(false);
    }
    // What is not a secret stays readable: the session id and the other metadata value.
    const journal = readFileSync(under.journalPath, 'utf8');
    expect(journal).toContain(session.id);
    expect(journal).toContain('gold');
  });
});

describe('KnownSecrets', () => {
  const exchange = (body: string) =>
    buildExchange({
      method: 'PATCH',
      url: 'https://t.example.com/api/v2/sessions/s1',
      requestHeaders: { 'content-type': 'application/json' },
      requestBody: body,
      status: 200,
      responseHeaders: {},
      responseBody: '{}',
    });
  const tokenRequest = (secret: string) =>
    buildExchange({
      method: 'POST',
      url: 'https://t.example.com/oauth/token',
      requestHeaders: { 'content-type': 'application/x-www-form-urlencoded' },
      requestBody: `grant_type=client_credentials&client_id=c1&client_secret=${secret}`,
      status: 200,
      responseHeaders: {},
      responseBody: '{}',
    });

  it('learns from one exchange, masks in the next; a placeholder or short value is never learned', () => {
    const known = new KnownSecrets();
    const secret = 'Zq8v1Lw3Xp9Rt5Ny';
    redactExchange(tokenRequest(secret), undefined, known);
    expect(known.has(secret)).toBe(true);
    expect(redactExchange(exchange(`{"session_metadata":{"note":"${secret}"}}`), undefined, known).request.body!.text).not.toContain(secret);
    // Without the session's memory, the same body keeps it (nothing in it says secret).
    expect(redactExchange(exchange(`{"session_metadata":{"note":"${secret}"}}`)).request.body!.text).toContain(secret);
    for (const weak of ['string', 'short1', 'changeme']) {
      redactExchange(tokenRequest(weak), undefined, known);
      expect(known.has(weak), weak).toBe(false);
      expect(redactExchange(exchange(`{"session_metadata":{"note":"${weak}"}}`), undefined, known).request.body!.text).toContain(weak);
    }
  });
});

describe('a token is masked by what it is, wherever it stands', () => {
  const token = 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJjbGllbnQtMSJ9.c2lnbmF0dXJlLW9mLXRoZS10b2tlbg';
  const signature = token.split('.')[2]!;
  const get = (path: string, headers: Record<string, string>) =>
    buildExchange({ method: 'GET', url: `https://t.example.com${path}`, requestHeaders: headers, status: 200, responseHeaders: {}, responseBody: '{}' });

  it.each(['x-authorization', 'x-auth-token', 'x-access-token', 'token', 'authorization2', 'x-forwarded-authorization'])(
    'in the %s header (no Authorization beside it)',
    (name) => {
      const safe = redactExchange(get('/api/v2/resource-servers/rs_1', { [name]: `Bearer ${token}` }));
      expect(safe.request.headers[name]).not.toContain(signature);
      expect(safe.request.headers[name]).toMatch(/^\[REDACTED\]/);
    },
  );

  it('a credential-named header with a value that is not a JWT is masked whole too', () => {
    const safe = redactExchange(get('/api/v2/resource-servers/rs_1', { 'x-client-secret': 'k7Q2mV9xR4tW8yZ1' }));
    expect(safe.request.headers['x-client-secret']).not.toContain('k7Q2mV9xR4tW8yZ1');
  });

  it('in the Referer and as a path segment; other headers and paths stay as they were', () => {
    const safe = redactExchange(
      get(`/api/v2/resource-servers/${token}`, { referer: `https://app.example.com/cb?access_token=${token}`, 'x-request-id': 'req-123' }),
    );
    expect(safe.request.url).not.toContain(signature);
    expect(safe.request.url).toMatch(/^https:\/\/t\.example\.com\/api\/v2\/resource-servers\/\[REDACTED\]/);
    expect(safe.request.headers['referer']).not.toContain(signature);
    expect(safe.request.headers['x-request-id']).toBe('req-123');
    expect(redactExchange(get('/api/v2/resource-servers/rs_1', {})).request.url).toBe('https://t.example.com/api/v2/resource-servers/rs_1');
  });
});
