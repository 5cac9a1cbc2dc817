// Places an exchange on the document: which operation (method + path after any base prefix)
// and which path parameter. Paths the document does not cover are not matched.
import type { MatchedOperation, OperationId } from './types.ts';

interface Route {
  operation: OperationId;
  method: string;
  /** The operation's own path; group 2 is the raw `{id}` segment. */
  pattern: RegExp;
}

// Group 1: the prefix ("" or ending in "/api/v2", so "/api/v2/users/sessions/x" is not a session).
const ROUTES: Route[] = [
  { operation: 'deleteTokenExchangeProfile', method: 'DELETE', pattern: /^((?:.*\/api\/v2)?)\/token-exchange-profiles\/([^/]+)\/?$/ },
  { operation: 'updateSession', method: 'PATCH', pattern: /^((?:.*\/api\/v2)?)\/sessions\/([^/]+)\/?$/ },
  { operation: 'getResourceServer', method: 'GET', pattern: /^((?:.*\/api\/v2)?)\/resource-servers\/([^/]+)\/?$/ },
  { operation: 'getToken', method: 'POST', pattern: /^(.*?)\/oauth\/token()\/?$/ },
];

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

export function matchOperation(method: string, url: string): MatchedOperation | undefined {
  const upper = method.toUpperCase();
  const { path, search } = splitUrl(url);
  for (const route of ROUTES) {
    if (route.method !== upper) continue;
    const match = route.pattern.exec(path);
    if (!match) continue;
    const matched: MatchedOperation = { operation: route.operation, query: parseQuery(search), prefix: match[1]! };
    if (route.operation !== 'getToken') {
      matched.rawId = match[2]!;
      matched.id = decodeSegment(match[2]!);
    }
    return matched;
  }
  return undefined;
}
