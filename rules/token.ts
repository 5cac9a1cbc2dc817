// Reads the bearer credential of a request. Decodes the JWT's claims (jose.decodeJwt) and
// never verifies it: verification needs keys the rules do not have; drivers that know more
// (a suite that corrupted the signature itself) say so in BearerToken.signatureValid.
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { perFrozenObject, RecentValues, perKey } from '../core/memo.ts';
import { forgeryShape } from './forgery.ts';
import type { BearerToken, Headers } from './types.ts';

const BEARER = /^Bearer[ ]+(\S+)\s*$/i;

/**
 * Traffic reuses a few tokens for thousands of requests: what each decodes to is remembered
 * (bounded, oldest forgotten first). Entries are frozen, since every exchange shares them.
 */
type TokenReading = Readonly<Pick<BearerToken, 'claims' | 'decodeError' | 'alg' | 'signatureEmpty' | 'shape'>>;
const DECODED_TOKENS_KEPT = 1024;

/** The JOSE header's `alg` as written (a string or nothing), and whether the signature is missing. */
function headerFacts(token: string): Pick<BearerToken, 'alg' | 'signatureEmpty'> {
  const facts: Pick<BearerToken, 'alg' | 'signatureEmpty'> = {};
  try {
    const alg = decodeProtectedHeader(token).alg;
    if (typeof alg === 'string') facts.alg = alg;
  } catch {
    // decodeJwt read the token, so its header is JSON; an unreadable one just has no alg.
  }
  if (token.endsWith('.')) facts.signatureEmpty = true;
  return facts;
}

const decodeToken = perKey(DECODED_TOKENS_KEPT, (token: string): TokenReading => {
  try {
    const shape = forgeryShape(token);
    return Object.freeze({
      claims: Object.freeze(decodeJwt(token)) as Record<string, unknown>,
      ...headerFacts(token),
      ...(shape !== undefined ? { shape } : {}),
    });
  } catch (error) {
    return Object.freeze({ decodeError: (error as Error).message });
  }
});

/** What a well-formed Authorization header reads as, without the per-exchange facts. */
type HeaderReading = TokenReading | undefined;

/** The last few Authorization headers read (see RecentValues); undefined: not "Bearer <token>". */
const recentHeaders = new RecentValues<HeaderReading>(4, (raw) => {
  const credential = BEARER.exec(raw)?.[1];
  return credential === undefined ? undefined : decodeToken(credential);
});

/** The token of an `Authorization: Bearer <token>` header value; undefined when the value is not of that form. */
export function bearerCredential(authorization: string | undefined): string | undefined {
  return authorization === undefined ? undefined : BEARER.exec(authorization)?.[1];
}

/**
 * The bearer token a request's headers carry: its Authorization header, the name in any case,
 * when it has one value of the form "Bearer <token>".
 */
export function bearerCredentialOf(headers: Readonly<Record<string, string | readonly string[] | undefined>>): string | undefined {
  let value = headers['authorization'];
  if (value === undefined) for (const name in headers) if (name.toLowerCase() === 'authorization') value = headers[name];
  return typeof value === 'string' ? bearerCredential(value) : undefined;
}

export function readBearerToken(headers: Headers): BearerToken {
  const raw = headers['authorization'];
  if (raw === undefined) return { headerPresent: false, wellFormed: false };
  const reading = recentHeaders.get(raw);
  if (reading === undefined) return { headerPresent: true, wellFormed: false, decodeError: 'not of the form "Bearer <token>"' };
  const token: BearerToken = { headerPresent: true, wellFormed: true };
  if (reading.claims) token.claims = reading.claims;
  if (reading.decodeError !== undefined) token.decodeError = reading.decodeError;
  if (reading.alg !== undefined) token.alg = reading.alg;
  if (reading.signatureEmpty) token.signatureEmpty = true;
  if (reading.shape !== undefined) token.shape = reading.shape;
  return token;
}

const isNonEmpty = (s: string): boolean => s.length > 0;
const isString = (s: unknown): s is string => typeof s === 'string';

/** Scopes of a claims object; the decoded token's claims are shared and frozen, so their scopes are split once. */
const scopesOfClaims = perFrozenObject((claims: Record<string, unknown>): readonly string[] | undefined => {
  const scope = claims['scope'] ?? claims['scp'];
  const scopes = typeof scope === 'string' ? scope.split(' ').filter(isNonEmpty) : Array.isArray(scope) ? scope.filter(isString) : undefined;
  return scopes && Object.freeze(scopes);
});

/** The token's scopes: the `scope` claim (space-separated string, or an array). */
export function scopesOf(claims: Record<string, unknown> | undefined): readonly string[] | undefined {
  return claims ? scopesOfClaims(claims) : undefined;
}
