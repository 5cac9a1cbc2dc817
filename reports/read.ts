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
  const notAReport = whatItIsInstead(value);
  if (notAReport !== undefined) throw new UsageError(`${who}: ${file} is not a tmi-conform report: ${notAReport}`);
  const problem = reportSchemaError(value);
  if (problem !== undefined) throw new UsageError(`${who}: ${file} is not a tmi-conform report: ${problem}`);
  return value as Report;
}

/** For a file that is no report at all, what it is and what to do with it; undefined for a report (valid or not). */
function whatItIsInstead(value: unknown): string | undefined {
  const object = typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  if (object !== undefined && 'schemaVersion' in object) return undefined;
  const log = object?.['log'] as Record<string, unknown> | undefined;
  if (log !== undefined && Array.isArray(log['entries']))
    return 'it is a HAR recording (tmi-conform validate FILE --report-dir DIR judges it; that DIR can be merged)';
  return 'it holds no report (a report is the report.json that run, proxy and validate write, or the directory holding it)';
}
