// Keeps a bounded copy of a body as it streams past: the first `limit` bytes, and the count of
// all of them. The body itself is never held back; this only watches it. Compressed bodies
// are decoded when the exchange is judged (after the response was sent), bounded again, so a
// small compressed body cannot inflate without limit.
import { createHash, type Hash } from 'node:crypto';
import { brotliDecompressSync, gunzipSync, inflateRawSync, inflateSync } from 'node:zlib';
import type { CapturedBody } from '../../rules/types.ts';
import type { OverLimit } from '../../rules/types.ts';

/** A capture as it crosses to the judging thread: the kept bytes and the counts. */
export interface BodySnapshot {
  /** The kept bytes; absent when none were kept, or when they were dropped (see `dropped`). */
  data?: Uint8Array;
  bytes: number;
  overflowed: boolean;
  complete: boolean;
  /** Why the kept bytes were let go before judging (the proxy was overloaded). */
  dropped?: string;
  /** SHA-256 (hex) of the whole body, when it was over the limit and ended normally. */
  sha256?: string;
}

export class BodyCapture {
  private readonly chunks: Buffer[] = [];
  private kept = 0;
  /** Bytes that crossed the wire, captured or not. */
  bytes = 0;
  /** More bytes arrived than the limit allowed to keep. */
  overflowed = false;
  /** The stream ended normally (false: aborted, or still going). */
  complete = false;

  /** Why the kept bytes were let go (see BodySnapshot.dropped). */
  private dropped: string | undefined;
  /** Over the limit: every byte is hashed from then on (the kept ones first), so the record can name the whole body. */
  private hash: Hash | undefined;
  private sha256: string | undefined;

  constructor(private readonly limit: number) {}

  /** Bytes currently kept. */
  get keptBytes(): number {
    return this.kept;
  }

  /** The capture as plain data; `dropReason` lets the kept bytes go (and says why). */
  snapshot(dropReason?: string): BodySnapshot {
    const snapshot: BodySnapshot = { bytes: this.bytes, overflowed: this.overflowed, complete: this.complete };
    const sha256 = this.digest();
    if (sha256 !== undefined) snapshot.sha256 = sha256;
    if (dropReason !== undefined && this.kept > 0) snapshot.dropped = dropReason;
    else if (this.kept > 0) snapshot.data = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks, this.kept);
    return snapshot;
  }

  static restore(limit: number, snapshot: BodySnapshot): BodyCapture {
    const capture = new BodyCapture(limit);
    if (snapshot.data) {
      const data = Buffer.from(snapshot.data.buffer, snapshot.data.byteOffset, snapshot.data.byteLength);
      capture.chunks.push(data);
      capture.kept = data.length;
    }
    capture.bytes = snapshot.bytes;
    capture.overflowed = snapshot.overflowed;
    capture.complete = snapshot.complete;
    capture.dropped = snapshot.dropped;
    capture.sha256 = snapshot.sha256;
    return capture;
  }

  /** The whole body's SHA-256 once it is over the limit and complete; undefined otherwise. */
  private digest(): string | undefined {
    if (this.sha256 === undefined && this.hash && this.complete) {
      this.sha256 = this.hash.digest('hex');
      this.hash = undefined;
    }
    return this.sha256;
  }

  add(chunk: Buffer): void {
    this.bytes += chunk.length;
    const room = this.limit - this.kept;
    if (room <= 0) {
      this.overflowed = true;
      this.hash?.update(chunk);
      return;
    }
    if (chunk.length > room) {
      this.hash = createHash('sha256');
      for (const kept of this.chunks) this.hash.update(kept);
      this.hash.update(chunk);
      this.chunks.push(Buffer.from(chunk.subarray(0, room)));
      this.kept = this.limit;
      this.overflowed = true;
      return;
    }
    this.chunks.push(chunk);
    this.kept += chunk.length;
  }

  /**
   * The body for the rules: decoded per `contentEncoding`, utf-8. A body cut short (by the
   * limit or by an abort) is marked truncated, which the rules read as "not captured".
   * Undefined when there was no body at all.
   */
  captured(contentEncoding: string | undefined): CapturedBody | undefined {
    if (this.bytes === 0) return undefined;
    if (this.dropped !== undefined) return { text: notCaptured(`${this.bytes} bytes; ${this.dropped}`), truncated: true };
    const raw = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks, this.kept);
    const cut = this.overflowed || !this.complete;
    const encodings = codings(contentEncoding);
    // A body cut short by the limit (not by an abort): what is known of the whole of it.
    const overLimit: OverLimit | undefined =
      this.overflowed && this.complete
        ? { bytes: this.bytes, limit: this.limit, ...(this.digest() !== undefined ? { sha256: this.digest()! } : {}) }
        : undefined;
    if (encodings.length === 0) {
      const text = raw.toString('utf8');
      if (!cut) return { text };
      const body: CapturedBody = { text: text === '' ? notCaptured(`${this.bytes} bytes, none kept`) : text, truncated: true };
      if (overLimit) body.overLimit = overLimit;
      return body;
    }
    if (cut) {
      const body: CapturedBody = {
        text: notCaptured(`${encodings.join(', ')}-encoded body of ${this.bytes} bytes cut short at ${this.kept} bytes; not decoded`),
        truncated: true,
      };
      if (overLimit) body.overLimit = overLimit;
      return body;
    }
    try {
      let decoded = raw;
      for (const coding of [...encodings].reverse()) decoded = decode(coding, decoded, this.limit);
      return { text: decoded.toString('utf8') };
    } catch (error) {
      const tooLarge = (error as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE';
      const why = tooLarge ? `decodes to more than ${this.limit} bytes` : `could not be decoded (${(error as Error).message})`;
      return { text: notCaptured(`${encodings.join(', ')}-encoded body of ${this.bytes} bytes ${why}`), truncated: true };
    }
  }
}

/** The marker text of a body that was not captured (never judged: it is flagged truncated). */
export const notCaptured = (why: string): string => `[body not captured: ${why}]`;

/** Content codings in the order they were applied; identity dropped. */
function codings(header: string | undefined): string[] {
  if (!header) return [];
  return header
    .split(',')
    .map((c) => c.trim().toLowerCase())
    .filter((c) => c !== '' && c !== 'identity');
}

function decode(coding: string, data: Buffer, limit: number): Buffer {
  const options = { maxOutputLength: Math.max(1, limit) };
  switch (coding) {
    case 'gzip':
    case 'x-gzip':
      return gunzipSync(data, options);
    case 'deflate':
      // "deflate" is meant to be zlib-wrapped; some servers send it raw.
      try {
        return inflateSync(data, options);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') throw error;
        return inflateRawSync(data, options);
      }
    case 'br':
      return brotliDecompressSync(data, options);
    default:
      throw new Error(`unsupported content coding "${coding}"`);
  }
}
