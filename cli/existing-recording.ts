// A proxy started again with the same --record or --journal never replaces what an earlier
// session recorded without being told: by default it refuses, --append resumes the journal
// (and rewrites the HAR from it at stop, earlier exchanges included), --overwrite replaces both.
// A rotated journal is its segments: the same rules hold for them together.
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { UsageError } from '../core/errors.ts';
import { listSegments, type Segment } from '../recordings/segments.ts';

export type RecordingMode = 'refuse' | 'append' | 'overwrite';

/** The first line of a journal is read whole up to this size (an entry with large bodies is a few MiB). */
const MAX_FIRST_LINE_BYTES = 64 * 1024 * 1024;

/**
 * Throws a UsageError (exit 2, one line) when starting would lose recorded exchanges. With
 * `rotating`, the journal is its segments (NAME.000001.jsonl…): --append goes on after the last
 * one, --overwrite has them removed when the journal starts.
 */
export async function checkExistingRecording(journalPath: string, harPath: string | undefined, mode: RecordingMode, rotating = false): Promise<void> {
  if (mode === 'overwrite') return;
  if (rotating) return checkExistingSegments(journalPath, mode);
  const journalBytes = await sizeOf(journalPath);
  const harBytes = harPath === undefined ? 0 : await sizeOf(harPath);
  if (mode === 'refuse') {
    if (journalBytes > 0)
      throw new UsageError(
        `proxy: the journal ${journalPath} already holds recorded exchanges: add --append to resume it (the HAR and the report then cover both sessions) or --overwrite to replace it`,
      );
    if (harBytes > 0) throw new UsageError(`proxy: ${harPath} already exists: add --append to resume its recording or --overwrite to replace it`);
    return;
  }
  if (journalBytes > 0) {
    const problem = await notAJournal(journalPath);
    if (problem !== undefined)
      throw new UsageError(
        `proxy: cannot --append to ${journalPath}: ${problem}, not a proxy journal (one HAR entry per line); name another --journal, or --overwrite to replace it`,
      );
  } else if (harBytes > 0) {
    // The HAR is written from the journal at stop: without it, the HAR's exchanges would be gone.
    throw new UsageError(
      `proxy: cannot --append: ${harPath} exists but its journal ${journalPath} is missing or empty, so the HAR's exchanges would be lost at stop; move ${harPath} away or add --overwrite`,
    );
  }
}

async function checkExistingSegments(journalPath: string, mode: 'refuse' | 'append'): Promise<void> {
  let segments: Segment[];
  try {
    segments = listSegments(journalPath);
  } catch (error) {
    throw new UsageError(`proxy: cannot read the folder of ${journalPath}: ${(error as Error).message}`);
  }
  const recorded: Segment[] = [];
  for (const segment of segments) if ((await sizeOf(segment.path)) > 0) recorded.push(segment);
  if (recorded.length === 0) return;
  if (mode === 'refuse') {
    throw new UsageError(
      `proxy: the journal's segments (${recorded[0]!.path}${recorded.length > 1 ? ` and ${recorded.length - 1} more` : ''}) already hold recorded exchanges: add --append to resume after the last one (the report then covers them all) or --overwrite to replace them`,
    );
  }
  const last = segments.at(-1)!;
  if (last.compressed || (await sizeOf(last.path)) === 0) return;
  const problem = await notAJournal(last.path);
  if (problem !== undefined)
    throw new UsageError(
      `proxy: cannot --append to ${last.path}: ${problem}, not a proxy journal (one HAR entry per line); name another --journal, or --overwrite to replace the segments`,
    );
}

async function sizeOf(path: string): Promise<number> {
  try {
    return (await stat(path)).size;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 0;
    throw new UsageError(`proxy: cannot read ${path}: ${(error as Error).message}`);
  }
}

/** Why the file is not a journal (its first line is not a whole HAR entry), or undefined. */
async function notAJournal(path: string): Promise<string | undefined> {
  let line: string | undefined;
  try {
    line = await firstLine(path);
  } catch (error) {
    throw new UsageError(`proxy: cannot read ${path}: ${(error as Error).message}`);
  }
  if (line === undefined) return 'it has no complete line';
  let entry: unknown;
  try {
    entry = JSON.parse(line);
  } catch {
    return 'its first line is not JSON';
  }
  const request = (entry as { request?: unknown } | null)?.request;
  if (typeof entry !== 'object' || entry === null || Array.isArray(entry) || typeof request !== 'object' || request === null)
    return 'its first line is not a HAR entry';
  return undefined;
}

/** The file's first line, or undefined when no newline ends it within MAX_FIRST_LINE_BYTES. */
async function firstLine(path: string): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let bytes = 0;
  const stream = createReadStream(path, { highWaterMark: 1 << 20 });
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      const newline = chunk.indexOf(10);
      if (newline !== -1) {
        chunks.push(chunk.subarray(0, newline));
        return Buffer.concat(chunks).toString('utf8');
      }
      chunks.push(chunk);
      bytes += chunk.length;
      if (bytes >= MAX_FIRST_LINE_BYTES) return undefined;
    }
    return undefined;
  } finally {
    stream.destroy();
  }
}
