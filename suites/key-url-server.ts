// The key URLs of the jku and x5u attacks: a server on loopback serving the attacker's key set
// and certificate (suites/tokens.ts), and noting every request it gets. A target on the same
// machine that fetches the URL a token names is seen doing so: a server-side request forgery,
// whether it then accepts the token or not. A target elsewhere cannot reach it, and is given a
// URL that resolves nowhere.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { attackerCertificatePem, attackerKeySet } from './tokens.ts';

/** A request the key server got: the path it asked for, and from where. */
export interface KeyFetch {
  path: string;
  from: string;
}

export interface KeyUrlServer {
  /** The URL of `name` (a path segment the caller chooses, e.g. a test's own) serving the key set (jku) or the certificate (x5u). */
  url(kind: 'jku' | 'x5u', name: string): string;
  /** The requests made so far to URLs under `name`. */
  fetched(name: string): KeyFetch[];
  close(): Promise<void>;
}

/** URLs under a name that no resolver answers (RFC 6761 .invalid): for a target that could not reach the kit anyway. */
export const UNREACHABLE_KEY_URL = (kind: 'jku' | 'x5u', name: string): string => `https://tmi-conform-key-url.invalid/${encodeURIComponent(name)}/${kind === 'jku' ? 'jwks.json' : 'cert.pem'}`;

export async function startKeyUrlServer(): Promise<KeyUrlServer> {
  const fetches: KeyFetch[] = [];
  const pem = await attackerCertificatePem();
  const server: Server = createServer((req, res) => {
    const path = req.url ?? '/';
    fetches.push({ path, from: req.socket.remoteAddress ?? 'unknown' });
    if (path.endsWith('/jwks.json')) {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(attackerKeySet()));
    } else if (path.endsWith('/cert.pem')) {
      res.writeHead(200, { 'content-type': 'application/pem-certificate-chain' }).end(pem);
    } else {
      res.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: (kind, name) => `http://127.0.0.1:${port}/${encodeURIComponent(name)}/${kind === 'jku' ? 'jwks.json' : 'cert.pem'}`,
    fetched: (name) => fetches.filter((f) => f.path.startsWith(`/${encodeURIComponent(name)}/`)),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The target runs on this machine (a loopback host): it can reach a key URL the kit serves on loopback. */
export function onLoopback(baseUrl: string): boolean {
  let host: string;
  try {
    host = new URL(baseUrl).hostname.replace(/^\[|\]$/g, '').toLowerCase();
  } catch {
    return false;
  }
  return host === 'localhost' || host === '::1' || /^127(\.\d{1,3}){3}$/.test(host);
}
