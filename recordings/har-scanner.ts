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
  let sawDocument = false; // a character other than blank space was seen
  let streamed: StreamedEntry | undefined; // the element being captured, when it is too large to hold
  let fed = 0; // text before this index has gone to `streamed`

  const fail = (what: string): never => {
    throw new RecordingError(`not a readable HAR file: ${what}`);
  };

  const toStreamed = (end: number): void => {
    try {
      streamed!.write(text.slice(fed, end));
    } catch (error) {
      fail(`log.entries[${entryIndex}] is not valid JSON (${(error as Error).message})`);
    }
    fed = end;
  };

  for await (const chunk of stream as AsyncIterable<string>) {
    // Keep only what is still needed: the element being captured, or nothing.
    if (entryStart >= 0 && streamed === undefined && text.length - entryStart > streamEntryAbove) {
      // Too large to hold: what was captured goes to a streaming parser, and the rest as it is scanned.
      streamed = new StreamedEntry(maxBodyBytes);
      fed = entryStart;
      toStreamed(pos);
    }
    if (streamed !== undefined) {
      toStreamed(pos);
      const keep = Math.max(0, pos - 1024);
      text = text.slice(keep) + chunk;
      pos -= keep;
      fed -= keep;
    } else if (entryStart >= 0) {
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
        // Jump past the string's closing quote, or to the end of the text read so far.
        const end = closingQuote(text, pos);
        if (end === -1) {
          pos = text.length;
          break;
        }
        pos = end + 1;
        inString = false;
        continue;
      }
      const c = text[pos]!;
      if (!sawDocument && c !== ' ' && c !== '\n' && c !== '\r' && c !== '\t' && c !== '\uFEFF') {
        // Checked at once, so that a binary or other file is not scanned to its end first.
        if (c !== '{') fail(`it begins with ${howItBegins(text.slice(pos))}, not with "{" (a HAR file is one JSON object)`);
        sawDocument = true;
      }
      const atEntryElement = entriesDepth >= 0 && stack.length === entriesDepth && entryStart < 0;
      if (atEntryElement && c !== '{' && c !== ']' && c !== ',' && c !== ' ' && c !== '\n' && c !== '\r' && c !== '\t') {
        fail(`log.entries[${entryIndex}] is not an object`);
      }
      if (c === '"') {
        // Keys matter only near the root (log, entries); read them whole there.
        if (stack.length <= 2 && entryStart < 0) {
          const end = closingQuote(text, pos + 1);
          if (end === -1) break; // need more text
          try {
            lastString = JSON.parse(text.slice(pos, end + 1)) as string;
          } catch (error) {
            fail(`a string near the start is not valid JSON (${(error as Error).message})`);
          }
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
          let entry: HarEntry;
          try {
            if (streamed !== undefined) {
              toStreamed(pos + 1);
              entry = streamed.end() as HarEntry;
              streamed = undefined;
            } else {
              entry = JSON.parse(text.slice(entryStart, pos + 1)) as HarEntry;
            }
          } catch (error) {
            if (error instanceof RecordingError) throw error;
            fail(`log.entries[${entryIndex}] is not valid JSON (${(error as Error).message})`);
          }
          entryStart = -1;
          try {
            yield exchangeFromHarEntry(entry!, `${entryIndex}`, maxBodyBytes);
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
  if (!sawDocument) throw new RecordingError(text === '' ? 'the file is empty' : 'the file holds only blank space, no HAR document');
  if (stack.length > 0 || inString) fail(`the file ends inside ${entriesDepth >= 0 ? `log.entries[${entryIndex}]` : 'the document'}`);
  if (!sawEntries) fail('no log.entries array');
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
