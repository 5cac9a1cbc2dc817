// Writes exchanges as HAR 1.2 entries: one per line in the proxy's JSONL journal, and the same
// entries inside log.entries of a HAR file. Every entry is redacted (core/redact.ts) and carries
// `_conformance` (operation, findings, token facts), which recordings/read.ts reads back.
import type { Judgement } from '../rules/index.ts';
import { findingMessage } from '../rules/message.ts';
import type { BearerToken, Exchange, ExchangeOrder, Finding } from '../rules/types.ts';
import { version } from '../core/version.ts';
import { redactExchange, scrubSecrets, tokenFacts, type KnownSecrets, type SecretSink } from '../core/redact.ts';

export const HAR_CREATOR = { name: 'tmi-conform', version };

/** What an entry says about its judgement; `operation` null: a path the document does not cover. */
export interface Conformance {
  operation: string | null;
  findings: Array<Pick<Finding, 'requirement' | 'level' | 'subject' | 'expected' | 'received' | 'security'> & { message: string }>;
  /** The bearer credential's facts and non-secret claims (the header itself is redacted). */
  token: BearerToken;
  /** The driver's own ordering of its exchanges (Exchange.order), finer than startedDateTime's milliseconds. */
  order?: ExchangeOrder;
  /** Why an exchange on a covered path was not judged (a body nested too deep); absent when it was. */
  notJudged?: string;
}

/** What a driver knows about an exchange beyond the Exchange itself (all optional). */
export interface EntryDetails {
  httpVersion?: string;
  statusText?: string;
  /** HAR timings in milliseconds; `time` is their sum. */
  timings?: { send: number; wait: number; receive: number };
  /** Bytes of the bodies as they crossed the wire (compressed, uncut). */
  requestBodySize?: number;
  responseBodySize?: number;
  serverIPAddress?: string;
  /** Free text, e.g. why there is no response. */
  comment?: string;
}

interface HarNameValue {
  name: string;
  value: string;
}

function asList(headers: Record<string, string>): HarNameValue[] {
  const list: HarNameValue[] = [];
  for (const name in headers) list.push({ name, value: headers[name]! });
  return list;
}

function queryString(url: string): HarNameValue[] {
  const q = url.indexOf('?');
  if (q === -1) return [];
  const hash = url.indexOf('#', q);
  const list: HarNameValue[] = [];
  for (const [name, value] of new URLSearchParams(url.slice(q + 1, hash === -1 ? undefined : hash))) list.push({ name, value });
  return list;
}

/** A finding as an entry shows it: its documented fields, and the message made from them. */
function entryFinding(f: Finding): Conformance['findings'][number] {
  const entry: Conformance['findings'][number] = {
    requirement: f.requirement,
    level: f.level,
    subject: f.subject,
    expected: f.expected,
    received: f.received,
    message: findingMessage(f),
  };
  if (f.security !== undefined) entry.security = f.security;
  return entry;
}

/** Findings with what they quote scrubbed of the exchange's secrets (rules may quote a body). */
export function safeFindings(findings: Finding[], secrets: SecretSink): Finding[] {
  const safe: Finding[] = [];
  for (const f of findings) {
    const expected = scrubSecrets(f.expected, secrets);
    const received = scrubSecrets(f.received, secrets);
    const kept: Finding = { requirement: f.requirement, level: f.level, subject: f.subject, check: f.check, expected, received };
    if (f.security !== undefined) kept.security = scrubSecrets(f.security, secrets);
    if (f.pointer !== undefined) kept.pointer = f.pointer;
    safe.push(kept);
  }
  return safe;
}

export interface RecordedExchange {
  /** The HAR entry, safe to write. */
  entry: Record<string, unknown>;
  /** The judgement's findings, messages scrubbed of the exchange's secrets (for reports). */
  findings: Finding[];
  /** The exchange as the entry holds it, redacted (for reports). */
  safe: Exchange;
}

/**
 * One HAR 1.2 entry for `exchange`, redacted. With a judgement the entry carries
 * `_conformance`, whose finding messages are scrubbed of every secret the redaction found.
 */
export function harEntry(exchange: Exchange, judgement?: Judgement, details: EntryDetails = {}): Record<string, unknown> {
  return recordExchange(exchange, judgement, details).entry;
}

/** `known`: the secrets the session saw in earlier exchanges, masked here too (core/redact.ts KnownSecrets). */
export function recordExchange(exchange: Exchange, judgement?: Judgement, details: EntryDetails = {}, known?: KnownSecrets): RecordedExchange {
  // The secrets masked are collected only to scrub finding messages: most exchanges have none.
  const hasFindings = judgement !== undefined && judgement.findings.length > 0;
  const secrets: SecretSink | undefined = hasFindings ? new Set() : undefined;
  const safe = redactExchange(exchange, secrets, known);
  const findings = hasFindings ? safeFindings(judgement.findings, secrets!) : [];
  const httpVersion = details.httpVersion ?? 'HTTP/1.1';
  const timings = details.timings ?? { send: 0, wait: safe.durationMs ?? 0, receive: 0 };
  const entry: Record<string, unknown> = {
    startedDateTime: safe.startedAt,
    time: Math.round((timings.send + timings.wait + timings.receive) * 1000) / 1000,
    request: harRequest(safe, details, httpVersion),
    response: harResponse(safe, details, httpVersion),
    cache: {},
    timings,
  };
  if (details.serverIPAddress !== undefined) entry['serverIPAddress'] = details.serverIPAddress;
  if (safe.error !== undefined) entry['_error'] = safe.error;
  if (details.comment !== undefined) entry['comment'] = details.comment;
  if (judgement) entry['_conformance'] = conformanceOf(exchange.order, judgement, findings, safe);
  return { entry, findings, safe };
}

/** The entry's request, from the redacted exchange. */
function harRequest(safe: Exchange, details: EntryDetails, httpVersion: string): Record<string, unknown> {
  const requestBody = safe.request.body;
  const request: Record<string, unknown> = {
    method: safe.request.method,
    url: safe.request.url,
    httpVersion,
    cookies: [],
    headers: asList(safe.request.headers),
    queryString: queryString(safe.request.url),
    headersSize: -1,
    bodySize: details.requestBodySize ?? (requestBody ? Buffer.byteLength(requestBody.text) : 0),
  };
  if (requestBody) {
    const postData: Record<string, unknown> = { mimeType: safe.request.headers['content-type'] ?? '', params: [], text: requestBody.text };
    if (requestBody.truncated) postData['_truncated'] = true;
    if (requestBody.overLimit) postData['_overLimit'] = requestBody.overLimit;
    request['postData'] = postData;
  }
  return request;
}

/** The entry's response, from the redacted exchange; without one, status 0 as browsers record it, and the reason in _error. */
function harResponse(safe: Exchange, details: EntryDetails, httpVersion: string): Record<string, unknown> {
  let response: Record<string, unknown>;
  if (safe.response) {
    response = {
      status: safe.response.status,
      statusText: details.statusText ?? '',
      httpVersion,
      cookies: [],
      headers: asList(safe.response.headers),
      content: harContent(safe.response),
      redirectURL: safe.response.headers['location'] ?? '',
      headersSize: -1,
      bodySize: details.responseBodySize ?? -1,
    };
  } else {
    response = {
      status: 0,
      statusText: '',
      httpVersion: '',
      cookies: [],
      headers: [],
      content: { size: 0, mimeType: 'x-unknown' },
      redirectURL: '',
      headersSize: -1,
      bodySize: -1,
    };
  }
  if (safe.error !== undefined) response['_error'] = safe.error;
  return response;
}

/** The response's content: the body kept, and for a body over the limit its real size. */
function harContent(response: NonNullable<Exchange['response']>): Record<string, unknown> {
  const body = response.body;
  const content: Record<string, unknown> = {
    size: body ? Buffer.byteLength(body.text) : 0,
    mimeType: response.headers['content-type'] ?? '',
  };
  if (body) content['text'] = body.text;
  if (body?.truncated) content['_truncated'] = true;
  if (body?.overLimit) {
    content['size'] = body.overLimit.bytes; // the body's size, not the size of what was kept
    content['_overLimit'] = body.overLimit;
  }
  return content;
}

/** The entry's `_conformance`: the judgement, with findings already scrubbed and the token's facts from the redacted exchange. */
function conformanceOf(order: Exchange['order'], judgement: Judgement, findings: Finding[], safe: Exchange): Conformance {
  const conformance: Conformance = {
    operation: judgement.operation?.operation ?? null,
    findings: findings.length === 0 ? [] : findings.map(entryFinding),
    token: tokenFacts(safe.token),
  };
  if (order) conformance.order = order;
  if (judgement.notJudged !== undefined) conformance.notJudged = judgement.notJudged;
  return conformance;
}

/** The text of a HAR document up to the first entry; entries follow, joined by ",". */
export function harPrologue(comment?: string): string {
  const log: Record<string, unknown> = { version: '1.2', creator: HAR_CREATOR };
  if (comment !== undefined) log['comment'] = comment;
  const head = JSON.stringify({ log });
  // '{"log":{...}}' opened up again to take "entries" last.
  return `${head.slice(0, -2)},"entries":[\n`;
}

export const HAR_EPILOGUE = '\n]}}\n';
