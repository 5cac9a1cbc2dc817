// Places an exchange on the interface: which operation (method + path after the API base path,
// rules/api-base.ts) and which path parameter. The document details three operations and the token
// endpoint; any other path under the API base path is an operation of the interface too, named by
// its templated path (templatePath), and judged by the rules that hold for every operation. Paths
// outside the API base path are not matched.
import { once } from '../core/memo.ts';
import { type ApiBase, DOCUMENT_API_BASE, splitAtApiBase } from './api-base.ts';
import { managementApiPaths, PathNames } from './path-names.ts';
import type { MatchedOperation, OperationId } from './types.ts';

interface Route {
  operation: OperationId;
  method: string;
  /** The operation's own path after the API base path; group 1 is the raw `{id}` segment. */
  pattern: RegExp;
  /** How the report names it. */
  name: string;
}

const ROUTES: Route[] = [
  {
    operation: 'deleteTokenExchangeProfile',
    method: 'DELETE',
    pattern: /^\/token-exchange-profiles\/([^/]+)\/?$/,
    name: 'DELETE /token-exchange-profiles/{id}',
  },
  { operation: 'updateSession', method: 'PATCH', pattern: /^\/sessions\/([^/]+)\/?$/, name: 'PATCH /sessions/{id}' },
  { operation: 'getResourceServer', method: 'GET', pattern: /^\/resource-servers\/([^/]+)\/?$/, name: 'GET /resource-servers/{id}' },
];

/** Why an OPTIONS request calls no operation. */
export const CORS_PREFLIGHT = 'an OPTIONS request (a CORS preflight): not a call of an operation';

/** The token endpoint: at {auth_url}, beside the API rather than under it; group 1 is the prefix. */
const TOKEN_ENDPOINT = /^(.*?)\/oauth\/token\/?$/;

/** The document's paths, as templates after the API base path. */
const DOCUMENT_PATHS = ROUTES.map((route) => route.name.slice(route.name.indexOf(' ') + 1));

/** The names of the document's paths and the management API's, and of any more templates (a user's description). */
export function pathNamesWith(templates: Iterable<string> = []): PathNames {
  return new PathNames([...DOCUMENT_PATHS, ...managementApiPaths(), ...templates]);
}

/** The names known without a user's description. */
export const knownPathNames = once((): PathNames => pathNamesWith());

/**
 * The operation's own path with its identifiers collapsed: "/users/auth0%7C123/roles" is
 * "/users/{id}/roles", and a second identifier on the same path is {id2}, then {id3}. A segment
 * (decoded once, as a server does) is a name only where a known path has that name at that place
 * (rules/path-names.ts); a trailing slash is dropped, an empty segment kept.
 */
export function templatePath(path: string, names: PathNames = knownPathNames()): string {
  const segments = path.split('/').slice(1);
  if (segments.length > 1 && segments[segments.length - 1] === '') segments.pop();
  const named = names.namesAt(segments.map(decodeSegment));
  let ids = 0;
  const templated = segments.map((raw, i) => {
    if (raw === '' || named[i]) return raw;
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
 * API base path (named by its templated path). Undefined: the path is outside the API base path or
 * the base path itself, or the request is an OPTIONS (a CORS preflight).
 */
export function matchOperation(
  method: string,
  url: string,
  base: ApiBase = DOCUMENT_API_BASE,
  names: PathNames = knownPathNames(),
): MatchedOperation | undefined {
  const upper = method.toUpperCase();
  const { path, search } = splitUrl(url);
  const token = upper === 'POST' ? TOKEN_ENDPOINT.exec(path) : null;
  if (token) return { operation: 'getToken', name: 'POST /oauth/token', query: parseQuery(search), prefix: token[1]! };
  // A CORS preflight asks what the operation allows, without a credential by design: not a call of the operation.
  if (upper === 'OPTIONS') return undefined;
  const under = splitAtApiBase(path, base);
  if (!under) return undefined;
  for (const route of ROUTES) {
    if (route.method !== upper) continue;
    const match = route.pattern.exec(under.own);
    if (match)
      return { operation: route.operation, name: route.name, query: parseQuery(search), prefix: under.prefix, rawId: match[1]!, id: decodeSegment(match[1]!) };
  }
  return { operation: 'otherOperation', name: `${upper} ${templatePath(under.own, names)}`, query: parseQuery(search), prefix: under.prefix };
}
