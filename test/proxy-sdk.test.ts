// The official auth0 SDK (v7), pointed at the proxy instead of its tenant: its token request
// and its calls of the three operations pass through, work as they would directly, and are
// recorded and judged, with its client secret and token nowhere on disk.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ManagementClient } from 'auth0';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startReference, type RunningReference } from '../reference/index.ts';
import { readJournal, recorded, startTestProxy, type ProxyUnderTest, type RecordedEntry } from './helpers/proxy.ts';

const DOMAIN = 'tenant.example.test';

describe('the auth0 SDK through the proxy', () => {
  let ref: RunningReference;
  let under: ProxyUnderTest;
  let management: ManagementClient;
  let calls = 0;
  const secrets = new Set<string>();

  beforeAll(async () => {
    ref = await startReference({ tenantDomain: DOMAIN });
    under = await startTestProxy(ref.origin);
    secrets.add(ref.clients.full.client_secret);
    // What the SDK addresses to https://tenant.example.test goes to the proxy, unchanged otherwise.
    const toProxy: typeof fetch = async (input, init) => {
      const request = new Request(input, init);
      const url = new URL(request.url);
      expect(url.origin).toBe(`https://${DOMAIN}`);
      calls++;
      const response = await fetch(new Request(under.proxy.origin + url.pathname + url.search, request));
      if (url.pathname === '/oauth/token') {
        const { access_token } = (await response.clone().json()) as { access_token: string };
        secrets.add(access_token);
      }
      return response;
    };
    management = new ManagementClient({
      domain: DOMAIN,
      clientId: ref.clients.full.client_id,
      clientSecret: ref.clients.full.client_secret,
      fetch: toProxy,
      maxRetries: 0,
    });
  });

  afterAll(async () => {
    await under?.dispose();
    await ref?.close();
  });

  it('works through the proxy, and every call is recorded and judged', async () => {
    const sessionId = ref.fixtures.sessions[0]!;
    const session = await management.sessions.update(sessionId, { session_metadata: { plan: 'platinum' } });
    expect(session.session_metadata).toEqual({ plan: 'platinum' });
    const server = await management.resourceServers.get(ref.fixtures.resource_servers[1]!);
    expect(server.name).toBe('Orders API');
    await expect(management.tokenExchangeProfiles.delete(ref.fixtures.token_exchange_profiles[0]!)).resolves.toBeUndefined();
    await expect(management.resourceServers.get('rs_does_not_exist')).rejects.toMatchObject({ statusCode: 404 });

    await recorded(under.proxy, calls);
    await under.proxy.stop();
    const entries: RecordedEntry[] = readJournal(under.journalPath);
    expect(entries).toHaveLength(calls);
    expect(entries.map((e) => [e._conformance.operation, e.response!.status])).toEqual([
      ['getToken', 200],
      ['updateSession', 200],
      ['getResourceServer', 200],
      ['deleteTokenExchangeProfile', 204],
      ['getResourceServer', 404],
    ]);
    // The SDK's token is judged by its claims, kept for the audit.
    expect(entries[1]!._conformance.token.claims).toMatchObject({ azp: ref.clients.full.client_id, aud: `https://${DOMAIN}/api/v2/` });
    expect(entries.flatMap((e) => e._conformance.findings).filter((f) => f.level === 'must' && f.subject === 'implementation')).toEqual([]);
  });

  it('leaves its client secret and token out of the journal, the HAR file and the reports', () => {
    expect(secrets.size).toBe(2);
    for (const file of [under.journalPath, under.harPath, ...readdirSync(under.reportDir).map((name) => join(under.reportDir, name))]) {
      const text = readFileSync(file, 'utf8');
      for (const secret of secrets) expect(text.includes(secret), file).toBe(false);
    }
  });
});
