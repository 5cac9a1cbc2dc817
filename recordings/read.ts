// Reads recorded traffic as exchanges, streaming: HAR 1.2 files (from any recorder) and the
// proxy's JSONL journal (one HAR entry per line). Memory stays flat whatever the file size:
// HAR files are scanned for the elements of log.entries, one entry parsed at a time.
import { closeSync, createReadStream, openSync, readSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { buildExchange, type ExchangeParts } from '../rules/exchange.ts';
import type { BearerToken, CapturedBody, Exchange } from '../rules/types.ts';
import { judgeForeignCredential, restoreCredentialFacts } from './credentials.ts';

/** A file that cannot be read as a recording; the message names the file and what is wrong. */
export class RecordingError extends Error {
  override name = 'RecordingError';
}

export type RecordingFormat = 'har' | 'jsonl';

interface HarHeader {
  name: string;
  value: string;
}
interface HarContent {
  size?: number;
  mimeType?: string;
  text?: string;
  encoding?: string;
  _truncated?: boolean;
}
interface HarPostData {
  mimeType?: string;
  text?: string;
  params?: Array<{ name: string; value?: string }>;
  encoding?: string;
  _truncated?: boolean;
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
 * The bearer credential as the proxy recorded it (`_conformance.token`, see redact.ts
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

function decodeText(text: string, encoding: string | undefined): string {
  return encoding === 'base64' ? Buffer.from(text, 'base64').toString('utf8') : text;
}

function requestBody(postData: HarPostData | undefined): CapturedBody | undefined {
  if (!postData) return undefined;
  if (typeof postData.text === 'string') {
    const body: CapturedBody = { text: decodeText(postData.text, postData.encoding) };
    if (postData._truncated) body.truncated = true;
    return body;
  }
  if (Array.isArray(postData.params)) {
    // Some recorders keep only the parsed form parameters.
    return { text: new URLSearchParams(postData.params.map((p) => [p.name, p.value ?? ''])).toString() };
  }
  return undefined;
}

function responseBody(content: HarContent | undefined): CapturedBody | undefined {
  if (!content) return undefined;
  if (typeof content.text === 'string') {
    const body: CapturedBody = { text: decodeText(content.text, content.encoding) };
    if (content._truncated) body.truncated = true;
    return body;
  }
  // A body the recorder did not keep: present, but not judged.
  return (content.size ?? 0) > 0 ? { text: '', truncated: true } : undefined;
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

/** Decides the format from the name, else from the first line. */
export async function detectFormat(path: string): Promise<RecordingFormat> {
  if (/\.(jsonl|ndjson)$/i.test(path)) return 'jsonl';
  if (/\.har$/i.test(path)) return 'har';
  const handle = await open(path, 'r');
  try {
    const { buffer, bytesRead } = await handle.read(Buffer.alloc(64 * 1024), 0, 64 * 1024, 0);
    const head = buffer.subarray(0, bytesRead).toString('utf8');
    const firstLine = head.split('\n', 1)[0]!.trim();
    try {
      const parsed = JSON.parse(firstLine) as Record<string, unknown>;
      return 'log' in parsed ? 'har' : 'jsonl';
    } catch {
      return 'har';
    }
  } finally {
    await handle.close();
  }
}

export interface ReadProgress {
  /** JSONL: a last line cut short (a recorder killed mid-write); reported, not fatal. */
  truncatedTail: boolean;
}

/** Bytes read from a journal at a time: few enough exchanges per batch that they die young. */
const JSONL_CHUNK_BYTES = 128 * 1024;
const NEWLINE = 0x0a;

/**
 * The exchanges of a JSONL journal, a chunk's worth at a time (yielding each exchange on its
 * own would cost more than judging it). A malformed line other than a cut-off last one is fatal.
 * Chunks are read synchronously: a reader that does nothing else gains nothing from waiting on
 * the thread pool, and loses time to it.
 */
export async function* readJsonlBatches(path: string, progress: ReadProgress = { truncatedTail: false }, chunkBytes = JSONL_CHUNK_BYTES): AsyncGenerator<Exchange[]> {
  const lines = new JsonlLines();
  const fd = openSync(path, 'r');
  try {
    const buffer = Buffer.allocUnsafe(chunkBytes);
    for (let bytesRead = readSync(fd, buffer); bytesRead > 0; bytesRead = readSync(fd, buffer)) {
      const batch = lines.push(buffer.subarray(0, bytesRead));
      if (batch.length > 0) yield batch;
    }
  } finally {
    closeSync(fd);
  }
  const last = lines.end();
  if (last.length > 0) yield last;
  if (lines.pendingError) progress.truncatedTail = true;
}

/** Splits journal bytes into lines and parses them; a line cut between chunks waits for the rest. */
class JsonlLines {
  private partial: Buffer[] = [];
  private lineNumber = 0;
  /** A line that was not JSON: fatal unless it turns out to be the last one (cut off mid-write). */
  pendingError: RecordingError | undefined;

  push(chunk: Buffer): Exchange[] {
    const batch: Exchange[] = [];
    let start = 0;
    let nl = chunk.indexOf(NEWLINE);
    if (nl !== -1 && this.partial.length > 0) {
      this.partial.push(chunk.subarray(0, nl)); // used at once, before the buffer is read into again
      this.take(Buffer.concat(this.partial).toString('utf8'), batch);
      this.partial = [];
      start = nl + 1;
      nl = chunk.indexOf(NEWLINE, start);
    }
    for (; nl !== -1; nl = chunk.indexOf(NEWLINE, start)) {
      this.take(chunk.toString('utf8', start, nl), batch);
      start = nl + 1;
    }
    // A copy: the chunk's buffer is read into again.
    if (start < chunk.length) this.partial.push(Buffer.from(chunk.subarray(start)));
    return batch;
  }

  /** The last line, when the file does not end with a newline. */
  end(): Exchange[] {
    const batch: Exchange[] = [];
    if (this.partial.length > 0) this.take(Buffer.concat(this.partial).toString('utf8'), batch);
    this.partial = [];
    return batch;
  }

  private take(line: string, batch: Exchange[]): void {
    this.lineNumber++;
    if (this.pendingError) throw this.pendingError; // the bad line was not the last one
    const parsed = parseJsonlLine(line, this.lineNumber);
    if (parsed instanceof RecordingError) this.pendingError = parsed;
    else if (parsed) batch.push(parsed);
  }
}

/** The exchanges of a JSONL journal, one by one. */
export async function* readJsonl(path: string, progress?: ReadProgress): AsyncGenerator<Exchange> {
  for await (const batch of readJsonlBatches(path, progress)) yield* batch;
}

/** A journal line as an exchange; undefined for a blank line; a RecordingError (returned) for a line that is not JSON. */
function parseJsonlLine(line: string, lineNumber: number): Exchange | RecordingError | undefined {
  let entry: HarEntry;
  try {
    entry = JSON.parse(line) as HarEntry;
  } catch (error) {
    if (line.trim() === '') return undefined;
    return new RecordingError(`line ${lineNumber} is not JSON (${(error as Error).message})`);
  }
  try {
    return exchangeFromHarEntry(entry, `${lineNumber}`);
  } catch (error) {
    throw new RecordingError(`line ${lineNumber}: ${(error as Error).message}`);
  }
}

/**
 * The exchanges of a HAR file, scanning the JSON text for the elements of log.entries and
 * parsing one element at a time.
 */
export async function* readHar(path: string, chunkSize = 1 << 20): AsyncGenerator<Exchange> {
  const stream = createReadStream(path, { encoding: 'utf8', highWaterMark: chunkSize });
  const stack: string[] = []; // '{' or '['
  const keys: Array<string | undefined> = []; // last key seen per open object
  let text = ''; // unconsumed text
  let pos = 0;
  let lastString: string | undefined;
  let entriesDepth = -1; // stack depth of the log.entries array once inside it
  let entryStart = -1; // start of the element being captured
  let entryIndex = 0;
  let sawEntries = false;
  let inString = false;

  const fail = (what: string): never => {
    throw new RecordingError(`not a readable HAR file: ${what}`);
  };

  for await (const chunk of stream as AsyncIterable<string>) {
    // Keep only what is still needed: the element being captured, or nothing.
    if (entryStart >= 0) {
      text = text.slice(entryStart) + chunk;
      pos -= entryStart;
      entryStart = 0;
    } else {
      // A little already-read text stays, so an escaped quote across chunks is still seen as one.
      const keep = Math.max(0, pos - 1024);
      text = text.slice(keep) + chunk;
      pos -= keep;
    }
    while (pos < text.length) {
      if (inString) {
        // Jump to the next quote; a quote preceded by an odd run of backslashes is escaped.
        const quote = text.indexOf('"', pos);
        if (quote === -1) {
          pos = text.length;
          break;
        }
        let backslashes = 0;
        for (let i = quote - 1; i >= 0 && text.charCodeAt(i) === 92; i--) backslashes++;
        pos = quote + 1;
        if (backslashes % 2 === 1) continue;
        inString = false;
        continue;
      }
      const c = text[pos]!;
      const atEntryElement = entriesDepth >= 0 && stack.length === entriesDepth && entryStart < 0;
      if (atEntryElement && c !== '{' && c !== ']' && c !== ',' && c !== ' ' && c !== '\n' && c !== '\r' && c !== '\t') {
        fail(`log.entries[${entryIndex}] is not an object`);
      }
      if (c === '"') {
        // Keys matter only near the root (log, entries); read them whole there.
        if (stack.length <= 2 && entryStart < 0) {
          const end = findStringEnd(text, pos + 1);
          if (end === -1) break; // need more text
          lastString = JSON.parse(text.slice(pos, end + 1)) as string;
          pos = end + 1;
          continue;
        }
        inString = true;
        pos++;
        continue;
      }
      if (c === ':') {
        if (stack[stack.length - 1] === '{') keys[stack.length - 1] = lastString;
      } else if (c === '{' || c === '[') {
        if (atEntryElement) entryStart = pos;
        stack.push(c);
        keys.push(undefined);
        if (c === '[' && stack.length === 3 && keys[1] === 'entries' && keys[0] === 'log' && stack[0] === '{' && stack[1] === '{') {
          entriesDepth = stack.length;
          sawEntries = true;
        }
      } else if (c === '}' || c === ']') {
        const open = stack.pop();
        keys.pop();
        if ((c === '}' && open !== '{') || (c === ']' && open !== '[')) fail(`unbalanced "${c}"`);
        if (entryStart >= 0 && stack.length === entriesDepth) {
          const raw = text.slice(entryStart, pos + 1);
          entryStart = -1;
          let entry: HarEntry;
          try {
            entry = JSON.parse(raw) as HarEntry;
          } catch (error) {
            fail(`log.entries[${entryIndex}] is not valid JSON (${(error as Error).message})`);
          }
          try {
            yield exchangeFromHarEntry(entry!, `${entryIndex}`);
          } catch (error) {
            fail(`log.entries[${entryIndex}]: ${(error as Error).message}`);
          }
          entryIndex++;
        } else if (entriesDepth >= 0 && stack.length === entriesDepth - 1) {
          entriesDepth = -1; // left log.entries
        }
      } else if (c !== ',' && c !== ' ' && c !== '\n' && c !== '\r' && c !== '\t' && stack.length === 0 && sawEntries) {
        fail('text after the end of the document');
      }
      pos++;
    }
  }
  if (stack.length > 0 || inString) fail(`the file ends inside ${entriesDepth >= 0 ? `log.entries[${entryIndex}]` : 'the document'}`);
  if (!sawEntries) fail('no log.entries array');
}

/** The index of the closing quote of a string starting at `from`, or -1 if not in `text`. */
function findStringEnd(text: string, from: number): number {
  let i = from;
  for (;;) {
    const quote = text.indexOf('"', i);
    if (quote === -1) return -1;
    let backslashes = 0;
    for (let j = quote - 1; j >= from && text.charCodeAt(j) === 92; j--) backslashes++;
    if (backslashes % 2 === 0) return quote;
    i = quote + 1;
  }
}

/** The exchanges of a recording, in batches: the fast way to read a large file. */
export async function* readRecordingBatches(path: string, progress?: ReadProgress): AsyncGenerator<Exchange[]> {
  const format = await detectFormat(path);
  if (format === 'jsonl') {
    yield* readJsonlBatches(path, progress);
    return;
  }
  // HAR entries are found by a scan that costs more than yielding them one by one.
  for await (const exchange of readHar(path)) yield [exchange];
}

export async function* readRecording(path: string, progress?: ReadProgress): AsyncGenerator<Exchange> {
  for await (const batch of readRecordingBatches(path, progress)) yield* batch;
}
