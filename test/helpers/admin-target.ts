// A target for the admin listener's tests: answers each path as they need it, conforming,
// violating, or outside the API.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { rateLimitHeaders, resourceServer } from '../../fixtures/exchanges.ts';

/** The signing secret the violating resource server's body carries (the reports mask it). */
export const RESPONSE_SECRET = 'response-signing-secret-7f3a9c21d4e8';

/** A client secret a test sends in a request body, which the violating resource server then shows as its name: masked there only by what the session learned. */
export const ECHOED_SECRET = 'body-client-secret-9d2b6a4e1f07';

export async function startAdminTarget(): Promise<{ origin: string; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const json = (status: number, body: unknown, headers: Record<string, string> = {}) => {
        const text = JSON.stringify(body);
        res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text), ...headers });
        res.end(text);
      };
      const path = req.url ?? '/';
      if (path === '/api/v2/resource-servers/rs_1') return json(200, resourceServer(), rateLimitHeaders(41));
      // signing_alg outside its enum: a schema finding.
      if (path === '/api/v2/resource-servers/rs_bad')
        return json(200, resourceServer({ id: 'rs_bad', name: ECHOED_SECRET, signing_alg: 'none', signing_secret: RESPONSE_SECRET }), rateLimitHeaders(40));
      // A session update answered with a resource server: not the session the document describes.
      if (path.startsWith('/api/v2/sessions/')) return json(200, resourceServer({ signing_secret: RESPONSE_SECRET }), rateLimitHeaders(38));
      // Carried out whatever the credential: without one it is a security finding.
      if (path.startsWith('/api/v2/token-exchange-profiles/')) {
        res.writeHead(204, rateLimitHeaders(39));
        res.end();
        return;
      }
      if (path === '/health') return json(200, { ok: true });
      json(404, { statusCode: 404, error: 'Not Found', message: 'Not Found', errorCode: 'not_found' });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
