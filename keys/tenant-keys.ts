// The tenant's keys for a driver (run, proxy, validate): read once at start from a URL or a
// file, and a verifier over them. Without keys the kit says so once and judges what it can.
import type { JSONWebKeySet } from 'jose';
import { DEFAULT_JWKS_FETCH_TIMEOUT_MS, describeJwksSource, JWKS_FETCH_TIMEOUT_MS, readJwks } from './jwks.ts';
import { verifierForSource, type TokenVerifier } from './verifier.ts';

/** What every driver says, once, when it has no keys to check signatures with. */
export const NO_JWKS_NOTE = 'signatures not verified: no JWKS';

export type TenantKeys =
  | { source: string; jwks: JSONWebKeySet; verifier: TokenVerifier }
  /** `problem`: why there are no keys, in words ("… answered 404"). */
  | { source: string; problem: string };

/**
 * Reads the key set at `source` (http(s) URL or file) and makes its verifier; a remote set is
 * fetched again on an unknown key id. `given`: the user named it (a default location gets a
 * shorter wait: a target may not serve one).
 */
export async function tenantKeys(source: string, given = true): Promise<TenantKeys> {
  const reading = await readJwks(source, given ? JWKS_FETCH_TIMEOUT_MS : DEFAULT_JWKS_FETCH_TIMEOUT_MS);
  if (!('jwks' in reading)) return { source, problem: reading.problem };
  const made = verifierForSource(reading.jwks, source);
  if ('problem' in made) return { source, problem: `${describeJwksSource(source)}: ${made.problem}` };
  return { source, jwks: reading.jwks, verifier: made.verifier };
}

/** The one line a driver prints without keys: "signatures not verified: no JWKS (why)". */
export const noJwksLine = (keys: { problem: string }): string => `${NO_JWKS_NOTE} (${keys.problem})`;
