// The upstreams the proxies stand in front of: the reference implementation (rate limit off, as
// its default would answer the benchmark with 429s), with the request mix and a token of its;
// and the stub target, which answers without verifying tokens and so shows what the proxies cost.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { BIN, CHILD_SERVER, OUT } from './files.ts';
import type { AutocannonRequest } from './load.ts';
import { launch, type Running } from './processes.ts';

interface ReferenceConfig {
  audience: string;
  auth_url: string;
  credentials: { full: { client_id: string; client_secret: string } };
  fixtures: { resource_servers: string[]; sessions: Array<{ id: string } | string>; token_exchange_profiles: string[] };
}

/** The reference, rate limit off, and the request mix with a token of its. */
export async function startReferenceUpstream(): Promise<{ reference: Running; requests: AutocannonRequest[] }> {
  const configPath = join(OUT, 'proxy-bench-reference.yaml');
  const reference = await launch(process.execPath, [BIN, 'serve', '--listen', '127.0.0.1:0', '--rate-limit', 'off', '--config-out', configPath]);
  const config = parseYaml(readFileSync(configPath, 'utf8')) as ReferenceConfig;
  const token = await fetchToken(config);
  const sessionId = (s: { id: string } | string) => (typeof s === 'string' ? s : s.id);
  return {
    reference,
    requests: mix(token, config.fixtures.resource_servers, config.fixtures.sessions.map(sessionId), config.fixtures.token_exchange_profiles),
  };
}

export function startStubUpstream(): Promise<Running> {
  return launch(process.execPath, ['--import', 'tsx', CHILD_SERVER, 'stub']);
}

function mix(token: string, resourceServers: string[], sessions: string[], profiles: string[]): AutocannonRequest[] {
  const auth = { authorization: `Bearer ${token}` };
  return [
    { method: 'GET', path: `/api/v2/resource-servers/${resourceServers[1]}`, headers: auth },
    {
      method: 'PATCH',
      path: `/api/v2/sessions/${sessions[0]}`,
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ session_metadata: { plan: 'gold', locale: 'en-GB' } }),
    },
    { method: 'GET', path: `/api/v2/resource-servers/${resourceServers[0]}?fields=id,name,identifier&include_fields=true`, headers: auth },
    // Deleting is idempotent on the reference: the same profile answers 204 every time.
    { method: 'DELETE', path: `/api/v2/token-exchange-profiles/${profiles[0]}`, headers: auth },
  ];
}

async function fetchToken(config: ReferenceConfig): Promise<string> {
  const { client_id, client_secret } = config.credentials.full;
  const response = await fetch(`${config.auth_url}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'client_credentials', client_id, client_secret, audience: config.audience }),
  });
  const body = (await response.json()) as { access_token?: string };
  if (!body.access_token) throw new Error(`no token from the reference (${response.status})`);
  return body.access_token;
}
