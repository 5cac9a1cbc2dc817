// Writes every report format into a directory. Every file is rendered first and written to a
// temporary name in the same directory; only when all are complete are they renamed into place,
// so a reader never sees half a report and a run that fails while writing leaves the earlier
// report as it was. With GITHUB_STEP_SUMMARY set, report.md is appended to the job summary too.
import { appendFile, mkdir, rename, rm, stat, statfs, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
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
 * The kernel's own views, where no file of ours can live: a report dir there would never be
 * written (procfs even spins on the attempt). By statfs type, as the kernel names them.
 */
const KERNEL_FILE_SYSTEMS: ReadonlyMap<number, string> = new Map([
  [0x9fa0, 'procfs'],
  [0x62656572, 'sysfs'],
  [0x64626720, 'debugfs'],
  [0x74726163, 'tracefs'],
  [0x27e0eb, 'cgroup'],
  [0x63677270, 'cgroup2'],
  [0x1cd1, 'devpts'],
  [0x73636673, 'securityfs'],
]);

/** The directory itself when it exists, else the nearest ancestor that does. */
async function nearestExisting(dir: string): Promise<string> {
  let path = resolve(dir);
  for (;;) {
    try {
      await stat(path);
      return path;
    } catch {
      const parent = dirname(path);
      if (parent === path) return path;
      path = parent;
    }
  }
}

/**
 * Throws a UsageError (one line, exit 2) when reports cannot go to `dir`: under a kernel file
 * system, a file where the directory or a parent should be, or no right to write there. The
 * directory is made and a file written and removed in it, so that a long run (possibly a
 * destructive one) never ends in "cannot write reports": checked before its first request.
 */
export async function checkReportDir(dir: string, what = 'reports'): Promise<void> {
  const existing = await nearestExisting(dir);
  const kernel = KERNEL_FILE_SYSTEMS.get((await statfs(existing)).type);
  if (kernel !== undefined)
    throw new UsageError(`cannot write ${what} to ${dir}: it is on ${kernel}, the kernel's view, which holds no files (choose a directory on a disk)`);
  if (existing === resolve(dir) && !(await stat(existing)).isDirectory()) throw new UsageError(`cannot write ${what} to ${dir}: it is a file, not a directory`);
  const probe = join(dir, `.tmi-conform-write-check.${process.pid}`);
  try {
    await mkdir(dir, { recursive: true });
    await writeFile(probe, '');
  } catch (error) {
    throw new UsageError(`cannot write ${what} to ${dir}: ${fsReason(error)}`);
  } finally {
    await rm(probe, { force: true }).catch(() => {});
  }
}

/**
 * `jobSummary: false`: not appended to GITHUB_STEP_SUMMARY (a report rewritten while a run goes on). `dirChecked`: the folder was
 * checked at start (checkReportDir, a probe file written and removed), as for the proxy's rewrites
 * every report interval, which need not probe it again.
 */
export async function writeReports(
  report: Report,
  dir: string,
  { jobSummary = true, dirChecked = false }: { jobSummary?: boolean; dirChecked?: boolean } = {},
): Promise<string[]> {
  if (!dirChecked) await checkReportDir(dir);
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
