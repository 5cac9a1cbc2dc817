// fast-check arbitraries derived from the document's JSON Schemas: documents that satisfy a
// schema, and the session_metadata the update accepts or must refuse, with the limits read
// from the schema rather than written again here.
import fc from 'fast-check';
import { loadSchema } from '../rules/schemas.ts';

type Schema = Record<string, unknown>;

/** A schema with the constraints of its allOf folded in (the kit's schemas use allOf only to annotate a constraint). */
function folded(schema: Schema): Schema {
  const { allOf, ...rest } = schema;
  if (!Array.isArray(allOf)) return rest;
  const into: Schema = { ...rest };
  for (const part of allOf as Schema[]) Object.assign(into, folded(part));
  return into;
}

const safeKey = fc.string({ minLength: 1, maxLength: 24 }).filter((k) => k !== '__proto__');

function stringArbitrary(schema: Schema): fc.Arbitrary<string> {
  if (schema['format'] === 'date-time')
    return fc.date({ min: new Date('2000-01-01T00:00:00Z'), max: new Date('2099-12-31T23:59:59Z'), noInvalidDate: true }).map((d) => d.toISOString());
  const constraints: fc.StringConstraints = { unit: 'grapheme' };
  if (typeof schema['minLength'] === 'number') constraints.minLength = schema['minLength'];
  if (typeof schema['maxLength'] === 'number') constraints.maxLength = schema['maxLength'];
  const strings = fc.string(constraints);
  if (typeof schema['pattern'] !== 'string') return strings;
  const pattern = new RegExp(schema['pattern'], 'u');
  return strings.filter((s) => pattern.test(s));
}

/** Documents valid against `schema` (the subset of JSON Schema the kit's schemas use). */
export function arbitraryFromSchema(input: Schema): fc.Arbitrary<unknown> {
  const schema = folded(input);
  if ('const' in schema) return fc.constant(schema['const']);
  if (Array.isArray(schema['enum'])) return fc.constantFrom(...(schema['enum'] as unknown[]));
  const types = Array.isArray(schema['type'])
    ? (schema['type'] as string[])
    : typeof schema['type'] === 'string'
      ? [schema['type'] as string]
      : ['string', 'integer', 'boolean', 'null'];
  return fc.oneof(...types.map((type) => arbitraryOfType(type, schema)));
}

function arbitraryOfType(type: string, schema: Schema): fc.Arbitrary<unknown> {
  switch (type) {
    case 'null':
      return fc.constant(null);
    case 'boolean':
      return fc.boolean();
    case 'integer':
      return fc.integer({
        min: typeof schema['minimum'] === 'number' ? schema['minimum'] : -1_000_000,
        max: typeof schema['maximum'] === 'number' ? schema['maximum'] : 1_000_000,
      });
    case 'number':
      return fc.double({ noNaN: true, noDefaultInfinity: true });
    case 'string':
      return stringArbitrary(schema);
    case 'array':
      return fc.array(schema['items'] ? arbitraryFromSchema(schema['items'] as Schema) : fc.jsonValue(), { maxLength: 4 });
    case 'object': {
      const properties = (schema['properties'] ?? {}) as Record<string, Schema>;
      const additional = schema['additionalProperties'];
      if (Object.keys(properties).length === 0 && additional && typeof additional === 'object') {
        const maxKeys = typeof schema['maxProperties'] === 'number' ? schema['maxProperties'] : 8;
        return fc.dictionary(safeKey, arbitraryFromSchema(additional as Schema), { maxKeys });
      }
      const shape = Object.fromEntries(Object.entries(properties).map(([key, sub]) => [key, arbitraryFromSchema(sub)]));
      // The document requires no field: any subset of the documented ones may be present.
      return fc.record(shape, { requiredKeys: (schema['required'] as string[] | undefined) ?? [] });
    }
    default:
      throw new Error(`arbitraryFromSchema: type ${type} is not supported`);
  }
}

/** The session_metadata subschema of the update request and the limits it states. */
export function sessionMetadataSchema(): { schema: Schema; maxProperties: number; maxLength: number } {
  const request = loadSchema('update-session-request');
  const schema = (request['properties'] as Record<string, Schema>)['session_metadata']!;
  const maxProperties = folded(schema)['maxProperties'] as number;
  const maxLength = (schema['additionalProperties'] as Schema)['maxLength'] as number;
  return { schema, maxProperties, maxLength };
}

const exactly = (count: number, length: number, tag: string, character?: string) =>
  Object.fromEntries(
    Array.from({ length: count }, (_, i) => [`${tag}_${String(i).padStart(2, '0')}`, (character ?? String.fromCharCode(97 + (i % 26))).repeat(length)]),
  );

/**
 * A property's input with its name: the edge case it is, or the family it was drawn from. A
 * failing run's counterexample shows the name, so the report says which edge failed.
 */
export interface Named<T> {
  name: string;
  value: T;
}

/** session_metadata the document allows, generated from the schema (its exact limits are edge cases: validMetadataExamples). */
export function validSessionMetadata(): fc.Arbitrary<Named<Record<string, string> | null>> {
  const { schema } = sessionMetadataSchema();
  return (arbitraryFromSchema(schema) as fc.Arbitrary<Record<string, string> | null>).map((value) => ({ name: 'generated from the schema', value }));
}

/** The edges of the allowed metadata, run every time before the random ones: the exact limits, cleared, an empty value. */
export function validMetadataExamples(): Array<Named<Record<string, string> | null>> {
  const { maxProperties, maxLength } = sessionMetadataSchema();
  return [
    { name: `${maxProperties} properties of ${maxLength} characters`, value: exactly(maxProperties, maxLength, 'edge') },
    { name: `one value of ${maxLength} characters`, value: exactly(1, maxLength, 'long') },
    // Characters, not bytes: a server counting UTF-8 bytes refuses this one.
    { name: `one value of ${maxLength} non-ASCII characters (é)`, value: exactly(1, maxLength, 'accented', 'é') },
    { name: 'an empty value', value: { empty: '' } },
    { name: 'null (clears the metadata)', value: null },
    { name: 'an empty object (clears the metadata)', value: {} },
  ];
}

export interface InvalidUpdate {
  /** What breaks the rules, for the test's name of the counterexample. */
  why: string;
  body: unknown;
}

/** Update bodies the document rules out, each tagged with the rule it breaks. */
export function invalidSessionUpdates(): fc.Arbitrary<InvalidUpdate> {
  const { maxProperties, maxLength } = sessionMetadataSchema();
  const metadata = (why: string, value: fc.Arbitrary<unknown>) => value.map((session_metadata) => ({ why, body: { session_metadata } }));
  return fc.oneof(
    metadata(
      `more than ${maxProperties} properties`,
      fc.integer({ min: maxProperties + 1, max: maxProperties + 10 }).map((n) => exactly(n, 1, 'k')),
    ),
    metadata(
      `a value longer than ${maxLength} characters`,
      fc.integer({ min: maxLength + 1, max: maxLength + 300 }).map((n) => exactly(1, n, 'v')),
    ),
    metadata(
      'a value that is not a string',
      fc.dictionary(safeKey, fc.oneof(fc.integer(), fc.boolean(), fc.constant(null), fc.double({ noNaN: true, noDefaultInfinity: true })), {
        minKeys: 1,
        maxKeys: 3,
      }),
    ),
    metadata(
      'a nested object',
      fc.dictionary(safeKey, fc.dictionary(safeKey, fc.string({ maxLength: 8 }), { minKeys: 1, maxKeys: 2 }), { minKeys: 1, maxKeys: 2 }),
    ),
    metadata('an array instead of an object', fc.array(fc.string({ maxLength: 8 }), { maxLength: 3 })),
    metadata('a string, number or boolean instead of an object', fc.oneof(fc.string({ maxLength: 12 }), fc.integer(), fc.boolean())),
    fc.constantFrom<InvalidUpdate>(
      { why: 'a body that is an array', body: [] },
      { why: 'a body that is a string', body: 'session_metadata' },
      { why: 'a body that is a number', body: 42 },
    ),
  );
}

/** One body per family of invalidSessionUpdates() and its edges: run every time, before the random ones. */
export function invalidUpdateExamples(): InvalidUpdate[] {
  const { maxProperties, maxLength } = sessionMetadataSchema();
  return [
    { why: `${maxProperties + 1} properties`, body: { session_metadata: exactly(maxProperties + 1, 1, 'k') } },
    { why: `a value of ${maxLength + 1} characters`, body: { session_metadata: exactly(1, maxLength + 1, 'v') } },
    { why: 'a value that is not a string', body: { session_metadata: { count: 3 } } },
    { why: 'a value that is null', body: { session_metadata: { plan: null } } },
    { why: 'a value that is a boolean', body: { session_metadata: { active: true } } },
    { why: 'a nested object', body: { session_metadata: { nested: { a: 'b' } } } },
    { why: 'an array instead of an object', body: { session_metadata: ['a'] } },
    { why: 'an empty array instead of an object', body: { session_metadata: [] } },
    { why: 'a string instead of an object', body: { session_metadata: 'gold' } },
    { why: 'a number instead of an object', body: { session_metadata: 7 } },
    { why: 'a boolean instead of an object', body: { session_metadata: false } },
    { why: 'a body that is an array', body: [] },
    { why: 'a body that is a string', body: 'session_metadata' },
    { why: 'a body that is a number', body: 42 },
  ];
}

/** Every odd id starts with it: none is a real object's id, so a request a faulty target carries out changes nothing. */
export const ODD_ID_PREFIX = 'tmi-conform-';

/** Path ids with reserved, percent, unicode and control-free odd characters. */
export function oddIds(): fc.Arbitrary<Named<string>> {
  const odd = fc.constantFrom(
    '/',
    '?',
    '#',
    '%',
    '%25',
    '..',
    ' ',
    '+',
    '&',
    '=',
    ';',
    ':',
    '@',
    '|',
    '\\',
    '"',
    "'",
    '<',
    '>',
    '{',
    '}',
    'é',
    'Ω',
    '✓',
    '𝄞',
    '漢字',
    '\u200b',
    'https://api.example.com/x/',
  );
  return fc
    .array(fc.oneof(odd, fc.string({ maxLength: 6, unit: 'grapheme' })), { minLength: 1, maxLength: 5 })
    .map((parts) => ({ name: 'generated', value: `${ODD_ID_PREFIX}${parts.join('')}` }));
}

/** The odd ids every run sends, before the random ones (the path carries each percent-encoded once, as the client sends ids). */
export function oddIdExamples(): Array<Named<string>> {
  const id = (name: string, rest: string): Named<string> => ({ name, value: `${ODD_ID_PREFIX}${rest}` });
  return [
    id('a slash', 'a/b'),
    id('percent-encoded once (a server that decodes twice sees a slash)', 'a%2Fb'),
    id('percent-encoded twice', 'a%252Fb'),
    id('a lone percent sign', '100%'),
    id('dot-dot segments', '../..'),
    id('query and fragment characters', '?a=1&b=2#c'),
    id('a space and a plus', 'a b+c'),
    id('quotes, angle brackets and a backslash', '"\'<>\\'),
    id('non-ASCII letters', 'éΩ漢字'),
    id('a character outside the Basic Multilingual Plane', '𝄞'),
    id('a zero-width space', '\u200b'),
    id('a URL', 'https://api.example.com/x/'),
    id('long (1,000 characters)', 'x'.repeat(1000 - ODD_ID_PREFIX.length)),
  ];
}

/** A base64url run that never decodes to JSON: its first character is not one a JSON text can start with once decoded ("e" for "{", "C", "D", "I" for whitespace). */
const notJsonSegment = fc.tuple(fc.constantFrom(...'fghjkmnpqrstuvwxyz'), fc.stringMatching(/^[A-Za-z0-9_-]{0,30}$/)).map(([first, rest]) => first + rest);

/** What an Authorization header is sent with a property's run; undefined: no header at all. */
export type MalformedAuthorization = Named<string | undefined>;

/**
 * Authorization headers that carry no bearer JWT: "Bearer" in any letter case with nothing or a
 * non-JWT after it, another scheme (Basic, Token, Digest, …), or a bare value with no scheme.
 * Never a real token: a server may refuse them all, and must carry none of them out. Each is
 * named after its family: the header with its credential replaced by the credential's shape,
 * such as "bearer <two dot-separated parts>".
 */
export function malformedAuthorizations(): fc.Arbitrary<MalformedAuthorization> {
  const notJwt = fc.oneof(
    fc.constant({ shape: '', text: '' }),
    notJsonSegment.map((text) => ({ shape: '<not a JWT>', text })),
    fc.tuple(notJsonSegment, notJsonSegment).map(([a, b]) => ({ shape: '<two dot-separated parts>', text: `${a}.${b}` })),
    fc.tuple(notJsonSegment, notJsonSegment, notJsonSegment).map(([a, b, c]) => ({ shape: '<three dot-separated parts, not JSON>', text: `${a}.${b}.${c}` })),
    fc.tuple(notJsonSegment, notJsonSegment).map(([a, b]) => ({ shape: '<two parts and a trailing dot, not JSON>', text: `${a}.${b}.` })),
  );
  const bearer = fc
    .tuple(fc.constantFrom('Bearer', 'bearer', 'BEARER', 'BeArEr'), fc.constantFrom('', ' ', '  '), notJwt)
    .map(([scheme, gap, { shape, text }]) => ({
      name: text === '' ? scheme : gap === '' ? `${scheme}${shape} (no space)` : gap === ' ' ? `${scheme} ${shape}` : `${scheme}  ${shape} (two spaces)`,
      value: `${scheme}${gap}${text}`.trim(),
    }));
  const basicCredential = fc
    .tuple(fc.stringMatching(/^[a-z0-9_]{1,12}$/), fc.stringMatching(/^[A-Za-z0-9]{0,16}$/))
    .map(([user, password]) => ({ shape: '<base64 user:password>', text: Buffer.from(`${user}:${password}`).toString('base64') }));
  const otherScheme = fc
    .tuple(fc.constantFrom('Basic', 'Token', 'Digest', 'JWT', 'Negotiate', 'OAuth', 'Bearer:', 'Bearer-Token'), fc.oneof(basicCredential, notJwt))
    .map(([scheme, { shape, text }]) => ({
      name: text === '' ? scheme : `${scheme} ${shape}`,
      value: `${scheme} ${text}`.trim(),
    }));
  return fc.oneof(
    bearer,
    otherScheme,
    notJsonSegment.map((value) => ({ name: '<not a JWT> (no scheme)', value })),
  );
}

/**
 * One header of each family malformedAuthorizations() draws from, and the edges it cannot draw
 * (no header, an empty one, "Bearer" and spaces): every run sends them all, before the random ones.
 */
export function malformedAuthorizationExamples(): MalformedAuthorization[] {
  const header = (name: string, value: string | undefined): MalformedAuthorization => ({ name, value });
  return [
    header('(no header)', undefined),
    header('(empty)', ''),
    header('Bearer', 'Bearer'),
    header('Bearer followed by spaces only', 'Bearer   '),
    header('Bearer<not a JWT> (no space)', 'Bearernot-a-jwt'),
    header('Bearer <not a JWT>', 'Bearer not-a-jwt'),
    header('Bearer  <not a JWT> (two spaces)', 'Bearer  not-a-jwt'),
    header('bearer <not a JWT> (lowercase scheme)', 'bearer not-a-jwt'),
    header('Bearer <two dot-separated parts>', 'Bearer not-a.jwt'),
    header('Bearer <three dot-separated parts, not JSON>', 'Bearer not.a.jwt'),
    header('Bearer <three dot-separated parts, not base64url>', 'Bearer not*a.jwt*at.all*'),
    header('Bearer <two parts and a trailing dot, not JSON>', 'Bearer not.a-jwt.'),
    header('Basic <base64 user:password>', `Basic ${Buffer.from('tmi-conform:not-a-secret').toString('base64')}`),
    header('Token <not a JWT> (another scheme)', 'Token not-a-jwt'),
    header('Bearer-Token <not a JWT> (a scheme that only starts like Bearer)', 'Bearer-Token not-a-jwt'),
    header('<not a JWT> (no scheme)', 'not-a-jwt'),
  ];
}
