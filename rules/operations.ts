// Places an exchange on the interface: which operation (method + path after any base prefix) and
// which path parameter. The document details three operations and the token endpoint; any other
// path under the API base path is an operation of the interface too, named by its templated path
// (templatePath), and judged by the rules that hold for every operation. Paths outside the API
// base path are not matched.
import type { MatchedOperation, OperationId } from './types.ts';

interface Route {
  operation: OperationId;
  method: string;
  /** The operation's own path; group 2 is the raw `{id}` segment. */
  pattern: RegExp;
  /** How the report names it. */
  name: string;
}

// Group 1: the prefix ("" or ending in "/api/v2", so "/api/v2/users/sessions/x" is not a session).
const ROUTES: Route[] = [
  { operation: 'deleteTokenExchangeProfile', method: 'DELETE', pattern: /^((?:.*\/api\/v2)?)\/token-exchange-profiles\/([^/]+)\/?$/, name: 'DELETE /token-exchange-profiles/{id}' },
  { operation: 'updateSession', method: 'PATCH', pattern: /^((?:.*\/api\/v2)?)\/sessions\/([^/]+)\/?$/, name: 'PATCH /sessions/{id}' },
  { operation: 'getResourceServer', method: 'GET', pattern: /^((?:.*\/api\/v2)?)\/resource-servers\/([^/]+)\/?$/, name: 'GET /resource-servers/{id}' },
  { operation: 'getToken', method: 'POST', pattern: /^(.*?)\/oauth\/token()\/?$/, name: 'POST /oauth/token' },
];

/** Every other operation: a path under the API base path, group 1 the prefix, group 2 the operation's own path. */
const UNDER_API_BASE = /^(.*?\/api\/v2)(\/.*[^/].*)$/;

/**
 * A path segment that names a collection or an action, not an object: lower-case words joined
 * by "-" or "_" ("users", "resource-servers", "custom-text", "post-login"). Identifiers carry a
 * digit, an upper-case letter or another character ("auth0|123", "rol_a1B2", "con_X",
 * "https://api.example.com/", "5f3c…"): generated ids almost always do.
 */
const WORD_SEGMENT = /^[a-z][a-z_-]{0,39}$/;

/**
 * The operation's path with its identifiers collapsed: "/users/auth0%7C123/roles" is
 * "/users/{id}/roles", and a second identifier on the same path is {id2}, then {id3}. A segment
 * is decoded once before it is read (as a server does); a trailing slash is dropped.
 */
export function templatePath(path: string): string {
  const segments = path.split('/').slice(1);
  if (segments.length > 1 && segments[segments.length - 1] === '') segments.pop();
  let ids = 0;
  const templated = segments.map((raw) => {
    if (raw === '' || WORD_SEGMENT.test(decodeSegment(raw))) return raw;
    ids++;
    return ids === 1 ? '{id}' : `{id${ids}}`;
  });
  return `/${templated.join('/')}`;
}

const SCHEME_AND_AUTHORITY = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i;

/** The path and query of an absolute or origin-form URL. */
export function splitUrl(url: string): { path: string; search: string } {
  let rest = url;
  if (url.charCodeAt(0) !== 47 /* "/": origin-form, no scheme */) {
    const scheme = SCHEME_AND_AUTHORITY.exec(url);
    if (scheme) rest = url.slice(scheme[0].length);
  }
  const hash = rest.indexOf('#');
  if (hash !== -1) rest = rest.slice(0, hash);
  const q = rest.indexOf('?');
  const path = q === -1 ? rest : rest.slice(0, q);
  return { path: path === '' ? '/' : path, search: q === -1 ? '' : rest.slice(q + 1) };
}

/** Decodes once, as a server does; a malformed escape leaves the segment as it is. */
export function decodeSegment(raw: string): string {
  if (!raw.includes('%')) return raw;
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}

export function parseQuery(search: string): Record<string, string> {
  const query: Record<string, string> = {};
  if (search === '') return query;
  for (const [key, value] of new URLSearchParams(search)) query[key] = value;
  return query;
}

/**
 * The operation an exchange calls: one of the document's (with its id), or any other under the
 * API base path (named by its templated path). Undefined: the path is outside the API or the
 * base path itself, or the request is an OPTIONS (a CORS preflight).
 */
export function matchOperation(method: string, url: string): MatchedOperation | undefined {
  const upper = method.toUpperCase();
  const { path, search } = splitUrl(url);
  for (const route of ROUTES) {
    if (route.method !== upper) continue;
    const match = route.pattern.exec(path);
    if (!match) continue;
    const matched: MatchedOperation = { operation: route.operation, name: route.name, query: parseQuery(search), prefix: match[1]! };
    if (route.operation !== 'getToken') {
      matched.rawId = match[2]!;
      matched.id = decodeSegment(match[2]!);
    }
    return matched;
  }
  // A CORS preflight asks what the operation allows, without a credential by design: not a call of the operation.
  if (upper === 'OPTIONS') return undefined;
  const other = UNDER_API_BASE.exec(path);
  if (!other) return undefined;
  return { operation: 'otherOperation', name: `${upper} ${templatePath(other[2]!)}`, query: parseQuery(search), prefix: other[1]! };
}
