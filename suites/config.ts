import { readFile } from 'node:fs/promises';
import type { ErrorObject, ValidateFunction } from 'ajv';
import { parseDocument, type YAMLError } from 'yaml';
import { UsageError } from '../core/errors.ts';
import { urlProblem } from '../core/url.ts';
import { createAjv } from '../rules/schemas.ts';
import { once } from '../core/memo.ts';
import { CONFIG_KEYS, type ConfigKey } from './config-keys.ts';
import { configSchema } from './config-schema.ts';

export const PROFILES = ['full', 'no_scope', 'non_global'] as const;
export type Profile = (typeof PROFILES)[number];

/**
 * The claim profiles: tokens the tenant itself signs that a verifier must still refuse, one for
 * another of its APIs and one not valid yet. Optional: without one, what it examines is not.
 */
export const CLAIM_PROFILES = ['other_audience', 'not_yet_valid'] as const;
export type ClaimProfile = (typeof CLAIM_PROFILES)[number];
/** Every profile the run may hold a token of. */
export type TokenProfile = Profile | ClaimProfile;

/** Client credentials (asking for `audience` when given, else the run's) or a static token. */
export type Credential = { client_id: string; client_secret: string; audience?: string } | { token: string };

export interface SessionFixture {
  id: string;
  /**
   * What the run puts back at its end: the session's metadata before the run. Undefined when
   * unknown and allow_destructive is off (the suite leaves the session alone).
   */
  original?: { session_metadata: Record<string, string> | null };
  /**
   * Given by id only, with allow_destructive: its metadata cannot be read without changing it, so
   * it is tested too and left with none (original is { session_metadata: null }).
   */
  leftCleared?: true;
}

/** The resolved configuration every suite reads. */
export interface SuiteConfig {
  baseUrl: string;
  authUrl: string;
  /**
   * Where client credentials tokens are asked for, in order: the document's
   * {authUrl}/oauth/token/, then the same path without the trailing slash (a tenant may serve
   * only that); only token_url when it is given.
   */
  tokenUrls: string[];
  audience: string;
  /** The issuer the tenant's tokens carry, as configured; undefined: learned from the tenant (keys/tenant.ts) or not judged. */
  issuer?: string;
  /** The tenant's JSON Web Key Set: an http(s) URL or a file. Used when given (jwksUrlGiven); otherwise the keys are found as keys/tenant.ts says. */
  jwksUrl: string;
  /** jwks_url was given (flag, environment or file): a set that cannot be read is a usage error, not a note. */
  jwksUrlGiven: boolean;
  credentials: Partial<Record<TokenProfile, Credential>>;
  /** A token of the tenant that has expired, for the expiry attack; undefined: that attack is skipped. */
  expiredToken?: string;
  /** callback_url and where the kit listens for it (callback_listen); undefined: key URLs are served on loopback, for a target on this machine only. */
  callback?: { url: string; host: string; port: number };
  fixtures: { sessions: SessionFixture[]; resourceServers: string[]; tokenExchangeProfiles: string[] };
  allowDestructive: boolean;
  rateLimitProbe: boolean;
  propertyRuns: number;
  /** Seed of the generated inputs (fast-check): the same seed generates the same inputs again. */
  seed: number;
  probeMaxRequests: number;
  requestTimeoutMs: number;
}

/** The file format (snake_case keys, as users write them). */
export interface RawConfig {
  base_url?: string;
  auth_url?: string;
  token_url?: string;
  audience?: string;
  issuer?: string;
  jwks_url?: string;
  callback_url?: string;
  callback_listen?: string;
  credentials?: Partial<Record<TokenProfile, Credential>> & { expired?: { token: string } };
  fixtures?: {
    sessions?: Array<string | { id: string; session_metadata: Record<string, string> | null }>;
    resource_servers?: string[];
    token_exchange_profiles?: string[];
  };
  allow_destructive?: boolean;
  rate_limit_probe?: boolean;
  property_runs?: number;
  seed?: number;
  probe_max_requests?: number;
  request_timeout_ms?: number;
  /** The coverage gate (cli/coverage-option.ts reads it): a percentage, or PART=N,…. */
  coverage?: number | string;
}

/** The defaults of the numeric keys, as their declarations say them (suites/config-keys.ts). */
const numericDefault = (name: string): number => Number(CONFIG_KEYS.find((k) => k.key === name)!.default);
export const DEFAULTS = {
  propertyRuns: numericDefault('property_runs'),
  probeMaxRequests: numericDefault('probe_max_requests'),
  requestTimeoutMs: numericDefault('request_timeout_ms'),
} as const;

const configValidator = once((): ValidateFunction => createAjv().compile(configSchema()));
function validateRaw(raw: unknown): ErrorObject[] {
  const validator = configValidator();
  return validator(raw) ? [] : [...(validator.errors ?? [])];
}

const ALTERNATIVES: Array<[RegExp, string]> = [
  [/^\/credentials\/other_audience$/, 'expected {client_id, client_secret, audience} or {token}'],
  [/^\/credentials\/[^/]+$/, 'expected {client_id, client_secret} or {token}'],
  [/^\/fixtures\/sessions\/\d+$/, 'expected a session id or {id, session_metadata}'],
];

/** Where a layer came from, and how the user wrote each of its keys there. */
interface Layer {
  /** "config tmi.yaml", "environment (TMI_*)", "flags". */
  where: string;
  /** The key as the user typed it in this layer: `key "base_url"`, TMI_BASE_URL, --base-url. */
  nameOf(key: ConfigKey): string;
}

const FILE_LAYER = (path: string): Layer => ({ where: `config ${path}`, nameOf: (key) => `config ${path}: key "${key.key}"` });
const ENV_LAYER: Layer = { where: 'environment (TMI_*)', nameOf: (key) => key.env };
const FLAG_LAYER: Layer = { where: 'flags', nameOf: (key) => (key.flag ? `--${key.flag.name}` : `key "${key.key}"`) };

/** What a valid value of the key looks like, in words, with an example where one helps. */
function validValue(key: ConfigKey, given: unknown): string {
  switch (key.kind) {
    case 'url':
      // The commonest slip: a host and port without the scheme.
      return typeof given === 'string' && !/^[a-z][a-z0-9+.-]*:\/\//i.test(given)
        ? `an http(s) URL with its scheme, e.g. http://${given}`
        : 'an http(s) URL, e.g. https://tenant.example.com/api/v2';
    case 'integer':
      return `a whole number from ${key.range!.min} to ${key.range!.max}${key.default !== undefined ? ` (default ${key.default})` : ''}`;
    case 'listen':
      return 'HOST:PORT, e.g. 0.0.0.0:8123';
    case 'switch':
      return 'true or false';
    case 'ids':
      return 'a list of ids';
    case 'coverage':
      return 'a percentage (0 to 100), or PART=N,… with PART one of document, responses, values, operations';
    default:
      return 'a non-empty text';
  }
}

/** The value at an ajv instance path of the layer. */
function valueAt(raw: unknown, instancePath: string): unknown {
  let value = raw;
  for (const part of instancePath.split('/').slice(1)) value = (value as Record<string, unknown> | undefined)?.[part];
  return value;
}

/** The key declared at an ajv instance path ("/fixtures/sessions"). */
const keyAt = (instancePath: string): ConfigKey | undefined => CONFIG_KEYS.find((key) => `/${key.key.replace('.', '/')}` === instancePath);

/** One line for the first thing wrong in a layer, naming the key as the user wrote it, the value, and what a valid one is. */
export function describeConfigErrors(errors: ErrorObject[], raw: unknown, layer: Layer): string {
  const path = (instancePath: string) => (instancePath === '' ? '(top level)' : instancePath.slice(1).replace(/\//g, '.'));
  const oneOf = errors.find((e) => e.keyword === 'oneOf');
  if (oneOf) {
    const hint = ALTERNATIVES.find(([pattern]) => pattern.test(oneOf.instancePath))?.[1] ?? 'has the wrong shape';
    return `${layer.where}: key "${path(oneOf.instancePath)}": ${hint}`;
  }
  const first = errors.find((e) => e.keyword === 'additionalProperties') ?? errors[0]!;
  if (first.keyword === 'additionalProperties') {
    const name = (first.params as { additionalProperty: string }).additionalProperty;
    return `${layer.where}: unknown key "${first.instancePath === '' ? name : `${path(first.instancePath)}.${name}`}"`;
  }
  if (first.keyword === 'type' && first.instancePath === '') return `${layer.where}: expected a mapping of keys (see schemas/conformance.schema.json)`;
  const key = keyAt(first.instancePath);
  if (key === undefined) return `${layer.where}: key "${path(first.instancePath)}": ${first.message ?? 'is invalid'}`;
  const given = valueAt(raw, first.instancePath);
  return `${layer.nameOf(key)}: ${JSON.stringify(given)} is not ${validValue(key, given)}`;
}

function checkLayer(raw: unknown, layer: Layer): RawConfig {
  const errors = validateRaw(raw);
  if (errors.length > 0) throw new UsageError(`run: ${describeConfigErrors(errors, raw, layer)}`);
  const config = raw as RawConfig;
  // The schema checks the scheme only; a URL must also parse (a port above 65535 does not).
  // The schema checks the shape; a port must also be one.
  if (config.callback_listen !== undefined && listenAddress(config.callback_listen) === undefined) {
    throw new UsageError(
      `run: ${layer.nameOf(keyAt('/callback_listen')!)}: ${JSON.stringify(config.callback_listen)} is not HOST:PORT with a port up to 65535`,
    );
  }
  for (const name of ['base_url', 'auth_url', 'jwks_url', 'callback_url'] as const) {
    const value = config[name];
    if (value === undefined || !/^https?:\/\//i.test(value)) continue; // jwks_url may be a file
    const problem = urlProblem(value);
    if (problem !== undefined) throw new UsageError(`run: ${layer.nameOf(keyAt(`/${name}`)!)}: ${problem} in "${value}"`);
  }
  return config;
}

export async function readConfigFile(path: string): Promise<RawConfig> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new UsageError(`run: config ${path}: cannot read it (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
  }
  // Silent: the yaml package would print its warnings (an unknown tag) as a Node warning of several lines.
  const document = parseDocument(text, { logLevel: 'silent' });
  const [error] = document.errors;
  if (error) throw new UsageError(`run: config ${path}: not valid YAML${lineOf(error)} (${firstSentence(error)})`);
  const [warning] = document.warnings;
  if (warning) {
    const tag = /^Unresolved tag: (\S+)/.exec(warning.message)?.[1];
    // A tag asks for something plain YAML does not hold (!!js/function, !Ref): the file is data only.
    if (tag !== undefined)
      throw new UsageError(
        `run: config ${path}: unknown tag ${tag.replace(/^tag:yaml\.org,2002:/, '!!')}${lineOf(warning)} (the config is plain YAML, without tags)`,
      );
    throw new UsageError(`run: config ${path}: ${firstSentence(warning)}${lineOf(warning)}`);
  }
  return checkLayer(document.toJS() ?? {}, FILE_LAYER(path));
}

/** " at line 3", where the yaml package placed a problem; empty when it did not. */
const lineOf = (problem: YAMLError): string => (problem.linePos ? ` at line ${problem.linePos[0].line}` : '');

/** The yaml package's message without its position and the excerpt it appends. */
const firstSentence = (problem: YAMLError): string => problem.message.split('\n', 1)[0]!.replace(/ at line \d+, column \d+:?$/, '');

const ENV_PROFILE: Record<TokenProfile, string> = {
  full: 'FULL',
  no_scope: 'NO_SCOPE',
  non_global: 'NON_GLOBAL',
  other_audience: 'OTHER_AUDIENCE',
  not_yet_valid: 'NOT_YET_VALID',
};

/** A value as a flag or the environment gives it (text, or true for a switch that is set), read as its key's kind says. */
function readValue(key: ConfigKey, text: string | true, where: string): unknown {
  switch (key.kind) {
    case 'switch':
      if (text === true || /^(1|true|yes)$/i.test(text)) return true;
      if (/^(0|false|no)$/i.test(text)) return false;
      throw new UsageError(`run: ${where}: ${JSON.stringify(text)} is not ${validValue(key, text)}`);
    case 'integer':
      if (text === true || !/^\d{1,10}$/.test(text)) throw new UsageError(`run: ${where}: ${JSON.stringify(text)} is not ${validValue(key, text)}`);
      return Number(text);
    case 'ids':
    case 'sessions':
      return String(text)
        .split(',')
        .map((s) => s.trim())
        .filter((s) => s !== '');
    default:
      return text;
  }
}

/** Sets `key` (a dotted path: fixtures.resource_servers) in a config layer. */
function setKey(raw: Record<string, unknown>, key: string, value: unknown): void {
  const [first, nested] = key.split('.') as [string, string | undefined];
  if (nested === undefined) raw[first] = value;
  else ((raw[first] ??= {}) as Record<string, unknown>)[nested] = value;
}

function credentialsFromEnv(env: NodeJS.ProcessEnv): RawConfig['credentials'] | undefined {
  let credentials: RawConfig['credentials'];
  for (const profile of [...PROFILES, ...CLAIM_PROFILES]) {
    const prefix = `TMI_${ENV_PROFILE[profile]}_`;
    const token = env[`${prefix}TOKEN`];
    const id = env[`${prefix}CLIENT_ID`];
    const secret = env[`${prefix}CLIENT_SECRET`];
    // Only the other_audience client asks for an audience of its own (TMI_OTHER_AUDIENCE_AUDIENCE).
    const audience = profile === 'other_audience' ? env[`${prefix}AUDIENCE`] : undefined;
    if (token) (credentials ??= {})[profile] = { token };
    else if (id || secret || audience) (credentials ??= {})[profile] = { client_id: id ?? '', client_secret: secret ?? '', ...(audience ? { audience } : {}) };
  }
  if (env['TMI_EXPIRED_TOKEN']) (credentials ??= {}).expired = { token: env['TMI_EXPIRED_TOKEN'] };
  return credentials;
}

/** The TMI_* environment variables as a config layer: one per key (suites/config-keys.ts). */
export function configFromEnv(env: NodeJS.ProcessEnv): RawConfig {
  const raw: Record<string, unknown> = {};
  for (const key of CONFIG_KEYS) {
    if (key.kind === 'credentials') {
      const credentials = credentialsFromEnv(env);
      if (credentials) raw['credentials'] = credentials;
      continue;
    }
    const text = env[key.env];
    if (text !== undefined && text !== '') setKey(raw, key.key, readValue(key, text, key.env));
  }
  return checkLayer(raw, ENV_LAYER);
}

/** The run's flags as a config layer: `flag(name)` gives a flag's text, true for a switch that is set, or undefined. */
export function configFromFlags(flag: (name: string) => string | true | undefined): RawConfig {
  const raw: Record<string, unknown> = {};
  for (const key of CONFIG_KEYS) {
    if (!key.flag) continue;
    const given = flag(key.flag.name);
    if (given !== undefined) setKey(raw, key.key, readValue(key, given, `--${key.flag.name}`));
  }
  return checkLayer(raw, FLAG_LAYER);
}

/** Later layers win; credentials and fixtures merge key by key. */
export function mergeConfig(...layers: RawConfig[]): RawConfig {
  const merged: RawConfig = {};
  for (const layer of layers) {
    const { credentials, fixtures, ...rest } = layer;
    Object.assign(merged, rest);
    if (credentials) merged.credentials = { ...merged.credentials, ...credentials };
    if (fixtures) merged.fixtures = { ...merged.fixtures, ...fixtures };
  }
  return merged;
}

/**
 * Credentials or fixtures without a base_url are for an implementation the user did not name: a
 * usage error, said before the embedded reference starts, never a run with them dropped.
 */
export function refuseTargetKeysWithoutBaseUrl(raw: RawConfig, who: string): void {
  if (raw.base_url === undefined && (raw.credentials || raw.fixtures))
    throw new UsageError(`${who}: credentials or fixtures are configured but no base_url: say which implementation they are for`);
}

/** A run with no base_url goes to the embedded reference: its configuration, with what the user set about the run itself. */
export function embeddedReferenceConfig(reference: RawConfig, raw: RawConfig): SuiteConfig {
  const { base_url: _b, auth_url: _a, token_url: _t, audience: _u, credentials: _c, fixtures: _f, ...runOptions } = raw;
  return resolveConfig(mergeConfig(reference, runOptions));
}

/** A seed for a run that was given none; printed and recorded, so the run can be replayed. */
export const newSeed = (): number => Math.floor(Math.random() * 0x80000000);

/** HOST:PORT (an IPv6 host in brackets), or undefined when it is not one. */
function listenAddress(text: string): { host: string; port: number } | undefined {
  const match = /^(\[[^\]]+\]|[^:\s]+):(\d{1,5})$/.exec(text);
  if (!match || Number(match[2]) > 65535) return undefined;
  return { host: match[1]!.replace(/^\[|\]$/g, ''), port: Number(match[2]) };
}

/** callback_url with where to listen for it: callback_listen, else every address at callback_url's port. */
function callbackOf(raw: RawConfig): SuiteConfig['callback'] {
  if (raw.callback_url === undefined) {
    if (raw.callback_listen !== undefined)
      throw new UsageError('run: callback_listen is set but callback_url is not: say at which URL the target reaches the kit');
    return undefined;
  }
  const url = new URL(raw.callback_url);
  const listen =
    raw.callback_listen !== undefined
      ? listenAddress(raw.callback_listen)!
      : { host: '0.0.0.0', port: Number(url.port || (url.protocol === 'https:' ? 443 : 80)) };
  return { url: raw.callback_url.replace(/\/+$/, ''), ...listen };
}

/** The resolved configuration; base_url must be known by now. */
export function resolveConfig(raw: RawConfig): SuiteConfig {
  if (!raw.base_url) throw new UsageError('run: no base_url (give --base-url, TMI_BASE_URL or base_url in the config file)');
  const baseUrl = raw.base_url.replace(/\/+$/, '');
  const { expired, ...credentials } = raw.credentials ?? {};
  const authUrl = (raw.auth_url ?? new URL(baseUrl).origin).replace(/\/+$/, '');
  const callback = callbackOf(raw);
  return {
    baseUrl,
    authUrl,
    tokenUrls: raw.token_url !== undefined ? [raw.token_url] : [`${authUrl}/oauth/token/`, `${authUrl}/oauth/token`],
    audience: raw.audience ?? `${baseUrl}/`,
    ...(raw.issuer !== undefined ? { issuer: raw.issuer } : {}),
    jwksUrl: raw.jwks_url ?? `${authUrl}/.well-known/jwks.json`,
    jwksUrlGiven: raw.jwks_url !== undefined,
    credentials,
    ...(expired ? { expiredToken: expired.token } : {}),
    ...(callback !== undefined ? { callback } : {}),
    fixtures: {
      sessions: (raw.fixtures?.sessions ?? []).map((s): SessionFixture => {
        if (typeof s !== 'string') return { id: s.id, original: { session_metadata: s.session_metadata } };
        return raw.allow_destructive ? { id: s, original: { session_metadata: null }, leftCleared: true } : { id: s };
      }),
      resourceServers: raw.fixtures?.resource_servers ?? [],
      tokenExchangeProfiles: raw.fixtures?.token_exchange_profiles ?? [],
    },
    allowDestructive: raw.allow_destructive ?? false,
    rateLimitProbe: raw.rate_limit_probe ?? false,
    propertyRuns: raw.property_runs ?? DEFAULTS.propertyRuns,
    seed: raw.seed ?? newSeed(),
    probeMaxRequests: raw.probe_max_requests ?? DEFAULTS.probeMaxRequests,
    requestTimeoutMs: raw.request_timeout_ms ?? DEFAULTS.requestTimeoutMs,
  };
}
