// One HAR 1.2 entry (from any recorder, or a line of the proxy's journal) as an exchange.
import { buildExchange, type ExchangeParts } from '../rules/exchange.ts';
import type { BearerToken, CapturedBody, Exchange, ExchangeOrder, OverLimit } from '../rules/types.ts';
import { judgeForeignCredential, restoreCredentialFacts } from './credentials.ts';
import { markWhatWasNotKept } from './kept-response.ts';
import { RecordingError } from './recording-error.ts';
import { LongString } from './streamed-entry.ts';
import { DEFAULT_MAX_BODY_BYTES, describeBytes } from '../core/body-limit.ts';

interface HarHeader {
  name: string;
  value: string;
}
/** What request.postData and response.content have in common: a kept body. */
interface HarBodyText {
  mimeType?: string;
  /** A LongString when the text was over the body limit as it was read (recordings/streamed-entry.ts). */
  text?: string | LongString;
  encoding?: string;
  _truncated?: boolean;
  /** What the proxy knew of a body over its limit (recordings/write.ts). */
  _overLimit?: unknown;
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
  if (typeof clock !== 'string' || typeof sent !== 'number' || typeof received !== 'number' || !Number.isFinite(sent) || !Number.isFinite(received))
    return undefined;
  return { clock, sent, received };
}

/** The body's text as recorded (base64 decoded), or undefined when the recorder kept no text. */
function keptBody(recorded: HarBodyText, limit: number): CapturedBody | undefined {
  // Held whole or streamed, a text over the limit becomes the same LongString (recordings/streamed-entry.ts).
  const text = typeof recorded.text === 'string' ? LongString.of(recorded.text, limit) : recorded.text;
  const base64 = recorded.encoding === 'base64';
  if (text instanceof LongString) {
    // Over the limit as it was read: only its first bytes were kept. Decoded, base64 is three quarters its size; its hash would be of the encoding, so none is given.
    const overLimit = base64 ? { bytes: Math.floor((text.over.bytes * 3) / 4), limit } : text.over;
    return { text: base64 ? Buffer.from(text.prefix, 'base64').toString('utf8') : text.prefix, truncated: true, overLimit };
  }
  if (typeof text !== 'string') return undefined;
  const body: CapturedBody = { text: base64 ? Buffer.from(text, 'base64').toString('utf8') : text };
  if (recorded._truncated) body.truncated = true;
  const recordedOverLimit = overLimitOf(recorded._overLimit);
  if (recordedOverLimit) body.overLimit = recordedOverLimit;
  return body;
}

/** `_overLimit` as the proxy wrote it, or undefined when it is not one. */
function overLimitOf(value: unknown): OverLimit | undefined {
  if (!value || typeof value !== 'object') return undefined;
  const { bytes, limit, sha256 } = value as Record<string, unknown>;
  if (typeof bytes !== 'number' || typeof limit !== 'number' || !(bytes > limit)) return undefined;
  return typeof sha256 === 'string' ? { bytes, limit, sha256 } : { bytes, limit };
}

function requestBody(postData: HarPostData | undefined, limit: number): CapturedBody | undefined {
  if (!postData) return undefined;
  const kept = keptBody(postData, limit);
  if (kept) return kept;
  if (Array.isArray(postData.params)) {
    // Some recorders keep only the parsed form parameters.
    return { text: new URLSearchParams(postData.params.map((p) => [p.name, p.value ?? ''])).toString() };
  }
  return undefined;
}

/**
 * A header value is at most a few kilobytes on any server; one over the body limit (however it
 * was read: streamed, or held whole) makes the entry unreadable, said the same way either way.
 */
function refuseHugeHeaders(headers: unknown, which: 'request' | 'response', limit: number): void {
  if (!Array.isArray(headers)) return;
  for (const header of headers as Array<{ name?: unknown; value?: unknown } | null>) {
    const value = header?.value;
    const bytes = value instanceof LongString ? value.over.bytes : typeof value === 'string' && value.length * 3 > limit ? Buffer.byteLength(value) : 0;
    if (bytes > limit)
      throw new RecordingError(`a ${which} header (${String(header!.name).slice(0, 40)}) is ${describeBytes(bytes)} long, over the body limit`);
  }
}

/**
 * One HAR entry as an exchange; throws RecordingError when it lacks a request line. A body over
 * `maxBodyBytes` keeps its first bytes, size and hash, and is not judged (core/body-limit.ts).
 */
export function exchangeFromHarEntry(entry: HarEntry, id: string, maxBodyBytes = DEFAULT_MAX_BODY_BYTES): Exchange {
  const request = entry?.request;
  if (!request || typeof request.method !== 'string' || typeof request.url !== 'string') {
    throw new RecordingError(
      (request?.url as unknown) instanceof LongString
        ? `request.url is ${describeBytes((request!.url as unknown as LongString).over.bytes)} long, over the body limit`
        : 'entry has no request method and url',
    );
  }
  const response = entry.response;
  refuseHugeHeaders(request.headers, 'request', maxBodyBytes);
  refuseHugeHeaders(response?.headers, 'response', maxBodyBytes);
  // Status 0 is how browsers record a request that got no response.
  const answered = response !== undefined && response !== null && typeof response.status === 'number' && response.status > 0;
  // Headers: any case, repeated, HTTP/2 pseudo-headers left out (normalizeHeaders).
  const parts: ExchangeParts = {
    id,
    startedAt: entry.startedDateTime ?? new Date(0).toISOString(),
    method: request.method,
    url: request.url,
    requestHeaders: Array.isArray(request.headers) ? request.headers : undefined,
    requestBody: requestBody(request.postData, maxBodyBytes),
  };
  if (typeof entry.time === 'number' && entry.time >= 0) parts.durationMs = entry.time;
  const order = recordedOrder(entry._conformance);
  if (order) parts.order = order;
  const error = entry._error ?? response?._error;
  if (answered) {
    parts.status = response.status!;
    parts.responseHeaders = Array.isArray(response.headers) ? response.headers : undefined;
    parts.responseBody = response.content ? keptBody(response.content, maxBodyBytes) : undefined;
    if (typeof error === 'string') parts.error = error;
  } else {
    parts.error = typeof error === 'string' ? error : 'no response recorded';
  }
  const exchange = buildExchange(parts);
  const mimeType = response?.content?.mimeType;
  // "x-unknown": what browsers record when the response named no media type.
  if (exchange.response && mimeType && mimeType !== 'x-unknown' && exchange.response.headers['content-type'] === undefined)
    exchange.response.headers['content-type'] = mimeType;
  const token = recordedToken(entry._conformance);
  if (token) exchange.token = token;
  else judgeForeignCredential(exchange);
  // The kit's own entries (with `_conformance`) keep every header and body as they were.
  if (entry._conformance === undefined) markWhatWasNotKept(exchange, response?.content?.size);
  return exchange;
}
