// Bearer tokens of the run: the configured profiles (client credentials, fetched from
// {auth_url}/oauth/token/ (or where config.tokenUrls says) and cached until shortly before they expire, or a static token), and
// the derived ones the suites make themselves (none, a malformed header, a bad signature).
import { createPublicKey, type JsonWebKeyInput } from 'node:crypto';
import { decodeJwt, decodeProtectedHeader, generateKeyPair, SignJWT, UnsecuredJWT, type JWK } from 'jose';
import { scopesOf } from '../rules/token.ts';
import type { TokenAttack } from '../rules/types.ts';
import type { Credential, Profile, SuiteConfig } from './config.ts';
import type { Judged, OutgoingRequest } from './http.ts';
import { once } from '../core/memo.ts';

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

/** No candidate URL serves the token endpoint (404 at each): the configuration must say where it is. */
export class TokenEndpointNotFound extends Error {
  override name = 'TokenEndpointNotFound';
  constructor(readonly urls: string[]) {
    super(`the token endpoint was not found (404) at ${urls.join(' nor at ')}`);
  }
}

export interface CachedToken {
  token: string;
  /** Epoch ms after which it is fetched again; Infinity for a static token. */
  refreshAt: number;
}

/** A token is renewed this long before its exp. */
const RENEW_BEFORE_MS = 60_000;

export function tokenRequest(config: SuiteConfig, credential: { client_id: string; client_secret: string }, url: string = config.tokenUrls[0]!): OutgoingRequest {
  return {
    method: 'POST',
    url,
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
  /** Token requests under way, per profile: callers at the same time share one. */
  private readonly fetching = new Map<Profile, Promise<string>>();
  /** Candidates not yet ruled out: the first is where tokens are asked for. */
  private urls: string[];

  constructor(
    private readonly config: SuiteConfig,
    /** Sends a token request (judged and recorded like any exchange). */
    private readonly send: (request: OutgoingRequest) => Promise<Judged>,
    seed: Partial<Record<Profile, CachedToken>> = {},
    private readonly now: () => number = Date.now,
  ) {
    for (const [profile, cached] of Object.entries(seed) as Array<[Profile, CachedToken]>) this.cache.set(profile, cached);
    this.urls = [...config.tokenUrls];
  }

  /** Where tokens are asked for: the first candidate that did not answer 404. */
  get tokenUrl(): string {
    return this.urls[0]!;
  }

  has(profile: Profile): boolean {
    return this.config.credentials[profile] !== undefined;
  }

  async token(profile: Profile): Promise<string> {
    const cached = this.cache.get(profile);
    if (cached && cached.refreshAt > this.now()) return cached.token;
    let fetching = this.fetching.get(profile);
    if (!fetching) {
      fetching = this.fetch(profile).finally(() => this.fetching.delete(profile));
      this.fetching.set(profile, fetching);
    }
    return fetching;
  }

  private async fetch(profile: Profile): Promise<string> {
    const credential: Credential | undefined = this.config.credentials[profile];
    if (!credential) throw new Error(`no credentials for profile "${profile}"`);
    if ('token' in credential) {
      this.cache.set(profile, { token: credential.token, refreshAt: Infinity });
      return credential.token;
    }
    let answer = await this.send(tokenRequest(this.config, credential, this.tokenUrl));
    // 404: nothing is served there; the next candidate is tried, and kept once it answers.
    while (answer.status === 404 && this.urls.length > 1) {
      this.urls.shift();
      answer = await this.send(tokenRequest(this.config, credential, this.tokenUrl));
    }
    if (answer.status === 404) throw new TokenEndpointNotFound(this.config.tokenUrls);
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

/** The same claims, unsigned: header {"alg":"none"} and an empty signature (RFC 7519 §6). */
export function unsignedToken(token: string): string {
  return new UnsecuredJWT(decodeJwt(token)).encode();
}

/**
 * The same token with `scope` added to its scope claim and the original signature kept: only a
 * server that reads claims it did not verify (or verified once, by signature alone) accepts it.
 */
export function withScopeAdded(token: string, scope: string): string {
  const [header, , signature = ''] = token.split('.');
  const claims = decodeJwt(token);
  const altered = { ...claims, scope: [...scopesOfToken(token), scope].join(' ') };
  return `${header}.${Buffer.from(JSON.stringify(altered)).toString('base64url')}.${signature}`;
}

/** Signing key types a tenant's JWKS may publish, and the algorithm to import each with. */
const IMPORT_ALGORITHM: Record<string, string> = { RSA: 'RS256', EC: 'ES256' };

/**
 * Algorithm confusion (the classic CVE-2015-9235 pattern): the same claims signed HS256 with the
 * tenant's public key as the HMAC secret, in the PEM form a server holds it in (SPKI, as Node and
 * OpenSSL write it). One token per public signing key in the JWKS. jose signs; Node's crypto
 * only converts the key's format.
 */
export async function keyConfusionTokens(token: string, jwks: { keys: JWK[] }): Promise<string[]> {
  const claims = decodeJwt(token);
  const keys = jwks.keys.filter((k) => IMPORT_ALGORITHM[k.kty ?? ''] !== undefined && (k.use === undefined || k.use === 'sig') && k.d === undefined);
  return Promise.all(
    keys.map((jwk) => {
      const pem = createPublicKey({ key: jwk, format: 'jwk' } as JsonWebKeyInput).export({ type: 'spki', format: 'pem' }) as string;
      return new SignJWT(claims)
        .setProtectedHeader({ alg: 'HS256', typ: 'JWT', ...(jwk.kid !== undefined ? { kid: jwk.kid } : {}) })
        .sign(new TextEncoder().encode(pem));
    }),
  );
}

// One foreign key per process: RSA key generation is slow.
const foreignKey = once(() => generateKeyPair('RS256').then((pair) => pair.privateKey));

/** The same header and claims, signed RS256 with a key that is not the tenant's. */
export async function signedByForeignKey(token: string): Promise<string> {
  const header = decodeProtectedHeader(token);
  return new SignJWT(decodeJwt(token)).setProtectedHeader({ ...header, alg: 'RS256' }).sign(await foreignKey());
}

/** An issuer whose host is not the tenant's (issuers are compared by host, as the rule engine does). */
export function anotherIssuer(tenantIssuer: string): string {
  const candidate = 'https://another-tenant.invalid/';
  return hostOf(tenantIssuer) === hostOf(candidate) ? 'https://yet-another-tenant.invalid/' : candidate;
}

function hostOf(issuer: string): string | undefined {
  try {
    return new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(issuer) ? issuer : `https://${issuer}`).host.toLowerCase();
  } catch {
    return undefined;
  }
}

/**
 * The same header and claims, naming another issuer than the tenant's and signed RS256 with a
 * key that is not the tenant's: a token another tenant (or anyone) could issue. A server that
 * trusts whichever issuer a token names, with that issuer's keys, accepts it.
 */
export async function fromAnotherIssuer(token: string, tenantIssuer: string): Promise<string> {
  const header = decodeProtectedHeader(token);
  return new SignJWT({ ...decodeJwt(token), iss: anotherIssuer(tenantIssuer) }).setProtectedHeader({ ...header, alg: 'RS256' }).sign(await foreignKey());
}

/** What making an attack token may take beyond the valid token it starts from. */
export interface AttackInputs {
  /** tampered-scope: the scope to add. */
  scope?: string;
  /** key-confusion: the tenant's key set. */
  jwks?: { keys: JWK[] };
  /** other-issuer: the tenant's issuer, to differ from. */
  issuer?: string;
}

/**
 * The token of `attack`, made from the valid token `source` the one way the suites and
 * `tmi-conform token` both make it; `missing` names what it needed and did not get.
 */
export async function makeAttackToken(attack: Exclude<TokenAttack, 'expired'>, source: string, inputs: AttackInputs): Promise<string | { missing: 'scope' | 'jwks' | 'signing key' | 'issuer' }> {
  switch (attack) {
    case 'corrupted-signature':
      return corruptSignature(source);
    case 'unsigned':
      return unsignedToken(source);
    case 'foreign-key':
      return signedByForeignKey(source);
    case 'tampered-scope':
      return inputs.scope === undefined || inputs.scope === '' ? { missing: 'scope' } : withScopeAdded(source, inputs.scope);
    case 'other-issuer':
      return inputs.issuer === undefined || inputs.issuer === '' ? { missing: 'issuer' } : fromAnotherIssuer(source, inputs.issuer);
    case 'key-confusion': {
      if (!inputs.jwks) return { missing: 'jwks' };
      const [first] = await keyConfusionTokens(source, inputs.jwks);
      return first ?? { missing: 'signing key' };
    }
  }
}

/** The scopes a token grants, from its claims (empty when it is not a JWT). */
export function scopesOfToken(token: string): readonly string[] {
  try {
    return scopesOf(decodeJwt(token)) ?? [];
  } catch {
    return [];
  }
}
