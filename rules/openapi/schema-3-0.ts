// OpenAPI 3.0's Schema Object, rewritten as the JSON Schema draft-07 that ajv reads. 3.0 extends an older
// JSON Schema: `nullable`, boolean `exclusiveMinimum`/`exclusiveMaximum`, and keywords of its own that ajv
// rejects or does not know.
import { isRecord } from './pointer.ts';

/** Keywords whose value is data, copied as they are: a key named `$ref` inside an example is no reference. */
const DATA_KEYWORDS: ReadonlySet<string> = new Set(['enum', 'const', 'default', 'examples']);

/** Keywords whose value maps names to schemas: the names are not keywords. */
const SCHEMA_MAPS: ReadonlySet<string> = new Set(['properties', 'patternProperties', 'definitions', 'dependencies']);

/** OpenAPI's own annotations, which say nothing about validity (`nullable` is rewritten into `type`). */
const OPENAPI_ANNOTATIONS: ReadonlySet<string> = new Set(['nullable', 'example', 'discriminator', 'xml', 'externalDocs', 'deprecated']);

/** Keywords a `nullable` schema may combine with `type`: then null is let through before them all. */
const COMBINERS = ['allOf', 'anyOf', 'oneOf', 'not'];

/** Which way a body travels: 3.0 requires a `readOnly` property in responses only, a `writeOnly` one in requests only. */
export type Direction = 'request' | 'response';

export interface Draft07Context {
  /** The reference ajv is to follow for a `$ref` met; throws when it cannot be followed. */
  refTo(ref: string): string;
  /** The schema a property's schema stands for, its `$ref`s followed; undefined when not found. */
  resolve(schema: unknown): unknown;
  direction: Direction;
}

/** The schema in draft-07 terms, for bodies travelling one way. `readOnly`/`writeOnly` stay annotations. */
export function draft07Of(schema: unknown, context: Draft07Context): unknown {
  if (Array.isArray(schema)) return schema.map((item) => draft07Of(item, context));
  if (!isRecord(schema)) return schema;
  if (typeof schema.$ref === 'string') {
    // A Reference Object's other keys are ignored (OpenAPI 3.0); `nullable` beside it is honoured
    // all the same, as its authors mean it, so that a null is never reported.
    const reference = { $ref: context.refTo(schema.$ref) };
    return schema.nullable === true ? { anyOf: [{ type: 'null' }, reference] } : reference;
  }
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    if (OPENAPI_ANNOTATIONS.has(key) || key.startsWith('x-')) continue;
    if (DATA_KEYWORDS.has(key)) out[key] = value;
    else if (SCHEMA_MAPS.has(key) && isRecord(value))
      out[key] = Object.fromEntries(Object.entries(value).map(([name, sub]) => [name, draft07Of(sub, context)]));
    else out[key] = draft07Of(value, context);
  }
  requiredThisWay(schema, out, context);
  exclusiveBound(schema, out, 'exclusiveMinimum', 'minimum');
  exclusiveBound(schema, out, 'exclusiveMaximum', 'maximum');
  if (schema.nullable !== true) return out;
  if (typeof out.type === 'string' && !COMBINERS.some((key) => key in out)) {
    out.type = [out.type, 'null'];
    if (Array.isArray(out.enum) && !out.enum.includes(null)) out.enum = [...out.enum, null];
    return out;
  }
  // `nullable` without `type`, or with subschemas that would reject null: null is let through, as meant.
  return { anyOf: [{ type: 'null' }, out] };
}

/**
 * "If the property is marked as readOnly being true and is in the required list, the required will take
 * effect on the response only" (OpenAPI 3.0, and the same for writeOnly and requests).
 */
function requiredThisWay(schema: Record<string, unknown>, out: Record<string, unknown>, context: Draft07Context): void {
  const properties = schema.properties;
  if (!Array.isArray(schema.required) || !isRecord(properties)) return;
  const otherWayOnly = context.direction === 'request' ? 'readOnly' : 'writeOnly';
  out.required = schema.required.filter((name) => {
    const property = typeof name === 'string' && Object.hasOwn(properties, name) ? context.resolve(properties[name]) : undefined;
    return !(isRecord(property) && property[otherWayOnly] === true);
  });
}

/** 3.0's `exclusiveMinimum: true` beside `minimum: 5` is draft-07's `exclusiveMinimum: 5`. */
function exclusiveBound(schema: Record<string, unknown>, out: Record<string, unknown>, exclusive: string, inclusive: string): void {
  const flag = schema[exclusive];
  if (typeof flag !== 'boolean') return;
  delete out[exclusive];
  if (flag && typeof schema[inclusive] === 'number') {
    out[exclusive] = schema[inclusive];
    delete out[inclusive];
  }
}
