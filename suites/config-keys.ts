// Every configuration key of `tmi-conform run`, declared once: its YAML key, environment variable,
// flag, type, default and one line of documentation. Reading the environment and the flags, the
// run's --help and schemas/conformance.schema.json are all derived from this table
// (suites/config.ts, cli/run.ts, suites/config-schema.ts); test/config-keys.test.ts walks it.

/**
 * url: an http(s) URL; url-or-file: one, or a file path; text: any non-empty string; listen: HOST:PORT; switch: a
 * boolean (a flag without a value); integer: a whole number in `range`; ids: a list of ids (the
 * environment gives them comma-separated); credentials and sessions: structured, in the file (the
 * environment has a variable per part); coverage: a percentage, or PART=N,… (reports/coverage-gate.ts).
 */
export type ConfigKeyKind = 'url' | 'url-or-file' | 'text' | 'listen' | 'switch' | 'integer' | 'ids' | 'credentials' | 'sessions' | 'coverage';

export interface ConfigKey {
  /** The key in the YAML file; a nested one is written with a dot (fixtures.resource_servers). */
  key: string;
  kind: ConfigKeyKind;
  /** The environment variable (for credentials, the pattern of the family). */
  env: string;
  /** The flag of `tmi-conform run` and the word its value is shown as; none: secrets and structures stay off command lines. */
  flag?: { name: string; value?: string };
  range?: { min: number; max: number };
  /** The default in words; none: the key is optional and has no default. */
  default?: string;
  /** One line: what the key is. */
  doc: string;
}

export const CONFIG_KEYS: readonly ConfigKey[] = [
  {
    key: 'base_url',
    kind: 'url',
    env: 'TMI_BASE_URL',
    flag: { name: 'base-url', value: 'URL' },
    doc: '{base_url} of the document: the tenant address plus /api/v2. Without one, run starts the embedded reference.',
  },
  {
    key: 'auth_url',
    kind: 'url',
    env: 'TMI_AUTH_URL',
    flag: { name: 'auth-url', value: 'URL' },
    default: 'the origin of base_url',
    doc: 'Token endpoint root: tokens come from {auth_url}/oauth/token/, and when that answers 404 from the same path without the trailing slash (said once).',
  },
  {
    key: 'token_url',
    kind: 'url',
    env: 'TMI_TOKEN_URL',
    flag: { name: 'token-url', value: 'URL' },
    default: '{auth_url}/oauth/token/',
    doc: 'The token endpoint itself, for a tenant that serves it elsewhere.',
  },
  {
    key: 'audience',
    kind: 'text',
    env: 'TMI_AUDIENCE',
    flag: { name: 'audience', value: 'AUDIENCE' },
    default: '{base_url}/',
    doc: 'Audience of the client credentials request.',
  },
  {
    key: 'issuer',
    kind: 'text',
    env: 'TMI_ISSUER',
    flag: { name: 'issuer', value: 'ISSUER' },
    default:
      "the issuer of the tenant's discovery document, else the iss of the tokens the token endpoint issued whose signature verifies; none known: not judged",
    doc: "The issuer (iss) the tenant's tokens carry: a token naming another is judged as from another issuer.",
  },
  {
    key: 'jwks_url',
    kind: 'url-or-file',
    env: 'TMI_JWKS_URL',
    flag: { name: 'jwks', value: 'URL|FILE' },
    default:
      'the jwks_uri of the discovery document, else {auth_url}/.well-known/jwks.json; when those cannot be fetched the run says so and goes on without checking signatures',
    doc: "The tenant's public signing keys (a JSON Web Key Set), an http(s) URL or a file: token signatures are checked against them; one given here that cannot be read stops the run (exit 2).",
  },
  {
    key: 'callback_url',
    kind: 'url',
    env: 'TMI_CALLBACK_URL',
    flag: { name: 'callback-url', value: 'URL' },
    default: 'none: a target on this machine reaches a key server the kit runs on loopback; a target elsewhere is not examined for fetching key URLs',
    doc: 'A URL at which the target reaches the kit (e.g. http://10.0.0.5:8123): the jku and x5u tokens name key URLs under it, and a fetch the kit sees there is AUTH-KEY-URL-NOT-FETCHED.',
  },
  {
    key: 'callback_listen',
    kind: 'listen',
    env: 'TMI_CALLBACK_LISTEN',
    flag: { name: 'callback-listen', value: 'HOST:PORT' },
    default: '0.0.0.0 and the port of callback_url (80 or 443 when it names none)',
    doc: 'Where the kit listens for the requests to callback_url: the address and port callback_url is mapped to.',
  },
  {
    key: 'credentials',
    kind: 'credentials',
    env: 'TMI_<PROFILE>_CLIENT_ID, TMI_<PROFILE>_CLIENT_SECRET, TMI_<PROFILE>_TOKEN (PROFILE: FULL, NO_SCOPE, NON_GLOBAL, OTHER_AUDIENCE, NOT_YET_VALID); TMI_OTHER_AUDIENCE_AUDIENCE; TMI_EXPIRED_TOKEN',
    doc: 'Token profiles (full, no_scope, non_global), each client credentials or a static token; an expired token of the tenant for the expiry attack; and the optional claim profiles other_audience (a client and the audience of another API of the tenant, or a token) and not_yet_valid (a client or a token whose nbf lies ahead), whose tokens every operation must refuse; never on a command line.',
  },
  {
    key: 'fixtures.sessions',
    kind: 'sessions',
    env: 'TMI_SESSIONS',
    doc: 'Sessions the suite may update, each {id, session_metadata} (restored at the end) or an id alone (left alone unless allow_destructive: then tested and left cleared); the environment gives ids, comma-separated.',
  },
  {
    key: 'fixtures.resource_servers',
    kind: 'ids',
    env: 'TMI_RESOURCE_SERVERS',
    doc: 'Resource server ids (read only); comma-separated in the environment.',
  },
  {
    key: 'fixtures.token_exchange_profiles',
    kind: 'ids',
    env: 'TMI_TOKEN_EXCHANGE_PROFILES',
    doc: 'Disposable token exchange profiles: the suite deletes them (with allow_destructive); when the delete answers 404 to every id that exists nowhere, the preflight sends the last one a DELETE without a token, which a conforming target refuses; comma-separated in the environment.',
  },
  {
    key: 'allow_destructive',
    kind: 'switch',
    env: 'TMI_ALLOW_DESTRUCTIVE',
    flag: { name: 'allow-destructive' },
    default: 'false',
    doc: 'May the suite delete the listed token exchange profiles and test sessions given by id only? Without it delete tests are skipped.',
  },
  {
    key: 'rate_limit_probe',
    kind: 'switch',
    env: 'TMI_RATE_LIMIT_PROBE',
    flag: { name: 'rate-limit-probe' },
    default: 'false',
    doc: 'May the suite provoke a 429 on purpose (a bounded burst)?',
  },
  {
    key: 'property_runs',
    kind: 'integer',
    env: 'TMI_PROPERTY_RUNS',
    flag: { name: 'property-runs', value: 'N' },
    range: { min: 1, max: 1000 },
    default: '25',
    doc: 'Random runs of each property-based test, after its named edge cases, which always run.',
  },
  {
    key: 'seed',
    kind: 'integer',
    env: 'TMI_SEED',
    flag: { name: 'seed', value: 'N' },
    range: { min: 0, max: 4294967295 },
    default: 'a new seed per run, printed and recorded in report.json',
    doc: 'Seed of the generated inputs: the same seed generates the same inputs, so a failure can be replayed.',
  },
  {
    key: 'probe_max_requests',
    kind: 'integer',
    env: 'TMI_PROBE_MAX_REQUESTS',
    flag: { name: 'probe-max-requests', value: 'N' },
    range: { min: 1, max: 10000 },
    default: '1200',
    doc: 'Most requests the rate-limit probe may send.',
  },
  {
    key: 'request_timeout_ms',
    kind: 'integer',
    env: 'TMI_REQUEST_TIMEOUT_MS',
    flag: { name: 'request-timeout-ms', value: 'MS' },
    range: { min: 100, max: 600000 },
    default: '10000',
    doc: 'Timeout of one request, in milliseconds.',
  },
  {
    key: 'coverage',
    kind: 'coverage',
    env: 'TMI_MIN_COVERAGE',
    flag: { name: 'min-coverage', value: 'N|PART=N,…' },
    doc: "Least coverage the run must reach, else exit 1: N % of the document's requirements examined, or PART=N,… for document, responses, values and operations.",
  },
];

/** The key's description in the schema and the docs: its line, its default, and where else it can come from. */
export function describeConfigKey(key: ConfigKey): string {
  const where = [`Env ${key.env}`, ...(key.flag ? [`flag --${key.flag.name}`] : [])].join(', ');
  return `${key.doc}${key.default !== undefined ? ` Default: ${key.default}.` : ''} ${where}.`;
}
