// JSON pointers into a parsed OpenAPI description, and the local `$ref`s that use them.

/** A location in the description: the keys from its root, unescaped ("/paths", "/users/{id}", "get"). */
export type Location = readonly string[];

/** The location a `$ref` names when it points into the same description ("#/components/…"); undefined otherwise. */
export function localRefTarget(ref: string): Location | undefined {
  if (ref === '#') return [];
  if (!ref.startsWith('#/')) return undefined;
  const segments: string[] = [];
  for (const part of ref.slice(2).split('/')) {
    let decoded: string;
    try {
      decoded = decodeURIComponent(part);
    } catch {
      return undefined;
    }
    segments.push(decoded.replace(/~1/g, '/').replace(/~0/g, '~'));
  }
  return segments;
}

/** A location as a URI fragment ("#/paths/~1users~1%7Bid%7D/get"), the form `$ref`s and ajv read. */
export function fragmentOf(location: Location): string {
  return '#' + location.map((key) => '/' + encodeURIComponent(key.replace(/~/g, '~0').replace(/\//g, '~1'))).join('');
}

/** A location as written in messages ("/paths/~1users~1{id}/get"). */
export function pointerText(location: Location): string {
  return location.map((key) => '/' + key.replace(/~/g, '~0').replace(/\//g, '~1')).join('');
}

/** The value at a location; undefined when the description has nothing there. */
export function valueAt(document: unknown, location: Location): unknown {
  let value = document;
  for (const key of location) {
    if (!isRecord(value) && !Array.isArray(value)) return undefined;
    if (!Object.hasOwn(value, key)) return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** An object found at a location, after following the `$ref`s that stand in for it. */
export type Resolved = { value: Record<string, unknown>; location: Location } | { unresolved: string };

/**
 * Follows `$ref`s standing in for a response, request body or path item (`#/components/responses/…`)
 * to the object itself. Only references into the same description are followed: others are never fetched.
 */
export function resolveObject(document: unknown, value: unknown, location: Location): Resolved {
  const seen = new Set<string>();
  let current = value;
  let at = location;
  while (isRecord(current) && typeof current.$ref === 'string') {
    const ref = current.$ref;
    const target = localRefTarget(ref);
    if (target === undefined) return { unresolved: `$ref ${ref} is outside the description (not fetched)` };
    if (seen.has(ref)) return { unresolved: `$ref ${ref} refers to itself` };
    seen.add(ref);
    current = valueAt(document, target);
    at = target;
  }
  if (!isRecord(current)) return { unresolved: `nothing at ${pointerText(at)}` };
  return { value: current, location: at };
}
