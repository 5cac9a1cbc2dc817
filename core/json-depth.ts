// How deeply a JSON text nests, found without recursion. JSON.parse takes any depth, but much of
// what follows it walks values recursively (JSON.stringify, schema validation, redaction) and runs
// out of stack some ten thousand levels down. The management API's bodies are a few levels deep,
// so a body nested deeper than MAX_JSON_DEPTH is not judged (rules/index.ts) rather than walked.

/** Nesting (objects and arrays inside each other) beyond which a body is not judged. */
export const MAX_JSON_DEPTH = 64;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;

/**
 * True when objects and arrays in `text` nest deeper than `limit` levels. One pass over the text,
 * strings skipped, no recursion; text that is not JSON is counted the same way (its brackets
 * outside quotes), which is all a caller about to walk it needs to know.
 */
export function jsonNestsDeeperThan(text: string, limit = MAX_JSON_DEPTH): boolean {
  // Deeper than `limit` takes more than `limit` opening brackets: most bodies have far fewer,
  // which the native indexOf counts faster than the walk below could.
  if (text.length <= limit || !opensMoreThan(text, limit)) return false;
  let depth = 0;
  const length = text.length;
  for (let i = 0; i < length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      for (i++; i < length; i++) {
        const d = text.charCodeAt(i);
        if (d === BACKSLASH) i++;
        else if (d === QUOTE) break;
      }
    } else if (c === OPEN_BRACKET || c === OPEN_BRACE) {
      if (++depth > limit) return true;
    } else if (c === CLOSE_BRACKET || c === CLOSE_BRACE) {
      depth--;
    }
  }
  return false;
}

/** More than `limit` "{" and "[" in all (inside strings too): the cheap bound checked first. */
function opensMoreThan(text: string, limit: number): boolean {
  let count = 0;
  for (let i = text.indexOf('{'); i !== -1; i = text.indexOf('{', i + 1)) if (++count > limit) return true;
  for (let i = text.indexOf('['); i !== -1; i = text.indexOf('[', i + 1)) if (++count > limit) return true;
  return false;
}

/**
 * True when objects and arrays in a parsed `value` nest deeper than `limit` levels (counted as
 * the text would be: `[]` is one level). Walked with a stack of its own, never by recursion.
 */
export function valueNestsDeeperThan(value: unknown, limit = MAX_JSON_DEPTH): boolean {
  const pending: Array<{ value: object; depth: number }> = [];
  if (value !== null && typeof value === 'object') pending.push({ value, depth: 1 });
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    if (next.depth > limit) return true;
    for (const child of Array.isArray(next.value) ? next.value : Object.values(next.value)) {
      if (child !== null && typeof child === 'object') pending.push({ value: child as object, depth: next.depth + 1 });
    }
  }
  return false;
}
