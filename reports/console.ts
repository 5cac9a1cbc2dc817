// The terminal's summary of a report, for run, validate and proxy alike: the counts, what failed
// (in detail, or as a table), what was not judged and why, the verdict and where the reports
// are. Everything it says is read from the report, so the console says what report.json says;
// each driver adds only the lines about itself (what it read, ran or recorded).
import { ATTACK_TOKEN_COMMAND, curlCommand, curlVariables, reproducible } from './curl.ts';
import type { Report } from './model.ts';
import { operationRows, operationsCalled } from './operations.ts';
import { workflowCommands } from './annotations.ts';
import { conclusionOf, INTERRUPTED_VERDICT } from './status.ts';
import { coverageLines } from './coverage.ts';

export interface SummaryOptions {
  /** The driver's own lines, first: what it ran, read or recorded. */
  lead?: string[];
  /**
   * failures: each failed or warned requirement with its message, exchange and a curl command
   * that sends it again (a run: a few tests). table: one row per requirement with findings and
   * how many exchanges (traffic, where the count matters more than one example).
   */
  detail: 'failures' | 'table';
  /** The driver says what was not judged itself, where it can say more (validate: the file and line). */
  notJudgedSaid?: boolean;
  /** In place of "verdict: conforming" / "NOT conforming", when there is none (input that could not be read). */
  verdict?: string;
  /** Said after the verdict: how long it took, time spent waiting. */
  verdictNote?: string;
  written?: string[];
  /** The driver's lines after the reports line (the seed, the journal). */
  trailer?: string[];
  /** Under GitHub Actions: the workflow commands that annotate each failure and warning (reports/annotations.ts). */
  workflowCommands?: boolean;
}

/**
 * "not judged: 3 exchange(s), <reason>: <place>, <place> and 1 more": what was left unjudged and
 * where; `places` names the first few of `count`.
 */
export function notJudgedLine(what: string, count: number, reason: string, places: readonly string[]): string {
  if (places.length === 0) return `${what}: ${count} exchange(s), ${reason}`;
  return `${what}: ${count} exchange(s), ${reason}: ${places.join(', ')}${count > places.length ? ` and ${count - places.length} more` : ''}`;
}

/** The summary, one line per element. */
export function renderSummary(report: Report, options: SummaryOptions): string[] {
  const out = [...(options.lead ?? [])];
  const { summary } = report;
  out.push(`requirements: ${summary.pass} pass · ${summary.fail} fail · ${summary.warn} warn · ${summary.skip} skip`);
  const security = report.requirements.filter((r) => (r.counts.security ?? 0) > 0);
  if (security.length > 0)
    out.push(
      `SECURITY: the target carried out requests it should have refused: ${security.map((r) => `${r.id} (${r.counts.security} exchange(s))`).join(', ')}`,
    );
  out.push(...baselineLines(report));
  out.push(...coverageLines(report));
  out.push(...operationLines(report));
  out.push(...(options.detail === 'failures' ? failureLines(report) : findingRows(report)));
  for (const { reason, count, exchanges } of options.notJudgedSaid ? [] : (report.traffic?.notJudged ?? [])) {
    out.push(
      notJudgedLine(
        'not judged',
        count,
        reason,
        exchanges.map((id) => `exchange ${id}`),
      ),
    );
  }
  // Each skip reason once, with the requirements it kept from being examined.
  const skippedFor = new Map<string, string[]>();
  for (const r of report.requirements.filter((x) => x.status === 'skip')) {
    const reason = r.reason ?? 'not examined';
    skippedFor.set(reason, [...(skippedFor.get(reason) ?? []), r.id]);
  }
  if (options.detail === 'failures')
    for (const [reason, ids] of skippedFor) out.push(`  skipped: ${ids.join(', ')}: ${reason.length > 300 ? `${reason.slice(0, 300)}…` : reason}`);
  out.push(options.verdict ?? `${verdictWords(report)}${options.verdictNote !== undefined ? ` ${options.verdictNote}` : ''}`);
  if (options.written) out.push(`reports: ${options.written.join(', ')}`);
  out.push(...(options.trailer ?? []));
  if (options.workflowCommands) out.push(...workflowCommands(report));
  return out;
}

/** "verdict: conforming", "verdict: NOT conforming", or for an interrupted report "interrupted: no verdict". */
export function verdictWords(report: Pick<Report, 'passed' | 'interrupted'>): string {
  const conclusion = conclusionOf(report);
  return conclusion === 'interrupted' ? INTERRUPTED_VERDICT : `verdict: ${conclusion === 'conforming' ? 'conforming' : 'NOT conforming'}`;
}

/** Whether this process runs as a GitHub Actions step, whose log reads workflow commands. */
export const underGitHubActions = (env: NodeJS.ProcessEnv = process.env): boolean => env['GITHUB_ACTIONS'] === 'true';

/** What --baseline did: the failures it accepted and why, the entries fixed and expired. */
function baselineLines(report: Report): string[] {
  const b = report.baseline;
  if (!b) return [];
  const until = (e: { until?: string }) => (e.until ? ` (until ${e.until})` : '');
  const out = [`baseline ${b.source}: ${b.accepted.length} failure(s) accepted, ${b.fixed.length} fixed, ${b.expired.length} expired`];
  for (const e of b.accepted) out.push(`  accepted: ${e.requirement}: ${e.reason}${until(e)}`);
  for (const e of b.fixed) out.push(`  fixed: ${e.requirement} passes now: remove its entry ("${e.remove}") from ${b.source}`);
  for (const e of b.expired) out.push(`  expired: ${e.requirement}${until(e)}: counts again`);
  return out;
}

/** Operation rows on the terminal: the rest are in the reports. */
const OPERATIONS_SHOWN = 12;

/** The operations the traffic called, the document's first, then the most called. */
function operationLines(report: Report): string[] {
  if (!report.traffic?.operations) return [];
  const { rows, more } = operationRows(report.traffic, OPERATIONS_SHOWN);
  const width = Math.min(48, Math.max(...rows.map((r) => r.name.length)));
  const out = [`operations: ${operationsCalled(report.traffic.operations)}`];
  for (const row of rows) out.push(`  ${row.name.padEnd(width)} ${String(row.exchanges).padStart(6)} exchange(s): ${row.statuses}`);
  if (more > 0) out.push(`  … and ${more} more operations in the reports`);
  return out;
}

/** One row per requirement with findings: id, level, whose fault, how many exchanges. */
function findingRows(report: Report): string[] {
  const rows: Array<[id: string, level: string, subject: string, count: number]> = [];
  for (const r of report.requirements) {
    if (r.counts.findings > 0) rows.push([r.id, r.level, r.accepted ? 'accepted' : 'implementation', r.counts.findings]);
    if (r.counts.clientFindings > 0) rows.push([r.id, r.level, 'client', r.counts.clientFindings]);
  }
  for (const finding of report.clientFindings)
    if (!rows.some(([id, , subject]) => id === finding.requirement && subject === 'client'))
      rows.push([finding.requirement, finding.level, 'client', finding.count]);
  if (rows.length === 0) return ['no findings'];
  return rows.sort((a, b) => b[3] - a[3]).map(([id, level, subject, count]) => `  ${id.padEnd(34)} ${level.padEnd(6)} ${subject.padEnd(14)} ${count}`);
}

/**
 * Each failure: what was expected and received, the exchange (sent, answered), a property's
 * counterexample, and a curl command that sends the exchange again.
 */
function failureLines(report: Report): string[] {
  const out: string[] = [];
  const reproduce: string[] = [];
  for (const r of report.requirements.filter((x) => (x.status === 'fail' || x.status === 'warn') && x.accepted === undefined)) {
    const failing = reproducible(r);
    const shown = failing ?? r.evidence.find((e) => e.status === r.status);
    // The line about this requirement (a failure may name several), else the first.
    const lines = (shown?.message ?? '').split('\n');
    const message = (lines.find((line) => line.startsWith(`${r.id}: `)) ?? lines[0]!).replace(new RegExp(`^${r.id}: `), '');
    out.push(`  ${r.status === 'fail' ? 'FAIL' : 'warn'} ${r.id.padEnd(34)} ${message.slice(0, 300)}`);
    const indent = ' '.repeat(7);
    if (shown?.exchange)
      out.push(
        `${indent}${shown.exchange.request.method} ${shown.exchange.request.url} → ${shown.exchange.response?.status ?? shown.exchange.error ?? 'no response'}${shown.test ? `  (test "${shown.test}")` : ''}`,
      );
    const counterexample = r.evidence.find((e) => e.status === r.status && e.counterexample !== undefined)?.counterexample;
    if (counterexample !== undefined) out.push(`${indent}counterexample: ${counterexample.length > 300 ? `${counterexample.slice(0, 300)}…` : counterexample}`);
    if (failing) {
      const command = curlCommand(failing.exchange, report.target);
      out.push(`${indent}${command.length > 2000 ? 'curl command: in report.md (too long for the console)' : command}`);
      reproduce.push(command);
    }
  }
  if (reproduce.some((c) => curlVariables(c).includes('TOKEN')))
    out.push(
      `  (the curl commands read a bearer token of the same client from TOKEN${reproduce.some((c) => c.includes(ATTACK_TOKEN_COMMAND)) ? "; an attack case's command makes its attack token from it" : ''}: the reports never hold one)`,
    );
  return out;
}
