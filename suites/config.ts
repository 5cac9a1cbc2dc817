// The configuration of a suite run (docs/architecture.md, "Configuration"): a YAML file, environment
// variables and flags, each layer validated against schemas/conformance.schema.json on its
// own (so an error names where it came from), then merged: flag > environment > file.
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ErrorObject, ValidateFunction } from 'ajv';
import { parseDocument, type YAMLError } from 'yaml';
import { UsageError } from '../core/errors.ts';
import { schemasDir } from '../core/paths.ts';
import { urlProblem } from '../core/url.ts';
import { createAjv } from '../rules/schemas.ts';
import { once } from '../core/memo.ts';

export const PROFILES = ['full', 'no_scope', 'non_global'] as const;
export type Profile = (typeof PROFILES)[number];

export type Credential = { client_id: string; client_secret: string } | { token: string };

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
  credentials: Partial<Record<Profile, Credential>>;
  /** A token of the tenant that has expired, for the expiry attack; undefined: that attack is skipped. */
  expiredToken?: string;
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
  credentials?: Partial<Record<Profile, Credential>> & { expired?: { token: string } };
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
}

export const DEFAULTS = { propertyRuns: 25, probeMaxRequests: 1200, requestTimeoutMs: 10_000 } as const;

const configValidator = once((): ValidateFunction => createAjv().compile(JSON.parse(readFileSync(join(schemasDir, 'conformance.schema.json'), 'utf8'))));
function validateRaw(raw: unknown): ErrorObject[] {
  const validator = configValidator();
  return validator(raw) ? [] : [...(validator.errors ?? [])];
}

const ALTERNATIVES: Array<[RegExp, string]> = [
  [/^\/credentials\/[^/]+$/, 'expected {client_id, client_secret} or {token}'],
  [/^\/fixtures\/sessions\/\d+$/, 'expected a session id or {id, session_metadata}'],
];

/** One line for the first thing wrong in a layer, naming the key. */
export function describeConfigErrors(errors: ErrorObject[]): string {
  const key = (path: string) => (path === '' ? '(top level)' : path.slice(1).replace(/\//g, '.'));
  const oneOf = errors.find((e) => e.keyword === 'oneOf');
  if (oneOf) {
    const hint = ALTERNATIVES.find(([pattern]) => pattern.test(oneOf.instancePath))?.[1] ?? 'has the wrong shape';
    return `key "${key(oneOf.instancePath)}": ${hint}`;
  }
  const first = errors.find((e) => e.keyword === 'additionalProperties') ?? errors[0]!;
  if (first.keyword === 'additionalProperties') {
    const name = (first.params as { additionalProperty: string }).additionalProperty;
    return `unknown key "${first.instancePath === '' ? name : `${key(first.instancePath)}.${name}`}"`;
  }
  if (first.keyword === 'type' && first.instancePath === '') return 'expected a mapping of keys (see schemas/conformance.schema.json)';
  return `key "${key(first.instancePath)}": ${first.message ?? 'is invalid'}`;
}

function checkLayer(raw: unknown, where: string): RawConfig {
  const errors = validateRaw(raw);
  if (errors.length > 0) throw new UsageError(`run: ${where}: ${describeConfigErrors(errors)}`);
  const config = raw as RawConfig;
  // The schema checks the scheme only; a URL must also parse (a port above 65535 does not).
  for (const key of ['base_url', 'auth_url', 'jwks_url'] as const) {
    const value = config[key];
    if (value === undefined || !/^https?:\/\//i.test(value)) continue; // jwks_url may be a file
    const problem = urlProblem(value);
    if (problem !== undefined) throw new UsageError(`run: ${where}: key "${key}": ${problem} in "${value}"`);
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
    if (tag !== undefined) throw new UsageError(`run: config ${path}: unknown tag ${tag.replace(/^tag:yaml\.org,2002:/, '!!')}${lineOf(warning)} (the config is plain YAML, without tags)`);
    throw new UsageError(`run: config ${path}: ${firstSentence(warning)}${lineOf(warning)}`);
  }
  return checkLayer(document.toJS() ?? {}, `config ${path}`);
}

/** " at line 3", where the yaml package placed a problem; empty when it did not. */
const lineOf = (problem: YAMLError): string => (problem.linePos ? ` at line ${problem.linePos[0].line}` : '');

/** The yaml package's message without its position and the excerpt it appends. */
const firstSentence = (problem: YAMLError): string => problem.message.split('\n', 1)[0]!.replace(/ at line \d+, column \d+:?$/, '');

const ENV_PROFILE: Record<Profile, string> = { full: 'FULL', no_scope: 'NO_SCOPE', non_global: 'NON_GLOBAL' };

function envBoolean(env: NodeJS.ProcessEnv, name: string): boolean | undefined {
  const value = env[name];
  if (value === undefined || value === '') return undefined;
  if (/^(1|true|yes)$/i.test(value)) return true;
  if (/^(0|false|no)$/i.test(value)) return false;
  throw new UsageError(`run: environment ${name}: expected true or false, got "${value}"`);
}

function envInteger(env: NodeJS.ProcessEnv, name: string): number | undefined {
  const value = env[name];
  if (value === undefined || value === '') return undefined;
  if (!/^\d+$/.test(value)) throw new UsageError(`run: environment ${name}: expected a whole number, got "${value}"`);
  return Number(value);
}

const envList = (env: NodeJS.ProcessEnv, name: string): string[] | undefined =>
  env[name] ? env[name]!.split(',').map((s) => s.trim()).filter((s) => s !== '') : undefined;

/** The TMI_* environment variables as a config layer. */
export function configFromEnv(env: NodeJS.ProcessEnv): RawConfig {
  const raw: RawConfig = {};
  if (env['TMI_BASE_URL']) raw.base_url = env['TMI_BASE_URL'];
  if (env['TMI_AUTH_URL']) raw.auth_url = env['TMI_AUTH_URL'];
  if (env['TMI_TOKEN_URL']) raw.token_url = env['TMI_TOKEN_URL'];
  if (env['TMI_AUDIENCE']) raw.audience = env['TMI_AUDIENCE'];
  if (env['TMI_ISSUER']) raw.issuer = env['TMI_ISSUER'];
  if (env['TMI_JWKS_URL']) raw.jwks_url = env['TMI_JWKS_URL'];
  for (const profile of PROFILES) {
    const prefix = `TMI_${ENV_PROFILE[profile]}_`;
    const token = env[`${prefix}TOKEN`];
    const id = env[`${prefix}CLIENT_ID`];
    const secret = env[`${prefix}CLIENT_SECRET`];
    if (token) (raw.credentials ??= {})[profile] = { token };
    else if (id || secret) (raw.credentials ??= {})[profile] = { client_id: id ?? '', client_secret: secret ?? '' };
  }
  if (env['TMI_EXPIRED_TOKEN']) (raw.credentials ??= {}).expired = { token: env['TMI_EXPIRED_TOKEN'] };
  const sessions = envList(env, 'TMI_SESSIONS');
  const resourceServers = envList(env, 'TMI_RESOURCE_SERVERS');
  const profiles = envList(env, 'TMI_TOKEN_EXCHANGE_PROFILES');
  if (sessions) (raw.fixtures ??= {}).sessions = sessions;
  if (resourceServers) (raw.fixtures ??= {}).resource_servers = resourceServers;
  if (profiles) (raw.fixtures ??= {}).token_exchange_profiles = profiles;
  const destructive = envBoolean(env, 'TMI_ALLOW_DESTRUCTIVE');
  if (destructive !== undefined) raw.allow_destructive = destructive;
  const probe = envBoolean(env, 'TMI_RATE_LIMIT_PROBE');
  if (probe !== undefined) raw.rate_limit_probe = probe;
  const runs = envInteger(env, 'TMI_PROPERTY_RUNS');
  if (runs !== undefined) raw.property_runs = runs;
  const seed = envInteger(env, 'TMI_SEED');
  if (seed !== undefined) raw.seed = seed;
  return checkLayer(raw, 'environment (TMI_*)');
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

/** Validates a layer built from flags (the caller parsed them). */
export const configFromFlags = (raw: RawConfig): RawConfig => checkLayer(raw, 'flags');

/** A seed for a run that was given none; printed and recorded, so the run can be replayed. */
export const newSeed = (): number => Math.floor(Math.random() * 0x80000000);

/** The resolved configuration; base_url must be known by now. */
export function resolveConfig(raw: RawConfig): SuiteConfig {
  if (!raw.base_url) throw new UsageError('run: no base_url (give --base-url, TMI_BASE_URL or base_url in the config file)');
  const baseUrl = raw.base_url.replace(/\/+$/, '');
  const { expired, ...credentials } = raw.credentials ?? {};
  const authUrl = (raw.auth_url ?? new URL(baseUrl).origin).replace(/\/+$/, '');
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
