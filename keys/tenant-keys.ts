// The tenant's keys for a driver (run, proxy, validate): read once at start from a URL or a
// file, and a verifier over them. Without keys the kit says so once and judges what it can.
import type { JSONWebKeySet } from 'jose';
import { describeJwksSource, readJwks } from './jwks.ts';
import { verifierFor, type TokenVerifier } from './verifier.ts';

/** What every driver says, once, when it has no keys to check signatures with. */
export const NO_JWKS_NOTE = 'signatures not verified: no JWKS';

export type TenantKeys =
  | { source: string; jwks: JSONWebKeySet; verifier: TokenVerifier }
  /** `problem`: why there are no keys, in words ("… answered 404"). */
  | { source: string; problem: string };

/** Reads the key set at `source` (http(s) URL or file) and makes its verifier; a remote set is fetched again on an unknown key id. */
export async function tenantKeys(source: string): Promise<TenantKeys> {
  const reading = await readJwks(source);
  if (!('jwks' in reading)) return { source, problem: reading.problem };
  const made = verifierFor(reading.jwks, /^https?:\/\//i.test(source) ? { refetchFrom: source } : {});
  if ('problem' in made) return { source, problem: `${describeJwksSource(source)}: ${made.problem}` };
  return { source, jwks: reading.jwks, verifier: made.verifier };
}

/** The one line a driver prints without keys: "signatures not verified: no JWKS (why)". */
export const noJwksLine = (keys: { problem: string }): string => `${NO_JWKS_NOTE} (${keys.problem})`;
