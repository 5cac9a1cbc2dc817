// Reads a report.json back (the file, or the one in a report directory), checked against its
// schema: for `report merge|baseline|diff|matrix` and the library's `loadReport`.
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { UsageError } from '../core/errors.ts';
import type { Report } from './model.ts';
import { reportSchemaError } from './schema.ts';

/** `who` starts every error line (the command, or the API function): a UsageError, one line. */
export async function readReport(location: string, who: string): Promise<Report> {
  let file = location;
  try {
    if ((await stat(location)).isDirectory()) file = join(location, 'report.json');
  } catch {
    throw new UsageError(`${who}: cannot read ${location}: no such file or directory`);
  }
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no report.json there' : 'not readable';
    throw new UsageError(`${who}: cannot read ${file}: ${reason}`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`${who}: ${file} is not JSON: ${(error as Error).message}`);
  }
  const problem = reportSchemaError(value);
  if (problem !== undefined) throw new UsageError(`${who}: ${file} is not a tmi-conform report: ${problem}`);
  return value as Report;
}
