// A HAR file read as a stream: the JSON text is scanned for the elements of log.entries and one
// element is parsed at a time, so memory stays flat whatever the file size. An element whose text
// grows past STREAM_ENTRY_ABOVE_CHARS (a very large body) is not held: its text goes on to a
// streaming parser (recordings/streamed-entry.ts) as it is scanned.
import { createReadStream } from 'node:fs';
import type { Exchange } from '../rules/types.ts';
import { exchangeFromHarEntry, type HarEntry } from './har-entry.ts';
import { howItBegins, RecordingError } from './recording-error.ts';
import { STREAM_ENTRY_ABOVE_CHARS, StreamedEntry } from './streamed-entry.ts';
import type { ReadOptions } from './read-options.ts';
import { DEFAULT_MAX_BODY_BYTES } from '../core/body-limit.ts';

/**
 * The exchanges of a HAR file, scanning the JSON text for the elements of log.entries and
 * parsing one element at a time.
 */
export async function* readHar(path: string, options: ReadOptions = {}): AsyncGenerator<Exchange> {
  const { chunkSize = 1 << 20, maxBodyBytes = DEFAULT_MAX_BODY_BYTES, streamEntryAbove = STREAM_ENTRY_ABOVE_CHARS } = options;
  const scan = new HarScan(maxBodyBytes, streamEntryAbove);
  for await (const chunk of createReadStream(path, { encoding: 'utf8', highWaterMark: chunkSize }) as AsyncIterable<string>) {
    scan.add(chunk);
    for (const entry of scan.entries()) {
      try {
        yield exchangeFromHarEntry(entry, `${scan.entryIndex}`, maxBodyBytes);
      } catch (error) {
        notReadable(`log.entries[${scan.entryIndex}]: ${(error as Error).message}`);
      }
    }
  }
  scan.end();
}

function notReadable(what: string): never {
  throw new RecordingError(`not a readable HAR file: ${what}`);
}

const isBlank = (c: string) => c === ' ' || c === '\n' || c === '\r' || c === '\t';

/** The scan of a HAR file's text, chunk after chunk: where it is in the JSON, and the element of log.entries being captured. */
class HarScan {
  private readonly stack: string[] = []; // '{' or '['
  private readonly keys: Array<string | undefined> = []; // last key seen per open object
  private text = ''; // unconsumed text
  private pos = 0;
  private lastString: string | undefined;
  private entriesDepth = -1; // stack depth of the log.entries array once inside it
  private entryStart = -1; // start of the element being captured
  /** The index in log.entries of the element being captured (or last given, until the next is asked for). */
  entryIndex = 0;
  private sawEntries = false;
  private inString = false;
  private sawDocument = false; // a character other than blank space was seen
  private streamed: StreamedEntry | undefined; // the element being captured, when it is too large to hold
  private fed = 0; // text before this index has gone to `streamed`

  constructor(
    private readonly maxBodyBytes: number,
    private readonly streamEntryAbove: number,
  ) {}

  /** Appends a chunk, keeping of the text before it only what is still needed: the element being captured, or nothing. */
  add(chunk: string): void {
    if (this.entryStart >= 0 && this.streamed === undefined && this.text.length - this.entryStart > this.streamEntryAbove) {
      // Too large to hold: what was captured goes to a streaming parser, and the rest as it is scanned.
      this.streamed = new StreamedEntry(this.maxBodyBytes);
      this.fed = this.entryStart;
      this.toStreamed(this.pos);
    }
    if (this.streamed !== undefined) {
      this.toStreamed(this.pos);
      this.keepFrom(Math.max(0, this.pos - 1024), chunk);
    } else if (this.entryStart >= 0) {
      this.keepFrom(this.entryStart, chunk);
      this.entryStart = 0;
    } else {
      // A little already-read text stays, so an escaped quote across chunks is still seen as one.
      this.keepFrom(Math.max(0, this.pos - 1024), chunk);
    }
  }

  /** The elements of log.entries the text read so far completes, scanning it to its end. */
  *entries(): Generator<HarEntry> {
    while (this.pos < this.text.length) {
      if (this.inString) {
        if (!this.skipString()) break;
        continue;
      }
      const c = this.text[this.pos]!;
      this.checkPlace(c);
      if (c === '"') {
        if (!this.string()) break;
        continue;
      }
      if (c === ':') {
        if (this.stack[this.stack.length - 1] === '{') this.keys[this.stack.length - 1] = this.lastString;
      } else if (c === '{' || c === '[') {
        this.open(c);
      } else if (c === '}' || c === ']') {
        const entry = this.close(c);
        if (entry !== undefined) {
          yield entry;
          this.entryIndex++;
        }
      } else if (c !== ',' && !isBlank(c) && this.stack.length === 0 && this.sawEntries) {
        notReadable('text after the end of the document');
      }
      this.pos++;
    }
  }

  /** At the end of the file: it held a HAR document, complete, with log.entries. */
  end(): void {
    if (!this.sawDocument) throw new RecordingError(this.text === '' ? 'the file is empty' : 'the file holds only blank space, no HAR document');
    if (this.stack.length > 0 || this.inString)
      notReadable(`the file ends inside ${this.entriesDepth >= 0 ? `log.entries[${this.entryIndex}]` : 'the document'}`);
    if (!this.sawEntries) notReadable('no log.entries array');
  }

  /** The text from `start` on, then the chunk; positions move with it. */
  private keepFrom(start: number, chunk: string): void {
    this.text = this.text.slice(start) + chunk;
    this.pos -= start;
    if (this.streamed !== undefined) this.fed -= start;
  }

  private toStreamed(end: number): void {
    try {
      this.streamed!.write(this.text.slice(this.fed, end));
    } catch (error) {
      notReadable(`log.entries[${this.entryIndex}] is not valid JSON (${(error as Error).message})`);
    }
    this.fed = end;
  }

  /** Jumps past the open string's closing quote; false when it is not in the text read so far. */
  private skipString(): boolean {
    const end = closingQuote(this.text, this.pos);
    if (end === -1) {
      this.pos = this.text.length;
      return false;
    }
    this.pos = end + 1;
    this.inString = false;
    return true;
  }

  /** The document is one object, and each element of log.entries an object. */
  private checkPlace(c: string): void {
    if (!this.sawDocument && !isBlank(c) && c !== '\uFEFF') {
      // Checked at once, so that a binary or other file is not scanned to its end first.
      if (c !== '{') notReadable(`it begins with ${howItBegins(this.text.slice(this.pos))}, not with "{" (a HAR file is one JSON object)`);
      this.sawDocument = true;
    }
    if (this.atEntryElement() && c !== '{' && c !== ']' && c !== ',' && !isBlank(c)) notReadable(`log.entries[${this.entryIndex}] is not an object`);
  }

  private atEntryElement(): boolean {
    return this.entriesDepth >= 0 && this.stack.length === this.entriesDepth && this.entryStart < 0;
  }

  /**
   * At a string's opening quote. Keys matter only near the root (log, entries): read them whole
   * there; elsewhere the string is skipped. False when the text read so far does not hold it all.
   */
  private string(): boolean {
    if (this.stack.length <= 2 && this.entryStart < 0) {
      const end = closingQuote(this.text, this.pos + 1);
      if (end === -1) return false; // need more text
      try {
        this.lastString = JSON.parse(this.text.slice(this.pos, end + 1)) as string;
      } catch (error) {
        notReadable(`a string near the start is not valid JSON (${(error as Error).message})`);
      }
      this.pos = end + 1;
      return true;
    }
    this.inString = true;
    this.pos++;
    return true;
  }

  private open(c: '{' | '['): void {
    if (this.atEntryElement()) this.entryStart = this.pos;
    const { stack, keys } = this;
    stack.push(c);
    keys.push(undefined);
    if (c === '[' && stack.length === 3 && keys[1] === 'entries' && keys[0] === 'log' && stack[0] === '{' && stack[1] === '{') {
      this.entriesDepth = stack.length;
      this.sawEntries = true;
    }
  }

  /** Closes an object or array; the element of log.entries it completes, if any. */
  private close(c: '}' | ']'): HarEntry | undefined {
    const open = this.stack.pop();
    this.keys.pop();
    if ((c === '}' && open !== '{') || (c === ']' && open !== '[')) notReadable(`unbalanced "${c}"`);
    if (this.entryStart >= 0 && this.stack.length === this.entriesDepth) {
      const entry = this.parseEntry();
      this.entryStart = -1;
      return entry;
    }
    if (this.entriesDepth >= 0 && this.stack.length === this.entriesDepth - 1) this.entriesDepth = -1; // left log.entries
    return undefined;
  }

  /** The element just closed at `pos`, parsed whole or finished by the streaming parser. */
  private parseEntry(): HarEntry {
    try {
      if (this.streamed === undefined) return JSON.parse(this.text.slice(this.entryStart, this.pos + 1)) as HarEntry;
      this.toStreamed(this.pos + 1);
      const entry = this.streamed.end() as HarEntry;
      this.streamed = undefined;
      return entry;
    } catch (error) {
      if (error instanceof RecordingError) throw error;
      return notReadable(`log.entries[${this.entryIndex}] is not valid JSON (${(error as Error).message})`);
    }
  }
}

/**
 * The index of the quote that closes a string whose text goes on at `from`, or -1 if it is not
 * in `text` yet. A quote preceded by an odd run of backslashes is escaped; the run is counted
 * back into text before `from` (a string's opening quote stops it), so a backslash that ended
 * the previous chunk still escapes a quote that begins the next.
 */
function closingQuote(text: string, from: number): number {
  for (let quote = text.indexOf('"', from); quote !== -1; quote = text.indexOf('"', quote + 1)) {
    let backslashes = 0;
    for (let i = quote - 1; i >= 0 && text.charCodeAt(i) === 92; i--) backslashes++;
    if (backslashes % 2 === 0) return quote;
  }
  return -1;
}
