// Reads the bearer credential of a request. Decodes the JWT's claims (jose.decodeJwt) and
// never verifies it: verification needs keys the rules do not have; drivers that know more
// (a suite that corrupted the signature itself) say so in BearerToken.signatureValid.
import { decodeJwt } from 'jose';
import type { BearerToken, Headers } from './types.ts';

const BEARER = /^Bearer[ ]+(\S+)\s*$/i;

/**
 * Traffic reuses a few tokens for thousands of requests: what each decodes to is remembered
 * (bounded, oldest forgotten first). Entries are frozen, since every exchange shares them.
 */
const decoded = new Map<string, Readonly<Pick<BearerToken, 'claims' | 'decodeError'>>>();
const DECODED_TOKENS_KEPT = 1024;

function decodeToken(token: string): Readonly<Pick<BearerToken, 'claims' | 'decodeError'>> {
  let entry = decoded.get(token);
  if (!entry) {
    try {
      entry = Object.freeze({ claims: Object.freeze(decodeJwt(token)) as Record<string, unknown> });
    } catch (error) {
      entry = Object.freeze({ decodeError: (error as Error).message });
    }
    if (decoded.size >= DECODED_TOKENS_KEPT) decoded.delete(decoded.keys().next().value as string);
    decoded.set(token, entry);
  }
  return entry;
}

/** What a well-formed Authorization header reads as, without the per-exchange facts. */
type HeaderReading = Readonly<Pick<BearerToken, 'claims' | 'decodeError'>> | undefined;

/**
 * The last few Authorization headers seen, checked before the map: comparing a header with a
 * recent one is cheaper than hashing a long token, and traffic mostly repeats its recent tokens.
 */
const RECENT_HEADERS = 4;
const recentHeaders: string[] = [];
const recentReadings: HeaderReading[] = [];

function readHeader(raw: string): HeaderReading {
  for (let i = 0; i < recentHeaders.length; i++) if (recentHeaders[i] === raw) return recentReadings[i];
  const credential = BEARER.exec(raw)?.[1];
  const reading = credential === undefined ? undefined : decodeToken(credential);
  recentHeaders.unshift(raw);
  recentReadings.unshift(reading);
  if (recentHeaders.length > RECENT_HEADERS) {
    recentHeaders.pop();
    recentReadings.pop();
  }
  return reading;
}

export function readBearerToken(headers: Headers): BearerToken {
  const raw = headers['authorization'];
  if (raw === undefined) return { headerPresent: false, wellFormed: false };
  const reading = readHeader(raw);
  if (reading === undefined) return { headerPresent: true, wellFormed: false, decodeError: 'not of the form "Bearer <token>"' };
  const token: BearerToken = { headerPresent: true, wellFormed: true };
  if (reading.claims) token.claims = reading.claims;
  if (reading.decodeError !== undefined) token.decodeError = reading.decodeError;
  return token;
}

/** Scopes per claims object: the claims of a decoded token are shared and frozen (see decodeToken). */
const scopesByClaims = new WeakMap<object, readonly string[] | null>();

const isNonEmpty = (s: string): boolean => s.length > 0;
const isString = (s: unknown): s is string => typeof s === 'string';

/** The token's scopes: the `scope` claim (space-separated string, or an array). */
export function scopesOf(claims: Record<string, unknown> | undefined): readonly string[] | undefined {
  if (!claims) return undefined;
  const known = Object.isFrozen(claims) ? scopesByClaims.get(claims) : undefined;
  if (known !== undefined) return known ?? undefined;
  const scope = claims['scope'] ?? claims['scp'];
  const scopes = typeof scope === 'string' ? scope.split(' ').filter(isNonEmpty) : Array.isArray(scope) ? scope.filter(isString) : undefined;
  if (Object.isFrozen(claims)) scopesByClaims.set(claims, scopes ? Object.freeze(scopes) : null);
  return scopes;
}
