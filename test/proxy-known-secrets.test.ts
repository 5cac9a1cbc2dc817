// A secret the proxy has seen once (a client secret sent to the token endpoint) is masked
// wherever it turns up later in the session: in another exchange's body, the journal, the HAR
// and every report. Values too short or too common to be secrets stay readable.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KnownSecrets, redactExchange } from '../core/redact.ts';
import { startReference, type RunningReference } from '../fixtures/reference/index.ts';
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
    buildExchange({ method: 'PATCH', url: 'https://t.example.com/api/v2/sessions/s1', requestHeaders: { 'content-type': 'application/json' }, requestBody: body, status: 200, responseHeaders: {}, responseBody: '{}' });
  const tokenRequest = (secret: string) =>
    buildExchange({ method: 'POST', url: 'https://t.example.com/oauth/token', requestHeaders: { 'content-type': 'application/x-www-form-urlencoded' }, requestBody: `grant_type=client_credentials&client_id=c1&client_secret=${secret}`, status: 200, responseHeaders: {}, responseBody: '{}' });

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
