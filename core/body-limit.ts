// The body limit: how much of one body the kit keeps and judges. The management API's bodies are
// kilobytes; a body far beyond that is kept as its size, its SHA-256 and its first bytes, and its
// content is not judged, so that the memory one exchange costs has a ceiling (the proxy holds a
// copy of up to the limit per body in flight; validate holds one entry at a time).
import { createHash, type Hash } from 'node:crypto';
import type { OverLimit } from '../rules/types.ts';

/** Bytes of each body kept for judging, unless --max-body-bytes says otherwise. */
export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;

/** Characters past the limit gathered before they are hashed. */
const HASHED_AT_ONCE = 64 * 1024;

/** "104.9 MB": sizes the way a user reads them in a message. */
export function describeBytes(bytes: number): string {
  if (bytes < 1000) return `${bytes} bytes`;
  if (bytes < 1_000_000) return `${(bytes / 1000).toFixed(1)} kB`;
  return `${(bytes / 1_000_000).toFixed(1)} MB`;
}

/**
 * A text handed over piece by piece (a body streaming past, a long string in a recording): keeps
 * its first `limit` bytes, counts all of them, and hashes all of them once they pass the limit.
 * Pieces under the limit cost nothing beyond keeping them.
 */
export class LimitedText {
  private readonly kept: string[] = [];
  private keptBytes = 0;
  /** Bytes handed over and hashed (the pieces waiting in `unhashed` not yet counted). */
  private bytes = 0;
  private hash: Hash | undefined;
  /** Pieces past the limit, hashed together: hashing each small piece (an escape) on its own costs far more. */
  private unhashed: string[] = [];
  private unhashedLength = 0;
  private digest: string | undefined;

  constructor(readonly limit: number) {}

  add(piece: string): void {
    if (this.digest !== undefined) throw new Error('LimitedText: add after over()');
    if (this.hash) {
      this.unhashed.push(piece);
      this.unhashedLength += piece.length;
      if (this.unhashedLength >= HASHED_AT_ONCE) this.hashUnhashed();
      return;
    }
    const size = Buffer.byteLength(piece);
    this.bytes += size;
    if (this.keptBytes + size <= this.limit) {
      this.kept.push(piece);
      this.keptBytes += size;
      return;
    }
    // Over the limit from here: everything so far goes into the hash, and only the prefix is kept.
    this.hash = createHash('sha256');
    for (const kept of this.kept) this.hash.update(kept);
    this.hash.update(piece);
    const room = this.limit - this.keptBytes;
    this.kept.push(
      Buffer.from(piece)
        .subarray(0, room)
        .toString('utf8')
        .replace(/\uFFFD$/, ''),
    );
    this.keptBytes = this.limit;
  }

  get overLimit(): boolean {
    return this.hash !== undefined;
  }

  /** The whole text while under the limit; the kept prefix once over it. */
  text(): string {
    return this.kept.length === 1 ? this.kept[0]! : this.kept.join('');
  }

  private hashUnhashed(): void {
    const text = this.unhashed.join('');
    this.bytes += Buffer.byteLength(text);
    this.hash!.update(text);
    this.unhashed = [];
    this.unhashedLength = 0;
  }

  /** Size and hash of the whole text, once it went over the limit. */
  over(): OverLimit | undefined {
    if (!this.hash) return undefined;
    if (this.digest === undefined) this.hashUnhashed();
    this.digest ??= this.hash.digest('hex'); // a hash gives its digest once
    return { bytes: this.bytes, limit: this.limit, sha256: this.digest };
  }
}
