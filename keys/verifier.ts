// Checks a bearer token's signature against the tenant's keys (its JWKS), with jose. Only the
// signature: the claims (expiry, audience, issuer) are the rule engine's to judge, against the
// exchange's own time (rules/credential.ts). The result goes into BearerToken.signatureValid.
//
// Traffic repeats a few tokens for thousands of requests, so each token's result is remembered
// (bounded): a repeated token costs one lookup, and only a token not seen before is verified.
import { compactVerify, createLocalJWKSet, decodeProtectedHeader, errors, type JSONWebKeySet } from 'jose';
import { readJwks } from './jwks.ts';

/** true: a key of the set verifies it; false: none does; undefined: cannot tell (not a JWS, key set unusable). */
export type SignatureVerdict = boolean | undefined;

/** A token whose key id the set does not know makes the verifier refetch a remote set, at most this often. */
export const JWKS_REFETCH_COOLDOWN_MS = 30_000;
const TOKENS_REMEMBERED = 1024;

type KeySetFunction = ReturnType<typeof createLocalJWKSet>;

export interface TokenVerifierOptions {
  /** An http(s) URL to fetch the set again from when a token names a key id it does not hold. */
  refetchFrom?: string;
  /** For tests: the clock the refetch cooldown reads. */
  now?: () => number;
}

export class TokenVerifier {
  private keySet: KeySetFunction;
  private readonly results = new Map<string, SignatureVerdict>();
  private readonly pending = new Map<string, Promise<SignatureVerdict>>();
  private lastFetch: number;
  private readonly now: () => number;
  /** How many times the set was fetched again (for tests and the report). */
  refetches = 0;

  constructor(
    jwks: JSONWebKeySet,
    private readonly options: TokenVerifierOptions = {},
  ) {
    this.keySet = createLocalJWKSet(jwks);
    this.now = options.now ?? Date.now;
    this.lastFetch = this.now();
  }

  /** The remembered verdict for this token; `'unknown'` when it has not been verified yet. */
  cached(token: string): SignatureVerdict | 'unknown' {
    const result = this.results.get(token);
    return result === undefined && !this.results.has(token) ? 'unknown' : result;
  }

  /** The token's verdict, verifying it once (concurrent calls for one token share the work). */
  verify(token: string): Promise<SignatureVerdict> {
    const known = this.cached(token);
    if (known !== 'unknown') return Promise.resolve(known);
    let work = this.pending.get(token);
    if (!work) {
      work = this.check(token).then((verdict) => {
        this.pending.delete(token);
        if (this.results.size >= TOKENS_REMEMBERED) this.results.delete(this.results.keys().next().value as string);
        this.results.set(token, verdict);
        return verdict;
      });
      this.pending.set(token, work);
    }
    return work;
  }

  private async check(token: string): Promise<SignatureVerdict> {
    try {
      decodeProtectedHeader(token);
    } catch {
      return undefined; // not a JWS at all: the rules call it "not a JWT"
    }
    let verdict = await this.againstKeySet(token);
    if (verdict === 'no matching key' && (await this.refetch())) verdict = await this.againstKeySet(token);
    // The tenant holds no key for this token's algorithm and key id: it did not sign it.
    return verdict === 'no matching key' ? false : verdict;
  }

  private async againstKeySet(token: string): Promise<SignatureVerdict | 'no matching key'> {
    try {
      await compactVerify(token, this.keySet);
      return true;
    } catch (error) {
      if (error instanceof errors.JWKSNoMatchingKey) return 'no matching key';
      if (error instanceof errors.JWKSMultipleMatchingKeys) return this.againstEachCandidate(token, error);
      return verdictOf(error);
    }
  }

  /** Several keys fit the token's header (no `kid`): the signature is valid if one of them verifies it. */
  private async againstEachCandidate(token: string, error: errors.JWKSMultipleMatchingKeys): Promise<SignatureVerdict> {
    let verdict: SignatureVerdict = false;
    for await (const key of error as unknown as AsyncIterable<CryptoKey>) {
      try {
        await compactVerify(token, key);
        return true;
      } catch (failure) {
        if (verdictOf(failure) === undefined) verdict = undefined;
      }
    }
    return verdict;
  }

  /** Fetches the remote set again, unless it was fetched within the cooldown; true when there are new keys to try. */
  private async refetch(): Promise<boolean> {
    const url = this.options.refetchFrom;
    if (url === undefined || this.now() - this.lastFetch < JWKS_REFETCH_COOLDOWN_MS) return false;
    this.lastFetch = this.now();
    this.refetches++;
    const reading = await readJwks(url);
    if (!('jwks' in reading)) return false;
    try {
      this.keySet = createLocalJWKSet(reading.jwks);
    } catch {
      return false;
    }
    return true;
  }
}

/** What a jose error says about the signature. */
function verdictOf(error: unknown): SignatureVerdict {
  // The signature does not verify, the algorithm is one no published key can check ("none",
  // HS256 against public keys: key confusion), or the JWS is broken: the tenant did not sign it.
  if (
    error instanceof errors.JWSSignatureVerificationFailed ||
    error instanceof errors.JOSENotSupported ||
    error instanceof errors.JOSEAlgNotAllowed ||
    error instanceof errors.JWSInvalid
  )
    return false;
  // A key the set holds could not be used (malformed, not public): the set, not the token, is at fault.
  return undefined;
}

/** A verifier for a key set, or undefined (with why) when the set cannot be used at all. */
/** The verifier of a key set read from `source`: a remote set (http(s)) is fetched again on an unknown key id; a file, or no source, never. */
export function verifierForSource(jwks: JSONWebKeySet, source: string | undefined): { verifier: TokenVerifier } | { problem: string } {
  return verifierFor(jwks, source !== undefined && /^https?:\/\//i.test(source) ? { refetchFrom: source } : {});
}

function verifierFor(jwks: JSONWebKeySet, options: TokenVerifierOptions = {}): { verifier: TokenVerifier } | { problem: string } {
  try {
    return { verifier: new TokenVerifier(jwks, options) };
  } catch (error) {
    return { problem: `the key set cannot be used (${(error as Error).message})` };
  }
}
