// schemas/conformance.schema.json, made from the table of keys (suites/config-keys.ts): the run
// validates every layer of its configuration against this, and the file holds the same for
// editors and users (test/config-keys.test.ts fails when they differ). Written with:
//   node --import tsx suites/config-schema.ts > schemas/conformance.schema.json
import { CONFIG_KEYS, describeConfigKey, type ConfigKey } from './config-keys.ts';

type Schema = Record<string, unknown>;

const nonEmpty: Schema = { type: 'string', minLength: 1 };

/** A token profile: client credentials or a static token. */
const PROFILE: Schema = {
  oneOf: [
    { type: 'object', additionalProperties: false, required: ['client_id', 'client_secret'], properties: { client_id: nonEmpty, client_secret: nonEmpty } },
    { type: 'object', additionalProperties: false, required: ['token'], properties: { token: nonEmpty } },
  ],
};

/** The token profiles the suites use, and the tokens the user gives for the claim attacks. */
const CREDENTIALS: Schema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    full: { $ref: '#/$defs/profile', description: 'A global client holding the scopes the operations need.' },
    no_scope: { $ref: '#/$defs/profile', description: 'A global client WITHOUT delete:token_exchange_profiles.' },
    non_global: { $ref: '#/$defs/profile', description: 'A client that is not global.' },
    expired: {
      type: 'object',
      additionalProperties: false,
      required: ['token'],
      properties: { token: nonEmpty },
      description: 'A token the tenant issued that has since expired: the suites check that it is refused. Without it the expiry attack is skipped.',
    },
    other_audience: {
      oneOf: [
        {
          type: 'object',
          additionalProperties: false,
          required: ['client_id', 'client_secret', 'audience'],
          properties: { client_id: nonEmpty, client_secret: nonEmpty, audience: nonEmpty },
        },
        { type: 'object', additionalProperties: false, required: ['token'], properties: { token: nonEmpty } },
      ],
      description:
        'A token the tenant signs for another of its APIs: a client and the audience of that API (the token is asked for at each run), or the token itself. The suites check that every operation refuses it (AUTH-AUDIENCE-401); without it that is not examined.',
    },
    not_yet_valid: {
      $ref: '#/$defs/profile',
      description:
        'A token the tenant signs whose nbf lies ahead: a client whose tokens are not valid yet, or the token itself. The suites check that every operation refuses it (AUTH-NOT-BEFORE-401); without it that is not examined.',
    },
  },
};

function shapeOf(key: ConfigKey): Schema {
  switch (key.kind) {
    case 'url':
      return { type: 'string', format: 'uri', pattern: '^https?://' };
    case 'url-or-file':
    case 'text':
      return { ...nonEmpty };
    case 'listen':
      return { type: 'string', pattern: '^(\\[[^\\]]+\\]|[^:\\s\\[\\]]+):\\d{1,5}$' };
    case 'switch':
      return { type: 'boolean' };
    case 'coverage':
      return {
        oneOf: [
          { type: 'number', minimum: 0, maximum: 100 },
          {
            type: 'string',
            pattern:
              '^\\s*((document|responses|values|operations)\\s*=\\s*)?\\d+(\\.\\d+)?\\s*(,\\s*(document|responses|values|operations)\\s*=\\s*\\d+(\\.\\d+)?\\s*)*$',
          },
        ],
      };
    case 'integer':
      return { type: 'integer', minimum: key.range!.min, maximum: key.range!.max };
    case 'ids':
      return { type: 'array', items: nonEmpty };
    case 'sessions':
      return {
        type: 'array',
        items: {
          oneOf: [
            nonEmpty,
            {
              type: 'object',
              additionalProperties: false,
              required: ['id', 'session_metadata'],
              properties: { id: nonEmpty, session_metadata: { type: ['object', 'null'], additionalProperties: { type: 'string' } } },
            },
          ],
        },
      };
    case 'credentials':
      return CREDENTIALS;
  }
}

export function configSchema(): Schema {
  const properties: Record<string, Schema> = {};
  for (const key of CONFIG_KEYS) {
    const [first, nested] = key.key.split('.') as [string, string | undefined];
    const property = { ...shapeOf(key), description: describeConfigKey(key) };
    if (nested === undefined) {
      properties[first] = property;
      continue;
    }
    const parent = (properties[first] ??= { type: 'object', additionalProperties: false, properties: {} }) as { properties: Record<string, Schema> };
    parent.properties[nested] = property;
  }
  return {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    $id: 'https://tmi-conform.dev/schemas/conformance.schema.json',
    title: 'tmi-conform configuration',
    description:
      'Configuration of `tmi-conform run` (YAML). Every key can also come from an environment variable, most from a flag (flag > environment > file). A missing profile or fixture skips the tests that need it.',
    type: 'object',
    additionalProperties: false,
    properties,
    $defs: { profile: PROFILE },
  };
}

// module-state: run as a script, the module writes the schema file (docs/architecture.md, Configuration).
if (import.meta.url === `file://${process.argv[1]}`) process.stdout.write(`${JSON.stringify(configSchema(), null, 2)}\n`);
