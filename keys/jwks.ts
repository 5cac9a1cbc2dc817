// Loads a tenant's JSON Web Key Set (its public signing keys) from a URL or a file. The keys are
// what the kit checks token signatures against (keys/verifier.ts); reading them is I/O, so it
// lives outside the rule engine.
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { JSONWebKeySet } from 'jose';
import { urlProblem } from '../core/url.ts';

/** How long a JWKS download may take before the kit carries on without keys (or, for a set the user named, stops). */
export const JWKS_FETCH_TIMEOUT_MS = 5_000;
/** The same for a default location the user did not name (a target may not serve one at all): a hung target delays the start this long at most. */
export const DEFAULT_JWKS_FETCH_TIMEOUT_MS = 2_000;

export type JwksReading = { jwks: JSONWebKeySet } | { problem: string };

const isUrl = (source: string): boolean => /^https?:\/\//i.test(source);

/** Where a JWKS source points, for messages: a URL without its query (it may carry a key). */
export function describeJwksSource(source: string): string {
  if (!isUrl(source)) return source;
  try {
    const url = new URL(source);
    return `${url.origin}${url.pathname}`;
  } catch {
    return source;
  }
}

/** A parsed document that is a key set: an object with a `keys` array of objects. */
function asKeySet(document: unknown): JSONWebKeySet | undefined {
  if (typeof document !== 'object' || document === null) return undefined;
  const keys = (document as { keys?: unknown }).keys;
  if (!Array.isArray(keys) || !keys.every((key) => typeof key === 'object' && key !== null && !Array.isArray(key))) return undefined;
  return document as JSONWebKeySet;
}

function parseKeySet(text: string, where: string): JwksReading {
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch {
    return { problem: `${where} is not JSON` };
  }
  const jwks = asKeySet(document);
  return jwks ? { jwks } : { problem: `${where} is not a JSON Web Key Set (no "keys" array)` };
}

/**
 * Reads a key set from an http(s) URL or a file (a path or a file: URL), saying why when it cannot.
 * Never throws.
 */
export async function readJwks(source: string, timeoutMs = JWKS_FETCH_TIMEOUT_MS): Promise<JwksReading> {
  const where = describeJwksSource(source);
  if (isUrl(source)) {
    const problem = urlProblem(source);
    if (problem) return { problem: `${where} is not a usable URL: ${problem}` };
    let response: Response;
    try {
      response = await fetch(source, { headers: { accept: 'application/json' }, signal: AbortSignal.timeout(timeoutMs) });
    } catch (error) {
      const cause = (error as { cause?: { code?: string; message?: string } }).cause;
      const reason =
        (error as Error).name === 'TimeoutError' ? `no answer within ${timeoutMs / 1000} s` : (cause?.code ?? cause?.message ?? (error as Error).name);
      return { problem: `${where} could not be fetched (${reason})` };
    }
    if (!response.ok) {
      await response.body?.cancel().catch(() => undefined);
      return { problem: `${where} answered ${response.status}` };
    }
    return parseKeySet(await response.text().catch(() => ''), where);
  }
  let path = source;
  if (/^file:/i.test(source)) {
    try {
      path = fileURLToPath(source);
    } catch {
      return { problem: `${where} is not a file URL` };
    }
  }
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    return { problem: `${where} could not be read (${(error as NodeJS.ErrnoException).code ?? 'error'})` };
  }
  return parseKeySet(text, where);
}

/** The key set at a URL or in a file; undefined when it cannot be had (see readJwks for why). */
export async function loadJwks(source: string): Promise<JSONWebKeySet | undefined> {
  const reading = await readJwks(source);
  return 'jwks' in reading ? reading.jwks : undefined;
}
