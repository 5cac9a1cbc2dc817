// Which of a description's operations a request is for. The path templates are split once, when the
// description is loaded, and grouped by method, server base path and segment count, so that a match
// compares a request with the few templates of its length only.

/** How specific a template segment is: a literal beats a partly templated segment, which beats `{param}`. */
const PARAM = 0;
const MIXED = 1;
const LITERAL = 2;

type Segment = { kind: typeof LITERAL; text: string } | { kind: typeof MIXED; pattern: RegExp } | { kind: typeof PARAM };

export interface RouteInput<T> {
  /** Lower-case, as the description's keys are ("get"). */
  method: string;
  /** The key under `paths` ("/users/{id}"). */
  template: string;
  /** The base paths the route is served under ("/", "/api/v2"). */
  basePaths: readonly string[];
  target: T;
}

interface Route<T> {
  segments: Segment[];
  target: T;
}

interface BaseGroup<T> {
  base: string[];
  /** Routes by segment count, the most specific first. */
  byLength: Map<number, Array<Route<T>>>;
}

export class PathMatcher<T> {
  /** Per lower-case method, the base paths' groups, the longest base first. */
  private readonly groups = new Map<string, Array<BaseGroup<T>>>();

  constructor(routes: ReadonlyArray<RouteInput<T>>) {
    for (const input of routes) {
      const route: Route<T> = { segments: splitPath(input.template).map(templateSegment), target: input.target };
      let groups = this.groups.get(input.method);
      if (!groups) this.groups.set(input.method, (groups = []));
      for (const basePath of input.basePaths) {
        const base = splitPath(basePath).map((segment) => decodeOnce(segment) ?? segment);
        let group = groups.find((g) => g.base.join('/') === base.join('/'));
        if (!group) groups.push((group = { base, byLength: new Map() }));
        const sameLength = group.byLength.get(route.segments.length);
        if (sameLength) sameLength.push(route);
        else group.byLength.set(route.segments.length, [route]);
      }
    }
    for (const groups of this.groups.values()) {
      groups.sort((a, b) => b.base.length - a.base.length);
      for (const group of groups) for (const routes of group.byLength.values()) routes.sort(bySpecificity);
    }
  }

  /** The operation for a method and a request path (no query); undefined when none is described. */
  match(method: string, path: string): T | undefined {
    const groups = this.groups.get(method.toLowerCase());
    if (!groups) return undefined;
    const raw = splitPath(path);
    const decoded = raw.map((segment) => decodeOnce(segment) ?? segment);
    for (const group of groups) {
      if (group.base.length > raw.length) continue;
      if (!group.base.every((segment, i) => raw[i] === segment || decoded[i] === segment)) continue;
      const offset = group.base.length;
      const candidates = group.byLength.get(raw.length - offset);
      const route = candidates?.find((r) => r.segments.every((segment, i) => segmentMatches(segment, raw[offset + i]!, decoded[offset + i]!)));
      if (route) return route.target;
    }
    return undefined;
  }
}

/** "/users/{id}/" → ["users", "{id}"]: a trailing slash is tolerated, "/" has no segments. */
function splitPath(path: string): string[] {
  const segments = path.split('/');
  if (segments[0] === '') segments.shift();
  if (segments.at(-1) === '') segments.pop();
  return segments;
}

function templateSegment(text: string): Segment {
  if (/^\{[^{}]+\}$/.test(text)) return { kind: PARAM };
  if (!/\{[^{}]+\}/.test(text)) return { kind: LITERAL, text };
  const literals = text.split(/\{[^{}]+\}/).map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  return { kind: MIXED, pattern: new RegExp(`^${literals.join('.+?')}$`, 's') };
}

/** A server compares a segment as it arrived and once percent-decoded; a parameter is never empty. */
function segmentMatches(segment: Segment, raw: string, decoded: string): boolean {
  switch (segment.kind) {
    case LITERAL:
      return raw === segment.text || decoded === segment.text;
    case MIXED:
      return segment.pattern.test(raw) || segment.pattern.test(decoded);
    case PARAM:
      return raw.length > 0;
  }
}

/** Literal segments win over templated ones, compared from the left ("/users/me" before "/users/{id}"). */
function bySpecificity<T>(a: Route<T>, b: Route<T>): number {
  for (let i = 0; i < a.segments.length; i++) {
    const difference = b.segments[i]!.kind - a.segments[i]!.kind;
    if (difference !== 0) return difference;
  }
  return 0;
}

function decodeOnce(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}
