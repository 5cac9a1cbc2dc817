// The shapes of the known ways to forge a bearer JWT, read from a token's header and signature
// without any key. A driver that did not make the token itself (the proxy, validate) names the
// attack a request carried; a signature no key can have made (all zero bytes, an ECDSA r = s = 0)
// is known invalid without the tenant's keys.
import { createHmac } from 'node:crypto';
import type { TokenAttack } from './types.ts';

export type ForgeryShape = Extract<
  TokenAttack,
  | 'zero-signature'
  | 'psychic-es256'
  | 'psychic-es384'
  | 'embedded-jwk'
  | 'embedded-x5c'
  | 'jku'
  | 'x5u'
  | 'kid-path-traversal'
  | 'kid-sql-injection'
  | 'hs256-empty-secret'
  | 'hs256-weak-secret'
>;

/** The commonest weak HMAC secrets: jwt.io's example first, then the words every secret list starts with. */
export const WEAK_SECRETS: readonly string[] = ['your-256-bit-secret', 'secret', 'password', 'changeme', 'jwt-secret', '123456'];

/** Shapes whose signature no key can have made (RFC 8017 and FIPS 186 rule out a zero signature): invalid, keys or none. */
const NO_KEY_MAKES: ReadonlySet<ForgeryShape> = new Set(['zero-signature', 'psychic-es256', 'psychic-es384']);

/** A kid that walks the file system ("../../dev/null", "/dev/null"). */
const PATH_KID = /(?:^|[\\/])\.\.(?:[\\/]|$)|^\//;
/** A kid shaped like an SQL injection (a quote, a comment, UNION or SELECT). */
const SQL_KID = /'|--|\bunion\b|\bselect\b/i;

function headerOf(part: string): Record<string, unknown> | undefined {
  try {
    const header: unknown = JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
    return typeof header === 'object' && header !== null && !Array.isArray(header) ? (header as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** The shape of a known forgery the compact JWS `token` has, or undefined (read, never verified). */
export function forgeryShape(token: string): ForgeryShape | undefined {
  const [head, payload, signature, extra] = token.split('.');
  if (head === undefined || payload === undefined || signature === undefined || extra !== undefined) return undefined;
  const header = headerOf(head);
  if (header === undefined) return undefined;
  const bytes = Buffer.from(signature, 'base64url');
  if (bytes.length > 0 && bytes.every((byte) => byte === 0))
    return header['alg'] === 'ES256' ? 'psychic-es256' : header['alg'] === 'ES384' ? 'psychic-es384' : 'zero-signature';
  if ('jwk' in header) return 'embedded-jwk';
  if ('x5c' in header) return 'embedded-x5c';
  if ('jku' in header) return 'jku';
  if ('x5u' in header) return 'x5u';
  const kid = header['kid'];
  if (typeof kid === 'string' && PATH_KID.test(kid)) return 'kid-path-traversal';
  if (typeof kid === 'string' && SQL_KID.test(kid)) return 'kid-sql-injection';
  if (header['alg'] === 'HS256' && bytes.length > 0) {
    const signs = (secret: string) => createHmac('sha256', secret).update(`${head}.${payload}`).digest().equals(bytes);
    if (signs('')) return 'hs256-empty-secret';
    if (WEAK_SECRETS.some(signs)) return 'hs256-weak-secret';
  }
  return undefined;
}

/** The token's signature is one no key can have made. */
export const signatureImpossible = (shape: ForgeryShape | undefined): boolean => shape !== undefined && NO_KEY_MAKES.has(shape);

/** A token of a forgery's shape, in words, as a driver that did not make it saw it. */
export const SHAPE_SEEN: Record<ForgeryShape, string> = {
  'zero-signature': 'a token whose signature is all zero bytes (attack zero-signature)',
  'psychic-es256': 'a token with an ES256 signature of r = s = 0 (attack psychic-es256, CVE-2022-21449)',
  'psychic-es384': 'a token with an ES384 signature of r = s = 0 (attack psychic-es384, CVE-2022-21449)',
  'embedded-jwk': 'a token carrying its own verification key in its jwk header (attack embedded-jwk, CVE-2018-0114)',
  'embedded-x5c': 'a token carrying its own certificate in its x5c header (attack embedded-x5c)',
  jku: 'a token naming in its jku header where to fetch its keys (attack jku)',
  x5u: 'a token naming in its x5u header where to fetch its certificate (attack x5u)',
  'kid-path-traversal': 'a token whose kid walks the file system (attack kid-path-traversal)',
  'kid-sql-injection': 'a token whose kid is shaped like an SQL injection (attack kid-sql-injection)',
  'hs256-empty-secret': 'a token signed HS256 with an empty secret (attack hs256-empty-secret)',
  'hs256-weak-secret': 'a token signed HS256 with a commonly used weak secret (attack hs256-weak-secret)',
};
