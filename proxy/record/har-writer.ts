// The HAR 1.2 file of a proxy session, written at stop from the journal: one entry at a time
// streams from the JSONL file into log.entries, so memory does not grow with the recording.
// Written under a temporary name and renamed, so a reader never sees half a file.
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, rename, rm } from 'node:fs/promises';
import { once } from 'node:events';
import { dirname } from 'node:path';
import { createInterface } from 'node:readline';
import { finished } from 'node:stream/promises';
import { HAR_EPILOGUE, harPrologue } from '../../recordings/write.ts';

export interface HarWritten {
  entries: number;
  /** Lines of the journal that were not whole JSON (a cut-off last line after a crash). */
  skipped: number;
}

export async function writeHarFromJournal(journalPath: string, harPath: string, comment?: string): Promise<HarWritten> {
  await mkdir(dirname(harPath), { recursive: true });
  const temporary = `${harPath}.${process.pid}.tmp`;
  const out = createWriteStream(temporary, { mode: 0o600 });
  const result: HarWritten = { entries: 0, skipped: 0 };
  const write = async (text: string) => {
    if (!out.write(text)) await once(out, 'drain');
  };
  try {
    await write(harPrologue(comment));
    const lines = createInterface({ input: createReadStream(journalPath, { encoding: 'utf8', highWaterMark: 1 << 20 }), crlfDelay: Infinity });
    for await (const line of lines) {
      if (line.trim() === '') continue;
      try {
        JSON.parse(line);
      } catch {
        result.skipped++;
        continue;
      }
      await write(result.entries === 0 ? line : `,\n${line}`);
      result.entries++;
    }
    out.end(HAR_EPILOGUE);
    await finished(out);
    await rename(temporary, harPath);
    return result;
  } catch (error) {
    out.destroy();
    await rm(temporary, { force: true });
    throw error;
  }
}
