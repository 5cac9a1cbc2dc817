// fast-check arbitraries derived from the document's JSON Schemas: documents that satisfy a
// schema, and the session_metadata the update accepts or must refuse, with the limits read
// from the schema rather than written again here.
import fc from 'fast-check';
import { loadSchema } from '../rules/schemas.ts';

type Schema = Record<string, unknown>;

/** A schema with the constraints of its allOf folded in (the kit's schemas use allOf only to annotate a constraint). */
function folded(schema: Schema): Schema {
  const { allOf, ...rest } = schema;
  return Array.isArray(allOf) ? (allOf as Schema[]).reduce<Schema>((acc, part) => ({ ...acc, ...folded(part) }), rest) : rest;
}

const safeKey = fc.string({ minLength: 1, maxLength: 24 }).filter((k) => k !== '__proto__');

function stringArbitrary(schema: Schema): fc.Arbitrary<string> {
  if (schema['format'] === 'date-time') return fc.date({ min: new Date('2000-01-01T00:00:00Z'), max: new Date('2099-12-31T23:59:59Z'), noInvalidDate: true }).map((d) => d.toISOString());
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
  const types = Array.isArray(schema['type']) ? (schema['type'] as string[]) : typeof schema['type'] === 'string' ? [schema['type'] as string] : ['string', 'integer', 'boolean', 'null'];
  return fc.oneof(...types.map((type) => arbitraryOfType(type, schema)));
}

function arbitraryOfType(type: string, schema: Schema): fc.Arbitrary<unknown> {
  switch (type) {
    case 'null':
      return fc.constant(null);
    case 'boolean':
      return fc.boolean();
    case 'integer':
      return fc.integer({ min: typeof schema['minimum'] === 'number' ? schema['minimum'] : -1_000_000, max: typeof schema['maximum'] === 'number' ? schema['maximum'] : 1_000_000 });
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

const exactly = (count: number, length: number, tag: string) =>
  Object.fromEntries(Array.from({ length: count }, (_, i) => [`${tag}_${String(i).padStart(2, '0')}`, String.fromCharCode(97 + (i % 26)).repeat(length)]));

/** session_metadata the document allows: generated from the schema, plus its exact boundaries. */
export function validSessionMetadata(): fc.Arbitrary<Record<string, string> | null> {
  const { schema, maxProperties, maxLength } = sessionMetadataSchema();
  return fc.oneof(
    { weight: 6, arbitrary: arbitraryFromSchema(schema) as fc.Arbitrary<Record<string, string> | null> },
    { weight: 1, arbitrary: fc.constant(exactly(maxProperties, maxLength, 'edge')) },
    { weight: 1, arbitrary: fc.constant(exactly(1, maxLength, 'long')) },
  );
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
    metadata(`more than ${maxProperties} properties`, fc.integer({ min: maxProperties + 1, max: maxProperties + 10 }).map((n) => exactly(n, 1, 'k'))),
    metadata(`a value longer than ${maxLength} characters`, fc.integer({ min: maxLength + 1, max: maxLength + 300 }).map((n) => exactly(1, n, 'v'))),
    metadata('a value that is not a string', fc.dictionary(safeKey, fc.oneof(fc.integer(), fc.boolean(), fc.constant(null), fc.double({ noNaN: true, noDefaultInfinity: true })), { minKeys: 1, maxKeys: 3 })),
    metadata('a nested object', fc.dictionary(safeKey, fc.dictionary(safeKey, fc.string({ maxLength: 8 }), { minKeys: 1, maxKeys: 2 }), { minKeys: 1, maxKeys: 2 })),
    metadata('an array instead of an object', fc.array(fc.string({ maxLength: 8 }), { maxLength: 3 })),
    metadata('a string, number or boolean instead of an object', fc.oneof(fc.string({ maxLength: 12 }), fc.integer(), fc.boolean())),
    fc.constantFrom<InvalidUpdate>({ why: 'a body that is an array', body: [] }, { why: 'a body that is a string', body: 'session_metadata' }, { why: 'a body that is a number', body: 42 }),
  );
}

/** One body per rule the update must enforce: run every time, before the random ones. */
export function invalidUpdateExamples(): InvalidUpdate[] {
  const { maxProperties, maxLength } = sessionMetadataSchema();
  return [
    { why: `${maxProperties + 1} properties`, body: { session_metadata: exactly(maxProperties + 1, 1, 'k') } },
    { why: `a value of ${maxLength + 1} characters`, body: { session_metadata: exactly(1, maxLength + 1, 'v') } },
    { why: 'a value that is not a string', body: { session_metadata: { count: 3 } } },
    { why: 'a nested object', body: { session_metadata: { nested: { a: 'b' } } } },
    { why: 'an array instead of an object', body: { session_metadata: ['a'] } },
    { why: 'a string instead of an object', body: { session_metadata: 'gold' } },
    { why: 'a body that is an array', body: [] },
  ];
}

/** The exact limits, run every time before the random metadata. */
export function validMetadataExamples(): Array<Record<string, string> | null> {
  const { maxProperties, maxLength } = sessionMetadataSchema();
  return [exactly(maxProperties, maxLength, 'edge'), exactly(1, maxLength, 'long'), null, {}];
}

/** Path ids with reserved, percent, unicode and control-free odd characters. */
export function oddIds(): fc.Arbitrary<string> {
  const odd = fc.constantFrom('/', '?', '#', '%', '%25', '..', ' ', '+', '&', '=', ';', ':', '@', '|', '\\', '"', "'", '<', '>', '{', '}', 'é', 'Ω', '✓', '𝄞', '漢字', '\u200b', 'https://api.example.com/x/');
  return fc.array(fc.oneof(odd, fc.string({ maxLength: 6, unit: 'grapheme' })), { minLength: 1, maxLength: 5 }).map((parts) => `tmi-conform-${parts.join('')}`);
}

/** A base64url run that never decodes to JSON: its first character is not one a JSON text can start with once decoded ("e" for "{", "C", "D", "I" for whitespace). */
const notJsonSegment = fc.tuple(fc.constantFrom(...'fghjkmnpqrstuvwxyz'), fc.stringMatching(/^[A-Za-z0-9_-]{0,30}$/)).map(([first, rest]) => first + rest);

/**
 * Authorization headers that carry no bearer JWT: "Bearer" in any letter case with nothing or a
 * non-JWT after it, another scheme (Basic, Token, Digest, …), or a bare value with no scheme.
 * Never a real token: a server may refuse them all, and must carry none of them out.
 */
export function malformedAuthorizations(): fc.Arbitrary<string> {
  const notJwt = fc.oneof(
    fc.constant(''),
    notJsonSegment,
    fc.tuple(notJsonSegment, notJsonSegment).map(([a, b]) => `${a}.${b}`),
    fc.tuple(notJsonSegment, notJsonSegment, notJsonSegment).map(([a, b, c]) => `${a}.${b}.${c}`),
    fc.tuple(notJsonSegment, notJsonSegment).map(([a, b]) => `${a}.${b}.`),
  );
  const bearer = fc.tuple(fc.constantFrom('Bearer', 'bearer', 'BEARER', 'BeArEr'), fc.constantFrom('', ' ', '  '), notJwt).map(([scheme, gap, credential]) => `${scheme}${gap}${credential}`.trim());
  const basicCredential = fc.tuple(fc.stringMatching(/^[a-z0-9_]{1,12}$/), fc.stringMatching(/^[A-Za-z0-9]{0,16}$/)).map(([user, password]) => Buffer.from(`${user}:${password}`).toString('base64'));
  const otherScheme = fc.tuple(fc.constantFrom('Basic', 'Token', 'Digest', 'JWT', 'Negotiate', 'OAuth', 'Bearer:', 'Bearer-Token'), fc.oneof(basicCredential, notJwt)).map(([scheme, credential]) => `${scheme} ${credential}`.trim());
  return fc.oneof(bearer, otherScheme, notJsonSegment);
}
