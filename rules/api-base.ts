// The API base path: the path before every operation's own path, where the interface's operations
// are. One value per driver, from one place: the configured base_url (run), the --target that names
// it, else the servers the user's OpenAPI description declares (--openapi), else the document's
// "/api/v2" after the tenant address. The document's operations, the rules for every other
// operation and the user's description all read it; an exchange outside it calls no operation.

/** The document's path prefix of {base_url}: "the tenant address plus the path prefix /api/v2". */
export const DOCUMENT_PREFIX = '/api/v2';

export interface ApiBase {
  /**
   * The base paths, without a trailing slash ("" is the root), the longest first. Undefined: the
   * document's, /api/v2 after a tenant address whose path is not known ("…/api/v2").
   */
  readonly paths?: readonly string[];
}

/** Where nothing says more than the document: /api/v2, after any tenant path. */
export const DOCUMENT_API_BASE: ApiBase = {};

/** A path ending in /api/v2 (the prefix, group 1) followed by an operation's own path (group 2). */
const AFTER_DOCUMENT_PREFIX = /^(.*?\/api\/v2)(\/.*[^/].*)$/;

export function apiBaseAt(paths: readonly string[]): ApiBase {
  const bases = [...new Set(paths.map((path) => path.replace(/\/+$/, '')))];
  return { paths: bases.sort((a, b) => b.length - a.length) };
}

/** "/api/v2", "/" (the root), "/a or /b": the base path as a message names it. */
export function describeApiBase(base: ApiBase): string {
  return base.paths === undefined ? DOCUMENT_PREFIX : base.paths.map((path) => (path === '' ? '/' : path)).join(' or ');
}

/** Why an exchange outside the base calls no operation. */
export function outsideApiBase(base: ApiBase): string {
  return `outside the API base path ${describeApiBase(base)} (not an operation of the interface)`;
}

/**
 * A request path split at the API base: the prefix (up to the base, "" at the root) and the
 * operation's own path. Undefined: outside the base, or the base itself (no operation).
 */
export function splitAtApiBase(path: string, base: ApiBase): { prefix: string; own: string } | undefined {
  if (base.paths === undefined) {
    const match = AFTER_DOCUMENT_PREFIX.exec(path);
    return match ? { prefix: match[1]!, own: match[2]! } : undefined;
  }
  for (const prefix of base.paths) {
    if (!path.startsWith(`${prefix}/`)) continue;
    const own = path.slice(prefix.length);
    if (/[^/]/.test(own)) return { prefix, own };
  }
  return undefined;
}

/** The API base of a configured {base_url}: its path, exactly. */
export function apiBaseOfUrl(baseUrl: string): ApiBase {
  return apiBaseAt([new URL(baseUrl).pathname]);
}

/**
 * The API base behind a forwarding target (`--target`, the dispatcher's `target`): the target's
 * path when it names the API (ends with /api/v2); else the base paths the user's description
 * declares in its servers; else /api/v2 under the target's path (clients add it, as the document's
 * {base_url} says).
 */
export function apiBaseOfTarget(targetPath: string, described?: readonly string[]): ApiBase {
  const path = targetPath.replace(/\/+$/, '');
  if (path.endsWith(DOCUMENT_PREFIX)) return apiBaseAt([path]);
  if (described !== undefined) return apiBaseAt(described);
  return apiBaseAt([path + DOCUMENT_PREFIX]);
}

/** The API base of a recording (validate): the user's description's servers, else the document's. */
export function apiBaseOfRecording(described?: readonly string[]): ApiBase {
  return described !== undefined ? apiBaseAt(described) : DOCUMENT_API_BASE;
}
