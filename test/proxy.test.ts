// The proxy in front of the conforming reference: a mix of every operation, the token endpoint
// and the error paths goes through it. Every exchange is recorded (journal, HAR, report), none
// earns a `must` finding, the recordings read back through validate with the same findings, and
// no secret of the session reaches the disk.
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startReference, type RunningReference } from '../reference/index.ts';
import { judgeExchange, RateLimitTracker } from '../rules/index.ts';
import { readRecording } from '../recordings/read.ts';
import type { Report } from '../reports/model.ts';
import type { ProxySummary } from '../proxy/session.ts';
import { metadata } from './helpers/reference.ts';
import { readJournal, recorded, startTestProxy, type ProxyUnderTest, type RecordedEntry } from './helpers/proxy.ts';

const BIN = fileURLToPath(new URL('../bin/tmi-conform.js', import.meta.url));
/** Small enough that a short burst of one client reaches a 429, big enough for the rest of the mix. */
const RATE_LIMIT = { limit: 40, windowSeconds: 600 };

interface Sent {
  method: string;
  path: string;
  status: number;
}

describe('the proxy in front of the conforming reference', () => {
  let ref: RunningReference;
  let under: ProxyUnderTest;
  let summary: ProxySummary;
  let entries: RecordedEntry[];
  const sent: Sent[] = [];
  /** Every secret the session saw: none may reach the disk. */
  const secrets = new Set<string>();

  async function send(method: string, path: string, init: { headers?: Record<string, string>; body?: string } = {}): Promise<{ status: number; text: string }> {
    const response = await fetch(under.proxy.origin + path, { method, headers: init.headers ?? {}, ...(init.body !== undefined ? { body: init.body } : {}) });
    const text = await response.text();
    sent.push({ method, path, status: response.status });
    return { status: response.status, text };
  }

  async function token(profile: 'full' | 'no_scope' | 'non_global', style: 'form' | 'json' | 'basic'): Promise<string> {
    const { client_id, client_secret } = ref.clients[profile];
    const params = { grant_type: 'client_credentials', audience: ref.audience };
    const request: { headers: Record<string, string>; body: string } =
      style === 'form'
        ? { headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ ...params, client_id, client_secret }).toString() }
        : style === 'json'
          ? { headers: { 'content-type': 'application/json' }, body: JSON.stringify({ ...params, client_id, client_secret }) }
          : {
              headers: {
                'content-type': 'application/x-www-form-urlencoded',
                authorization: `Basic ${Buffer.from(`${client_id}:${client_secret}`).toString('base64')}`,
              },
              body: new URLSearchParams(params).toString(),
            };
    const { status, text } = await send('POST', '/oauth/token', request);
    expect(status).toBe(200);
    const accessToken = (JSON.parse(text) as { access_token: string }).access_token;
    secrets.add(accessToken);
    secrets.add(accessToken.split('.')[2]!); // the signature alone is a secret too
    return accessToken;
  }

  beforeAll(async () => {
    ref = await startReference({ rateLimit: RATE_LIMIT });
    // The operator tells the proxy which client is not global (no token claim says it).
    under = await startTestProxy(ref.origin, { nonGlobalClients: [ref.clients.non_global.client_id] });
    for (const { client_secret } of Object.values(ref.clients)) secrets.add(client_secret);

    const full = await token('full', 'form');
    const noScope = await token('no_scope', 'json');
    const nonGlobal = await token('non_global', 'basic');
    const bearer = (t: string) => ({ authorization: `Bearer ${t}` });
    const json = (t: string) => ({ ...bearer(t), 'content-type': 'application/json' });
    const [rsSystem, rsHs256, rsEncrypted] = ref.fixtures.resource_servers as [string, string, string];
    const [session1, session2] = ref.fixtures.sessions as [string, string];
    const [tep1, tep2, tep3] = ref.fixtures.token_exchange_profiles as [string, string, string];

    // Token endpoint refusals.
    await send('POST', '/oauth/token', {
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `grant_type=client_credentials&client_id=${ref.clients.full.client_id}&client_secret=wrong-secret-value&audience=${encodeURIComponent(ref.audience)}`,
    });

    // Get a resource server: every fixture (one with a signing secret, one with an encryption key), by audience, field selection, errors.
    for (const id of [rsSystem, rsHs256, rsEncrypted]) {
      const { status, text } = await send('GET', `/api/v2/resource-servers/${id}`, { headers: bearer(full) });
      expect(status).toBe(200);
      const body = JSON.parse(text) as { signing_secret?: string; token_encryption?: { encryption_key: { pem: string } } | null };
      if (body.signing_secret) secrets.add(body.signing_secret);
      if (body.token_encryption) secrets.add(body.token_encryption.encryption_key.pem.split('\n')[1]!);
    }
    await send('GET', `/api/v2/resource-servers/${encodeURIComponent(ref.audience)}`, { headers: bearer(full) });
    await send('GET', `/api/v2/resource-servers/${rsHs256}?fields=id,name,signing_alg&include_fields=true`, { headers: bearer(full) });
    await send('GET', `/api/v2/resource-servers/${rsHs256}?include_fields=maybe`, { headers: bearer(full) });
    await send('GET', '/api/v2/resource-servers/rs_does_not_exist', { headers: bearer(full) });
    await send('GET', `/api/v2/resource-servers/${rsSystem}`);
    await send('GET', `/api/v2/resource-servers/${rsSystem}`, { headers: { authorization: 'Token abc' } });
    await send('GET', `/api/v2/resource-servers/${rsSystem}`, { headers: bearer(noScope) });

    // Update a session: valid, cleared, too many properties, bad JSON, wrong content type, unknown, no scope.
    await send('PATCH', `/api/v2/sessions/${session1}`, {
      headers: json(full),
      body: JSON.stringify({ session_metadata: { plan: 'platinum', locale: 'de-DE' } }),
    });
    await send('PATCH', `/api/v2/sessions/${session2}`, { headers: json(full), body: JSON.stringify({ session_metadata: null }) });
    await send('PATCH', `/api/v2/sessions/${session1}`, { headers: json(full), body: JSON.stringify({ session_metadata: metadata(26) }) });
    await send('PATCH', `/api/v2/sessions/${session1}`, { headers: json(full), body: '{"session_metadata": {' });
    await send('PATCH', `/api/v2/sessions/${session1}`, { headers: { ...bearer(full), 'content-type': 'text/plain' }, body: '{}' });
    await send('PATCH', '/api/v2/sessions/sess_unknown', { headers: json(full), body: JSON.stringify({ session_metadata: {} }) });
    await send('PATCH', `/api/v2/sessions/${session1}`, { headers: json(noScope), body: JSON.stringify({ session_metadata: {} }) });

    // Delete a token exchange profile: success, no scope, not global, no token.
    await send('DELETE', `/api/v2/token-exchange-profiles/${tep1}`, { headers: bearer(full) });
    await send('DELETE', `/api/v2/token-exchange-profiles/${tep2}`, { headers: bearer(noScope) });
    await send('DELETE', `/api/v2/token-exchange-profiles/${tep3}`, { headers: bearer(nonGlobal) });
    await send('DELETE', `/api/v2/token-exchange-profiles/${tep3}`);

    // Paths the document does not cover pass through, counted but not judged.
    await send('GET', '/.well-known/jwks.json');
    await send('GET', '/api/v2/users/u1', { headers: bearer(full) });

    // One client runs into the rate limit: the 429s carry the headers.
    for (let i = 0; i < 6; i++) await send('GET', `/api/v2/resource-servers/${rsSystem}?round=${i}`, { headers: bearer(nonGlobal) });
    for (let i = 0; i < RATE_LIMIT.limit; i++) {
      if (sent.filter((s) => s.status === 429).length >= 2) break;
      await send('GET', `/api/v2/resource-servers/${rsSystem}`, { headers: bearer(nonGlobal) });
    }

    await recorded(under.proxy, sent.length);
    summary = await under.proxy.stop();
    entries = readJournal(under.journalPath);
  });

  afterAll(async () => {
    await under?.dispose();
    await ref?.close();
  });

  it('records every exchange, in order, in the journal, the HAR file and the report', () => {
    expect(sent.some((s) => s.status === 429)).toBe(true);
    expect(entries).toHaveLength(sent.length);
    expect(entries.map((e) => [e.request!.method, new URL(e.request!.url!).pathname + new URL(e.request!.url!).search, e.response!.status])).toEqual(
      sent.map((s) => [s.method, s.path, s.status]),
    );
    // Recorded URLs name the target, not the proxy.
    expect(entries.every((e) => e.request!.url!.startsWith(ref.origin))).toBe(true);
    const har = JSON.parse(readFileSync(under.harPath, 'utf8')) as { log: { version: string; creator: { name: string }; entries: RecordedEntry[] } };
    expect(har.log.version).toBe('1.2');
    expect(har.log.creator.name).toBe('tmi-conform');
    expect(har.log.entries).toEqual(entries);
    expect(summary.journal).toMatchObject({ written: sent.length, lost: 0 });
    expect(summary.har).toMatchObject({ entries: sent.length, skipped: 0 });
    const report = JSON.parse(readFileSync(join(under.reportDir, 'report.json'), 'utf8')) as Report;
    expect(report.kind).toBe('proxy');
    expect(report.traffic?.exchanges).toBe(sent.length);
    // GET /api/v2/users/u1 is an operation the document does not detail (judged by the general rules); only the JWKS fetch is outside the API.
    expect(report.traffic?.notCovered).toBe(1);
    expect(report.traffic?.operations?.find((o) => o.name === 'GET /users/{id}')).toMatchObject({ operation: 'otherOperation', exchanges: 1 });
    expect(readdirSync(under.reportDir).sort()).toEqual(['junit.xml', 'report.html', 'report.json', 'report.md', 'report.sarif']);
  });

  it('judges every exchange: no must finding against the conforming reference, the client mistakes seen', () => {
    const implementationMust = entries.flatMap((e) => e._conformance.findings).filter((f) => f.subject === 'implementation' && f.level === 'must');
    expect(implementationMust).toEqual([]);
    expect(summary.report.passed).toBe(true);
    const operations = new Set(entries.map((e) => e._conformance.operation));
    expect(operations).toEqual(new Set(['getToken', 'getResourceServer', 'updateSession', 'deleteTokenExchangeProfile', 'otherOperation', null]));
    const clientFindings = new Set(entries.flatMap((e) => e._conformance.findings.filter((f) => f.subject === 'client').map((f) => f.requirement)));
    expect(clientFindings).toContain('SES-METADATA-MAX-PROPERTIES'); // the 26-property update
    expect(clientFindings).toContain('SES-REQUEST-BODY'); // the body that is not JSON
    expect(clientFindings).toContain('AUTH-BEARER-HEADER'); // "Token abc"
    const byId = new Map(summary.report.requirements.map((r) => [r.id, r]));
    // Judged, not just forwarded: the operations' own requirements passed on this traffic.
    for (const id of [
      'TEP-DELETE-204',
      'SCOPE-DELETE-403',
      'AUTH-NON-GLOBAL-401',
      'SES-RESPONSE-SCHEMA',
      'RS-RESPONSE-SCHEMA',
      'RS-SIGNING-SECRET-LENGTH',
      'RL-429-HEADERS',
      'AUTH-TOKEN-AUDIENCE',
    ]) {
      expect(byId.get(id)?.status, id).toBe('pass');
    }
  });

  it('keeps the token claims for the audit and redacts every credential', () => {
    const get = entries.find((e) => e._conformance.operation === 'getResourceServer' && e.response!.status === 200)!;
    expect(get.request!.headers!.find((h) => h.name === 'authorization')?.value).toBe('Bearer [REDACTED]');
    expect(get._conformance.token).toEqual({
      headerPresent: true,
      wellFormed: true,
      claims: expect.objectContaining({
        azp: ref.clients.full.client_id,
        scope: 'delete:token_exchange_profiles update:sessions read:resource_servers',
        gty: 'client-credentials',
        exp: expect.any(Number),
      }),
      // The JOSE header's alg, so that an unsigned token is judged offline too.
      alg: 'RS256',
    });
    const tokenRequest = entries[0]!;
    expect(tokenRequest.request!.postData!.text).toMatch(/client_secret=\[REDACTED\]\*+(&|$)/);
    expect(tokenRequest.response!.content!.text).toMatch(/"access_token":"\[REDACTED\]\*+"/);
    const basic = entries[2]!;
    expect(basic.request!.headers!.find((h) => h.name === 'authorization')?.value).toBe('Basic [REDACTED]');
    const hs256 = entries.find((e) => e.response!.content?.text?.includes('"signing_secret"'))!;
    // Masked to the same length, so the minimum-length rule judges the recording as it judged the traffic.
    const maskedSecret = (JSON.parse(hs256.response!.content!.text!) as { signing_secret: string }).signing_secret;
    expect(maskedSecret).toMatch(/^\[REDACTED\]\*+$/);
    expect(secrets.has('reference-demo-hs256-secret-0001')).toBe(true);
    expect(maskedSecret).toHaveLength('reference-demo-hs256-secret-0001'.length);
  });

  it('writes no secret of the session to the journal, the HAR file or the reports', () => {
    expect(secrets.size).toBeGreaterThanOrEqual(3 + 3 * 2 + 2);
    const files = [under.journalPath, under.harPath, ...readdirSync(under.reportDir).map((name) => join(under.reportDir, name))];
    for (const file of files) {
      const text = readFileSync(file, 'utf8');
      for (const secret of secrets) expect(text.includes(secret), `${secret.slice(0, 12)}… in ${file}`).toBe(false);
      expect(text, file).not.toMatch(/eyJ[A-Za-z0-9_-]{10,}\.eyJ/);
    }
  });

  it('round-trips: validate reads the journal and the HAR file and finds what the proxy found, counting each exchange once', async () => {
    for (const file of [under.journalPath, under.harPath]) {
      const tracker = new RateLimitTracker();
      const offline: string[][] = [];
      for await (const exchange of readRecording(file))
        offline.push(
          judgeExchange(exchange, tracker)
            .findings.map((f) => `${f.requirement}/${f.subject}`)
            .sort(),
        );
      expect(offline, file).toEqual(entries.map((e) => e._conformance.findings.map((f) => `${f.requirement}/${f.subject}`).sort()));
    }
    const result = spawnSync(process.execPath, [BIN, 'validate', under.journalPath, under.harPath, '--report-dir', join(under.dir, 'validated')], {
      encoding: 'utf8',
      env: { ...process.env, GITHUB_STEP_SUMMARY: '' },
    });
    expect(result.stderr).toBe('');
    // The HAR was written from the journal at stop: read once, from the journal, and said so.
    expect(result.stdout).toContain(
      `skipped ${under.harPath}: the HAR the proxy wrote at stop from the journal ${under.journalPath} (${sent.length} exchanges)`,
    );
    expect(result.stdout).toContain(`${sent.length} exchanges in 1 file(s)`);
    expect(result.status).toBe(0);
  });
});
