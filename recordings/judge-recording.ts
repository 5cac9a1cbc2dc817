// Judging a recording, the one way: read it in batches, let the caller settle what it knows of
// the batch (the tenant's keys for validate, the non-global clients for the proxy), judge each
// exchange in order with one rate-limit history per recording, and hand each on. `validate` and
// the proxy's replay of a resumed journal both judge recordings through here.
import { judgeExchange, RateLimitTracker, type Judgement } from '../rules/index.ts';
import type { Exchange } from '../rules/types.ts';
import type { ApiLayout } from '../rules/api-layout.ts';
import type { ReadProgress } from './jsonl-journal.ts';
import type { ReadOptions } from './read-options.ts';
import { readRecordingBatches } from './read.ts';

export interface JudgeRecordingOptions extends ReadOptions {
  /** Told when a journal's last line was cut short and skipped (each file its own with progressOf). */
  progress?: ReadProgress;
  progressOf?: (path: string) => ReadProgress;
  /** A file of several that cannot be read: without this, the error ends the reading; with it, the next file is read. */
  onFileError?: (path: string, error: unknown) => void;
  /** The rate-limit history to go on from (and add to); default: a new one. */
  tracker?: RateLimitTracker;
  /** Told before each file is read (the batches that follow come from it). */
  onFile?: (path: string) => void;
  /** Called with each batch before it is judged: settle tokens, mark clients. */
  beforeJudging?: (batch: readonly Exchange[]) => void | Promise<void>;
  /** The API base path and the user's OpenAPI description (--openapi), rules/api-layout.ts; default: the document's alone. */
  layout?: ApiLayout;
  /** An exchange the engine failed on: without this, the failure ends the reading. */
  onJudgeError?: (exchange: Exchange, error: unknown) => void;
}

/**
 * Judges every exchange of the recording at `path` (or in the files `path` lists, in order: the
 * segments of a rotated journal are one recording) and hands it to `judged`, in order (with no
 * judgement when the engine failed on it and `onJudgeError` took the failure); returns how many.
 * Throws RecordingError when the recording cannot be read (see recordings/read.ts).
 */
export async function judgeRecording(path: string | readonly string[], options: JudgeRecordingOptions, judged: (exchange: Exchange, judgement: Judgement | undefined) => void): Promise<number> {
  const { progress, progressOf, onFileError, onFile, tracker = new RateLimitTracker(), beforeJudging, onJudgeError, layout, ...readOptions } = options;
  // Rate-limit sequences are the recording's own: a pause lies between one recording and the
  // next, none between two segments of one recording (a client's sequence goes on across them).
  let count = 0;
  for (const file of typeof path === 'string' ? [path] : path) {
    onFile?.(file);
    try {
      for await (const batch of readRecordingBatches(file, progressOf?.(file) ?? progress, readOptions)) {
        await beforeJudging?.(batch);
        for (const exchange of batch) {
          let judgement: Judgement | undefined;
          try {
            judgement = judgeExchange(exchange, tracker, layout);
          } catch (error) {
            if (!onJudgeError) throw error;
            onJudgeError(exchange, error);
          }
          judged(exchange, judgement);
          count++;
        }
      }
    } catch (error) {
      if (!onFileError) throw error;
      onFileError(file, error);
    }
  }
  return count;
}
