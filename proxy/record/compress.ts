// Compressing a closed journal segment (`--compress`): gzip from Node, into a temporary name that
// is synced and renamed to NAME.jsonl.gz; only then is the plain segment removed. A crash in
// between leaves the plain segment whole (a reader takes it over a .gz beside it), never neither.
import { createReadStream, createWriteStream } from 'node:fs';
import { open, rename, rm } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';

/** Compresses the segment at `path` to `path.gz` and removes `path`; returns the new name. */
export async function compressSegment(path: string): Promise<string> {
  const compressed = `${path}.gz`;
  const temporary = `${compressed}.${process.pid}.tmp`;
  try {
    await pipeline(createReadStream(path), createGzip(), createWriteStream(temporary, { mode: 0o600 }));
    const handle = await open(temporary, 'r');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temporary, compressed);
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
  await rm(path);
  return compressed;
}

/**
 * The journal's closed segments: with `compress`, each is compressed in turn as it closes (one
 * at a time, off the recorder's path); a segment that cannot be compressed stays as it is.
 */
export class ClosedSegments {
  /** Closed segments by their name at close: what each is called now. */
  private readonly names = new Map<string, string>();
  private compressing: Promise<void> = Promise.resolve();

  constructor(
    private readonly compress: boolean,
    private readonly warn: (message: string) => void,
  ) {}

  closed(path: string): void {
    this.names.set(path, path);
    if (!this.compress) return;
    this.compressing = this.compressing.then(() =>
      compressSegment(path).then(
        (compressed) => void this.names.set(path, compressed),
        (error: Error) => this.warn(`cannot compress the journal segment ${path} (${error.message}); it stays as it is`),
      ),
    );
  }

  /** Resolves once every segment closed so far is compressed (or left as it is). */
  settled(): Promise<void> {
    return this.compressing;
  }

  nameOf(path: string): string {
    return this.names.get(path) ?? path;
  }
}
