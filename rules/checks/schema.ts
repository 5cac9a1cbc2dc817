// Bodies against the document's JSON Schemas. Each schema error is traced to the requirement
// its subschema names (the "x-requirement" annotation nearest above the failing keyword).
import type { ErrorObject } from 'ajv';
import { schemaValidator, type SchemaName } from '../schemas.ts';
import { describeSecret, SECRET_KEYS } from '../../core/secrets.ts';
import { defineCheck, finding, isSuccess, show, type CheckInput, type CheckResult } from './check.ts';
import type { Finding, Subject } from '../types.ts';

/** The requirement named by the nearest x-requirement on the way from the root to the keyword. */
export function requirementOfSchemaError(schema: Record<string, unknown>, schemaPath: string): string | undefined {
  let node: unknown = schema;
  let found = (schema['x-requirement'] as string | undefined) ?? undefined;
  for (const raw of schemaPath.replace(/^#\/?/, '').split('/')) {
    if (raw === '' || node === null || typeof node !== 'object') break;
    node = (node as Record<string, unknown>)[raw.replace(/~1/g, '/').replace(/~0/g, '~')];
    const annotated = node !== null && typeof node === 'object' ? (node as Record<string, unknown>)['x-requirement'] : undefined;
    if (typeof annotated === 'string') found = annotated;
  }
  return found;
}

/** A schema path's segment as written: `~1` is `/`, `~0` is `~` (RFC 6901). */
const unescapeSegment = (segment: string): string => segment.replace(/~1/g, '/').replace(/~0/g, '~');
/** A reference token of a JSON pointer: `~` → `~0`, `/` → `~1` (RFC 6901). */
const escapeToken = (token: string): string => token.replace(/~/g, '~0').replace(/\//g, '~1');

/** Keywords followed by a name or an index whose subschema holds for the same place: both skipped. */
const SAME_PLACE_NAMED: ReadonlySet<string> = new Set(['allOf', 'anyOf', 'oneOf', 'dependentSchemas', '$defs', 'definitions']);
/** Keywords followed by a name or an index whose subschema holds for a free key or any element: "*". */
const ANY_MEMBER_NAMED: ReadonlySet<string> = new Set(['patternProperties', 'prefixItems']);
/** Keywords whose subschema holds for a free key or any element: "*". */
const ANY_MEMBER: ReadonlySet<string> = new Set([
  'additionalProperties',
  'unevaluatedProperties',
  'propertyNames',
  'items',
  'additionalItems',
  'unevaluatedItems',
  'contains',
]);

/**
 * The place in the documented shape of the body a schema error is about, as an RFC 6901 JSON
 * pointer: read from ajv's `schemaPath` (the schema's own keys), never from the instance path,
 * whose keys and indices change with every generated body. `properties/<name>` is `/<name>`; a
 * free key or any element (`additionalProperties`, `patternProperties/<p>`, `items`,
 * `prefixItems/<n>`, …) is `/*`; keywords that hold for the same place (`allOf/<n>`, `anyOf/<n>`,
 * `oneOf/<n>`, `not`, `if`/`then`/`else`, `$ref`, `$defs/<name>`) add nothing; the failing keyword
 * itself is dropped, and a `required` keyword adds the missing property. "" is the body itself.
 * The kit's schemas have no `$ref`: through one, ajv's path starts at the referenced definition,
 * and the place would be read from there.
 */
export function pointerOfSchemaError(error: Pick<ErrorObject, 'keyword' | 'schemaPath' | 'params'>): string {
  const segments = error.schemaPath
    .replace(/^#\/?/, '')
    .split('/')
    .filter((segment) => segment !== '')
    .map(unescapeSegment);
  segments.pop(); // the failing keyword
  let pointer = '';
  for (let i = 0; i < segments.length; i++) {
    const keyword = segments[i]!;
    if (keyword === 'properties') {
      i++;
      pointer += `/${escapeToken(segments[i] ?? '')}`;
    } else if (ANY_MEMBER_NAMED.has(keyword)) {
      i++;
      pointer += '/*';
    } else if (ANY_MEMBER.has(keyword)) {
      // Draft-07 `items` may be an array of schemas: the index goes with it.
      if (/^\d+$/.test(segments[i + 1] ?? '')) i++;
      pointer += '/*';
    } else if (SAME_PLACE_NAMED.has(keyword)) {
      i++;
    }
    // Any other keyword (not, if, then, else, $ref) holds for the same place.
  }
  const missing = (error.params as { missingProperty?: unknown }).missingProperty;
  if (error.keyword === 'required' && typeof missing === 'string') pointer += `/${escapeToken(missing)}`;
  return pointer;
}

function valueAt(document: unknown, instancePath: string): unknown {
  let node = document;
  for (const raw of instancePath.split('/').slice(1)) {
    if (node === null || typeof node !== 'object') return undefined;
    node = (node as Record<string, unknown>)[raw.replace(/~1/g, '/').replace(/~0/g, '~')];
  }
  return node;
}

/** A secret field, or a value inside one (encryption_key.pem, encryption_key/…). */
const isSecretPath = (instancePath: string): boolean => instancePath.split('/').some((part) => SECRET_KEYS.has(part));

function describeError(error: ErrorObject): string {
  const where = error.instancePath === '' ? 'the body' : error.instancePath.slice(1).replace(/\//g, '.');
  switch (error.keyword) {
    case 'enum':
      return `${where} to be one of ${(error.params as { allowedValues: unknown[] }).allowedValues.map((v) => show(v)).join(', ')}`;
    case 'const':
      return `${where} to be ${show((error.params as { allowedValue: unknown }).allowedValue)}`;
    default:
      return `${where} ${error.message ?? 'to match the schema'}`;
  }
}

/** Findings for every schema error of `document`, one per (requirement, place, keyword). */
export function schemaFindings(name: SchemaName, document: unknown, subject: Subject): Finding[] {
  const { schema, validate } = schemaValidator(name);
  if (validate(document)) return [];
  const fallback = schema['x-requirement'] as string;
  const seen = new Set<string>();
  const findings: Finding[] = [];
  // Stryker disable next-line ArrayDeclaration: equivalent, Ajv sets errors whenever validate returns false.
  for (const error of validate.errors ?? []) {
    // "must match exactly one schema in oneOf"-style summaries repeat what the branches said.
    // Stryker disable next-line ConditionalExpression,LogicalOperator,StringLiteral: equivalent today, no schema of SchemaName uses oneOf, anyOf or if.
    if (error.keyword === 'oneOf' || error.keyword === 'anyOf' || error.keyword === 'if') continue;
    const id = requirementOfSchemaError(schema, error.schemaPath) ?? fallback;
    const key = `${id} ${error.instancePath} ${error.keyword}`;
    // Stryker disable next-line ConditionalExpression: equivalent today, no schema of SchemaName applies one keyword twice to one place.
    if (seen.has(key)) continue;
    seen.add(key);
    const received =
      // Stryker disable next-line ConditionalExpression,LogicalOperator,StringLiteral: equivalent today, no schema of SchemaName has required or additionalProperties false.
      error.keyword === 'required' || error.keyword === 'additionalProperties'
        ? show(error.params)
        : isSecretPath(error.instancePath)
          ? describeSecret(valueAt(document, error.instancePath))
          : show(valueAt(document, error.instancePath));
    findings.push(finding(id, subject, describeError(error), received, pointerOfSchemaError(error)));
  }
  return findings;
}

const RESPONSE_SCHEMAS: Partial<Record<string, SchemaName>> = { updateSession: 'session', getResourceServer: 'resource-server' };

export function responseBodyMatchesSchema({ exchange, operation, responseJson }: CheckInput): CheckResult {
  const response = exchange.response;
  const schemaName = RESPONSE_SCHEMAS[operation.operation];
  if (!response || !schemaName || !isSuccess(response.status) || response.body?.truncated) return undefined;
  const root = schemaValidator(schemaName).schema['x-requirement'] as string;
  if (!response.body) {
    return [finding(root, 'implementation', `the ${schemaName.replace('-', ' ')} as the body of a ${response.status}`, 'no body')];
  }
  if (!responseJson?.ok) return undefined; // not JSON: responseBodyIsJson reports it
  return schemaFindings(schemaName, responseJson.value, 'implementation');
}

/** Request body errors of an update, parsed once and shared by the client and implementation checks. */
export function updateRequestErrors({ exchange, requestJson }: CheckInput): Finding[] | undefined {
  const body = exchange.request.body;
  if (!body || body.truncated || !requestJson) return undefined;
  if (!requestJson.ok) {
    return [finding('SES-REQUEST-BODY', 'client', 'a JSON body', `${show(body.text, 60)} (${requestJson.error})`)];
  }
  return schemaFindings('update-session-request', requestJson.value, 'client');
}

export function updateRequestMatchesSchema(input: CheckInput): CheckResult {
  if (!input.exchange.request.body) {
    return [finding('SES-REQUEST-BODY', 'client', 'a JSON body with session_metadata', 'no body')];
  }
  return updateRequestErrors(input);
}

export function invalidUpdateRefused(input: CheckInput): CheckResult {
  const status = input.exchange.response?.status;
  if (status === undefined || status === 429) return undefined;
  // Only a body that breaks the rules tests whether such bodies are refused.
  const errors = updateRequestErrors(input);
  if (!errors || errors.length === 0) return undefined;
  if (!isSuccess(status)) return [];
  const rules = errors
    .slice(0, 3)
    .map((e) => `${e.requirement}: expected ${e.expected}`)
    .join(' | ');
  return [
    finding('SES-INVALID-UPDATE-REFUSED', 'implementation', `a 4xx refusal of a body that breaks the rules (${rules})`, `${status}, the update was accepted`),
  ];
}

export const schemaChecks = [
  defineCheck(
    responseBodyMatchesSchema,
    [
      'SES-RESPONSE-SCHEMA',
      'SES-METADATA-MAX-PROPERTIES',
      'SES-METADATA-VALUE-LENGTH',
      'RS-RESPONSE-SCHEMA',
      'RS-SIGNING-ALG',
      'RS-TOKEN-DIALECT',
      'RS-TOKEN-ENCRYPTION',
      'RS-NAME-CHARACTERS',
      'RS-SIGNING-SECRET-LENGTH',
    ],
    ['updateSession', 'getResourceServer'],
  ),
  defineCheck(updateRequestMatchesSchema, ['SES-REQUEST-BODY', 'SES-METADATA-MAX-PROPERTIES', 'SES-METADATA-VALUE-LENGTH'], ['updateSession']),
  defineCheck(invalidUpdateRefused, ['SES-INVALID-UPDATE-REFUSED'], ['updateSession']),
];
