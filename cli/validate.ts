// `tmi-conform validate FILE... [--report-dir DIR] [--fail-on must|should]`:
// judges recorded traffic offline with the same rule engine as the suites and the proxy.
import { access } from 'node:fs/promises';
import { judgeExchange, RateLimitTracker } from '../rules/index.ts';
import { readRecordingBatches, RecordingError, type ReadProgress } from '../recordings/read.ts';
import type { Exchange } from '../rules/types.ts';
import { ReportBuilder } from '../reports/builder.ts';
import { parseFailOn } from '../reports/fail-on.ts';
import { writeReports } from '../reports/write.ts';
import { parseArgs, stringFlag } from './args.ts';
import { EXIT_FAILED, EXIT_OK, EXIT_USAGE, UsageError } from './errors.ts';

export const help = `Usage: tmi-conform validate FILE... [--report-dir DIR] [--fail-on must|should]

Judges recorded traffic offline: HAR 1.2 files (browser DevTools, mitmproxy, other proxies,
converted cassettes) and the proxy's JSONL journal (one HAR entry per line). Files are read
as streams, so their size does not matter. Exchanges to paths the document does not cover
are counted, never judged.

Options:
  --report-dir DIR   where report.json, junit.xml, report.md, report.html go (default reports/latest)
  --fail-on LEVEL    must (default): exit 1 on a failed "must" requirement; should: also on warnings

Exit codes: 0 no violation at the fail-on level, 1 some, 2 unreadable input or usage error.`;

export interface ValidateSummary {
  files: number;
  exchanges: number;
  judged: number;
  notCovered: number;
  findingsByRequirement: Map<string, { level: string; subject: string; count: number }>;
}

function judgeInto(exchange: Exchange, tracker: RateLimitTracker, builder: ReportBuilder, summary: ValidateSummary): void {
  summary.exchanges++;
  const judgement = judgeExchange(exchange, tracker);
  builder.addExchange(exchange, judgement);
  if (!judgement.operation) {
    summary.notCovered++;
    return;
  }
  summary.judged++;
  for (const f of judgement.findings) {
    const entry = summary.findingsByRequirement.get(f.requirement);
    if (entry) entry.count++;
    else summary.findingsByRequirement.set(f.requirement, { level: f.level, subject: f.subject, count: 1 });
  }
}

export async function run(argv: string[]): Promise<number> {
  const args = parseArgs('validate', argv, { 'report-dir': { value: true }, 'fail-on': { value: true } });
  if (args.positionals.length === 0) throw new UsageError('validate: name at least one recording (HAR or JSONL journal)');
  const failOn = parseFailOn(stringFlag(args, 'fail-on'));
  const reportDir = stringFlag(args, 'report-dir') ?? 'reports/latest';
  for (const file of args.positionals) {
    try {
      await access(file);
    } catch {
      throw new UsageError(`validate: cannot read ${file}: no such file or not readable`);
    }
  }

  const builder = new ReportBuilder({ kind: 'validate', source: `validate:${args.positionals.join(',')}` });
  const summary: ValidateSummary = { files: 0, exchanges: 0, judged: 0, notCovered: 0, findingsByRequirement: new Map() };
  const unreadable: string[] = [];
  for (const file of args.positionals) {
    const tracker = new RateLimitTracker(); // rate-limit sequences are per recording
    const progress: ReadProgress = { truncatedTail: false };
    try {
      for await (const batch of readRecordingBatches(file, progress)) {
        for (const exchange of batch) judgeInto(exchange, tracker, builder, summary);
      }
      summary.files++;
      if (progress.truncatedTail) process.stderr.write(`tmi-conform validate: ${file}: the last line was cut short (a recorder stopped mid-write); it was skipped\n`);
    } catch (error) {
      if (!(error instanceof RecordingError) && !isFsError(error)) throw error;
      unreadable.push(`${file}: ${(error as Error).message}`);
    }
  }

  const report = builder.build({ failOn });
  const written = await writeReports(report, reportDir);
  printSummary(summary, report.passed, written);
  for (const line of unreadable) process.stderr.write(`tmi-conform validate: cannot read ${line}\n`);
  if (unreadable.length > 0) return EXIT_USAGE;
  return report.passed ? EXIT_OK : EXIT_FAILED;
}

function isFsError(error: unknown): boolean {
  return typeof (error as NodeJS.ErrnoException)?.code === 'string';
}

function printSummary(summary: ValidateSummary, passed: boolean, written: string[]): void {
  const out: string[] = [];
  out.push(`${summary.exchanges} exchanges in ${summary.files} file(s): ${summary.judged} judged, ${summary.notCovered} not covered by the document`);
  const rows = [...summary.findingsByRequirement.entries()].sort((a, b) => b[1].count - a[1].count);
  if (rows.length === 0) out.push('no findings');
  for (const [id, { level, subject, count }] of rows) out.push(`  ${id.padEnd(34)} ${level.padEnd(6)} ${subject.padEnd(14)} ${count}`);
  out.push(passed ? 'verdict: conforming' : 'verdict: NOT conforming');
  out.push(`reports: ${written.join(', ')}`);
  process.stdout.write(out.join('\n') + '\n');
}
