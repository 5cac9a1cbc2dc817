// Which kind of recording a file is: a HAR document or a JSONL journal (one HAR entry per line),
// plain or gzip-compressed.
import { open } from 'node:fs/promises';

export type RecordingFormat = 'har' | 'jsonl';

/** Decides the format from the name, else from the first line. */
export async function detectFormat(path: string): Promise<RecordingFormat> {
  if (/\.(jsonl|ndjson)(\.gz)?$/i.test(path)) return 'jsonl';
  if (/\.har$/i.test(path)) return 'har';
  const handle = await open(path, 'r');
  try {
    const { buffer, bytesRead } = await handle.read(Buffer.alloc(64 * 1024), 0, 64 * 1024, 0);
    // Gzip (magic bytes 1f 8b): a compressed journal segment, whatever its name.
    if (bytesRead >= 2 && buffer[0] === 0x1f && buffer[1] === 0x8b) return 'jsonl';
    const head = buffer.subarray(0, bytesRead).toString('utf8');
    const firstLine = head.split('\n', 1)[0]!.trim();
    try {
      const parsed = JSON.parse(firstLine) as Record<string, unknown>;
      return 'log' in parsed ? 'har' : 'jsonl';
    } catch {
      return 'har';
    }
  } finally {
    await handle.close();
  }
}
