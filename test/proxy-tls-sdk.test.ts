// The proof with a client nobody here wrote: the official auth0 SDK with its default transport,
// in its own process with NODE_EXTRA_CA_CERTS set to the proxy's CA (as the proxy's start line
// tells users to), its domain the HTTPS proxy's HOST:PORT. It gets a token and calls the three
// operations through the proxy to the reference; every exchange is recorded and judged, with no
// finding, and its secret and token are nowhere on disk.
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startReference, type RunningReference } from '../reference/index.ts';
import { readJournal, recorded, startTestProxy, type ProxyUnderTest } from './helpers/proxy.ts';

const SDK_CLIENT = fileURLToPath(new URL('./helpers/auth0-sdk-client.mjs', import.meta.url));
const ROOT = fileURLToPath(new URL('..', import.meta.url));

describe('the auth0 SDK, default transport, through the HTTPS proxy', () => {
  let ref: RunningReference;
  let under: ProxyUnderTest;
  const tlsDir = mkdtempSync(join(tmpdir(), 'tmi-proxy-tls-sdk-'));

  beforeAll(async () => {
    ref = await startReference();
    under = await startTestProxy(ref.origin, { tls: { dir: tlsDir } });
  });
  afterAll(async () => {
    await under?.dispose();
    await ref?.close();
    rmSync(tlsDir, { recursive: true, force: true });
  });

  it('gets a token and calls all three operations; every exchange recorded and judged, no finding, no secret on disk', async () => {
    const { proxy } = under;
    const domain = proxy.url.slice('https://'.length);
    const { stdout } = await promisify(execFile)(process.execPath, [SDK_CLIENT], {
      cwd: ROOT,
      timeout: 30_000,
      env: {
        ...process.env,
        NODE_EXTRA_CA_CERTS: proxy.caPath,
        SDK_DOMAIN: domain,
        SDK_CLIENT_ID: ref.clients.full.client_id,
        SDK_CLIENT_SECRET: ref.clients.full.client_secret,
        SDK_AUDIENCE: ref.audience,
        SDK_SESSION_ID: ref.fixtures.sessions[0]!,
        SDK_RESOURCE_SERVER_ID: ref.fixtures.resource_servers[1]!,
        SDK_TOKEN_EXCHANGE_PROFILE_ID: ref.fixtures.token_exchange_profiles[0]!,
      },
    });
    expect(JSON.parse(stdout)).toEqual({ sessionMetadata: { plan: 'platinum' }, resourceServerName: 'Orders API', deleted: true });

    await recorded(proxy, 4);
    await proxy.stop();
    const entries = readJournal(under.journalPath);
    expect(
      entries.map((e) => [e.request!.method, new URL(e.request!.url!).pathname.replace(/[^/]+$/, ':id'), e._conformance.operation, e.response!.status]),
    ).toEqual([
      ['POST', '/oauth/:id', 'getToken', 200],
      ['PATCH', '/api/v2/sessions/:id', 'updateSession', 200],
      ['GET', '/api/v2/resource-servers/:id', 'getResourceServer', 200],
      ['DELETE', '/api/v2/token-exchange-profiles/:id', 'deleteTokenExchangeProfile', 204],
    ]);
    // Judged: the SDK's token is read for its claims (the rules need them), and nothing is wrong.
    expect(entries[1]!._conformance.token.claims).toMatchObject({ azp: ref.clients.full.client_id, aud: ref.audience });
    expect(entries.flatMap((e) => e._conformance.findings)).toEqual([]);
    const report = JSON.parse(readFileSync(join(under.reportDir, 'report.json'), 'utf8')) as { passed: boolean; traffic: { exchanges: number } };
    expect(report).toMatchObject({ passed: true, traffic: { exchanges: 4 } });

    for (const file of [under.journalPath, under.harPath, ...readdirSync(under.reportDir).map((name) => join(under.reportDir, name))]) {
      expect(readFileSync(file, 'utf8').includes(ref.clients.full.client_secret), file).toBe(false);
    }
  });
});
