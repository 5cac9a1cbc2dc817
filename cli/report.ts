// `tmi-conform report merge DIR... --out DIR [--fail-on must|should]`: one compliance report
// from several runs (e.g. the suite run in CI plus a day of proxy traffic).
// `tmi-conform report baseline REPORT --out FILE`: the accepted failures of a run, as a baseline
// to edit (a reason each) and pass to --baseline.
import { existsSync } from 'node:fs';
import { copyFile, mkdir, writeFile } from 'node:fs/promises';
import { bringsNewFailure, diffReports, renderDiff } from '../reports/diff.ts';
import { buildMatrix, renderMatrixConsole, renderMatrixHtml, renderMatrixMarkdown } from '../reports/matrix.ts';
import { applyBaseline, baselineYaml } from '../reports/baseline.ts';
import { baselineOption } from './baseline-option.ts';
import { coverageGateOption, exitWithCoverageGate } from './coverage-option.ts';
import { dirname, join } from 'node:path';
import type { Report } from '../reports/model.ts';
import { parseFailOn } from '../reports/fail-on.ts';
import { mergeReports, type MergeInput } from '../reports/merge.ts';
import { readReport } from '../reports/read.ts';
import { verdictWords } from '../reports/console.ts';
import { writeReports } from '../reports/write.ts';
import { parseArgs, stringFlag } from './args.ts';
import { EXIT_FAILED, EXIT_OK, UsageError } from '../core/errors.ts';

export const help = `Usage: tmi-conform report merge DIR... --out DIR [--fail-on must|should]
       tmi-conform report baseline REPORT --out FILE.yaml
       tmi-conform report diff BEFORE AFTER [--out DIR]
       tmi-conform report matrix [LABEL=]REPORT... --out DIR

report diff compares two reports (directories or report.json files): new failures (with the
exchange behind each), fixed, still failing, new and gone warnings; requirements only one side
knows (another kit version) are named, not counted. It prints the diff, and with --out writes
diff.md (short enough for a pull-request comment) and diff.json. Exit 1 when a "must" fails that
did not before.

report matrix renders the requirement × target table of several reports (one CI job per target):
matrix.md (for a pull-request comment), matrix.html (each cell links to the requirement in the
copy of that target's report.html kept in the --out folder, which can be uploaded alone),
matrix.json, and on the console the requirements that do not pass everywhere. A column is named
by its LABEL (staging=reports/staging), else by its target's host. Exit 0: each target's own job
carries its verdict.

report baseline writes the failed and warned requirements of REPORT (a report directory or
report.json) as a baseline for --baseline on run, validate and proxy: one entry each, with a
reason to edit and an until: date to set if the acceptance should end.

Combines reports into one compliance report: e.g. the suite run in CI and a day of proxy
traffic. Each DIR is a report directory (holding report.json) or a report.json file.
A requirement's status combines its evidence from every report: fail > warn > pass > skip
(one failure anywhere fails it; a skip and a pass make a pass). Counts are summed, evidence
is kept bounded with every source represented, traffic statistics are added up, and every
source is named in the merged report.

Options:
  --out DIR          where report.json, junit.xml, report.md, report.html, report.sarif go (required)
  --fail-on LEVEL    must (default): exit 1 on a failed "must" requirement; should: also on warnings
  --min-coverage N|PART=N,…
                     merge: exit 1 unless the merged report examined N % of the document's requirements;
                     PART=N for document, responses, values, operations, description,
                     description-responses (the --openapi description's operations and statuses)
  --baseline FILE    merge: failures and coverage gaps accepted (as run, validate and proxy take it)

Exit codes: 0 no violation at the fail-on level, 1 some, 2 unreadable or invalid input, usage error.`;

export async function run(argv: string[]): Promise<number> {
  const [subcommand, ...rest] = argv;
  if (subcommand === undefined) throw new UsageError('report: name a subcommand: report merge DIR... --out DIR, report baseline REPORT --out FILE');
  if (subcommand === 'baseline') return writeBaseline(rest);
  if (subcommand === 'diff') return writeDiff(rest);
  if (subcommand === 'matrix') return writeMatrix(rest);
  if (subcommand !== 'merge') throw new UsageError(`report: unknown subcommand "${subcommand}" (subcommands: merge, baseline, diff, matrix)`);
  const args = parseArgs('report merge', rest, {
    out: { value: true },
    'fail-on': { value: true },
    'min-coverage': { value: true },
    baseline: { value: true },
  });
  if (args.positionals.length === 0) throw new UsageError('report merge: name at least one report directory or report.json');
  const out = stringFlag(args, 'out');
  if (out === undefined) throw new UsageError('report merge: --out DIR is required (where the merged report goes)');
  const failOn = parseFailOn(stringFlag(args, 'fail-on'));
  const coverageGate = coverageGateOption(stringFlag(args, 'min-coverage'), 'report merge: --min-coverage');
  const baseline = await baselineOption(stringFlag(args, 'baseline'));

  const inputs: MergeInput[] = [];
  for (const location of args.positionals) inputs.push({ report: await readReport(location, 'report merge'), origin: location });
  const merged = mergeReports(inputs, { failOn });
  const report = baseline ? applyBaseline(merged, baseline) : merged;
  const written = await writeReports(report, out);
  printSummary(report, written);
  return exitWithCoverageGate(report.passed ? EXIT_OK : EXIT_FAILED, report, coverageGate, 'report merge');
}

async function writeBaseline(argv: string[]): Promise<number> {
  const args = parseArgs('report baseline', argv, { out: { value: true } });
  if (args.positionals.length !== 1) throw new UsageError('report baseline: name one report directory or report.json');
  const out = stringFlag(args, 'out');
  if (out === undefined) throw new UsageError('report baseline: --out FILE is required (where the baseline goes)');
  const report = await readReport(args.positionals[0]!, 'report baseline');
  const text = baselineYaml(report);
  try {
    await writeFile(out, text);
  } catch (error) {
    throw new UsageError(`report baseline: cannot write ${out} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
  }
  const count = report.requirements.filter((r) => r.status === 'fail' || r.status === 'warn').length;
  process.stdout.write(`baseline: ${count} requirement(s) accepted, written to ${out}; give each a reason, then pass it with --baseline ${out}\n`);
  return EXIT_OK;
}

async function writeDiff(argv: string[]): Promise<number> {
  const args = parseArgs('report diff', argv, { out: { value: true } });
  if (args.positionals.length !== 2) throw new UsageError('report diff: name two reports, BEFORE and AFTER (directories or report.json files)');
  const [before, after] = await Promise.all(args.positionals.map((location) => readReport(location, 'report diff')));
  const diff = diffReports(before!, after!);
  process.stdout.write(`${renderDiff(diff).join('\n')}\n`);
  const out = stringFlag(args, 'out');
  if (out !== undefined) {
    try {
      await mkdir(out, { recursive: true });
      await writeFile(join(out, 'diff.md'), `${renderDiff(diff, true).join('\n')}\n`);
      await writeFile(join(out, 'diff.json'), `${JSON.stringify(diff, null, 2)}\n`);
    } catch (error) {
      throw new UsageError(`report diff: cannot write to ${out} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
    }
    process.stdout.write(`diff: ${join(out, 'diff.md')}, ${join(out, 'diff.json')}\n`);
  }
  return bringsNewFailure(diff) ? EXIT_FAILED : EXIT_OK;
}

async function writeMatrix(argv: string[]): Promise<number> {
  const args = parseArgs('report matrix', argv, { out: { value: true } });
  if (args.positionals.length === 0) throw new UsageError('report matrix: name the reports, one per target (directories or report.json files)');
  const out = stringFlag(args, 'out');
  if (out === undefined) throw new UsageError('report matrix: --out DIR is required (where matrix.md, matrix.html and matrix.json go)');
  const reports = [];
  for (const input of args.positionals) {
    // LABEL=REPORT names the column; a bare REPORT is named by its target's host.
    const labelled = /^([^=/\\]+)=(.+)$/.exec(input);
    const location = labelled ? labelled[2]! : input;
    reports.push({ report: await readReport(location, 'report matrix'), origin: location, ...(labelled ? { label: labelled[1]! } : {}) });
  }
  const matrix = buildMatrix(reports);
  process.stdout.write(`${renderMatrixConsole(matrix).join('\n')}\n`);
  try {
    await mkdir(out, { recursive: true });
    const linked = new Set<string>();
    for (const target of matrix.targets) {
      const html = target.origin.endsWith('.json') ? join(dirname(target.origin), 'report.html') : join(target.origin, 'report.html');
      if (!existsSync(html)) continue;
      await mkdir(join(out, target.folder), { recursive: true });
      await copyFile(html, join(out, target.folder, 'report.html'));
      linked.add(target.folder);
    }
    await writeFile(join(out, 'matrix.md'), renderMatrixMarkdown(matrix));
    await writeFile(join(out, 'matrix.html'), renderMatrixHtml(matrix, linked));
    await writeFile(join(out, 'matrix.json'), `${JSON.stringify(matrix, null, 2)}\n`);
  } catch (error) {
    throw new UsageError(`report matrix: cannot write to ${out} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
  }
  process.stdout.write(`matrix: ${['matrix.md', 'matrix.html', 'matrix.json'].map((f) => join(out, f)).join(', ')}\n`);
  return EXIT_OK;
}

function printSummary(report: Report, written: string[]): void {
  const { pass, fail, warn, skip } = report.summary;
  const out = [
    `merged ${report.sources.length} source(s): ${report.sources.map((s) => s.name).join(', ')}`,
    `requirements: ${pass} pass, ${fail} fail, ${warn} warn, ${skip} skip`,
    report.interrupted === true
      ? `${verdictWords(report)} (a source was interrupted)`
      : report.passed
        ? 'verdict: conforming'
        : `verdict: NOT conforming (fail-on ${report.failOn})`,
    `reports: ${written.join(', ')}`,
  ];
  process.stdout.write(out.join('\n') + '\n');
}
