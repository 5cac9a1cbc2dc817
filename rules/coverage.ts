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
  return {
    cleared: 'null',
    empty: '{}',
    atMost: `${maxProperties} properties`,
    overMost: `over ${maxProperties} properties`,
    atLength: `a value of ${maxLength} characters`,
    overLength: `a value over ${maxLength} characters`,
  };
});

/** The document's enumerations and limits, from the schemas that state them. */
export const valueDimensions = once((): ValueDimension[] => {
  const resourceServer = loadSchema('resource-server');
  const enumeration = (name: string): ValueDimension => ({
    operation: 'getResourceServer',
    name,
    in: 'response',
    values: property(resourceServer, name)['enum'] as string[],
  });
  return [
    enumeration('signing_alg'),
    enumeration('token_dialect'),
    { operation: 'updateSession', name: 'session_metadata', in: 'request', values: Object.values(metadataPoints()) },
  ];
});

/** "signing_alg=RS256": one value of one dimension, as a judgement lists it. */
export const valueKey = (name: string, value: string): string => `${name}=${value}`;

const isRecord = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * A request's body reached the implementation's reading of it: it was answered, and not refused
 * before its body mattered (no credential, no scope, no such id, too many requests).
 */
const bodyWasRead = (status: number | undefined): boolean =>
  status !== undefined && status < 500 && status !== 401 && status !== 403 && status !== 404 && status !== 429;

/** None reached: one shared, frozen list, so that every judgement has the same shape. */
export const NONE_REACHED: readonly string[] = Object.freeze([]);

/**
 * The values of the document's enumerations and the edges of its limits this exchange carried
 * ("signing_alg=HS256", "session_metadata=25 properties"); none for an operation that has none.
 * On the hot path: the keys are made once, and most exchanges return at the first test.
 */
export function valuesReached(
  operation: OperationId,
  status: number | undefined,
  requestJson: ParsedBody | undefined,
  responseJson: ParsedBody | undefined,
): readonly string[] {
  if (operation === 'getResourceServer') return responseJson?.ok && status !== undefined && status < 300 ? enumerationValues(responseJson.value) : NONE_REACHED;
  if (operation === 'updateSession' && requestJson?.ok && bodyWasRead(status) && isRecord(requestJson.value) && 'session_metadata' in requestJson.value)
    return metadataValues(requestJson.value['session_metadata']);
  return NONE_REACHED;
}

/** Per enumeration of the resource server: its name and each allowed value's key, made once. */
const enumerationKeys = once(() =>
  valueDimensions()
    .filter((d) => d.operation === 'getResourceServer')
    .map(({ name, values }) => ({ name, keys: new Map(values.map((v) => [v, valueKey(name, v)])) })),
);

/** Each `session_metadata` point's key, made once. */
const metadataKeys = once(() => {
  const points = metadataPoints();
  const key = (point: string) => valueKey('session_metadata', point);
  return {
    cleared: [key(points.cleared)],
    empty: [key(points.empty)],
    atMost: key(points.atMost),
    overMost: key(points.overMost),
    atLength: key(points.atLength),
    overLength: key(points.overLength),
  };
});

function enumerationValues(body: unknown): readonly string[] {
  if (!isRecord(body)) return NONE_REACHED;
  const reached: string[] = [];
  for (const { name, keys } of enumerationKeys()) {
    const value = body[name];
    const key = typeof value === 'string' ? keys.get(value) : undefined;
    if (key !== undefined) reached.push(key);
  }
  return reached;
}

function metadataValues(metadata: unknown): readonly string[] {
  const keys = metadataKeys();
  if (metadata === null) return keys.cleared;
  if (!isRecord(metadata)) return NONE_REACHED;
  const { maxProperties, maxLength } = metadataLimits();
  let properties = 0;
  let longest = 0;
  let atLength = false;
  for (const key in metadata) {
    if (!Object.hasOwn(metadata, key)) continue;
    properties++;
    const value = metadata[key];
    if (typeof value !== 'string') continue;
    if (value.length === maxLength) atLength = true;
    if (value.length > longest) longest = value.length;
  }
  if (properties === 0) return keys.empty;
  const reached: string[] = [];
  if (properties === maxProperties) reached.push(keys.atMost);
  if (properties > maxProperties) reached.push(keys.overMost);
  if (atLength) reached.push(keys.atLength);
  if (longest > maxLength) reached.push(keys.overLength);
  return reached;
}
