// The proxy's JSONL journal (one HAR entry per line), read in chunks and split into lines.
import { closeSync, openSync, readSync } from 'node:fs';
import type { Exchange } from '../rules/types.ts';
import { exchangeFromHarEntry, type HarEntry } from './har-entry.ts';
import { RecordingError } from './recording-error.ts';

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
