// One HAR 1.2 entry (from any recorder, or a line of the proxy's journal) as an exchange.
import { buildExchange, type ExchangeParts } from '../rules/exchange.ts';
import type { BearerToken, CapturedBody, Exchange, ExchangeOrder } from '../rules/types.ts';
import { judgeForeignCredential, restoreCredentialFacts } from './credentials.ts';
import { RecordingError } from './recording-error.ts';

interface HarHeader {
  name: string;
  value: string;
}
/** What request.postData and response.content have in common: a kept body. */
interface HarBodyText {
  mimeType?: string;
  text?: string;
  encoding?: string;
  _truncated?: boolean;
}
interface HarContent extends HarBodyText {
  size?: number;
}
interface HarPostData extends HarBodyText {
  params?: Array<{ name: string; value?: string }>;
}
export interface HarEntry {
  startedDateTime?: string;
  time?: number;
  request?: { method?: string; url?: string; headers?: HarHeader[]; postData?: HarPostData };
  response?: { status?: number; headers?: HarHeader[]; content?: HarContent; _error?: string };
  _error?: string;
  _conformance?: unknown;
}

/**
 * The bearer credential as the proxy recorded it (`_conformance.token`, see core/redact.ts
 * tokenFacts): its header is redacted, so the token is restored from these facts.
 */
function recordedToken(conformance: unknown): BearerToken | undefined {
  const token = (conformance as { token?: unknown } | null | undefined)?.token as Record<string, unknown> | undefined;
  if (!token || typeof token !== 'object' || typeof token['headerPresent'] !== 'boolean' || typeof token['wellFormed'] !== 'boolean') return undefined;
  const facts: BearerToken = { headerPresent: token['headerPresent'], wellFormed: token['wellFormed'] };
  if (token['claims'] && typeof token['claims'] === 'object' && !Array.isArray(token['claims'])) facts.claims = token['claims'] as Record<string, unknown>;
  if (typeof token['decodeError'] === 'string') facts.decodeError = token['decodeError'];
  if (typeof token['signatureValid'] === 'boolean') facts.signatureValid = token['signatureValid'];
  if (typeof token['clientGlobal'] === 'boolean') facts.clientGlobal = token['clientGlobal'];
  restoreCredentialFacts(token, facts);
  return facts;
}

/** The order the proxy recorded (`_conformance.order`): its own clock, finer than startedDateTime. */
function recordedOrder(conformance: unknown): ExchangeOrder | undefined {
  const order = (conformance as { order?: unknown } | null | undefined)?.order as Record<string, unknown> | undefined;
  if (!order || typeof order !== 'object') return undefined;
  const { clock, sent, received } = order;
  if (typeof clock !== 'string' || typeof sent !== 'number' || typeof received !== 'number' || !Number.isFinite(sent) || !Number.isFinite(received)) return undefined;
  return { clock, sent, received };
}

/** The body's text as recorded (base64 decoded), or undefined when the recorder kept no text. */
function keptBody(recorded: HarBodyText): CapturedBody | undefined {
  if (typeof recorded.text !== 'string') return undefined;
  const text = recorded.encoding === 'base64' ? Buffer.from(recorded.text, 'base64').toString('utf8') : recorded.text;
  const body: CapturedBody = { text };
  if (recorded._truncated) body.truncated = true;
  return body;
}

function requestBody(postData: HarPostData | undefined): CapturedBody | undefined {
  if (!postData) return undefined;
  const kept = keptBody(postData);
  if (kept) return kept;
  if (Array.isArray(postData.params)) {
    // Some recorders keep only the parsed form parameters.
    return { text: new URLSearchParams(postData.params.map((p) => [p.name, p.value ?? ''])).toString() };
  }
  return undefined;
}

function responseBody(content: HarContent | undefined): CapturedBody | undefined {
  if (!content) return undefined;
  // A body the recorder did not keep: present, but not judged.
  return keptBody(content) ?? ((content.size ?? 0) > 0 ? { text: '', truncated: true } : undefined);
}

/** One HAR entry as an exchange; throws RecordingError when it lacks a request line. */
export function exchangeFromHarEntry(entry: HarEntry, id: string): Exchange {
  const request = entry?.request;
  if (!request || typeof request.method !== 'string' || typeof request.url !== 'string') {
    throw new RecordingError('entry has no request method and url');
  }
  const response = entry.response;
  // Status 0 is how browsers record a request that got no response.
  const answered = response !== undefined && response !== null && typeof response.status === 'number' && response.status > 0;
  // Headers: any case, repeated, HTTP/2 pseudo-headers left out (normalizeHeaders).
  const parts: ExchangeParts = {
    id,
    startedAt: entry.startedDateTime ?? new Date(0).toISOString(),
    method: request.method,
    url: request.url,
    requestHeaders: Array.isArray(request.headers) ? request.headers : undefined,
    requestBody: requestBody(request.postData),
  };
  if (typeof entry.time === 'number' && entry.time >= 0) parts.durationMs = entry.time;
  const order = recordedOrder(entry._conformance);
  if (order) parts.order = order;
  const error = entry._error ?? response?._error;
  if (answered) {
    parts.status = response.status!;
    parts.responseHeaders = Array.isArray(response.headers) ? response.headers : undefined;
    parts.responseBody = responseBody(response.content);
    if (typeof error === 'string') parts.error = error;
  } else {
    parts.error = typeof error === 'string' ? error : 'no response recorded';
  }
  const exchange = buildExchange(parts);
  const mimeType = response?.content?.mimeType;
  if (exchange.response && mimeType && exchange.response.headers['content-type'] === undefined) exchange.response.headers['content-type'] = mimeType;
  const token = recordedToken(entry._conformance);
  if (token) exchange.token = token;
  else judgeForeignCredential(exchange);
  return exchange;
}
