// Who may use the admin listener. Without a token (loopback only: the command refuses any other
// address without one) anyone on this machine may, provided the Host header names this machine:
// a web page elsewhere cannot reach it by pointing its own name at 127.0.0.1 (DNS rebinding).
// With a token every request must carry it: `Authorization: Bearer TOKEN` (scrapers, curl), or
// the cookie the login form sets (the page and its event stream: a browser's EventSource sends
// no header of its own, and a token in the URL would land in logs). The cookie holds an HMAC of
// the token, never the token. Every comparison takes the same time whatever matches.
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { isIP } from 'node:net';

export const SESSION_COOKIE = 'tmi_conform_admin';

/** The same digest length whatever the input, so timingSafeEqual compares without telling the length. */
const digest = (text: string) => createHash('sha256').update(text, 'utf8').digest();
const sameText = (a: string, b: string) => timingSafeEqual(digest(a), digest(b));

/** Whether `host` names this machine only (127.0.0.0/8, ::1, localhost). */
export function isLoopback(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '').toLowerCase();
  if (bare === 'localhost' || bare === '::1') return true;
  return isIP(bare) === 4 && bare.startsWith('127.');
}

export class AdminAuth {
  private readonly cookieValue: string | undefined;

  /** `token`: required of every request; undefined: none (a loopback listener). `host`: the address listened on. */
  constructor(
    private readonly token: string | undefined,
    private readonly host: string,
  ) {
    this.cookieValue = token === undefined ? undefined : createHmac('sha256', token).update('tmi-conform admin page').digest('hex');
  }

  get required(): boolean {
    return this.token !== undefined;
  }

  /** Whether the request may be answered. */
  allows(request: IncomingMessage): boolean {
    if (this.token === undefined) return this.hostAllowed(request.headers.host);
    const authorization = request.headers.authorization;
    const bearer = authorization === undefined ? undefined : /^Bearer +(\S+)\s*$/i.exec(authorization)?.[1];
    if (bearer !== undefined && sameText(bearer, this.token)) return true;
    const cookie = cookieOf(request.headers.cookie, SESSION_COOKIE);
    return cookie !== undefined && sameText(cookie, this.cookieValue!);
  }

  /** The token a login form sent, checked; the Set-Cookie header value when it is right. */
  login(token: string): string | undefined {
    if (this.token === undefined || !sameText(token, this.token)) return undefined;
    // HttpOnly: the page's script never needs it; Strict: no other site's page sends it along.
    return `${SESSION_COOKIE}=${this.cookieValue}; HttpOnly; SameSite=Strict; Path=/`;
  }

  private hostAllowed(header: string | undefined): boolean {
    if (header === undefined) return true; // HTTP/1.0 clients (scrapers) may send none; browsers always do
    const name = /^(\[[^\]]*\]|[^:]*)(?::\d+)?$/.exec(header)?.[1];
    if (name === undefined) return false;
    return isLoopback(name) || name.replace(/^\[|\]$/g, '').toLowerCase() === this.host.toLowerCase();
  }
}

function cookieOf(header: string | undefined, name: string): string | undefined {
  if (header === undefined) return undefined;
  for (const part of header.split(';')) {
    const [key, ...value] = part.trim().split('=');
    if (key === name) return value.join('=');
  }
  return undefined;
}
