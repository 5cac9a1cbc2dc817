// GitHub Actions workflow commands for a report: each failed requirement an `::error`, each
// warning a `::warning`, titled with the requirement id, so that the job's page and a pull
// request's checks show them without opening the log or the artifact. Failures the baseline
// accepted are not annotated. Capped per level; a notice says how many more are in the report.
import type { Report, RequirementResult } from './model.ts';

/** Annotations per level: GitHub shows at most 10 of each per step anyway. */
export const ANNOTATIONS_PER_LEVEL = 10;

/** A workflow command's message: %, CR and LF escaped (the runner's own encoding). */
const data = (text: string): string => text.replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
/** A property value: the same, and the separators of properties. */
const property = (text: string): string => data(text).replace(/:/g, '%3A').replace(/,/g, '%2C');

/** What the first piece of evidence against it said, else its title. */
function messageOf(r: RequirementResult): string {
  const evidence = r.evidence.find((e) => e.status === r.status && e.message !== undefined);
  const first = (evidence?.message ?? '').split('\n').find((line) => line.startsWith(`${r.id}: `)) ?? evidence?.message?.split('\n', 1)[0];
  const said = first ? first.replace(new RegExp(`^${r.id}: `), '') : r.title;
  const where = evidence?.exchange
    ? ` (${evidence.exchange.request.method} ${evidence.exchange.request.url} → ${evidence.exchange.response?.status ?? 'no response'})`
    : '';
  return `${r.level}: ${said.slice(0, 500)}${where}; ${r.counts.findings} finding(s), see the report`;
}

export function workflowCommands(report: Report): string[] {
  const open = report.requirements.filter((r) => r.accepted === undefined);
  const out: string[] = [];
  for (const [level, command] of [
    ['fail', 'error'],
    ['warn', 'warning'],
  ] as const) {
    const list = open.filter((r) => r.status === level);
    for (const r of list.slice(0, ANNOTATIONS_PER_LEVEL)) out.push(`::${command} title=${property(`${r.id} ${r.title}`.slice(0, 200))}::${data(messageOf(r))}`);
    if (list.length > ANNOTATIONS_PER_LEVEL)
      out.push(
        `::notice title=tmi-conform::${list.length - ANNOTATIONS_PER_LEVEL} more ${level === 'fail' ? 'failed' : 'warned'} requirement(s) in report.md and report.html`,
      );
  }
  return out;
}
