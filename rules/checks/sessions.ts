// Update session: what the returned session says about the update that was sent.
import { defineCheck, finding, isSuccess, jsonObject, show, type CheckInput, type CheckResult } from './check.ts';

/** The session_metadata sent, when the request body was JSON with that key. */
function sentMetadata(input: CheckInput): { value: unknown } | undefined {
  const body = jsonObject(input.requestJson);
  return body && 'session_metadata' in body ? { value: body['session_metadata'] } : undefined;
}

/** The returned session, for a successful update whose body is a JSON object. */
function returnedSession(input: CheckInput): Record<string, unknown> | undefined {
  const status = input.exchange.response?.status;
  return status !== undefined && isSuccess(status) ? jsonObject(input.responseJson) : undefined;
}

const isEmptyObject = (v: unknown) => v !== null && typeof v === 'object' && !Array.isArray(v) && Object.keys(v).length === 0;
const hasNoMetadata = (v: unknown) => v === undefined || v === null || isEmptyObject(v);

export function sessionMetadataCleared(input: CheckInput): CheckResult {
  const sent = sentMetadata(input);
  const session = returnedSession(input);
  if (!sent || !session || !(sent.value === null || isEmptyObject(sent.value))) return undefined;
  const returned = session['session_metadata'];
  if (hasNoMetadata(returned)) return [];
  return [
    finding(
      'SES-METADATA-CLEARED',
      'implementation',
      `no session metadata left after sending ${show(sent.value)}`,
      `session_metadata ${show(returned, 120)}`,
      '/session_metadata',
    ),
  ];
}

function sameMetadata(a: unknown, b: unknown): boolean {
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return a === b;
  const ka = Object.keys(a as object);
  const kb = Object.keys(b as object);
  return ka.length === kb.length && ka.every((k) => (a as Record<string, unknown>)[k] === (b as Record<string, unknown>)[k]);
}

export function sessionMetadataEchoed(input: CheckInput): CheckResult {
  const sent = sentMetadata(input);
  const session = returnedSession(input);
  if (!sent || !session || sent.value === null || typeof sent.value !== 'object' || isEmptyObject(sent.value)) return undefined;
  const returned = session['session_metadata'];
  if (sameMetadata(sent.value, returned)) return [];
  return [finding('SES-METADATA-ECHOED', 'implementation', `session_metadata ${show(sent.value, 120)} as sent`, show(returned, 120), '/session_metadata')];
}

export function sessionIdMatchesPath(input: CheckInput): CheckResult {
  const session = returnedSession(input);
  const id = session?.['id'];
  if (typeof id !== 'string') return undefined;
  if (id === input.operation.id) return [];
  return [finding('SES-ID-MATCHES', 'implementation', `the session ${show(input.operation.id)} named in the path`, `id ${show(id)}`, '/id')];
}

export function updateRequestIsJson({ exchange }: CheckInput): CheckResult {
  const type = exchange.request.headers['content-type'];
  if (type !== undefined && /^application\/json\s*(;|$)/i.test(type)) return [];
  return [finding('SES-REQUEST-CONTENT-TYPE', 'client', 'Content-Type: application/json', type === undefined ? 'no Content-Type' : show(type))];
}

export const sessionChecks = [
  defineCheck(sessionMetadataCleared, ['SES-METADATA-CLEARED'], ['updateSession']),
  defineCheck(sessionMetadataEchoed, ['SES-METADATA-ECHOED'], ['updateSession']),
  defineCheck(sessionIdMatchesPath, ['SES-ID-MATCHES'], ['updateSession']),
  defineCheck(updateRequestIsJson, ['SES-REQUEST-CONTENT-TYPE'], ['updateSession']),
];
