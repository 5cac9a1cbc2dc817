// The append-only JSONL journal: one redacted HAR entry per line, appended as exchanges
// finish. Each batch of lines goes to the file in one synchronous write, so once an exchange
// is recorded it is in the kernel's hands: killing the process (even with SIGKILL) loses at
// most the exchanges still in flight or still queued for the recorder thread (normally a few
// milliseconds of traffic), and every line on disk is whole.
// With rotation the journal is a series of segments (recordings/segments.ts names them): a new
// one begins, between two entries, when the next line would take the open one past the size
// limit or when the open one is older than the interval. Each closed segment is handed on
// (to be compressed); the open one is always plain, so a crash loses nothing of it.
import { closeSync, fstatSync, fsyncSync, ftruncateSync, mkdirSync, openSync, readSync, rmSync, statSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { listSegments, segmentPath } from '../../recordings/segments.ts';
import type { Addon } from '../flow.ts';
import type { RecordedFlow } from './record.ts';

export interface Rotation {
  /** A segment holds at most this many bytes (one entry larger than that has a segment to itself). */
  maxBytes?: number;
  /** A segment is closed once it is this old (and holds an entry). */
  intervalMs?: number;
  /** Told of each segment once closed (fsynced). */
  onClosed?: (path: string) => void;
}

export class Journal implements Addon {
  readonly name = 'journal';
  private pending: string[] = [];
  /** Lines written so far. */
  written = 0;
  /** Lines that could not be written (disk full…); the proxy keeps forwarding. */
  lost = 0;
  /** Bytes of earlier sessions the journal held when resumed (append); 0 for a new journal. */
  readonly earlierBytes: number = 0;
  /** Resumed, it ended in a line cut short, which was dropped: an exchange lost, which the reports count. */
  droppedTail = false;
  /** Bytes in the journal now, its earlier sessions' and every segment's (as written, before any compression). */
  bytes = 0;
  /** Told the journal's size after each write (the admin listener's gauges): bytes, and files it is made of. */
  onSize: ((bytes: number, segments: number) => void) | undefined;
  /** With rotation and append: the earlier sessions' segments that hold entries, in order (the resumed one last). */
  readonly earlierSegments: string[] = [];
  /** The file written now: the journal, or with rotation its open segment. */
  path: string;
  /** With rotation: the segments written by this session, in order, the open one last. */
  readonly segments: string[] = [];
  private fd: number | undefined;
  private closed = false;
  /** Set by close(): the file it closed. */
  lastClosed: string | undefined;
  private segmentNumber = 0;
  private segmentBytes = 0;
  private segmentOpenedAt = 0;

  /**
   * Creates (or empties) the journal, or with `append` resumes it: new lines go after the
   * earlier ones. With rotation, `journalPath` names the segments (NAME.000001.jsonl…): a
   * resumed journal goes on in its last segment, or in a new one after a compressed last one.
   * Throws when the file cannot be written.
   */
  constructor(
    readonly journalPath: string,
    private readonly warn: (message: string) => void,
    append = false,
    private readonly rotation?: Rotation,
  ) {
    mkdirSync(dirname(journalPath), { recursive: true });
    this.path = journalPath;
    if (!rotation) {
      this.fd = this.openFile(journalPath, append);
      if (append) this.earlierBytes = this.dropCutTail();
      this.segmentBytes = this.earlierBytes;
      this.bytes = this.earlierBytes;
      return;
    }
    // Not resumed: the segments of an earlier journal of this name go (the command line was told
    // to replace them), else a reader of the folder would take them for part of this run.
    if (!append) for (const segment of listSegments(journalPath)) rmSync(segment.path, { force: true });
    const earlier = append ? listSegments(journalPath) : [];
    const last = earlier.at(-1);
    for (const segment of earlier) {
      if (segment === last && !last.compressed) continue;
      const bytes = statSync(segment.path).size;
      this.earlierBytes += bytes;
      if (bytes > 0) this.earlierSegments.push(segment.path);
    }
    if (last && !last.compressed) {
      this.openSegment(last.number, true);
      this.segmentBytes = this.dropCutTail();
      this.earlierBytes += this.segmentBytes;
      if (this.segmentBytes > 0) this.earlierSegments.push(last.path);
    } else {
      this.openSegment((last?.number ?? 0) + 1, false);
    }
    this.bytes = this.earlierBytes;
  }

  private openFile(path: string, append: boolean): number {
    // Recordings hold business data even when redacted: readable by their owner only.
    return openSync(path, append ? 'a+' : 'w', 0o600);
  }

  private openSegment(number: number, append: boolean): void {
    this.segmentNumber = number;
    this.path = segmentPath(this.journalPath, number);
    this.fd = this.openFile(this.path, append);
    this.segments.push(this.path);
    this.segmentBytes = 0;
    this.segmentOpenedAt = Date.now();
  }

  /**
   * Closes the open segment (fsynced, then handed on). The next one is opened by the next write:
   * no segment is ever left empty (an empty file is no recording to a reader).
   */
  private rotate(): void {
    const closed = this.path;
    this.closeFile();
    this.segmentBytes = 0;
    this.rotation?.onClosed?.(closed);
  }

  /** With a rotation interval: rotates when the open segment holds entries and is that old. Called before each batch and by a timer. */
  rotateIfDue(now = Date.now()): void {
    const intervalMs = this.rotation?.intervalMs;
    if (intervalMs === undefined || this.fd === undefined || this.segmentBytes === 0) return;
    if (now - this.segmentOpenedAt >= intervalMs) this.rotate();
  }

  /** Whether the last segment was closed by rotation and the next one is not open yet. */
  private get betweenSegments(): boolean {
    return this.fd === undefined && this.rotation !== undefined && !this.closed;
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
        this.droppedTail = true;
        this.warn(`the journal ${this.path} ended in a line cut short (a recorder stopped mid-write): its last ${size - whole} bytes were dropped`);
      }
      return whole;
    }
    ftruncateSync(this.fd!, 0);
    this.droppedTail = true;
    this.warn(`the journal ${this.path} held only a line cut short (a recorder stopped mid-write): its ${size} bytes were dropped`);
    return 0;
  }

  done(flow: RecordedFlow): void {
    if (flow.entry) this.pending.push(JSON.stringify(flow.entry));
  }

  flush(): void {
    if (this.pending.length === 0 || this.closed) return;
    const lines = this.pending;
    this.pending = [];
    try {
      this.rotateIfDue();
      const text = lines.join('\n') + '\n';
      const bytes = Buffer.byteLength(text);
      const maxBytes = this.rotation?.maxBytes;
      if (maxBytes === undefined || this.segmentBytes + bytes <= maxBytes) this.write(text, bytes, lines.length);
      else this.writeRotating(lines, maxBytes);
      this.onSize?.(this.bytes, this.files);
    } catch (error) {
      if (this.lost === 0) this.warn(`cannot write the journal ${this.path}: ${(error as Error).message}; exchanges are still forwarded but not recorded`);
      this.lost += lines.length;
    }
  }

  /** The batch does not fit in the open segment: line by line, a new segment where the next line would not fit. */
  private writeRotating(lines: string[], maxBytes: number): void {
    let start = 0;
    let bytes = 0;
    for (let i = 0; i < lines.length; i++) {
      const lineBytes = Buffer.byteLength(lines[i]!) + 1;
      if (this.segmentBytes + bytes + lineBytes > maxBytes && this.segmentBytes + bytes > 0) {
        if (i > start) this.write(lines.slice(start, i).join('\n') + '\n', bytes, i - start);
        if (!this.betweenSegments) this.rotate();
        start = i;
        bytes = 0;
      }
      bytes += lineBytes;
    }
    this.write(lines.slice(start).join('\n') + '\n', bytes, lines.length - start);
  }

  private write(text: string, bytes: number, count: number): void {
    if (this.betweenSegments) this.openSegment(this.segmentNumber + 1, false);
    // A segment's age counts from its first entry: a quiet start does not close it early.
    if (this.segmentBytes === 0) this.segmentOpenedAt = Date.now();
    writeWhole(this.fd!, text, bytes);
    this.segmentBytes += bytes;
    this.bytes += bytes;
    this.written += count;
  }

  /** Files the journal is made of: with rotation its segments, earlier sessions' too. */
  get files(): number {
    return this.rotation ? new Set([...this.earlierSegments, ...this.segments]).size : 1;
  }

  /** Closes the journal for good; `lastClosed` says which segment that closed (none: it was between segments). */
  close(): void {
    this.flush();
    if (this.fd !== undefined) this.lastClosed = this.path;
    this.closeFile();
    this.closed = true;
  }

  private closeFile(): void {
    if (this.fd === undefined) return;
    try {
      fsyncSync(this.fd);
    } finally {
      closeSync(this.fd);
      this.fd = undefined;
    }
  }
}

/** Writes `text` whole: at once (no copy into a Buffer first), the rest again should the system write only part. */
function writeWhole(fd: number, text: string, length: number): void {
  const written = writeSync(fd, text);
  if (written === length) return;
  const data = Buffer.from(text);
  for (let offset = written; offset < length; ) offset += writeSync(fd, data, offset);
}
