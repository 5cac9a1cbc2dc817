// Names of the fields whose values are secrets, wherever they appear (bodies, queries, schema
// findings). Anything written (recordings, reports, messages) shows their length, never them.
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
  'pem', // token_encryption.encryption_key.pem
  'encryption_key',
]);

/** What a finding may say about a secret value instead of the value itself. */
export function describeSecret(value: unknown): string {
  return typeof value === 'string' ? `a secret of ${value.length} characters (redacted)` : `a secret (redacted)`;
}
