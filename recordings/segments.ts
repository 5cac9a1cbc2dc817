// The segments of a rotated journal: `NAME.jsonl` rotates into `NAME.000001.jsonl`,
// `NAME.000002.jsonl`… beside it (`.jsonl.gz` once compressed). The number is zero-padded so
// that names sort in the order the segments were written; together they are one recording.
import { readdirSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

const DIGITS = 6;

export interface Segment {
  number: number;
  path: string;
  compressed: boolean;
}

/** `traffic.jsonl` → `traffic.000007.jsonl` (or `.jsonl.gz`). The journal's name ends in .jsonl. */
export function segmentPath(journalPath: string, number: number, compressed = false): string {
  const stem = journalPath.replace(/\.jsonl$/i, '');
  return `${stem}.${String(number).padStart(DIGITS, '0')}.jsonl${compressed ? '.gz' : ''}`;
}

/**
 * The segments of the journal named `journalPath` that exist, in order. A segment found both
 * plain and compressed (stopped between compressing and removing the plain one) counts once,
 * as the plain one: it is whole, the compressed copy may not be.
 */
export function listSegments(journalPath: string): Segment[] {
  const dir = dirname(journalPath);
  const stem = basename(journalPath).replace(/\.jsonl$/i, '');
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  const byNumber = new Map<number, Segment>();
  for (const name of names) {
    if (!name.startsWith(`${stem}.`)) continue;
    const match = /^\.(\d{6,})\.jsonl(\.gz)?$/.exec(name.slice(stem.length));
    if (!match) continue;
    const number = Number(match[1]);
    const compressed = match[2] !== undefined;
    const known = byNumber.get(number);
    if (known && !known.compressed) continue;
    byNumber.set(number, { number, path: join(dir, name), compressed });
  }
  return [...byNumber.values()].sort((a, b) => a.number - b.number);
}

/** The journal a segment's name belongs to (`a/traffic.000007.jsonl.gz` → `a/traffic.jsonl`), or undefined for another name. */
export function journalOfSegment(path: string): string | undefined {
  const match = /^(.*)\.\d{6,}\.jsonl(\.gz)?$/.exec(path);
  return match ? `${match[1]}.jsonl` : undefined;
}

/**
 * The recordings in a folder, in name order: its `.jsonl`, `.jsonl.gz` and `.har` files. A
 * `X.gz` beside its plain `X` is left out (the plain one is whole).
 */
export function recordingsInFolder(dir: string): string[] {
  const names = readdirSync(dir).filter((name) => /\.(jsonl|jsonl\.gz|har)$/i.test(name));
  const present = new Set(names);
  return names
    .filter((name) => !(name.endsWith('.gz') && present.has(name.slice(0, -3))))
    .sort()
    .map((name) => join(dir, name));
}
