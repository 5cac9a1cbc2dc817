// The HAR the proxy writes at stop from its journal (proxy/record/har-writer.ts) holds the
// journal's entries again, each line copied as it is (a comma after each but the last), between
// the prologue line (creator tmi-conform) and the closing line. Read beside its journal, every
// exchange would be judged and counted twice: such a HAR is recognised by its creator and its
// first entry, the journal's first line to the byte (compared by digest: a line may hold a body
// of many MB, and memory stays flat), and left out; the journal is read (it is whole after a
// crash, and holds what a later --append session added).
import { createHash, type Hash } from 'node:crypto';
import { closeSync, openSync, readSync } from 'node:fs';
import { isGzip } from './jsonl-journal.ts';
import { HAR_CREATOR } from './write.ts';

export interface JournalCopy {
  /** The HAR left out. */
  har: string;
  /** The journal it was made from, read in its place. */
  journal: string;
  /** The entries the HAR holds. */
  entries: number;
}

/** Bytes read at a time; lines are never held whole (an entry may hold a body of many MB). */
const CHUNK_BYTES = 128 * 1024;
/** The most of a HAR's first line kept to read its prologue: the proxy's is a few hundred bytes. */
const PROLOGUE_BYTES = 64 * 1024;
const NEWLINE = 0x0a;
const COMMA = 0x2c;
const CR = 0x0d;

interface Scan {
  /** The first line's text, up to PROLOGUE_BYTES. */
  head: string;
  /** SHA-256 of each of the first lines asked for, without a trailing comma or carriage return. */
  digests: string[];
  /** Newlines in the file; counted only when asked for (the scan stops after the hashed lines otherwise). */
  newlines: number;
}

/**
 * Reads a plain file's lines as bytes, in chunks, holding none of them: the first line's
 * beginning, the digest of each of the first `hashLines` lines, and with `count` every newline.
 */
function scanLines(path: string, hashLines: number, count: boolean): Scan {
  const scan: Scan = { head: '', digests: [], newlines: 0 };
  const head: Buffer[] = [];
  let headBytes = 0;
  let hash: Hash | undefined = hashLines > 0 ? createHash('sha256') : undefined;
  // The line's last byte is held back until the next one comes: a trailing comma or CR is not hashed.
  let pending: number | undefined;
  const endLine = () => {
    if (pending !== undefined && pending !== COMMA && pending !== CR) hash!.update(Buffer.of(pending));
    pending = undefined;
    scan.digests.push(hash!.digest('hex'));
    hash = scan.digests.length < hashLines ? createHash('sha256') : undefined;
  };
  const addToLine = (bytes: Buffer) => {
    if (bytes.length === 0) return;
    if (pending !== undefined) hash!.update(Buffer.of(pending));
    hash!.update(bytes.subarray(0, bytes.length - 1));
    pending = bytes[bytes.length - 1];
  };
  const fd = openSync(path, 'r');
  try {
    const buffer = Buffer.allocUnsafe(CHUNK_BYTES);
    for (let read = readSync(fd, buffer); read > 0; read = readSync(fd, buffer)) {
      const chunk = buffer.subarray(0, read);
      for (let start = 0; start < chunk.length; ) {
        const newline = chunk.indexOf(NEWLINE, start);
        const end = newline === -1 ? chunk.length : newline;
        if (scan.newlines === 0 && headBytes < PROLOGUE_BYTES) {
          const part = Buffer.from(chunk.subarray(start, Math.min(end, start + PROLOGUE_BYTES - headBytes)));
          head.push(part);
          headBytes += part.length;
        }
        if (hash) addToLine(chunk.subarray(start, end));
        if (newline === -1) break;
        scan.newlines++;
        if (hash) endLine();
        if (!hash && !count) return { ...scan, head: Buffer.concat(head).toString('utf8') };
        start = newline + 1;
      }
    }
    if (hash && (pending !== undefined || scan.digests.length < hashLines)) endLine();
  } finally {
    closeSync(fd);
  }
  return { ...scan, head: Buffer.concat(head).toString('utf8') };
}

/** The digest of a plain journal's first line; undefined for a gzipped one (the proxy writes a HAR only from a plain journal) or one that cannot be read (reading it later says why). */
function firstLineDigest(journal: string): string | undefined {
  try {
    return isGzip(journal) ? undefined : scanLines(journal, 1, false).digests[0];
  } catch {
    return undefined;
  }
}

/** Whether a HAR's first line is the proxy's prologue: `{"log":{…,"creator":{"name":"tmi-conform"…},"entries":[`. */
function isProxyPrologue(line: string): boolean {
  if (!line.startsWith('{"log":') || !line.endsWith('"entries":[')) return false;
  try {
    const { log } = JSON.parse(`${line}]}}`) as { log?: { creator?: { name?: unknown } } };
    return log?.creator?.name === HAR_CREATOR.name;
  } catch {
    return false;
  }
}

/** The journal a HAR was written from, among `journals` (first line's digest → journal), and its entry count; undefined when it is not such a copy. */
function copiedFrom(har: string, journals: ReadonlyMap<string, string>): { journal: string; entries: number } | undefined {
  const start = scanLines(har, 2, false);
  if (!isProxyPrologue(start.head.trim())) return undefined;
  const journal = journals.get(start.digests[1] ?? '');
  if (journal === undefined) return undefined;
  // prologue\n entry,\n … entry\n ]}}\n: two newlines more than entries.
  return { journal, entries: Math.max(0, scanLines(har, 0, true).newlines - 2) };
}

/**
 * The recordings to read, in their order, without the HARs the proxy wrote from a journal that
 * is among them too (whatever the order they were named in), and those left out.
 */
export function withoutJournalCopies(files: readonly string[], formatOf: (file: string) => 'har' | 'jsonl'): { files: string[]; copies: JournalCopy[] } {
  const journals = new Map<string, string>();
  for (const file of files) {
    if (formatOf(file) !== 'jsonl') continue;
    const first = firstLineDigest(file);
    if (first !== undefined && !journals.has(first)) journals.set(first, file);
  }
  if (journals.size === 0) return { files: [...files], copies: [] };
  const copies: JournalCopy[] = [];
  for (const file of files) {
    if (formatOf(file) !== 'har') continue;
    let copy: { journal: string; entries: number } | undefined;
    try {
      copy = copiedFrom(file, journals);
    } catch {
      // One that cannot be read is said when it is read.
    }
    if (copy) copies.push({ har: file, ...copy });
  }
  return { files: files.filter((file) => !copies.some((copy) => copy.har === file)), copies };
}

/** What the reports and the console say of a HAR left out. */
export function journalCopyReason(copy: JournalCopy): string {
  return `read once: ${copy.har} is the HAR the proxy wrote at stop from the journal ${copy.journal}, whose same exchanges were judged`;
}

/** The first few ids of the HAR's entries left out (its entry indices), for the reports. */
export function journalCopyIds(copy: JournalCopy, named: number): string[] {
  return Array.from({ length: Math.min(copy.entries, named) }, (_, index) => String(index));
}
