// The key URLs of the jku and x5u attacks: a server serving the attacker's key set and
// certificate (suites/tokens.ts), and noting every request it gets. A target that fetches the URL
// a token names is seen doing so: a server-side request forgery, whether it then accepts the
// token or not. It listens on loopback for a target on the same machine, or where callback_url
// says for a target elsewhere (callback_listen: the address callback_url is mapped to). A target
// that can reach neither is given a URL that resolves nowhere.
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
export const UNREACHABLE_KEY_URL = (kind: 'jku' | 'x5u', name: string): string =>
  `https://tmi-conform-key-url.invalid/${encodeURIComponent(name)}/${kind === 'jku' ? 'jwks.json' : 'cert.pem'}`;

/** Where the server listens, and the URL the target reaches it at (default: its own loopback address). */
export interface KeyUrlServerOptions {
  host: string;
  port: number;
  /** callback_url: the URLs the tokens name are under it. */
  publicUrl?: string;
}

/** Loopback, a free port: for a target on this machine. */
const ON_LOOPBACK: KeyUrlServerOptions = { host: '127.0.0.1', port: 0 };

/**
 * Where the run serves its key URLs: at callback_url when the configuration gives one, else on
 * loopback when the target runs on this machine; undefined when the target could reach neither.
 */
export function keyUrlServerOptions(baseUrl: string, callback: { url: string; host: string; port: number } | undefined): KeyUrlServerOptions | undefined {
  if (callback !== undefined) return { host: callback.host, port: callback.port, publicUrl: callback.url };
  return onLoopback(baseUrl) ? ON_LOOPBACK : undefined;
}

export async function startKeyUrlServer(options: KeyUrlServerOptions = ON_LOOPBACK): Promise<KeyUrlServer> {
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
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const base = (options.publicUrl ?? `http://${options.host.includes(':') ? `[${options.host}]` : options.host}:${port}`).replace(/\/+$/, '');
  // The path of callback_url, as a mapping that keeps paths delivers it; one that strips it delivers the rest.
  const prefix = new URL(base).pathname.replace(/\/+$/, '');
  const under = (path: string, name: string) =>
    [`${prefix}/${encodeURIComponent(name)}/`, `/${encodeURIComponent(name)}/`].some((start) => path.startsWith(start));
  return {
    url: (kind, name) => `${base}/${encodeURIComponent(name)}/${kind === 'jku' ? 'jwks.json' : 'cert.pem'}`,
    fetched: (name) => fetches.filter((f) => under(f.path, name)),
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
