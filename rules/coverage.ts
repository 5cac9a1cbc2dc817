// What the document states that traffic can reach, for the reports' coverage: the status codes it
// names per operation, and the values of its enumerations and the edges of its limits. Only what
// the document states: an operation whose status codes are "not shown" names none, so nothing is
// missing for it. The values come from the kit's schemas (the document made data once), and
// `valuesReached` reads one exchange's already-parsed bodies: judging is the hot path.
import { once } from '../core/memo.ts';
import type { ParsedBody } from './checks/check.ts';
import { loadSchema } from './schemas.ts';
import type { DocumentOperationId, OperationId } from './types.ts';

/** The status codes the document names per operation ("Success | `204`", "Errors | `401`, `403`, `429`"); the other two: not shown. */
export const STATUSES_NAMED: Readonly<Record<DocumentOperationId, readonly number[]>> = {
  deleteTokenExchangeProfile: [204, 401, 403, 429],
  updateSession: [],
  getResourceServer: [],
};

/** One enumeration or limit of an operation, and the values of it the document states. */
export interface ValueDimension {
  operation: DocumentOperationId;
  /** `signing_alg`, `session_metadata` */
  name: string;
  /** Where the values are read: the response (what the target returns) or the request (what reached the target). */
  in: 'request' | 'response';
  values: string[];
}

type JsonSchema = Record<string, unknown>;
const property = (schema: JsonSchema, name: string) => (schema['properties'] as Record<string, JsonSchema>)[name]!;
const limitOf = (schema: JsonSchema, keyword: string): number => (schema['allOf'] as JsonSchema[]).find((s) => keyword in s)![keyword] as number;

/** `session_metadata`'s limits: at most 25 properties, each value at most 255 characters. */
const metadataLimits = once(() => {
  const metadata = property(loadSchema('update-session-request'), 'session_metadata');
  return { maxProperties: limitOf(metadata, 'maxProperties'), maxLength: (metadata['additionalProperties'] as JsonSchema)['maxLength'] as number };
});

/** The edges of `session_metadata`'s limits and its two ways of clearing, as the reports name them. */
const metadataPoints = once(() => {
  const { maxProperties, maxLength } = metadataLimits();
  return { cleared: 'null', empty: '{}', atMost: `${maxProperties} properties`, overMost: `over ${maxProperties} properties`, atLength: `a value of ${maxLength} characters`, overLength: `a value over ${maxLength} characters` };
});

/** The document's enumerations and limits, from the schemas that state them. */
export const valueDimensions = once((): ValueDimension[] => {
  const resourceServer = loadSchema('resource-server');
  const enumeration = (name: string): ValueDimension => ({ operation: 'getResourceServer', name, in: 'response', values: property(resourceServer, name)['enum'] as string[] });
  return [enumeration('signing_alg'), enumeration('token_dialect'), { operation: 'updateSession', name: 'session_metadata', in: 'request', values: Object.values(metadataPoints()) }];
});

/** "signing_alg=RS256": one value of one dimension, as a judgement lists it. */
export const valueKey = (name: string, value: string): string => `${name}=${value}`;

const isRecord = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * A request's body reached the implementation's reading of it: it was answered, and not refused
 * before its body mattered (no credential, no scope, no such id, too many requests).
 */
const bodyWasRead = (status: number | undefined): boolean => status !== undefined && status < 500 && status !== 401 && status !== 403 && status !== 404 && status !== 429;

/**
 * The values of the document's enumerations and the edges of its limits this exchange carried
 * ("signing_alg=HS256", "session_metadata=25 properties"); none for an operation that has none.
 */
export function valuesReached(operation: OperationId, status: number | undefined, requestJson: ParsedBody | undefined, responseJson: ParsedBody | undefined): string[] {
  if (operation === 'getResourceServer') return responseJson?.ok && status !== undefined && status < 300 ? enumerationValues(responseJson.value) : [];
  if (operation === 'updateSession' && requestJson?.ok && bodyWasRead(status) && isRecord(requestJson.value) && 'session_metadata' in requestJson.value) return metadataValues(requestJson.value['session_metadata']);
  return [];
}

function enumerationValues(body: unknown): string[] {
  if (!isRecord(body)) return [];
  const reached: string[] = [];
  for (const { name, values, operation } of valueDimensions()) {
    const value = body[name];
    if (operation === 'getResourceServer' && typeof value === 'string' && values.includes(value)) reached.push(valueKey(name, value));
  }
  return reached;
}

function metadataValues(metadata: unknown): string[] {
  const points = metadataPoints();
  const key = (point: string) => valueKey('session_metadata', point);
  if (metadata === null) return [key(points.cleared)];
  if (!isRecord(metadata)) return [];
  const values = Object.values(metadata);
  if (values.length === 0) return [key(points.empty)];
  const { maxProperties, maxLength } = metadataLimits();
  const reached: string[] = [];
  if (values.length === maxProperties) reached.push(key(points.atMost));
  if (values.length > maxProperties) reached.push(key(points.overMost));
  if (values.some((v) => typeof v === 'string' && v.length === maxLength)) reached.push(key(points.atLength));
  if (values.some((v) => typeof v === 'string' && v.length > maxLength)) reached.push(key(points.overLength));
  return reached;
}
