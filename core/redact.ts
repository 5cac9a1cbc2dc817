// Secrets never reach the disk or a report: bearer tokens, client secrets, issued tokens,
// signing secrets and token-encryption key material are replaced before anything is written.
//
// A value is masked for what it is: the value of a secret field (core/secrets.ts), a token (a
// JWT-shaped string), key material (a PEM block), a credential header. A secret string is
// replaced by a mask of the same length ("[REDACTED]" padded with "*"), and a secret object
// keeps its shape with every leaf masked: a recording judged again offline gives the same
// findings as the live traffic did (the signing secret's minimum length). The secret values
// masked are also collected, and searched for in the rest of the exchange and in text derived
// from it (finding messages): a real secret echoed by another field is masked there too. A
// value too short or a placeholder ("string", "changeme") is not searched for: the same word
// in an id or a name is not a secret (isSearchedSecret). A secret is also found in pieces: wrapped
// over lines or between table borders, or cut short in an excerpt (core/secret-pieces.ts).
import type { BearerToken, Exchange, Headers } from '../rules/types.ts';
import { jsonNestsDeeperThan } from './json-depth.ts';
import { RecentValues, perFrozenObject, perKey } from './memo.ts';
import { SecretPieces } from './secret-pieces.ts';
import { isSearchedSecret, SECRET_KEYS } from './secrets.ts';

export const REDACTED = '[REDACTED]';

/** JSON keys (anywhere in a body) whose values are secrets: the rule engine's list. */
export { SECRET_KEYS };

/** Headers that carry credentials. */
// Stryker disable next-line ArrayDeclaration,StringLiteral: equivalent, every name here also matches CREDENTIAL_HEADER_NAME; the list only picks the headers whose recent values are cached.
const SECRET_HEADERS: ReadonlySet<string> = new Set(['authorization', 'proxy-authorization', 'cookie', 'set-cookie', 'x-api-key']);

/** The token claims kept for the audit; everything else in the token is dropped. */
export const KEPT_CLAIMS = ['iss', 'sub', 'aud', 'azp', 'scope', 'gty', 'iat', 'exp', 'nbf'];

/** Characters JSON escapes in a string. */
// Stryker disable next-line Regex: equivalent, see note() (a value that needs no escape adds itself again).
const NEEDS_ESCAPE = /["\\\u0000-\u001f]/;

/** Collects the secret values a redaction replaced that are worth searching for elsewhere (isSearchedSecret). */
export type SecretSink = Set<string>;

const note = (sink: SecretSink | undefined, value: string) => {
  if (!sink || !isSearchedSecret(value)) return;
  sink.add(value);
  // Messages show values JSON-quoted: a secret with quotes, backslashes or controls appears escaped.
  // Stryker disable next-line ConditionalExpression: equivalent, a value with nothing to escape is its own escaped form and the set holds it once.
  if (NEEDS_ESCAPE.test(value)) sink.add(JSON.stringify(value).slice(1, -1));
};

/** A mask as long as `value`, so that length rules judge a recording as they judged the traffic. */
export function mask(value: string): string {
  if (value.length >= REDACTED.length) return REDACTED + '*'.repeat(value.length - REDACTED.length);
  return '*'.repeat(value.length);
}

/**
 * Other header names that say credential (X-Auth-Token, X-Access-Token, Token, Authorization2,
 * X-Forwarded-Authorization, X-Client-Secret, …): their values are masked whole. CORS headers
 * (Access-Control-Allow-Credentials: true, Access-Control-Allow-Headers: authorization) only
 * name them, and stay readable.
 */
const CREDENTIAL_HEADER_NAME = /authorization|token|secret|api[-_]?key|password|passwd|credential|cookie/;

export function redactHeaders(headers: Headers, sink?: SecretSink): Headers {
  const out: Headers = {};
  for (const name in headers) {
    const value = headers[name]!;
    // Stryker disable next-line ConditionalExpression: equivalent, every SECRET_HEADERS name also matches CREDENTIAL_HEADER_NAME, read the same way without the cache.
    if (SECRET_HEADERS.has(name)) out[name] = redactSecretHeader(name, value, sink);
    else if (CREDENTIAL_HEADER_NAME.test(name) && !name.startsWith('access-control-')) out[name] = redactCredentialHeader(name, value, sink);
    // Any other header (a Referer with ?access_token=…): what looks like a token or key material.
    else out[name] = redactText(value, sink);
  }
  return out;
}

function redactCredentialHeader(name: string, value: string, sink: SecretSink | undefined): string {
  const redacted = readSecretHeader(name, value);
  if (sink) for (const secret of redacted.secrets) sink.add(secret);
  return redacted.text;
}

/** A secret header's value redacted, and the secrets it held (what the sink is given). */
interface RedactedHeader {
  text: string;
  secrets: string[];
}

/** Per secret header, its last few values redacted (RecentValues): traffic repeats one credential for thousands of requests. */
// Stryker disable next-line ArrowFunction: made once at import, before any mutant is switched on (a static mutant); the header tests pin it.
const recentSecretHeaders: ReadonlyMap<string, RecentValues<RedactedHeader>> = new Map(
  [...SECRET_HEADERS].map((name) => [name, new RecentValues(4, (value) => readSecretHeader(name, value))]),
);

function redactSecretHeader(name: string, value: string, sink: SecretSink | undefined): string {
  const redacted = recentSecretHeaders.get(name)!.get(value);
  if (sink) for (const secret of redacted.secrets) sink.add(secret);
  return redacted.text;
}

function readSecretHeader(name: string, value: string): RedactedHeader {
  const secrets: SecretSink = new Set();
  let text: string;
  // Stryker disable next-line Regex: equivalent, the credential after the scheme word is trimmed.
  const scheme = /^(bearer|basic)\s+(.*)$/i.exec(value);
  if (name === 'authorization' && scheme) {
    // The scheme word as sent ("bearer" is the same scheme, and what a test may have sent on purpose).
    text = `${scheme[1]} ${REDACTED}`;
    const credential = scheme[2]!.trim();
    note(secrets, credential);
    if (scheme[1]!.toLowerCase() === 'basic') for (const part of basicParts(credential)) note(secrets, part);
  } else {
    text = REDACTED;
    note(secrets, value);
    for (const cookie of value.split(/[;,]\s*/)) note(secrets, cookie.slice(cookie.indexOf('=') + 1));
  }
  return { text, secrets: [...secrets] };
}

/** user:password of HTTP Basic, decoded, and the password (the user, a client id, is no secret). */
function basicParts(credential: string): string[] {
  const decoded = Buffer.from(credential, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  // Stryker disable next-line ConditionalExpression: equivalent, without a colon the slice is the whole credential, noted once in a set.
  return colon === -1 ? [decoded] : [decoded, decoded.slice(colon + 1)];
}

const JWT = /eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*/g;
/** A PEM block, or the start of one cut short (a truncated body). */
const PEM = /-----BEGIN [A-Z0-9 ]+-----[\s\S]*?(?:-----END [A-Z0-9 ]+-----|$)/g;

/** Every leaf of a secret value masked; the shape (types, lengths, keys) stays. */
function maskDeep(value: unknown, sink: SecretSink | undefined): unknown {
  if (typeof value === 'string') {
    note(sink, value);
    return mask(value);
  }
  if (typeof value === 'number') return 0;
  if (Array.isArray(value)) return value.map((v) => maskDeep(v, sink));
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [key, v] of Object.entries(value)) out[key] = maskDeep(v, sink);
    return out;
  }
  return value;
}

/** Secrets inside free text: tokens and key material, wherever they stand. */
function redactText(text: string, sink: SecretSink | undefined): string {
  // Stryker disable next-line ConditionalExpression,StringLiteral: equivalent, a shortcut; the expressions below find nothing in such a text.
  if (!text.includes('eyJ') && !text.includes('-----BEGIN')) return text;
  const noted = (m: string): string => {
    note(sink, m);
    return mask(m);
  };
  return text.replace(JWT, noted).replace(PEM, noted);
}

function redactValue(value: unknown, sink: SecretSink | undefined): unknown {
  if (typeof value === 'string') return redactText(value, sink);
  if (Array.isArray(value)) return value.map((v) => redactValue(v, sink));
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [key, v] of Object.entries(value)) out[key] = SECRET_KEYS.has(key) ? maskDeep(v, sink) : redactValue(v, sink);
    return out;
  }
  return value;
}

const KEY_NAMES = [...SECRET_KEYS].join('|');
const FORM_SECRET = new RegExp(`(^|&)(${KEY_NAMES})=([^&]*)`, 'g');
/** A secret string member of JSON that does not parse (cut short, malformed): `"key": "value` with or without its end. */
const JSON_STRING_SECRET = new RegExp(`("(?:${KEY_NAMES})"\\s*:\\s*")((?:[^"\\\\]|\\\\.)*)`, 'g');
// Stryker disable next-line StringLiteral: made once at import, before any mutant is switched on (a static mutant); the number secret tests pin it.
const JSON_NUMBER_SECRET = new RegExp(`("(?:${KEY_NAMES})"\\s*:\\s*)(-?\\d[\\d.eE+-]*)`, 'g');
/** A secret member whose value is an object or an array. */
const SECRET_STRUCTURE = new RegExp(`"(?:${KEY_NAMES})"\\s*:\\s*[[{]`);
/**
 * Quick test: can this text hold a secret at all, as the rules below find them (a secret key as
 * a JSON member or a form parameter, a token, a PEM block)? Most bodies cannot, and are kept as
 * they are. A secret key's name alone is not enough ("type":"password", "access_token_authz").
 */
// Stryker disable next-line StringLiteral: made once at import, before any mutant is switched on (a static mutant); the tests of bodies with and without secrets pin it.
const MAY_HOLD_SECRET = new RegExp(`"(?:${KEY_NAMES})"\\s*:|(?:^|&)(?:${KEY_NAMES})=|eyJ|-----BEGIN`);

/**
 * Redacts a JSON or form-encoded body; any other text is scanned for JWT-looking strings and
 * PEM blocks. Text with nothing to redact is returned unchanged (byte for byte).
 */
export function redactBody(text: string, sink?: SecretSink): string {
  // Stryker disable next-line ConditionalExpression: equivalent, a shortcut; the rules below find nothing in such a text.
  if (!MAY_HOLD_SECRET.test(text)) return text;
  // Secret members with string or number values are masked in place by the text rules, which
  // keeps the body as it was apart from them (and is faster than parsing it). A secret holding
  // an object or an array needs the parsed body.
  if (!SECRET_STRUCTURE.test(text)) return redactLooseText(text, sink);
  const trimmed = text.trimStart();
  if (trimmed.startsWith('{') || trimmed.startsWith('[')) {
    // Too deep to walk without exhausting the stack (and never judged): masked whole, not searched in part.
    if (jsonNestsDeeperThan(text)) return mask(text);
    try {
      return JSON.stringify(redactValue(JSON.parse(text), sink));
    } catch {
      // not JSON after all (or cut short): fall through to the text rules
    }
  }
  return redactLooseText(text, sink);
}

/** The text rules alone: secret members of JSON-like text, form parameters, tokens, PEM blocks. */
function redactLooseText(text: string, sink: SecretSink | undefined): string {
  const masked = text
    .replace(JSON_STRING_SECRET, (_m, head: string, value: string) => {
      // Stryker disable next-line ConditionalExpression,StringLiteral: equivalent, a shortcut; unescaping a value without a backslash gives it back.
      const unescaped = value.includes('\\') ? unescapeJson(value) : value;
      note(sink, value);
      note(sink, unescaped);
      // As long as the value itself, not its escaped form: length rules judge the recording as they judged the traffic.
      return head + mask(unescaped);
    })
    .replace(JSON_NUMBER_SECRET, (_m, head: string, value: string) => {
      note(sink, value);
      return `${head}0`;
    })
    .replace(FORM_SECRET, (_m, sep: string, key: string, value: string) => {
      note(sink, value);
      note(sink, formDecode(value));
      return `${sep}${key}=${mask(formDecode(value))}`;
    });
  return redactText(masked, sink);
}

function unescapeJson(value: string): string {
  try {
    return JSON.parse(`"${value}"`) as string;
  } catch {
    return value;
  }
}

function formDecode(value: string): string {
  try {
    return decodeURIComponent(value.replace(/\+/g, ' '));
  } catch {
    return value;
  }
}

/**
 * The claims a recording may keep. The rule engine shares one frozen claims object per token,
 * so this is worked out once per token and shared in turn, frozen: nobody changes what another
 * exchange holds.
 */
const keptClaimsOf = perFrozenObject((claims: Record<string, unknown>): Record<string, unknown> => {
  const out: Record<string, unknown> = {};
  for (const key of KEPT_CLAIMS) if (claims[key] !== undefined) out[key] = claims[key];
  return Object.isFrozen(claims) ? Object.freeze(out) : out;
});

export function keptClaims(claims: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  return claims ? keptClaimsOf(claims) : undefined;
}

/**
 * What a recording keeps of the bearer credential once the header is redacted: whether it was
 * there and well formed, and its non-secret claims. A reader restores the exchange's token
 * from it, so the scope and authentication rules judge the recording as they judged the traffic.
 */
export function tokenFacts(token: BearerToken): BearerToken {
  const facts: BearerToken = { headerPresent: token.headerPresent, wellFormed: token.wellFormed };
  const claims = keptClaims(token.claims);
  if (claims) facts.claims = claims;
  if (token.decodeError !== undefined) facts.decodeError = token.decodeError;
  if (token.signatureValid !== undefined) facts.signatureValid = token.signatureValid;
  if (token.clientGlobal !== undefined) facts.clientGlobal = token.clientGlobal;
  // The JOSE header's alg and an empty signature: an unsigned token is judged offline too.
  if (token.alg !== undefined) facts.alg = token.alg;
  if (token.signatureEmpty) facts.signatureEmpty = true;
  if (token.shape !== undefined) facts.shape = token.shape;
  if (token.issuerExpected !== undefined) facts.issuerExpected = token.issuerExpected;
  if (token.recorded === false) facts.recorded = false;
  return facts;
}

/**
 * A copy of the exchange safe to write anywhere; `sink` collects the values replaced. A secret
 * found in one place (a header, a secret field) and repeated in a field that is not secret
 * (an id, a description, an error message) is masked there too.
 */
/**
 * Secret values a session has seen (a client secret sent to /oauth/token, a signing secret
 * read back): masked wherever they stand in the session's later exchanges, in any field. Only
 * values worth searching for are kept (isSearchedSecret), at most MAX_KNOWN_SECRETS, the
 * oldest forgotten first.
 */
export class KnownSecrets {
  private readonly values = new Set<string>();
  private ordered: string[] | undefined;
  /** The same secrets, indexed to find their pieces (kept up to date one secret at a time: a gateway may bring a new token with every request). */
  readonly pieces = new SecretPieces(20);

  /** Remembers `found` (the secrets one exchange's redaction masked in their own fields). */
  learn(found: Iterable<string>): void {
    for (const value of found) {
      if (this.values.has(value) || !isSearchedSecret(value)) continue;
      if (this.values.size >= MAX_KNOWN_SECRETS) this.forget(this.values.values().next().value as string);
      this.values.add(value);
      this.pieces.add(value);
      this.ordered = undefined;
    }
  }

  private forget(value: string): void {
    this.values.delete(value);
    this.pieces.delete(value);
  }

  get size(): number {
    return this.values.size;
  }

  /** Longest first, as masking wants them. */
  list(): readonly string[] {
    return (this.ordered ??= longestFirst(this.values));
  }

  has(value: string): boolean {
    return this.values.has(value);
  }
}

/** A session rarely holds more than a few clients' secrets; the bound keeps a hostile stream of them from growing without end. */
const MAX_KNOWN_SECRETS = 1000;

/**
 * `exchange` redacted; `sink` collects the secret values masked. With `known` (a session's
 * KnownSecrets), the secrets seen in earlier exchanges are masked wherever they stand in this
 * one too, and this one's are remembered for the next.
 */
export function redactExchange(exchange: Exchange, sink?: SecretSink, known?: KnownSecrets): Exchange {
  const found: SecretSink = new Set();
  const copy: Exchange = {
    ...exchange,
    request: { ...exchange.request, url: redactUrl(exchange.request.url, found), headers: redactHeaders(exchange.request.headers, found) },
    token: { ...exchange.token, claims: keptClaims(exchange.token.claims) },
  };
  if (exchange.request.body) copy.request.body = { ...exchange.request.body, text: redactBody(exchange.request.body.text, found) };
  if (exchange.response) {
    copy.response = { ...exchange.response, headers: redactHeaders(exchange.response.headers, found) };
    if (exchange.response.body) copy.response.body = { ...exchange.response.body, text: redactBody(exchange.response.body.text, found) };
  }
  // This exchange's own secrets and the session's.
  // Stryker disable next-line EqualityOperator: equivalent, with no known secret the merged set is this exchange's own.
  const secrets = known && known.size > 0 ? new Set([...known.list(), ...found]) : found;
  // Learned first: their pieces are then looked for through the session's index alone.
  known?.learn(found);
  const pieces = piecesOf(found, known);
  // Stryker disable next-line ConditionalExpression,EqualityOperator: equivalent, a shortcut; masking no secrets changes nothing.
  if (secrets.size > 0) maskEchoedSecrets(copy, { whole: longestFirst(secrets), pieces });
  if (sink) {
    for (const secret of secrets) sink.add(secret);
    // scrubSecrets(text, sink) then finds these secrets' pieces without indexing them again.
    piecesBySink.set(sink, [...new Set([...(piecesBySink.get(sink) ?? []), ...pieces])]);
  }
  return copy;
}

/** A secret's pieces index, for the few secrets of one exchange; traffic repeats one credential for thousands of requests. */
const piecesOfSecret = perKey(16, (secret: string) => SecretPieces.of([secret]));

/** The indexes that find the pieces of `found` and of the session's known secrets. */
function piecesOf(found: Iterable<string>, known: KnownSecrets | undefined): SecretPieces[] {
  return withPiecesOf(found, known && known.pieces.size > 0 ? [known.pieces] : []);
}

/** `indexes`, and one for each of `secrets` none of them holds. */
function withPiecesOf(secrets: Iterable<string>, indexes: readonly SecretPieces[]): SecretPieces[] {
  const pieces = [...indexes];
  for (const secret of secrets) if (!indexes.some((index) => index.has(secret))) pieces.push(piecesOfSecret(secret));
  return pieces;
}

/** The indexes redactExchange used for the secrets it gave a sink. */
// module-state: what belongs to the caller's sink, kept beside it (a WeakMap forgets it with the sink); no sink, nothing kept.
const piecesBySink = new WeakMap<SecretSink, SecretPieces[]>();

/** What to mask in a text: each secret where it stands whole (longest first), then their pieces. */
interface Masks {
  whole: readonly string[];
  pieces: readonly SecretPieces[];
}

/**
 * Teaches `known` the secrets of `exchange` (a token request's client secret, say) without keeping
 * a redacted copy: what redactExchange would mask in their own fields.
 */
export function learnSecrets(exchange: Exchange, known: KnownSecrets): void {
  redactExchange(exchange, undefined, known);
}

/** Longest first, so that a secret containing a shorter one is masked whole. */
const longestFirst = (secrets: SecretSink): string[] => [...secrets].sort((a, b) => b.length - a.length);

/** `text` with each secret masked wherever it stands, whole or in pieces. */
function maskEach(text: string, masks: Masks): string {
  let out = text;
  // Stryker disable next-line ConditionalExpression: equivalent, a shortcut; splitting on a value that is not there gives the text back.
  for (const secret of masks.whole) if (out.includes(secret)) out = out.split(secret).join(mask(secret));
  for (const pieces of masks.pieces) out = pieces.mask(out, mask);
  return out;
}

/** The secrets of a redacted exchange masked where they stand outside secret fields: its URL, other headers and bodies. */
function maskEchoedSecrets(copy: Exchange, masks: Masks): void {
  copy.request.url = maskEach(copy.request.url, masks);
  copy.request.headers = maskHeaderValues(copy.request.headers, masks);
  if (copy.request.body) copy.request.body.text = maskEach(copy.request.body.text, masks);
  if (copy.response) {
    copy.response.headers = maskHeaderValues(copy.response.headers, masks);
    if (copy.response.body) copy.response.body.text = maskEach(copy.response.body.text, masks);
  }
}

function maskHeaderValues(headers: Headers, secrets: Masks): Headers {
  let out: Headers | undefined;
  for (const name in headers) {
    const masked = maskEach(headers[name]!, secrets);
    // Stryker disable next-line ConditionalExpression: equivalent, a shortcut that spares the copy of headers nothing was masked in.
    if (masked !== headers[name]) (out ??= { ...headers })[name] = masked;
  }
  return out ?? headers;
}

/** Secrets in a query string (e.g. ?access_token=…) are redacted too. */
export function redactUrl(url: string, sink?: SecretSink): string {
  const q = url.indexOf('?');
  // A token used as a path segment is masked as anywhere else.
  if (q === -1) return redactText(url, sink);
  return redactText(url.slice(0, q + 1), sink) + redactBody(url.slice(q + 1), sink);
}

/** `text` with every collected secret value, whole or in pieces (and what still looks like a token), masked. */
export function scrubSecrets(text: string, secrets: SecretSink): string {
  // Stryker disable next-line ConditionalExpression: equivalent, a shortcut; masking no secrets changes nothing.
  const out = secrets.size === 0 ? text : maskEach(text, { whole: longestFirst(secrets), pieces: withPiecesOf(secrets, piecesBySink.get(secrets) ?? []) });
  // Values shown cut short ("…") escape the match above; the member they belong to does not.
  return MAY_HOLD_SECRET.test(out) ? redactLooseText(out, undefined) : out;
}
