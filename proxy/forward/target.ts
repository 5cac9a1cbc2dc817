// The one upstream a proxy forwards to, from --target. Only http(s) origins, optionally with a
// base path; credentials, queries and fragments in the URL are refused.
import { urlProblem } from '../../core/url.ts';

export interface Target {
  /** e.g. "http://127.0.0.1:4010" */
  origin: string;
  protocol: 'http:' | 'https:';
  hostname: string;
  port: number;
  /** The Host header requests are sent with (port only when not the default). */
  host: string;
  /** Prefixed to every forwarded path: "" or "/base" (no trailing slash). */
  basePath: string;
}

export class TargetError extends Error {
  override name = 'TargetError';
}

export function parseTarget(value: string): Target {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    const problem = urlProblem(value);
    throw new TargetError(
      `--target expects an http(s) URL such as https://tenant.example.com, got "${value}"${problem !== undefined && problem !== 'not a valid URL' ? ` (${problem})` : ''}`,
    );
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new TargetError(`--target must be an http or https URL, got "${url.protocol}" in "${value}"`);
  if (url.username !== '' || url.password !== '') throw new TargetError('--target must not carry credentials (user:password@); clients send their own');
  if (url.search !== '' || url.hash !== '') throw new TargetError(`--target must not have a query or fragment, got "${value}"`);
  if (url.hostname === '') throw new TargetError(`--target has no host: "${value}"`);
  const port = url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : Number(url.port);
  return {
    origin: url.origin,
    protocol: url.protocol,
    // URL keeps IPv6 literals bracketed; sockets want them bare.
    hostname: url.hostname.replace(/^\[|\]$/g, ''),
    port,
    host: url.host,
    basePath: url.pathname.replace(/\/+$/, ''),
  };
}
