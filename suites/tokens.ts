// Bearer tokens of the run: the configured profiles (client credentials, fetched from
// {auth_url}/oauth/token/ and cached until shortly before they expire, or a static token), and
// the derived ones the suites make themselves (none, a malformed header, a bad signature).
import { decodeJwt } from 'jose';
import { scopesOf } from '../rules/token.ts';
import type { Credential, Profile, SuiteConfig } from './config.ts';
import type { Judged, OutgoingRequest } from './http.ts';

/** The token endpoint refused a profile's credentials: the run cannot go on. */
export class CredentialsRefused extends Error {
  override name = 'CredentialsRefused';
  constructor(
    readonly profile: Profile,
    detail: string,
  ) {
    super(`credentials of profile "${profile}" were refused by the token endpoint (${detail})`);
  }
}

export interface CachedToken {
  token: string;
  /** Epoch ms after which it is fetched again; Infinity for a static token. */
  refreshAt: number;
}

/** A token is renewed this long before its exp. */
const RENEW_BEFORE_MS = 60_000;

export function tokenRequest(config: SuiteConfig, credential: { client_id: string; client_secret: string }): OutgoingRequest {
  return {
    method: 'POST',
    url: `${config.authUrl}/oauth/token/`,
    headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
    body: new URLSearchParams({ grant_type: 'client_credentials', client_id: credential.client_id, client_secret: credential.client_secret, audience: config.audience }).toString(),
  };
}

function refreshAtOf(token: string, now: number): number {
  try {
    const exp = decodeJwt(token).exp;
    if (typeof exp === 'number') return exp * 1000 - RENEW_BEFORE_MS;
  } catch {
    // not a JWT: the suites report that; keep it for a few minutes
  }
  return now + 5 * 60_000;
}

export class TokenProvider {
  private readonly cache = new Map<Profile, CachedToken>();

  constructor(
    private readonly config: SuiteConfig,
    /** Sends a token request (judged and recorded like any exchange). */
    private readonly send: (request: OutgoingRequest) => Promise<Judged>,
    seed: Partial<Record<Profile, CachedToken>> = {},
    private readonly now: () => number = Date.now,
  ) {
    for (const [profile, cached] of Object.entries(seed) as Array<[Profile, CachedToken]>) this.cache.set(profile, cached);
  }

  has(profile: Profile): boolean {
    return this.config.credentials[profile] !== undefined;
  }

  async token(profile: Profile): Promise<string> {
    const cached = this.cache.get(profile);
    if (cached && cached.refreshAt > this.now()) return cached.token;
    const credential: Credential | undefined = this.config.credentials[profile];
    if (!credential) throw new Error(`no credentials for profile "${profile}"`);
    if ('token' in credential) {
      this.cache.set(profile, { token: credential.token, refreshAt: Infinity });
      return credential.token;
    }
    const answer = await this.send(tokenRequest(this.config, credential));
    const body = answer.json as { access_token?: unknown; error?: unknown; error_description?: unknown } | undefined;
    if (answer.status !== 200 || typeof body?.access_token !== 'string') {
      // error and error_description are the token endpoint's words, never a secret.
      const reason = [body?.error, body?.error_description].filter((x) => typeof x === 'string').join(': ');
      throw new CredentialsRefused(profile, `${answer.status}${reason ? ` ${reason}` : ''}`);
    }
    this.cache.set(profile, { token: body.access_token, refreshAt: refreshAtOf(body.access_token, this.now()) });
    return body.access_token;
  }

  /** The tokens fetched so far, to hand to another process. */
  snapshot(): Partial<Record<Profile, CachedToken>> {
    return Object.fromEntries(this.cache);
  }
}

/** The same token with its signature bytes altered: any verifier must refuse it. */
export function corruptSignature(token: string): string {
  const [header, payload, signature = ''] = token.split('.');
  const bytes = Buffer.from(signature, 'base64url');
  if (bytes.length === 0) return `${header}.${payload}.${Buffer.from('not-a-signature').toString('base64url')}`;
  for (let i = 0; i < bytes.length; i += 7) bytes[i] = bytes[i]! ^ 0x5a;
  return `${header}.${payload}.${bytes.toString('base64url')}`;
}

/** The scopes a token grants, from its claims (empty when it is not a JWT). */
export function scopesOfToken(token: string): readonly string[] {
  try {
    return scopesOf(decodeJwt(token)) ?? [];
  } catch {
    return [];
  }
}
