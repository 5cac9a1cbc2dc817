// The append-only JSONL journal: one redacted HAR entry per line, appended as exchanges
// finish. Each batch of lines goes to the file in one synchronous write, so once an exchange
// is recorded it is in the kernel's hands: killing the process (even with SIGKILL) loses at
// most the exchanges still in flight or still queued for the recorder thread (normally a few
// milliseconds of traffic), and every line on disk is whole.
import { closeSync, fstatSync, fsyncSync, ftruncateSync, mkdirSync, openSync, readSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Addon } from '../flow.ts';
import type { RecordedFlow } from './record.ts';

export class Journal implements Addon {
  readonly name = 'journal';
  private pending: string[] = [];
  /** Lines written so far. */
  written = 0;
  /** Lines that could not be written (disk full…); the proxy keeps forwarding. */
  lost = 0;
  /** Bytes of earlier sessions the journal held when resumed (append); 0 for a new journal. */
  readonly earlierBytes: number = 0;
  /** Bytes in the journal now. */
  bytes = 0;
  /** Told the journal's size after each write (the admin listener's gauges): bytes, and files it is made of. */
  onSize: ((bytes: number, segments: number) => void) | undefined;
  private fd: number | undefined;

  /**
   * Creates (or empties) the journal, or with `append` resumes it: new lines go after the
   * earlier ones. Throws when the file cannot be written.
   */
  constructor(
    readonly path: string,
    private readonly warn: (message: string) => void,
    append = false,
  ) {
    mkdirSync(dirname(path), { recursive: true });
    // Recordings hold business data even when redacted: readable by their owner only.
    this.fd = openSync(path, append ? 'a+' : 'w', 0o600);
    if (append) this.earlierBytes = this.dropCutTail();
    this.bytes = this.earlierBytes;
  }

  /**
   * A journal whose recorder was killed mid-write ends in part of a line; a line appended
   * after it would be glued to it, and both lost. That part (no whole exchange) is dropped.
   * Returns the size of the whole lines kept.
   */
  private dropCutTail(): number {
    const size = fstatSync(this.fd!).size;
    if (size === 0) return 0;
    const chunk = Buffer.alloc(Math.min(size, 64 * 1024));
    for (let end = size; end > 0; end -= chunk.length) {
      const start = Math.max(0, end - chunk.length);
      const read = readSync(this.fd!, chunk, 0, end - start, start);
      const newline = chunk.subarray(0, read).lastIndexOf(10);
      if (newline === -1) continue;
      const whole = start + newline + 1;
      if (whole < size) {
        ftruncateSync(this.fd!, whole);
        this.warn(`the journal ${this.path} ended in a line cut short (a recorder stopped mid-write): its last ${size - whole} bytes were dropped`);
      }
      return whole;
    }
    ftruncateSync(this.fd!, 0);
    this.warn(`the journal ${this.path} held only a line cut short (a recorder stopped mid-write): its ${size} bytes were dropped`);
    return 0;
  }

  done(flow: RecordedFlow): void {
    if (flow.entry) this.pending.push(JSON.stringify(flow.entry));
  }

  flush(): void {
    if (this.pending.length === 0 || this.fd === undefined) return;
    const lines = this.pending;
    this.pending = [];
    const text = lines.join('\n') + '\n';
    try {
      this.bytes += writeWhole(this.fd, text);
      this.written += lines.length;
      this.onSize?.(this.bytes, 1);
    } catch (error) {
      if (this.lost === 0) this.warn(`cannot write the journal ${this.path}: ${(error as Error).message}; exchanges are still forwarded but not recorded`);
      this.lost += lines.length;
    }
  }

  close(): void {
    this.flush();
    if (this.fd === undefined) return;
    try {
      fsyncSync(this.fd);
    } finally {
      closeSync(this.fd);
      this.fd = undefined;
    }
  }
}

/** Writes `text` whole: at once (no copy into a Buffer first), the rest again should the system write only part. Returns its bytes. */
function writeWhole(fd: number, text: string): number {
  const written = writeSync(fd, text);
  const length = Buffer.byteLength(text);
  if (written === length) return length;
  const data = Buffer.from(text);
  for (let offset = written; offset < length; ) offset += writeSync(fd, data, offset);
  return length;
}
