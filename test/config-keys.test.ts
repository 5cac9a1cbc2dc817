// Every configuration key is declared once (suites/config-keys.ts), and everything else is made
// from that declaration: a YAML key the schema accepts, an environment variable and (where there
// is one) a flag that set it, a default, a documented line in --help and in the schema. A key
// missing any of these fails here.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { help } from '../cli/run.ts';
import { packageRoot } from '../core/paths.ts';
import { CONFIG_KEYS, describeConfigKey, type ConfigKey } from '../suites/config-keys.ts';
import { configSchema } from '../suites/config-schema.ts';
import { configFromEnv, configFromFlags, mergeConfig, resolveConfig, type RawConfig } from '../suites/config.ts';

/** A value of the key's kind, as text (what an environment variable or a flag carries), and as the file holds it. */
function sample(key: ConfigKey): { text: string; value: unknown } {
  switch (key.kind) {
    case 'url':
      return { text: 'https://tenant.example.com/api/v2', value: 'https://tenant.example.com/api/v2' };
    case 'url-or-file':
    case 'text':
      return { text: 'some-value', value: 'some-value' };
    case 'listen':
      return { text: '127.0.0.1:8123', value: '127.0.0.1:8123' };
    case 'switch':
      return { text: 'true', value: true };
    case 'integer':
      return { text: String(key.range!.max), value: key.range!.max };
    case 'ids':
    case 'sessions':
      return { text: 'a, b', value: ['a', 'b'] };
    case 'credentials':
      return { text: 'eyJ.a.b', value: { full: { token: 'eyJ.a.b' } } };
    case 'coverage':
      return { text: 'document=90,operations=100', value: 'document=90,operations=100' };
  }
}

const valueAt = (raw: RawConfig, key: string): unknown =>
  key.split('.').reduce<unknown>((at, part) => (at as Record<string, unknown> | undefined)?.[part], raw);
const schemaAt = (key: string): Record<string, unknown> | undefined => {
  const [first, nested] = key.split('.') as [string, string | undefined];
  const properties = configSchema()['properties'] as Record<string, { properties?: Record<string, unknown> }>;
  return (nested === undefined ? properties[first] : properties[first]?.properties?.[nested]) as Record<string, unknown> | undefined;
};

describe('the table of configuration keys', () => {
  it('declares each key once, each with its own environment variable and flag', () => {
    const keys = CONFIG_KEYS.map((k) => k.key);
    expect(new Set(keys).size).toBe(keys.length);
    const envs = CONFIG_KEYS.map((k) => k.env);
    expect(new Set(envs).size).toBe(envs.length);
    const flags = CONFIG_KEYS.flatMap((k) => (k.flag ? [k.flag.name] : []));
    expect(new Set(flags).size).toBe(flags.length);
    expect(CONFIG_KEYS.every((k) => k.env.startsWith('TMI_') && k.doc.length > 10)).toBe(true);
  });

  it.each(CONFIG_KEYS.map((k) => [k.key, k] as const))('%s: the environment sets it', (_name, key) => {
    const { text, value } = sample(key);
    const env = key.kind === 'credentials' ? { TMI_FULL_TOKEN: text } : { [key.env]: text };
    expect(valueAt(configFromEnv(env), key.key)).toEqual(value);
  });

  it.each(CONFIG_KEYS.filter((k) => k.flag).map((k) => [k.key, k] as const))('%s: its flag sets it', (_name, key) => {
    const { text, value } = sample(key);
    const given = key.kind === 'switch' ? true : text;
    expect(
      valueAt(
        configFromFlags((name) => (name === key.flag!.name ? given : undefined)),
        key.key,
      ),
    ).toEqual(value);
  });

  it('keys without a flag are secrets or structures, which stay off command lines', () => {
    expect(
      CONFIG_KEYS.filter((k) => !k.flag)
        .map((k) => k.kind)
        .sort(),
    ).toEqual(['credentials', 'ids', 'ids', 'sessions']);
  });

  it.each(CONFIG_KEYS.map((k) => [k.key, k] as const))('%s: documented in --help and in the schema, whose description is its line', (_name, key) => {
    expect(help).toContain(key.flag ? `--${key.flag.name}` : `  ${key.key}`);
    expect(help.replace(/\s+/g, ' ')).toContain(`env ${key.env}`);
    expect(schemaAt(key.key)?.['description']).toBe(describeConfigKey(key));
  });

  it('a numeric default is what a run gets when the key is not given', () => {
    const resolved = resolveConfig(mergeConfig({ base_url: 'https://t.example.com/api/v2' }));
    const byKey: Record<string, unknown> = {
      property_runs: resolved.propertyRuns,
      probe_max_requests: resolved.probeMaxRequests,
      request_timeout_ms: resolved.requestTimeoutMs,
    };
    for (const key of CONFIG_KEYS.filter((k) => k.kind === 'integer' && k.key in byKey)) expect(byKey[key.key], key.key).toBe(Number(key.default));
  });

  it('schemas/conformance.schema.json is the schema the table makes (node --import tsx suites/config-schema.ts > schemas/conformance.schema.json)', () => {
    expect(JSON.parse(readFileSync(join(packageRoot, 'schemas', 'conformance.schema.json'), 'utf8'))).toEqual(configSchema());
  });

  it('a value out of its range or of the wrong kind is refused, naming where it came from', () => {
    expect(() => configFromEnv({ TMI_REQUEST_TIMEOUT_MS: '5' })).toThrow(/^run: TMI_REQUEST_TIMEOUT_MS: 5 is not a whole number from 100 to /);
    expect(() => configFromEnv({ TMI_PROBE_MAX_REQUESTS: 'many' })).toThrow(/^run: TMI_PROBE_MAX_REQUESTS: "many" is not a whole number from 1 to /);
    expect(() => configFromFlags((name) => (name === 'property-runs' ? '0' : undefined))).toThrow(
      'run: --property-runs: 0 is not a whole number from 1 to 1000 (default 25)',
    );
  });
});
