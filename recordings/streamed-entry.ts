// One HAR entry too large to hold as text, parsed as its text streams by. stream-json's tokenizer
// hands every string over in pieces, so a body of any size costs its first `limit` bytes (kept)
// and a running SHA-256 (core/body-limit.ts LimitedText), never the whole: the rest of the entry
// (request line, headers, timings) is small. Entries that fit are parsed with JSON.parse, which is
// twice as fast (recordings/har-scanner.ts, jsonl-journal.ts); both give the same entry.
import { getManyValues, isMany, none } from 'stream-chain/defs.js';
import { jsonParser, type Token } from 'stream-json/core/parser.js';
import { LimitedText } from '../core/body-limit.ts';
import type { OverLimit } from '../rules/types.ts';

/** Text of an entry beyond which it is parsed as it streams by instead of held whole. */
export const STREAM_ENTRY_ABOVE_CHARS = 4 * 1024 * 1024;
/** Characters handed to the tokenizer at a time. */
const TOKENIZED_AT_ONCE = 64 * 1024;
/** Object keys and numbers are short in any HAR; one longer than this is not a HAR entry. */
const MAX_KEY_OR_NUMBER_BYTES = 64 * 1024;
/** A HAR entry nests a few levels (plus a token's claims): far deeper is not one. */
const MAX_ENTRY_DEPTH = 256;

/** A string of a recording over the body limit: its first bytes, and what is known of the whole. */
export class LongString {
  constructor(
    readonly prefix: string,
    readonly over: OverLimit,
  ) {}

  /** A string already in memory, as the same value a streamed one over the limit becomes. */
  static of(text: string, limit: number): LongString | string {
    if (text.length * 3 <= limit || Buffer.byteLength(text) <= limit) return text;
    const limited = new LimitedText(limit);
    limited.add(text);
    return new LongString(limited.text(), limited.over()!);
  }
}

type Container = Record<string, unknown> | unknown[];

/**
 * Feed it the entry's text in pieces (`write`), then `end()` returns the entry as JSON.parse
 * would, except that strings over `limit` bytes are LongStrings. Throws an Error saying what is
 * wrong with the text, once it is known.
 */
export class StreamedEntry {
  private readonly tokenize = jsonParser({ packValues: false, streamValues: true });
  private readonly parents: Array<{ container: Container; key: string | undefined }> = [];
  private container: Container | undefined;
  private key: string | undefined;
  private value: unknown;
  private complete = false;
  /** The string, key or number whose pieces are arriving. */
  private piece: LimitedText | undefined;

  constructor(private readonly limit: number) {}

  write(text: string): void {
    // In slices: a slice of escape-heavy text becomes a token per escape, all held until taken.
    for (let at = 0; at < text.length; at += TOKENIZED_AT_ONCE)
      this.take(this.tokenize(text.length <= TOKENIZED_AT_ONCE ? text : text.slice(at, at + TOKENIZED_AT_ONCE)));
  }

  end(): unknown {
    // Flushed with `none`, which the typings of a flushable leave out.
    this.take((this.tokenize as (input: string | typeof none) => unknown)(none));
    if (!this.complete) throw new Error('the entry ends before its closing "}"');
    return this.value;
  }

  private take(output: unknown): void {
    if (output === none) return;
    if (isMany(output)) for (const token of getManyValues(output) as Token[]) this.token(token);
    else this.token(output as Token);
  }

  private token(token: Token): void {
    switch (token.name) {
      case 'startObject':
      case 'startArray':
        this.open(token.name === 'startObject' ? {} : []);
        return;
      case 'endObject':
      case 'endArray':
        this.close();
        return;
      case 'startString':
        this.piece = new LimitedText(this.limit);
        return;
      case 'startKey':
      case 'startNumber':
        this.piece = new LimitedText(MAX_KEY_OR_NUMBER_BYTES);
        return;
      case 'stringChunk':
      case 'numberChunk':
        this.piece!.add(token.value);
        if (token.name === 'numberChunk' && this.piece!.overLimit) throw new Error(`a number longer than ${MAX_KEY_OR_NUMBER_BYTES} bytes`);
        return;
      case 'endKey':
        if (this.piece!.overLimit) throw new Error(`an object key longer than ${MAX_KEY_OR_NUMBER_BYTES} bytes`);
        this.key = this.piece!.text();
        this.piece = undefined;
        return;
      case 'endString': {
        const piece = this.piece!;
        this.piece = undefined;
        const over = piece.over();
        this.add(over ? new LongString(piece.text(), over) : piece.text());
        return;
      }
      case 'endNumber':
        this.add(Number(this.piece!.text()));
        this.piece = undefined;
        return;
      case 'nullValue':
      case 'trueValue':
      case 'falseValue':
        this.add(token.value);
        return;
      default:
        return; // packed values are not asked for; whitespace is not emitted
    }
  }

  private open(container: Container): void {
    if (this.parents.length >= MAX_ENTRY_DEPTH) throw new Error(`nested deeper than ${MAX_ENTRY_DEPTH} levels`);
    if (this.container !== undefined) {
      this.add(container);
      this.parents.push({ container: this.container, key: this.key });
    } else if (this.complete) {
      throw new Error('more than one value');
    }
    this.container = container;
    this.key = undefined;
  }

  private close(): void {
    const parent = this.parents.pop();
    if (parent) {
      this.container = parent.container;
      this.key = parent.key;
      return;
    }
    this.value = this.container;
    this.container = undefined;
    this.complete = true;
  }

  private add(value: unknown): void {
    const container = this.container;
    if (container === undefined) throw new Error('the entry is not a JSON object');
    const key = this.key!;
    if (Array.isArray(container)) container.push(value);
    // An own property, as JSON.parse makes it: "__proto__" must not reach the prototype.
    else if (key === '__proto__') Object.defineProperty(container, key, { value, writable: true, enumerable: true, configurable: true });
    else container[key] = value;
  }
}
