// The proxy's JSONL journal (one HAR entry per line), read in chunks and split into lines;
// a gzip-compressed journal (a rotated segment, `.jsonl.gz`) is decompressed as it is read.
import { closeSync, createReadStream, openSync, readSync } from 'node:fs';
import { pipeline } from 'node:stream';
import { createGunzip } from 'node:zlib';
import { StringDecoder } from 'node:string_decoder';
import type { Exchange } from '../rules/types.ts';
import { exchangeFromHarEntry, type HarEntry } from './har-entry.ts';
import { howItBegins, RecordingError } from './recording-error.ts';
import type { ReadOptions } from './read-options.ts';
import { STREAM_ENTRY_ABOVE_CHARS, StreamedEntry } from './streamed-entry.ts';
import { DEFAULT_MAX_BODY_BYTES } from '../core/body-limit.ts';

export interface ReadProgress {
  /** JSONL: a last line cut short (a recorder killed mid-write) was skipped; reported, not fatal. */
  truncatedTail: boolean;
  /** The number of that line. */
  truncatedLine?: number;
}

/** What the reports say of a journal's last line cut short (a recorder stopped mid-write), not read. */
export function cutShortReason(file: string): string {
  return `${file}: its last line was cut short (a recorder stopped mid-write): not read`;
}

/** Bytes read from a journal at a time: few enough exchanges per batch that they die young. */
const JSONL_CHUNK_BYTES = 128 * 1024;
const NEWLINE = 0x0a;
const OPEN_BRACE = 0x7b;
/** How much of a line that is not an entry is kept, to say how it begins. */
const BEGINNING_BYTES = 20;
/** Line numbers a RecordingError lists when many lines could not be read. */
const BAD_LINES_NAMED = 5;

/**
 * The exchanges of a JSONL journal, a chunk's worth at a time (yielding each exchange on its
 * own would cost more than judging it). Every entry that can be read is yielded: a line that is
 * not an entry is skipped, and once the file is read a RecordingError names the skipped lines.
 * A last line cut short (no newline after it) is skipped and said in `progress`, unless no entry
 * came before it. A file with no entry at all is a RecordingError too (empty, blank, garbage).
 * Chunks are read synchronously: a reader that does nothing else gains nothing from waiting on
 * the thread pool, and loses time to it.
 */
export async function* readJsonlBatches(
  path: string,
  progress: ReadProgress = { truncatedTail: false },
  options: ReadOptions = {},
): AsyncGenerator<Exchange[]> {
  const { chunkSize = JSONL_CHUNK_BYTES, maxBodyBytes = DEFAULT_MAX_BODY_BYTES, streamEntryAbove = STREAM_ENTRY_ABOVE_CHARS } = options;
  const lines = new JsonlLines(maxBodyBytes, streamEntryAbove);
  const chunks = isGzip(path) ? gunzippedChunks(path, chunkSize) : fileChunks(path, chunkSize);
  for await (const chunk of chunks) {
    const batch = lines.push(chunk);
    if (batch.length > 0) yield batch;
  }
  const last = lines.end();
  if (last.length > 0) yield last;
  const problem = lines.problem();
  if (problem) throw problem;
  if (lines.cutShort) {
    progress.truncatedTail = true;
    progress.truncatedLine = lines.cutShort.line;
  }
}

/** Whether the file begins with gzip's magic bytes (1f 8b): the name does not decide. */
export function isGzip(path: string): boolean {
  const fd = openSync(path, 'r');
  try {
    const head = Buffer.alloc(2);
    return readSync(fd, head, 0, 2, 0) === 2 && head[0] === 0x1f && head[1] === 0x8b;
  } finally {
    closeSync(fd);
  }
}

/** The file's bytes, one buffer read into again and again (the reader copies what it keeps). */
function* fileChunks(path: string, chunkSize: number): Generator<Buffer> {
  const fd = openSync(path, 'r');
  try {
    const buffer = Buffer.allocUnsafe(chunkSize);
    for (let bytesRead = readSync(fd, buffer); bytesRead > 0; bytesRead = readSync(fd, buffer)) yield buffer.subarray(0, bytesRead);
  } finally {
    closeSync(fd);
  }
}

/** The decompressed bytes of a gzip file; a damaged or cut-off one is a RecordingError, never a shorter recording. */
async function* gunzippedChunks(path: string, chunkSize: number): AsyncGenerator<Buffer> {
  const gunzip = createGunzip({ chunkSize });
  // pipeline() hands a read error on to the gunzip stream, which the loop below then throws.
  pipeline(createReadStream(path, { highWaterMark: chunkSize }), gunzip, () => {});
  try {
    for await (const chunk of gunzip as AsyncIterable<Buffer>) yield chunk;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (typeof code === 'string' && code.startsWith('Z_'))
      throw new RecordingError(`damaged gzip data (${(error as Error).message}): the compressed segment cannot be read in full`);
    throw error;
  } finally {
    gunzip.destroy();
  }
}

/** A line that could not be read as an entry: its number, and why ("line 7 is not JSON (…)"). */
interface BadLine {
  line: number;
  message: string;
}

/**
 * Splits journal bytes into lines and parses them; a line cut between chunks waits for the rest.
 * A line that grows past `streamEntryAbove` bytes (a very large body) is not held: its text goes
 * to a streaming parser as it arrives (recordings/streamed-entry.ts).
 */
class JsonlLines {
  private partial: Buffer[] = [];
  private partialBytes = 0;
  /** The line being gathered, when it is too large to hold, and the decoder of its bytes. */
  private streamed: { entry: StreamedEntry; decoder: StringDecoder; failed?: string } | undefined;
  /** The line being gathered does not begin with "{": its bytes are not kept, only its first few. */
  private notAnEntryBegins: Buffer | undefined;
  private lineNumber = 0;
  private bytes = 0;
  private entries = 0;
  private readonly badLines: BadLine[] = [];
  private badLineCount = 0;
  /** The last line had no newline after it and was not an entry: cut short mid-write. */
  cutShort: BadLine | undefined;

  constructor(
    private readonly maxBodyBytes: number,
    private readonly streamEntryAbove: number,
  ) {}

  push(chunk: Buffer): Exchange[] {
    const batch: Exchange[] = [];
    let start = 0;
    // A byte order mark some editors put first is no part of the first line.
    if (this.bytes === 0 && chunk.length >= 3 && chunk[0] === 0xef && chunk[1] === 0xbb && chunk[2] === 0xbf) start = 3;
    this.bytes += chunk.length;
    let nl = chunk.indexOf(NEWLINE, start);
    if (nl !== -1 && this.isGathering()) {
      this.gather(chunk.subarray(start, nl)); // used at once, before the buffer is read into again
      const bad = this.takeGathered(batch);
      if (bad) this.bad(bad);
      start = nl + 1;
      nl = chunk.indexOf(NEWLINE, start);
    }
    for (; nl !== -1; nl = chunk.indexOf(NEWLINE, start)) {
      this.take(chunk.toString('utf8', start, nl), batch);
      start = nl + 1;
    }
    if (start < chunk.length) this.gather(chunk.subarray(start));
    return batch;
  }

  /** The last line, when the file does not end with a newline. */
  end(): Exchange[] {
    const batch: Exchange[] = [];
    if (!this.isGathering()) return batch;
    const bad = this.takeGathered(batch);
    // Not an entry and no newline after it: the recorder stopped while writing it.
    if (bad) this.cutShort = bad;
    return batch;
  }

  /** What makes the file unreadable once read to its end, or undefined. */
  problem(): RecordingError | undefined {
    if (this.badLineCount > 0) return new RecordingError(describeBadLines(this.badLines, this.badLineCount));
    if (this.entries > 0) return undefined;
    if (this.cutShort)
      return new RecordingError(`no complete entry: ${this.cutShort.message} and the file ends there without a newline (cut short, or not a journal)`);
    return new RecordingError(this.bytes === 0 ? 'the file is empty' : 'the file holds only blank lines, no entry');
  }

  private isGathering(): boolean {
    return this.partial.length > 0 || this.notAnEntryBegins !== undefined || this.streamed !== undefined;
  }

  /** Part of a line whose newline is in a later chunk. */
  private gather(part: Buffer): void {
    if (this.streamed) {
      this.toStreamed(part);
      return;
    }
    const begins = this.notAnEntryBegins;
    if (begins !== undefined) {
      if (begins.length < BEGINNING_BYTES) this.notAnEntryBegins = Buffer.concat([begins, part.subarray(0, BEGINNING_BYTES - begins.length)]);
      return;
    }
    if (this.partial.length === 0) {
      const first = firstNonBlank(part);
      if (first === -1) {
        if (part.length > 0) this.partial.push(Buffer.from(part));
        return;
      }
      if (part[first] !== OPEN_BRACE) {
        // A journal line is an object: this one is not an entry, however long it goes on.
        this.notAnEntryBegins = Buffer.from(part.subarray(first, first + BEGINNING_BYTES));
        return;
      }
    }
    this.partial.push(Buffer.from(part)); // a copy: the chunk's buffer is read into again
    this.partialBytes += part.length;
    if (this.partialBytes > this.streamEntryAbove) {
      // Too large to hold: what was gathered goes to a streaming parser, and the rest as it comes.
      this.streamed = { entry: new StreamedEntry(this.maxBodyBytes), decoder: new StringDecoder('utf8') };
      for (const gathered of this.partial) this.toStreamed(gathered);
      this.partial = [];
      this.partialBytes = 0;
    }
  }

  private toStreamed(part: Buffer): void {
    const streamed = this.streamed!;
    if (streamed.failed !== undefined) return; // the rest of a line already known not to be JSON
    try {
      streamed.entry.write(streamed.decoder.write(part));
    } catch (error) {
      streamed.failed = (error as Error).message;
    }
  }

  /** The line gathered so far, taken whole: the line's BadLine when it is not an entry (not yet counted). */
  private takeGathered(batch: Exchange[]): BadLine | undefined {
    if (this.streamed) return this.takeStreamed(batch);
    const begins = this.notAnEntryBegins;
    const text = Buffer.concat(begins === undefined ? this.partial : [begins]).toString('utf8');
    this.partial = [];
    this.partialBytes = 0;
    this.notAnEntryBegins = undefined;
    this.lineNumber++;
    return this.parsed(parseJsonlLine(text, this.lineNumber, this.maxBodyBytes), batch);
  }

  private takeStreamed(batch: Exchange[]): BadLine | undefined {
    const streamed = this.streamed!;
    this.streamed = undefined;
    this.lineNumber++;
    let entry: HarEntry;
    try {
      if (streamed.failed !== undefined) throw new Error(streamed.failed);
      streamed.entry.write(streamed.decoder.end());
      entry = streamed.entry.end() as HarEntry;
    } catch (error) {
      return { line: this.lineNumber, message: `line ${this.lineNumber} is not JSON (${(error as Error).message})` };
    }
    return this.parsed(exchangeFromLine(entry, this.lineNumber, this.maxBodyBytes), batch);
  }

  private take(line: string, batch: Exchange[]): void {
    this.lineNumber++;
    const bad = this.parsed(parseJsonlLine(line, this.lineNumber, this.maxBodyBytes), batch);
    if (bad) this.bad(bad);
  }

  private parsed(parsed: Exchange | BadLine | undefined, batch: Exchange[]): BadLine | undefined {
    if (parsed === undefined) return undefined;
    if ('message' in parsed) return parsed;
    this.entries++;
    batch.push(parsed);
    return undefined;
  }

  private bad(line: BadLine): void {
    this.badLineCount++;
    if (this.badLines.length < BAD_LINES_NAMED) this.badLines.push(line);
  }
}

/** "line 7 is not a JSON object (…)", and when there are more: "; 9 lines are not entries: 7, 12, 13, 20, 31 and 4 more". */
function describeBadLines(named: BadLine[], count: number): string {
  const first = named[0]!.message;
  if (count === 1) return first;
  const more = count - named.length;
  return `${first}; ${count} lines are not entries: ${named.map((b) => b.line).join(', ')}${more > 0 ? ` and ${more} more` : ''}`;
}

/** The index of the first byte that is not JSON whitespace, or -1. */
function firstNonBlank(part: Buffer): number {
  for (let i = 0; i < part.length; i++) {
    const b = part[i]!;
    if (b !== 0x20 && b !== 0x09 && b !== 0x0d && b !== 0x0a) return i;
  }
  return -1;
}

/** The exchanges of a JSONL journal, one by one. */
export async function* readJsonl(path: string, progress?: ReadProgress, options: ReadOptions = {}): AsyncGenerator<Exchange> {
  for await (const batch of readJsonlBatches(path, progress, options)) yield* batch;
}

/** A journal line as an exchange; undefined for a blank line; a BadLine for a line that is not an entry. */
function parseJsonlLine(line: string, lineNumber: number, maxBodyBytes: number): Exchange | BadLine | undefined {
  const start = line.trimStart();
  if (start === '') return undefined;
  // An entry is an object: anything else is named by how it begins (a long junk line is not quoted whole).
  if (!start.startsWith('{')) return { line: lineNumber, message: `line ${lineNumber} is not a JSON object (it begins with ${howItBegins(start)})` };
  let entry: HarEntry;
  try {
    entry = JSON.parse(line) as HarEntry;
  } catch (error) {
    return { line: lineNumber, message: `line ${lineNumber} is not JSON (${(error as Error).message})` };
  }
  return exchangeFromLine(entry, lineNumber, maxBodyBytes);
}

function exchangeFromLine(entry: HarEntry, lineNumber: number, maxBodyBytes: number): Exchange | BadLine {
  try {
    return exchangeFromHarEntry(entry, `${lineNumber}`, maxBodyBytes);
  } catch (error) {
    return { line: lineNumber, message: `line ${lineNumber}: ${(error as Error).message}` };
  }
}
