// Writes every report format into a directory. Each file is written to a temporary name and
// renamed, so a reader never sees half a report; with GITHUB_STEP_SUMMARY set, report.md is
// appended to the job summary too.
import { appendFile, mkdir, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { renderHtml } from './html.ts';
import { renderJson } from './json.ts';
import { renderJunit } from './junit.ts';
import { renderMarkdown } from './markdown.ts';
import type { Report } from './model.ts';

export const REPORT_FILES = {
  'report.json': renderJson,
  'junit.xml': renderJunit,
  'report.md': renderMarkdown,
  'report.html': renderHtml,
} as const;

export async function writeReports(report: Report, dir: string): Promise<string[]> {
  await mkdir(dir, { recursive: true });
  const written: string[] = [];
  for (const [name, render] of Object.entries(REPORT_FILES)) {
    const path = join(dir, name);
    const temporary = `${path}.${process.pid}.tmp`;
    await writeFile(temporary, render(report));
    await rename(temporary, path);
    written.push(path);
  }
  const summaryFile = process.env['GITHUB_STEP_SUMMARY'];
  if (summaryFile) await appendFile(summaryFile, REPORT_FILES['report.md'](report));
  return written;
}
