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
