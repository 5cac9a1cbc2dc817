// The official auth0 SDK (v7), a client nobody here wrote, against the reference: it gets its
// token with client credentials and calls the three operations exactly as it would against a
// real tenant. Its https://{domain} requests reach the local http server through the SDK's
// own `fetch` option.
import { ManagementClient } from 'auth0';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startReference, type RunningReference } from '../reference/index.ts';

const DOMAIN = 'tenant.example.test';

describe('the auth0 SDK v7 against the reference', () => {
  let ref: RunningReference;
  let management: ManagementClient;
  const requests: Array<{ method: string; url: string }> = [];

  beforeAll(async () => {
    ref = await startReference({ tenantDomain: DOMAIN });
    // Sends what the SDK addresses to https://tenant.example.test to the reference, unchanged
    // otherwise (method, headers, body).
    const toReference: typeof fetch = (input, init) => {
      const request = new Request(input, init);
      const url = new URL(request.url);
      expect(url.origin).toBe(`https://${DOMAIN}`);
      requests.push({ method: request.method, url: url.pathname });
      return fetch(new Request(ref.origin + url.pathname + url.search, request));
    };
    management = new ManagementClient({
      domain: DOMAIN,
      clientId: ref.clients.full.client_id,
      clientSecret: ref.clients.full.client_secret,
      fetch: toReference,
      maxRetries: 0,
    });
  });

  afterAll(async () => {
    await ref?.close();
  });

  it('gets a token with client credentials and updates a session', async () => {
    const sessionId = ref.fixtures.sessions[0]!;
    const session = await management.sessions.update(sessionId, { session_metadata: { plan: 'platinum', locale: 'de-DE' } });
    expect(session.id).toBe(sessionId);
    expect(session.session_metadata).toEqual({ plan: 'platinum', locale: 'de-DE' });
    // The SDK fetched its token from the token endpoint first (client credentials).
    expect(requests[0]).toEqual({ method: 'POST', url: '/oauth/token' });
    expect(requests).toContainEqual({ method: 'PATCH', url: `/api/v2/sessions/${sessionId}` });
  });

  it('gets a resource server by id', async () => {
    const id = ref.fixtures.resource_servers[1]!;
    const server = await management.resourceServers.get(id, { include_fields: true });
    expect(server.id).toBe(id);
    expect(server.name).toBe('Orders API');
    expect(server.signing_alg).toBe('HS256');
  });

  it('deletes a token exchange profile', async () => {
    const id = ref.fixtures.token_exchange_profiles[0]!;
    const countBefore = requests.length;
    await expect(management.tokenExchangeProfiles.delete(id)).resolves.toBeUndefined();
    expect(requests.slice(countBefore)).toEqual([{ method: 'DELETE', url: `/api/v2/token-exchange-profiles/${id}` }]);
  });

  it('sees the documented errors as the SDK error types', async () => {
    await expect(management.resourceServers.get('rs_does_not_exist')).rejects.toMatchObject({ statusCode: 404 });
    await expect(management.sessions.update(ref.fixtures.sessions[0]!, { session_metadata: { toolong: 'x'.repeat(256) } })).rejects.toMatchObject({
      statusCode: 400,
    });
  });
});
