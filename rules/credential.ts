// What the credential of a request is worth, judged from what the exchange shows: the header,
// the JOSE header and claims (decoded, never trusted), and the facts a driver knows (it checked
// the signature against the tenant's keys, or forged the token itself). Pure: signatures are
// checked outside the rule engine (keys/verifier.ts) and arrive as BearerToken.signatureValid.
import { perFrozenObject, perKey } from '../core/memo.ts';
import { type ForgeryShape, SHAPE_SEEN, signatureImpossible } from './forgery.ts';
import type { BearerToken, Exchange, TokenAttack } from './types.ts';

export type CredentialState =
  | 'absent'
  | 'malformed'
  | 'not-jwt'
  | 'unsigned'
  | 'signature-invalid'
  | 'expired'
  | 'not-yet-valid'
  | 'wrong-audience'
  | 'wrong-issuer'
  | 'valid'
  /** Nothing wrong is visible, but the signature was not checked (no keys). */
  | 'unverified'
  /** The recording does not show which credential was sent. */
  | 'not-recorded';

/** Why the authentication rules were not judged on an exchange whose recording does not show its credential. */
export const CREDENTIAL_NOT_RECORDED = 'its credential (authentication): the recording does not show the Authorization header sent';

/** States in which a request proves nothing about who sent it: it must not be carried out. */
export const INVALID_CREDENTIAL_STATES: ReadonlySet<CredentialState> = new Set([
  'absent',
  'malformed',
  'not-jwt',
  'unsigned',
  'signature-invalid',
  'expired',
  'not-yet-valid',
  'wrong-audience',
  'wrong-issuer',
]);

/**
 * Clock skew allowed between the issuer's clock (exp, nbf) and the clock that timed the exchange
 * (the kit's, or a foreign recorder's): 60 s, the leeway Auth0's own SDKs allow. A token that
 * expired less than a minute before the request is not called expired.
 */
export const CLOCK_SKEW_SECONDS = 60;

/**
 * Signature algorithms a tenant can sign with: asymmetric (RSA, RSA-PSS, ECDSA, EdDSA) and HMAC.
 * A token naming anything else ("none", "None", "", an encryption algorithm) carries no
 * signature anyone can check.
 */
const SIGNING_ALGORITHMS: ReadonlySet<string> = new Set([
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES256K',
  'ES384',
  'ES512',
  'EdDSA',
  'Ed25519',
  'Ed448',
  'HS256',
  'HS384',
  'HS512',
]);

/** The API base path an audience must name: /api/v2/, as a path or inside an absolute URL, with or without the last slash. */
export function audienceNamesApi(audience: unknown): boolean {
  if (typeof audience !== 'string') return false;
  let path = audience;
  if (!audience.startsWith('/')) {
    try {
      path = new URL(audience).pathname;
    } catch {
      return false;
    }
  }
  return /(^|\/)api\/v2\/?$/.test(path);
}

/** The host an issuer names (issuers are URLs; a bare host is read as one), lower-case. */
function issuerHost(issuer: string): string | undefined {
  try {
    return new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(issuer) ? issuer : `https://${issuer}`).host.toLowerCase();
  } catch {
    return undefined;
  }
}

/** Whether a token's aud names the API; worked out once per token (the decoded claims are shared and frozen). */
const namesApi = perFrozenObject((claims: Record<string, unknown>): boolean => {
  const aud = claims['aud'];
  return Array.isArray(aud) ? aud.some(audienceNamesApi) : audienceNamesApi(aud);
});

const numericDate = (value: unknown): number | undefined => (typeof value === 'number' && Number.isFinite(value) ? value : undefined);

/** The last start time read: the checks of one exchange ask for it in turn (Date.parse is most of a classification's cost). */
const startSeconds = perKey(1, (startedAt: string): number => Date.parse(startedAt) / 1000);

/** Time-bound states: exp and nbf against the exchange's start, with CLOCK_SKEW_SECONDS either way. */
function timeState(claims: Record<string, unknown>, startedAt: string): CredentialState | undefined {
  const at = startSeconds(startedAt);
  if (Number.isNaN(at)) return undefined;
  const exp = numericDate(claims['exp']);
  if (exp !== undefined && at > exp + CLOCK_SKEW_SECONDS) return 'expired';
  const nbf = numericDate(claims['nbf']);
  if (nbf !== undefined && at < nbf - CLOCK_SKEW_SECONDS) return 'not-yet-valid';
  return undefined;
}

/** The token has no signature anyone can check: alg "none" or another non-signing value, or an empty signature. */
export function isUnsigned(token: BearerToken): boolean {
  if (token.signatureEmpty) return true;
  return token.alg !== undefined && !SIGNING_ALGORITHMS.has(token.alg);
}

export function credentialState(exchange: Pick<Exchange, 'token' | 'startedAt'>): CredentialState {
  const { token } = exchange;
  if (token.recorded === false) return 'not-recorded';
  if (!token.headerPresent) return 'absent';
  if (!token.wellFormed) return 'malformed';
  const claims = token.claims;
  if (!claims) return 'not-jwt';
  if (isUnsigned(token)) return 'unsigned';
  if (token.signatureValid === false || signatureImpossible(token.shape as ForgeryShape | undefined)) return 'signature-invalid';
  const time = timeState(claims, exchange.startedAt);
  if (time) return time;
  if (!namesApi(claims)) return 'wrong-audience';
  if (token.issuerExpected !== undefined) {
    const iss = claims['iss'];
    const expected = issuerHost(token.issuerExpected);
    if (expected !== undefined && (typeof iss !== 'string' || issuerHost(iss) !== expected)) return 'wrong-issuer';
  }
  return token.signatureValid === true ? 'valid' : 'unverified';
}

/**
 * A token the kit made to be refused, in words: what the kit did, known without any key (a run
 * without the tenant's JWKS verifies nothing, and must not say a signature failed to verify).
 */
const MADE_BY_KIT: Record<TokenAttack, string> = {
  'corrupted-signature': "a token of the tenant's whose signature the kit corrupted",
  unsigned: 'a token the kit left unsigned',
  'tampered-scope': "a token of the tenant's whose scope the kit widened after it was signed",
  'key-confusion': "a token the kit signed HS256 with the tenant's public key as the secret",
  'foreign-key': "a token the kit signed with a key that is not the tenant's",
  'other-issuer': "a token naming another issuer, signed by the kit with a key that is not the tenant's",
  expired: "an expired token of the tenant's",
  'alg-none-capitalized': 'a token the kit left unsigned, its alg "None"',
  'alg-none-uppercase': 'a token the kit left unsigned, its alg "NONE"',
  'alg-none-mixed-case': 'a token the kit left unsigned, its alg "nOnE"',
  'signature-stripped': "a token of the tenant's whose signature part the kit removed",
  'signature-empty': "a token of the tenant's whose signature the kit emptied",
  'zero-signature': "a token of the tenant's whose signature the kit replaced by zero bytes",
  'psychic-es256': 'a token the kit gave an ES256 signature of r = s = 0 (CVE-2022-21449)',
  'psychic-es384': 'a token the kit gave an ES384 signature of r = s = 0 (CVE-2022-21449)',
  'embedded-jwk': 'a token the kit signed with its own key, that key embedded in the jwk header (CVE-2018-0114)',
  'embedded-x5c': 'a token the kit signed with its own key, that key in a self-signed certificate in the x5c header',
  jku: 'a token the kit signed with its own key, naming in jku a key set that holds that key',
  x5u: 'a token the kit signed with its own key, naming in x5u a certificate of that key',
  'kid-path-traversal': 'a token the kit signed HS256 with an empty key, its kid a path to /dev/null',
  'kid-sql-injection': 'a token the kit signed HS256 with the value its kid injects as SQL',
  'hs256-empty-secret': 'a token the kit signed HS256 with an empty secret',
  'hs256-weak-secret': 'a token the kit signed HS256 with a commonly used weak secret',
  'hs256-client-secret': "a token the kit signed HS256 with the no_scope client's own client_secret",
};

/** A credential state in words, for finding messages ("a request without an Authorization header"). */
export function describeCredential(state: CredentialState, token: BearerToken): string {
  switch (state) {
    case 'absent':
      return 'a request without an Authorization header';
    case 'malformed':
      return 'a request whose Authorization header is not "Bearer <token>"';
    case 'not-jwt':
      return 'a bearer token that is not a JWT';
    case 'unsigned':
      return token.signatureEmpty
        ? `an unsigned token (alg ${JSON.stringify(token.alg ?? null)}, empty signature)`
        : `an unsigned token (alg ${JSON.stringify(token.alg)})`;
    case 'signature-invalid':
      if (token.attack !== undefined) return MADE_BY_KIT[token.attack];
      return token.shape !== undefined && token.shape in SHAPE_SEEN
        ? SHAPE_SEEN[token.shape as ForgeryShape]
        : "a token whose signature does not verify against the tenant's keys";
    case 'expired':
      return `a token that had expired (exp ${String(token.claims?.['exp'])}, more than ${CLOCK_SKEW_SECONDS} s before the request)`;
    case 'not-yet-valid':
      return `a token not yet valid (nbf ${String(token.claims?.['nbf'])}, more than ${CLOCK_SKEW_SECONDS} s after the request)`;
    case 'wrong-audience':
      return `a token for another audience (aud ${JSON.stringify(token.claims?.['aud'] ?? null)}, not the API base path /api/v2/)`;
    case 'wrong-issuer':
      return `a token from another issuer (iss ${JSON.stringify(token.claims?.['iss'] ?? null)}, expected ${JSON.stringify(token.issuerExpected)})`;
    default:
      return `a ${state} credential`;
  }
}
