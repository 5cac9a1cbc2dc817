// Two requests whose Authorization headers differ only in letter case ("bearer <token>" and
// "Bearer <token>", the lowercase-scheme attack beside the foreign-key one) against a target that,
// as Jetty's HTTP parser does (WireMock runs on it), keeps the header values a connection brought
// and takes a later one that matches regardless of case for the earlier. Each answer must be to
// the request as sent, in either order, whatever connection the client would reuse.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { SuiteApi } from '../suites/api.ts';
import { resolveConfig } from '../suites/config.ts';
import { TenantTokens } from '../keys/tenant.ts';
import { claims, jwt } from '../fixtures/exchanges.ts';

/** The Authorization value as the target reads it: the first value of its connection that equals it regardless of case. */
function readAsCached(cache: WeakMap<Socket, Map<string, string>>, req: IncomingMessage): string | undefined {
  const sent = req.headers.authorization;
  if (sent === undefined) return undefined;
  let seen = cache.get(req.socket);
  if (!seen) cache.set(req.socket, (seen = new Map()));
  if (!seen.has(sent.toLowerCase())) seen.set(sent.toLowerCase(), sent);
  return seen.get(sent.toLowerCase());
}

describe('requests whose Authorization differs only in letter case, to a target that caches header values per connection', () => {
  let server: Server;
  let base: string;
  let api: SuiteApi | undefined;
  /** What the target read, request by request. */
  const read: Array<string | undefined> = [];

  beforeAll(async () => {
    const cache = new WeakMap<Socket, Map<string, string>>();
    // A stub as SDK authors write them: the fixture's URL and "Bearer .+", matched case-sensitively; anything else is not matched.
    server = createServer((req, res) => {
      const authorization = readAsCached(cache, req);
      read.push(authorization);
      if (req.url === '/api/v2/resource-servers/rs_1' && /^Bearer .+$/.test(authorization ?? ''))
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"id":"rs_1","name":"Orders API","identifier":"https://orders.example.com/api"}');
      else res.writeHead(404, { 'content-type': 'text/plain' }).end('Request was not matched');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterEach(async () => {
    await api?.close();
    api = undefined;
    read.length = 0;
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  const client = () => {
    const config = resolveConfig({ base_url: `${base}/api/v2`, credentials: { full: { token: jwt(claims()) } } });
    return new SuiteApi(config, new TenantTokens({}), {}, { exchange: () => {}, unplanned429: () => {}, risked429: () => {} });
  };
  // The client marks a connection free a moment after its answer was read: sent at once, the
  // next request would open another connection, sent after this pause it takes the kept-alive one.
  const connectionIdle = () => new Promise((resolve) => setTimeout(resolve, 50));
  const carriedOutFindings = (judged: { findings: Array<{ requirement: string; security?: string }> }) =>
    judged.findings.filter((f) => f.security !== undefined).map((f) => f.requirement);

  it('"Bearer <forged>" after "bearer <forged>": the target reads what was sent, carries it out, and the kit finds the hole', async () => {
    api = client();
    const lowercase = await api.getResourceServer('rs_1', { as: 'foreign-key', scheme: 'bearer', deliberate: true });
    await connectionIdle();
    const canonical = await api.getResourceServer('rs_1', { as: 'foreign-key', deliberate: true });
    expect(read.map((value) => value?.split(' ')[0])).toEqual(['bearer', 'Bearer']);
    expect(lowercase.status).toBe(404);
    expect(carriedOutFindings(lowercase)).toEqual([]);
    expect(canonical.status).toBe(200);
    expect(carriedOutFindings(canonical)).toContain('AUTH-CREDENTIAL-REQUIRED-OTHER');
  });

  it('"bearer <forged>" after "Bearer <forged>": the target reads the lowercase scheme and refuses it, as sent', async () => {
    api = client();
    const canonical = await api.getResourceServer('rs_1', { as: 'foreign-key', deliberate: true });
    await connectionIdle();
    const lowercase = await api.getResourceServer('rs_1', { as: 'foreign-key', scheme: 'bearer', deliberate: true });
    expect(read.map((value) => value?.split(' ')[0])).toEqual(['Bearer', 'bearer']);
    expect(canonical.status).toBe(200);
    expect(lowercase.status).toBe(404);
    expect(carriedOutFindings(lowercase)).toEqual([]);
  });

  it('requests whose headers are spelled alike still share one connection', async () => {
    api = client();
    const sockets = new Set<Socket>();
    const count = (req: IncomingMessage) => sockets.add(req.socket);
    server.on('request', count);
    try {
      for (let i = 0; i < 3; i++) {
        expect((await api.getResourceServer('rs_1', { as: 'foreign-key', deliberate: true })).status).toBe(200);
        await connectionIdle();
      }
    } finally {
      server.off('request', count);
    }
    expect(sockets.size).toBe(1);
  });
});
