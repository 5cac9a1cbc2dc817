// `tmi-conform report merge DIR... --out DIR [--fail-on must|should]`: one compliance report
// from several runs (e.g. the suite run in CI plus a day of proxy traffic).
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Report } from '../reports/model.ts';
import { parseFailOn } from '../reports/fail-on.ts';
import { mergeReports, type MergeInput } from '../reports/merge.ts';
import { reportSchemaError } from '../reports/schema.ts';
import { writeReports } from '../reports/write.ts';
import { parseArgs, stringFlag } from './args.ts';
import { EXIT_FAILED, EXIT_OK, UsageError } from '../core/errors.ts';

export const help = `Usage: tmi-conform report merge DIR... --out DIR [--fail-on must|should]

Combines reports into one compliance report: e.g. the suite run in CI and a day of proxy
traffic. Each DIR is a report directory (holding report.json) or a report.json file.
A requirement's status combines its evidence from every report: fail > warn > pass > skip
(one failure anywhere fails it; a skip and a pass make a pass). Counts are summed, evidence
is kept bounded with every source represented, traffic statistics are added up, and every
source is named in the merged report.

Options:
  --out DIR          where report.json, junit.xml, report.md, report.html go (required)
  --fail-on LEVEL    must (default): exit 1 on a failed "must" requirement; should: also on warnings

Exit codes: 0 no violation at the fail-on level, 1 some, 2 unreadable or invalid input, usage error.`;

export async function run(argv: string[]): Promise<number> {
  const [subcommand, ...rest] = argv;
  if (subcommand === undefined) throw new UsageError('report: name a subcommand: report merge DIR... --out DIR');
  if (subcommand !== 'merge') throw new UsageError(`report: unknown subcommand "${subcommand}" (subcommands: merge)`);
  const args = parseArgs('report merge', rest, { out: { value: true }, 'fail-on': { value: true } });
  if (args.positionals.length === 0) throw new UsageError('report merge: name at least one report directory or report.json');
  const out = stringFlag(args, 'out');
  if (out === undefined) throw new UsageError('report merge: --out DIR is required (where the merged report goes)');
  const failOn = parseFailOn(stringFlag(args, 'fail-on'));

  const inputs: MergeInput[] = [];
  for (const location of args.positionals) inputs.push({ report: await readReport(location), origin: location });
  const report = mergeReports(inputs, { failOn });
  const written = await writeReports(report, out);
  printSummary(report, written);
  return report.passed ? EXIT_OK : EXIT_FAILED;
}

/** The report.json at `location` (a directory or the file itself), checked against its schema. */
async function readReport(location: string): Promise<Report> {
  let file = location;
  try {
    if ((await stat(location)).isDirectory()) file = join(location, 'report.json');
  } catch {
    throw new UsageError(`report merge: cannot read ${location}: no such file or directory`);
  }
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no report.json there' : 'not readable';
    throw new UsageError(`report merge: cannot read ${file}: ${reason}`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`report merge: ${file} is not JSON: ${(error as Error).message}`);
  }
  const problem = reportSchemaError(value);
  if (problem !== undefined) throw new UsageError(`report merge: ${file} is not a tmi-conform report: ${problem}`);
  return value as Report;
}

function printSummary(report: Report, written: string[]): void {
  const { pass, fail, warn, skip } = report.summary;
  const out = [
    `merged ${report.sources.length} source(s): ${report.sources.map((s) => s.name).join(', ')}`,
    `requirements: ${pass} pass, ${fail} fail, ${warn} warn, ${skip} skip`,
    report.passed ? 'verdict: conforming' : `verdict: NOT conforming (fail-on ${report.failOn})`,
    `reports: ${written.join(', ')}`,
  ];
  process.stdout.write(out.join('\n') + '\n');
}
