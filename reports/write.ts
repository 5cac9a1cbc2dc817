// Writes every report format into a directory. Every file is rendered first and written to a
// temporary name in the same directory; only when all are complete are they renamed into place,
// so a reader never sees half a report and a run that fails while writing leaves the earlier
// report as it was. With GITHUB_STEP_SUMMARY set, report.md is appended to the job summary too.
import { appendFile, mkdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { UsageError } from '../core/errors.ts';
import { renderHtml } from './html.ts';
import { renderJson } from './json.ts';
import { renderJunit } from './junit.ts';
import { renderMarkdown } from './markdown.ts';
import type { Report } from './model.ts';
import { renderSarif } from './sarif.ts';

export const REPORT_FILES = {
  'report.json': renderJson,
  'junit.xml': renderJunit,
  'report.md': renderMarkdown,
  'report.html': renderHtml,
  'report.sarif': renderSarif,
} as const;

/**
 * Throws a UsageError (one line, exit 2) when reports cannot go to `dir` because something other
 * than a directory is there: checked before a long run, not after it.
 */
export async function checkReportDir(dir: string): Promise<void> {
  let isDirectory: boolean;
  try {
    isDirectory = (await stat(dir)).isDirectory();
  } catch {
    return; // missing: made when the reports are written (a parent that is a file is said then)
  }
  if (!isDirectory) throw new UsageError(`cannot write reports to ${dir}: it is a file, not a directory`);
}

/** `jobSummary: false`: not appended to GITHUB_STEP_SUMMARY (a report rewritten while a run goes on). */
export async function writeReports(report: Report, dir: string, { jobSummary = true }: { jobSummary?: boolean } = {}): Promise<string[]> {
  await checkReportDir(dir);
  const rendered = Object.entries(REPORT_FILES).map(([name, render]) => ({ path: join(dir, name), text: render(report) }));
  const temporaries: string[] = [];
  try {
    await mkdir(dir, { recursive: true });
    for (const { path, text } of rendered) {
      const temporary = `${path}.${process.pid}.tmp`;
      temporaries.push(temporary);
      await writeFile(temporary, text);
    }
  } catch (error) {
    // What was written goes; a name that was never ours (a directory in the way) stays.
    await Promise.all(temporaries.map((t) => rm(t, { force: true }).catch(() => {})));
    throw new UsageError(`cannot write reports to ${dir}: ${fsReason(error)}`);
  }
  for (let i = 0; i < rendered.length; i++) await rename(temporaries[i]!, rendered[i]!.path);
  const summaryFile = process.env['GITHUB_STEP_SUMMARY'];
  if (summaryFile && jobSummary) await appendFile(summaryFile, rendered.find((r) => r.path.endsWith('report.md'))!.text);
  return rendered.map((r) => r.path);
}

/** An fs error in words: its code's meaning, without the stack of the call that failed. */
function fsReason(error: unknown): string {
  const code = (error as NodeJS.ErrnoException)?.code;
  const reasons: Record<string, string> = {
    EEXIST: 'a file stands where a directory is needed',
    ENOTDIR: 'a file stands where a directory is needed',
    EACCES: 'permission denied',
    EPERM: 'permission denied',
    ENOSPC: 'no space left on the device',
    EROFS: 'the file system is read-only',
  };
  return (code !== undefined ? reasons[code] : undefined) ?? (error as Error)?.message ?? String(error);
}
