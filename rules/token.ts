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

export function readBearerToken(headers: Headers): BearerToken {
  const raw = headers['authorization'];
  if (raw === undefined) return { headerPresent: false, wellFormed: false };
  const match = BEARER.exec(raw);
  if (!match) return { headerPresent: true, wellFormed: false, decodeError: 'not of the form "Bearer <token>"' };
  return { headerPresent: true, wellFormed: true, ...decodeToken(match[1]!) };
}

/** The token's scopes: the `scope` claim (space-separated string, or an array). */
export function scopesOf(claims: Record<string, unknown> | undefined): string[] | undefined {
  const scope = claims?.['scope'] ?? claims?.['scp'];
  if (typeof scope === 'string') return scope.split(' ').filter((s) => s.length > 0);
  if (Array.isArray(scope)) return scope.filter((s): s is string => typeof s === 'string');
  return undefined;
}
