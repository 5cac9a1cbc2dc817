// Reads the bearer credential of a request. Decodes the JWT's claims (jose.decodeJwt) and
// never verifies it: verification needs keys the rules do not have; drivers that know more
// (a suite that corrupted the signature itself) say so in BearerToken.signatureValid.
import { decodeJwt } from 'jose';
import type { BearerToken, Headers } from './types.ts';

const BEARER = /^Bearer[ ]+(\S+)\s*$/i;

export function readBearerToken(headers: Headers): BearerToken {
  const raw = headers['authorization'];
  if (raw === undefined) return { headerPresent: false, wellFormed: false };
  const match = BEARER.exec(raw);
  if (!match) return { headerPresent: true, wellFormed: false, decodeError: 'not of the form "Bearer <token>"' };
  try {
    return { headerPresent: true, wellFormed: true, claims: decodeJwt(match[1]!) as Record<string, unknown> };
  } catch (error) {
    return { headerPresent: true, wellFormed: true, decodeError: (error as Error).message };
  }
}

/** The token's scopes: the `scope` claim (space-separated string, or an array). */
export function scopesOf(claims: Record<string, unknown> | undefined): string[] | undefined {
  const scope = claims?.['scope'] ?? claims?.['scp'];
  if (typeof scope === 'string') return scope.split(' ').filter((s) => s.length > 0);
  if (Array.isArray(scope)) return scope.filter((s): s is string => typeof s === 'string');
  return undefined;
}
