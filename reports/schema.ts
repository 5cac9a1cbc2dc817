// schemas/report.schema.json, compiled once: `report merge` checks its inputs with it, and the
// tests hold every generated report to it.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ValidateFunction } from 'ajv/dist/2020.js';
import { schemasDir } from '../core/paths.ts';
import { createAjv } from '../rules/schemas.ts';
import { once } from '../core/memo.ts';

const compiledSchema = once((): ValidateFunction => createAjv().compile(reportSchema()));

export function reportSchema(): Record<string, unknown> {
  return JSON.parse(readFileSync(join(schemasDir, 'report.schema.json'), 'utf8'));
}

/** Why `value` is not a report.json of this version, or undefined when it is one. */
export function reportSchemaError(value: unknown): string | undefined {
  const compiled = compiledSchema();
  if (compiled(value)) return undefined;
  const first = compiled.errors?.[0];
  if (!first) return 'does not match schemas/report.schema.json';
  return `${first.instancePath || '(top level)'} ${first.message ?? 'is invalid'}`;
}
