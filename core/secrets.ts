// Names of the fields whose values are secrets, wherever they appear (bodies, queries, schema
// findings). Anything written (recordings, reports, messages) shows their length, never them.
// A value is masked for what it is (a secret field, a token, key material), never because it
// equals a secret seen elsewhere: a key's id and name, a resource server's id, are not secrets.
export const SECRET_KEYS: ReadonlySet<string> = new Set([
  'client_secret',
  'access_token',
  'refresh_token',
  'id_token',
  'subject_token',
  'actor_token',
  'client_assertion',
  'signing_secret',
  'password',
  'pem', // token_encryption.encryption_key.pem: the key material; its kid and name are not secret
]);

/** What a finding may say about a secret value instead of the value itself. */
export function describeSecret(value: unknown): string {
  return typeof value === 'string' ? `a secret of ${value.length} characters (redacted)` : `a secret (redacted)`;
}

/**
 * Secret values shorter than this are masked in their own field but not searched for in the
 * rest of the text. The document's one stated secret length is 16 (signing_secret); issued
 * client secrets and tokens are far longer. A value under 8 characters is no working credential
 * of this interface, while words that short ("string", "test", "rs_1") stand in ids and messages
 * by chance: searching for them would mask what is not secret, and hide nothing.
 */
export const MIN_SEARCHED_SECRET_LENGTH = 8;

/**
 * Values that stand in for a secret in mocks, examples and docs (what an OpenAPI mock such as
 * Prism or WireMock returns for a string, a sample config's filler). They protect nothing, and
 * the same words stand in the mock's other fields.
 */
const PLACEHOLDERS: ReadonlySet<string> = new Set([
  'string',
  'secret',
  'changeme',
  'change-me',
  'change_me',
  'changeit',
  'redacted',
  'password',
  'passw0rd',
  'example',
  'placeholder',
  'sample',
  'dummy',
  'test',
  'testing',
  'todo',
  'null',
  'undefined',
  'none',
  'mysecret',
  'my-secret',
  'my_secret',
  'your-secret',
  'your_secret',
  'yoursecret',
  'client_secret',
  'client-secret',
  'signing_secret',
  'signing-secret',
  'access_token',
  'secret123',
  'password123',
]);

/** One character repeated ("********", "xxxxxxxxxxxxxxxx", "0000000000000000"), or a mask of the kit's own. */
const FILLER = /^(?:(.)\1*|\[REDACTED\]\**)$/su;

/** A stand-in rather than a secret: a placeholder word (in <>, [], {} or quotes, any case) or filler. */
export function isPlaceholderSecret(value: string): boolean {
  const word = value
    .trim()
    .replace(/^[<[{("'`]+|[>\]})"'`]+$/g, '')
    .trim()
    .toLowerCase();
  return word === '' || FILLER.test(value.trim()) || PLACEHOLDERS.has(word);
}

/** Whether a secret value is searched for across text (finding messages, other fields): long enough, and not a placeholder. */
export function isSearchedSecret(value: string): boolean {
  return value.length >= MIN_SEARCHED_SECRET_LENGTH && !isPlaceholderSecret(value);
}
