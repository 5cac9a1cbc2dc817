// Bearer tokens of the run: the configured profiles (client credentials, fetched from
// {auth_url}/oauth/token/ (or where config.tokenUrls says) and cached until shortly before they expire, or a static token), and
// the derived ones the suites make themselves (none, a malformed header, a bad signature).
import { createHmac, createPublicKey, webcrypto, type JsonWebKeyInput } from 'node:crypto';
import { decodeJwt, decodeProtectedHeader, generateKeyPair, importJWK, SignJWT, UnsecuredJWT, type JWK } from 'jose';
import { ATTACKER_KEY_ID, ATTACKER_PRIVATE_JWK, ATTACKER_PUBLIC_JWK } from './attacker-key.ts';
import { scopesOf } from '../rules/token.ts';
import type { TokenAttack } from '../rules/types.ts';
import type { Credential, SuiteConfig, TokenProfile } from './config.ts';
import type { Judged, OutgoingRequest } from './http.ts';
import { once } from '../core/memo.ts';

/** The token endpoint refused a profile's credentials: the run cannot go on. */
export class CredentialsRefused extends Error {
  override name = 'CredentialsRefused';
  constructor(
    readonly profile: TokenProfile,
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

/** The client credentials request; the audience is the credential's own when it names one (credentials.other_audience), else the run's. */
export function tokenRequest(
  config: SuiteConfig,
  credential: { client_id: string; client_secret: string; audience?: string },
  url: string = config.tokenUrls[0]!,
): OutgoingRequest {
  return {
    method: 'POST',
    url,
    headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
    body: new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: credential.client_id,
      client_secret: credential.client_secret,
      audience: credential.audience ?? config.audience,
    }).toString(),
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
  private readonly cache = new Map<TokenProfile, CachedToken>();
  /** Token requests under way, per profile: callers at the same time share one. */
  private readonly fetching = new Map<TokenProfile, Promise<string>>();
  /** Candidates not yet ruled out: the first is where tokens are asked for. */
  private urls: string[];

  constructor(
    private readonly config: SuiteConfig,
    /** Sends a token request (judged and recorded like any exchange). */
    private readonly send: (request: OutgoingRequest) => Promise<Judged>,
    seed: Partial<Record<TokenProfile, CachedToken>> = {},
    private readonly now: () => number = Date.now,
  ) {
    for (const [profile, cached] of Object.entries(seed) as Array<[TokenProfile, CachedToken]>) this.cache.set(profile, cached);
    this.urls = [...config.tokenUrls];
  }

  /** Where tokens are asked for: the first candidate that did not answer 404. */
  get tokenUrl(): string {
    return this.urls[0]!;
  }

  has(profile: TokenProfile): boolean {
    return this.config.credentials[profile] !== undefined;
  }

  async token(profile: TokenProfile): Promise<string> {
    const cached = this.cache.get(profile);
    if (cached && cached.refreshAt > this.now()) return cached.token;
    let fetching = this.fetching.get(profile);
    if (!fetching) {
      fetching = this.fetch(profile).finally(() => this.fetching.delete(profile));
      this.fetching.set(profile, fetching);
    }
    return fetching;
  }

  private async fetch(profile: TokenProfile): Promise<string> {
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
  snapshot(): Partial<Record<TokenProfile, CachedToken>> {
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
  /** tampered-scope, hs256-client-secret: the scope to add. */
  scope?: string;
  /** key-confusion: the tenant's key set. */
  jwks?: { keys: JWK[] };
  /** other-issuer: the tenant's issuer, to differ from. */
  issuer?: string;
  /** jku, x5u: where the attacker's key set (jku) or certificate (x5u) is served. */
  keyUrl?: string;
  /** hs256-weak-secret: which of WEAK_SECRETS; hs256-client-secret: the no_scope client's client_secret. */
  secret?: string;
}

export type MadeAttack = Exclude<TokenAttack, 'expired'>;
export type MissingInput = 'scope' | 'jwks' | 'signing key' | 'issuer' | 'key URL' | 'secret';

/** Spellings of "none" that a verifier refusing only the lowercase one lets through (jwt_tool, PortSwigger's JWT labs). */
export const NONE_SPELLINGS = { 'alg-none-capitalized': 'None', 'alg-none-uppercase': 'NONE', 'alg-none-mixed-case': 'nOnE' } as const;

/** A kid that walks out of a key directory to a file that reads as empty: the token is then HMAC-keyed with nothing. */
export const KID_PATH_TRAVERSAL = '../../../../../../dev/null';
/** What the injected kid makes an SQL key lookup return, and so the HMAC secret of the token. */
export const INJECTED_KEY = 'tmi-conform-injected-key';
/** A kid shaped like an SQL injection: a lookup that pastes it into its query returns INJECTED_KEY. */
export const KID_SQL_INJECTION = `tmi-conform-unknown-kid' UNION SELECT '${INJECTED_KEY}' -- `;

/** Lengths of the psychic signature's r and s (IEEE P1363, as JWS writes ECDSA): 32 bytes each for P-256, 48 for P-384. */
const PSYCHIC_BYTES = { 'psychic-es256': { alg: 'ES256', bytes: 64 }, 'psychic-es384': { alg: 'ES384', bytes: 96 } } as const;

const base64url = (value: unknown): string => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');

/** The header and payload of `token` as sent, and its signature's bytes. */
function partsOf(token: string): { header: string; payload: string; signature: Buffer } {
  const [header = '', payload = '', signature = ''] = token.split('.');
  return { header, payload, signature: Buffer.from(signature, 'base64url') };
}

/** `token`'s payload under another header, with `signature` (bytes) after it. */
function reheaded(token: string, header: Record<string, unknown>, signature: Buffer): string {
  return `${base64url(header)}.${partsOf(token).payload}.${signature.toString('base64url')}`;
}

/**
 * HS256 over `header` and `claims` with `secret` as the HMAC key, by Node's crypto: WebCrypto
 * (and so jose) refuses an empty key, the very key of two attacks.
 */
export function hmacSigned(header: Record<string, unknown>, claims: Record<string, unknown>, secret: string): string {
  const input = `${base64url({ alg: 'HS256', ...header })}.${base64url(claims)}`;
  return `${input}.${createHmac('sha256', secret).update(input).digest('base64url')}`;
}

/** The source token's kid, kept where an attack keeps the header's other fields. */
const kidOf = (token: string): { kid?: string } => {
  const kid = decodeProtectedHeader(token).kid;
  return kid === undefined ? {} : { kid };
};

const attackerKey = once(() => importJWK(ATTACKER_PRIVATE_JWK, 'RS256'));

/** The claims signed RS256 by the attacker's key, under a header carrying `extra` (the key, or where it is). */
async function signedByAttacker(token: string, extra: Record<string, unknown>): Promise<string> {
  return new SignJWT(decodeJwt(token)).setProtectedHeader({ alg: 'RS256', typ: 'JWT', ...extra }).sign(await attackerKey());
}

// A self-signed certificate of the attacker's key, made once per process (x5c, x5u).
const attackerCertificate = once(async (): Promise<{ der: Buffer; pem: string }> => {
  await import('reflect-metadata');
  const x509 = await import('@peculiar/x509');
  const algorithm = { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' };
  const privateKey = await webcrypto.subtle.importKey('jwk', ATTACKER_PRIVATE_JWK as webcrypto.JsonWebKey, algorithm, false, ['sign']);
  const publicKey = await webcrypto.subtle.importKey('jwk', { kty: 'RSA', n: ATTACKER_PRIVATE_JWK.n!, e: ATTACKER_PRIVATE_JWK.e! }, algorithm, true, [
    'verify',
  ]);
  const now = Date.now();
  const cert = await x509.X509CertificateGenerator.createSelfSigned(
    {
      serialNumber: '01',
      name: 'CN=tmi-conform attacker',
      notBefore: new Date(now - 86_400_000),
      notAfter: new Date(now + 365 * 86_400_000),
      keys: { privateKey, publicKey },
      signingAlgorithm: algorithm,
    },
    webcrypto as Crypto,
  );
  return { der: Buffer.from(cert.rawData), pem: cert.toString('pem') };
});

/** The attacker's certificate in PEM, as an x5u URL serves it (RFC 7515 §4.1.5). */
export async function attackerCertificatePem(): Promise<string> {
  return (await attackerCertificate()).pem;
}

/** The attacker's key set, as a jku URL serves it. */
export const attackerKeySet = (): { keys: JWK[] } => ({ keys: [ATTACKER_PUBLIC_JWK] });

/**
 * The token of `attack`, made from the valid token `source` the one way the suites and
 * `tmi-conform token` both make it; `missing` names what it needed and did not get.
 */
export async function makeAttackToken(attack: MadeAttack, source: string, inputs: AttackInputs): Promise<string | { missing: MissingInput }> {
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
    default:
      return makeCatalogueToken(attack, source, inputs);
  }
}

/** The attacks of the catalogue: each the source's claims under a header the attacker chose. */
async function makeCatalogueToken(
  attack: Exclude<MadeAttack, 'corrupted-signature' | 'unsigned' | 'foreign-key' | 'tampered-scope' | 'other-issuer' | 'key-confusion'>,
  source: string,
  inputs: AttackInputs,
): Promise<string | { missing: MissingInput }> {
  const claims = decodeJwt(source);
  const header = decodeProtectedHeader(source) as Record<string, unknown>;
  switch (attack) {
    case 'alg-none-capitalized':
    case 'alg-none-uppercase':
    case 'alg-none-mixed-case':
      return reheaded(source, { alg: NONE_SPELLINGS[attack], typ: 'JWT' }, Buffer.alloc(0));
    case 'signature-stripped': {
      const { header: encoded, payload } = partsOf(source);
      return `${encoded}.${payload}`;
    }
    case 'signature-empty': {
      const { header: encoded, payload } = partsOf(source);
      return `${encoded}.${payload}.`;
    }
    case 'zero-signature':
      // As many zero bytes as the tenant's own signature has (an RSA signature's length is the key's).
      return reheaded(source, header, Buffer.alloc(partsOf(source).signature.length || 256));
    case 'psychic-es256':
    case 'psychic-es384':
      return reheaded(source, { ...header, alg: PSYCHIC_BYTES[attack].alg }, Buffer.alloc(PSYCHIC_BYTES[attack].bytes));
    case 'embedded-jwk':
      return signedByAttacker(source, { jwk: { kty: 'RSA', n: ATTACKER_PUBLIC_JWK.n, e: ATTACKER_PUBLIC_JWK.e }, kid: ATTACKER_KEY_ID });
    case 'embedded-x5c':
      return signedByAttacker(source, { x5c: [(await attackerCertificate()).der.toString('base64')] });
    case 'jku':
    case 'x5u':
      return inputs.keyUrl === undefined || inputs.keyUrl === ''
        ? { missing: 'key URL' }
        : signedByAttacker(source, { [attack]: inputs.keyUrl, kid: ATTACKER_KEY_ID });
    case 'kid-path-traversal':
      return hmacSigned({ typ: 'JWT', kid: KID_PATH_TRAVERSAL }, claims, '');
    case 'kid-sql-injection':
      return hmacSigned({ typ: 'JWT', kid: KID_SQL_INJECTION }, claims, INJECTED_KEY);
    case 'hs256-empty-secret':
      return hmacSigned({ typ: 'JWT', ...kidOf(source) }, claims, '');
    case 'hs256-weak-secret':
      return inputs.secret === undefined ? { missing: 'secret' } : hmacSigned({ typ: 'JWT', ...kidOf(source) }, claims, inputs.secret);
    case 'hs256-client-secret': {
      if (inputs.scope === undefined || inputs.scope === '') return { missing: 'scope' };
      if (inputs.secret === undefined || inputs.secret === '') return { missing: 'secret' };
      const scope = [...scopesOfToken(source), inputs.scope].join(' ');
      return hmacSigned({ typ: 'JWT', ...kidOf(source) }, { ...claims, scope }, inputs.secret);
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
