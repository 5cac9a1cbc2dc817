// Reads recorded traffic as exchanges, streaming: HAR 1.2 files (from any recorder) and the
// proxy's JSONL journal (one HAR entry per line). Memory stays flat whatever the file size.
// The parts: detect-format.ts (which kind of file), jsonl-journal.ts (line splitting),
// har-scanner.ts (log.entries found in a HAR's text), har-entry.ts (an entry as an exchange).
import type { Exchange } from '../rules/types.ts';
import { detectFormat } from './detect-format.ts';
import { readHar } from './har-scanner.ts';
import { readJsonlBatches, type ReadProgress } from './jsonl-journal.ts';
import type { ReadOptions } from './read-options.ts';

export { RecordingError } from './recording-error.ts';
export { detectFormat } from './detect-format.ts';
export { exchangeFromHarEntry, type HarEntry } from './har-entry.ts';
export { readJsonl, readJsonlBatches, type ReadProgress } from './jsonl-journal.ts';
export { readHar } from './har-scanner.ts';
export type { ReadOptions } from './read-options.ts';

/** The exchanges of a recording, in batches: the fast way to read a large file. */
export async function* readRecordingBatches(path: string, progress?: ReadProgress, options: ReadOptions = {}): AsyncGenerator<Exchange[]> {
  const format = await detectFormat(path);
  if (format === 'jsonl') {
    yield* readJsonlBatches(path, progress, options);
    return;
  }
  // HAR entries are found by a scan that costs more than yielding them one by one.
  for await (const exchange of readHar(path, options)) yield [exchange];
}

export async function* readRecording(path: string, progress?: ReadProgress, options: ReadOptions = {}): AsyncGenerator<Exchange> {
  for await (const batch of readRecordingBatches(path, progress, options)) yield* batch;
}
