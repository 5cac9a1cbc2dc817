// The HAR the proxy writes at stop from its journal (proxy/record/har-writer.ts) holds the
// journal's entries again, each line copied as it is (a comma after each but the last), between
// the prologue line (creator tmi-conform) and the closing line. Read beside its journal, every exchange would be judged
// and counted twice: such a HAR is recognised by its creator and its first entry, the journal's
// first line to the byte, and left out; the journal is read (it is whole after a crash, and
// holds what a later --append session added).
import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
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

/**
 * The lines of a file, one at a time; stops reading when the loop does. Only plain files: the proxy
 * writes a HAR only from a plain journal (one that rotates, and may be gzipped, gets none).
 */
async function* linesOf(path: string): AsyncGenerator<string> {
  const input = createReadStream(path);
  const lines = createInterface({ input, crlfDelay: Infinity });
  try {
    yield* lines;
  } finally {
    lines.close();
    input.destroy();
  }
}

/**
 * A plain journal's first entry line, as the HAR writer copies it (blank lines are skipped);
 * undefined for an empty or gzipped file, or one that cannot be read (reading it later says why).
 */
async function firstEntryLine(journal: string): Promise<string | undefined> {
  try {
    if (isGzip(journal)) return undefined;
    for await (const line of linesOf(journal)) if (line.trim() !== '') return line.trim();
  } catch {
    // Said when the journal itself is read.
  }
  return undefined;
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

/** The journal a HAR was written from, among `journals` (first entry line → journal), and its entry count; undefined when it is not such a copy. */
async function copiedFrom(har: string, journals: ReadonlyMap<string, string>): Promise<{ journal: string; entries: number } | undefined> {
  let lineNumber = 0;
  let journal: string | undefined;
  let entries = 0;
  for await (const line of linesOf(har)) {
    lineNumber++;
    if (lineNumber === 1) {
      if (!isProxyPrologue(line.trim())) return undefined;
      continue;
    }
    if (lineNumber === 2) {
      // Each entry but the last is followed by the comma that separates it from the next.
      journal = journals.get(line.trim().replace(/,$/, ''));
      if (journal === undefined) return undefined;
    }
    if (line.trim() !== ']}}') entries++;
  }
  return journal === undefined ? undefined : { journal, entries };
}

/**
 * The recordings to read, in their order, without the HARs the proxy wrote from a journal that
 * is among them too (whatever the order they were named in), and those left out.
 */
export async function withoutJournalCopies(files: readonly string[], formatOf: (file: string) => 'har' | 'jsonl'): Promise<{ files: string[]; copies: JournalCopy[] }> {
  const journals = new Map<string, string>();
  for (const file of files) {
    if (formatOf(file) !== 'jsonl') continue;
    const first = await firstEntryLine(file);
    if (first !== undefined && !journals.has(first)) journals.set(first, file);
  }
  if (journals.size === 0) return { files: [...files], copies: [] };
  const copies: JournalCopy[] = [];
  for (const file of files) {
    if (formatOf(file) !== 'har') continue;
    const copy = await copiedFrom(file, journals).catch(() => undefined); // one that cannot be read is said when it is read
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
