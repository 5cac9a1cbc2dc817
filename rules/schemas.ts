// The document's JSON Schemas (schemas/*.schema.json), compiled once with Ajv (2020-12).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import * as addFormatsModule from 'ajv-formats';
import { schemasDir } from '../core/paths.ts';
import { once, perKey } from '../core/memo.ts';

// ajv-formats ships CommonJS; its default export arrives wrapped under ESM.
const addFormats = addFormatsModule.default as unknown as typeof addFormatsModule.default.default;

export type SchemaName = 'session' | 'resource-server' | 'update-session-request' | 'error';

/**
 * The document says "date-time (ISO 8601)": accept ISO 8601 extended date-times with or
 * without fractional seconds and zone, not only RFC 3339, so a valid timestamp is never
 * reported.
 */
const ISO_8601_DATE_TIME = /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])T([01]\d|2[0-3]):[0-5]\d(:([0-5]\d|60)(\.\d+)?)?(Z|[+-]([01]\d|2[0-3])(:?[0-5]\d)?)?$/i;

export function createAjv(): Ajv2020 {
  const ajv = new Ajv2020({ allErrors: true, strict: true, strictRequired: false });
  addFormats(ajv);
  ajv.addFormat('date-time', ISO_8601_DATE_TIME);
  // The document names the format "client-id" without defining it: any string is accepted.
  ajv.addFormat('client-id', true);
  // Annotation naming the requirement a subschema enforces (see schemas/requirements.yaml).
  ajv.addKeyword({ keyword: 'x-requirement', schemaType: 'string' });
  return ajv;
}

export function loadSchema(name: SchemaName): Record<string, unknown> {
  return JSON.parse(readFileSync(join(schemasDir, `${name}.schema.json`), 'utf8'));
}

/** The compiled validator and its schema; each compiled on first use, then reused (a run that reads one operation compiles one schema). */
export const schemaValidator: (name: SchemaName) => { schema: Record<string, unknown>; validate: ValidateFunction } = perKey(4, (name: SchemaName) => {
  const schema = loadSchema(name);
  return { schema, validate: documentAjv().compile(schema) };
});

const documentAjv = once(createAjv);
