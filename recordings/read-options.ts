// How a recording is read: the body limit, and (for tests) the sizes of the pieces it is read in.
export interface ReadOptions {
  /** Bodies over this many bytes keep their first bytes, size and hash, and are not judged (core/body-limit.ts). */
  maxBodyBytes?: number;
  /** Characters (HAR) or bytes (JSONL) read at a time. */
  chunkSize?: number;
  /** An entry whose text grows past this many characters is parsed as it streams by, not held. */
  streamEntryAbove?: number;
}
