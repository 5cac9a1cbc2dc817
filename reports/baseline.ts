// Baselines: failures a team has accepted for now, so that the kit stays on in CI and fails only
// on what is new. A baseline is an earlier report.json (its failed and warned requirements are
// accepted) or a small YAML file of accepted requirement ids, each with a reason and an optional
// `until:` date after which it counts again. Applying one to a report marks what it accepts,
// names what it accepted that now passes (the entry to remove), and takes the verdict from the
// failures it does not accept.
import { readFile } from 'node:fs/promises';
import { parse } from 'yaml';
import { UsageError } from '../core/errors.ts';
import { redactText } from './redact-text.ts';
import { loadRequirements } from '../rules/requirements.ts';
import type { FailOn } from './fail-on.ts';
import type { Baseline, BaselineEntry, BaselineGap, BaselineOutcome, Report, RequirementResult } from './model.ts';
import { acceptedGaps } from './coverage-gate.ts';

const DATE = /^\d{4}-\d{2}-\d{2}$/;

/** Reads a baseline: report.json (JSON with `requirements`) or YAML (`accepted:` entries). Every problem is a one-line UsageError. */
export async function loadBaseline(path: string): Promise<Baseline> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new UsageError(`--baseline ${path}: cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)})`);
  }
  let document: unknown;
  try {
    document = text.trimStart().startsWith('{') ? JSON.parse(text) : parse(text, { maxAliasCount: 100 });
  } catch (error) {
    throw new UsageError(`--baseline ${path}: not valid JSON or YAML (${(error as Error).message.split('\n', 1)[0]})`);
  }
  const entries = isReport(document) ? entriesOfReport(document) : entriesOfList(document, path);
  const gaps = isReport(document) ? [] : gapsOfList(document, path);
  const known = new Set(loadRequirements().map((r) => r.id));
  const unknown = entries.filter((e) => !known.has(e.requirement)).map((e) => e.requirement);
  if (unknown.length > 0)
    throw new UsageError(`--baseline ${path}: unknown requirement ${unknown.join(', ')} (tmi-conform's requirements are in schemas/requirements.yaml)`);
  return { source: path, entries, ...(gaps.length > 0 ? { gaps } : {}) };
}

function isReport(document: unknown): document is Pick<Report, 'requirements' | 'finishedAt'> {
  return typeof document === 'object' && document !== null && Array.isArray((document as Report).requirements) && 'schemaVersion' in document;
}

/** An earlier report accepts what failed or warned in it, as of when it was made. */
function entriesOfReport(report: Pick<Report, 'requirements' | 'finishedAt'>): BaselineEntry[] {
  return report.requirements
    .filter((r) => r.status === 'fail' || r.status === 'warn')
    .map((r) => ({ requirement: r.id, reason: `${r.status === 'fail' ? 'failed' : 'warned'} in the baseline report of ${report.finishedAt}` }));
}

function entriesOfList(document: unknown, path: string): BaselineEntry[] {
  const bad = (what: string): never => {
    throw new UsageError(`--baseline ${path}: ${what} (expected "accepted:" with entries of requirement, reason and an optional until: YYYY-MM-DD)`);
  };
  const list = typeof document === 'object' && document !== null ? (document as { accepted?: unknown }).accepted : undefined;
  if (!Array.isArray(list)) {
    if (gapsOfList(document, path).length > 0) return [];
    return bad('no "accepted:" list');
  }
  return list.map((item, i) => {
    if (typeof item !== 'object' || item === null) return bad(`entry ${i + 1} is not a mapping`);
    const { requirement, reason, until } = item as Record<string, unknown>;
    if (typeof requirement !== 'string' || requirement === '') return bad(`entry ${i + 1} has no requirement`);
    if (typeof reason !== 'string' || reason.trim() === '') return bad(`entry ${i + 1} (${requirement}) has no reason`);
    // YAML reads an unquoted date as a Date.
    const day = until instanceof Date ? until.toISOString().slice(0, 10) : until;
    if (day !== undefined && (typeof day !== 'string' || !DATE.test(day))) return bad(`entry ${i + 1} (${requirement}): until is not a date YYYY-MM-DD`);
    return { requirement, reason, ...(day !== undefined ? { until: day } : {}) };
  });
}

/** A baseline's accepted coverage gaps: `gaps:` entries of gap (a part of the coverage, as report diff names it), reason and an optional until. */
function gapsOfList(document: unknown, path: string): BaselineGap[] {
  const bad = (what: string): never => {
    throw new UsageError(
      `--baseline ${path}: ${what} (expected "gaps:" with entries of gap, e.g. "response DELETE /token-exchange-profiles/{id} 429", reason and an optional until: YYYY-MM-DD)`,
    );
  };
  const list = typeof document === 'object' && document !== null ? (document as { gaps?: unknown }).gaps : undefined;
  if (list === undefined) return [];
  if (!Array.isArray(list)) return bad('"gaps:" is not a list');
  return list.map((item, i) => {
    const { gap, reason, until } = (typeof item === 'object' && item !== null ? item : bad(`gap ${i + 1} is not a mapping`)) as Record<string, unknown>;
    if (typeof gap !== 'string' || !/^(requirement|response|value|operation) \S/.test(gap)) return bad(`gap ${i + 1} names no part`);
    if (typeof reason !== 'string' || reason.trim() === '') return bad(`gap ${i + 1} (${gap}) has no reason`);
    const day = until instanceof Date ? until.toISOString().slice(0, 10) : until;
    if (day !== undefined && (typeof day !== 'string' || !DATE.test(day))) return bad(`gap ${i + 1} (${gap}): until is not a date YYYY-MM-DD`);
    return { gap, reason, ...(day !== undefined ? { until: day } : {}) };
  });
}

/** The day after `until` has begun (UTC) at `now`. */
const expiredAt = (entry: BaselineEntry, now: Date): boolean => entry.until !== undefined && now.toISOString().slice(0, 10) > entry.until;

const failing = (r: RequirementResult) => r.status === 'fail' || r.status === 'warn';

/** The verdict with accepted failures left out: a failure counts at `failOn` unless accepted. */
export function verdictBeside(requirements: readonly RequirementResult[], failOn: FailOn): boolean {
  return !requirements.some((r) => r.accepted === undefined && (r.status === 'fail' || (failOn === 'should' && r.status === 'warn')));
}

/** `report` with the baseline applied: accepted failures marked, the verdict taken from the others. */
export function applyBaseline(report: Report, baseline: Baseline, now = new Date()): Report {
  const byId = new Map(baseline.entries.map((e) => [e.requirement, { ...e, reason: redactText(e.reason) }]));
  const outcome: BaselineOutcome = { source: baseline.source, accepted: [], fixed: [], expired: [] };
  const requirements = report.requirements.map((r) => {
    const entry = byId.get(r.id);
    if (!entry) return r;
    if (expiredAt(entry, now)) {
      if (failing(r)) outcome.expired.push(entry);
      return r;
    }
    if (failing(r)) {
      outcome.accepted.push(entry);
      return { ...r, accepted: { reason: entry.reason, ...(entry.until !== undefined ? { until: entry.until } : {}) } };
    }
    if (r.status === 'pass') outcome.fixed.push({ ...entry, remove: `- requirement: ${r.id}` });
    return r;
  });
  // An interrupted report has no verdict to take: what it accepts changes nothing of that.
  const applied: Report = { ...report, requirements, passed: report.interrupted !== true && verdictBeside(requirements, report.failOn), baseline: outcome };
  const gaps =
    report.coverage && baseline.gaps
      ? acceptedGaps(
          { requirements, coverage: report.coverage },
          baseline.gaps.map((g) => ({ ...g, reason: redactText(g.reason) })),
          now,
        )
      : [];
  if (gaps.length > 0) applied.coverage = { ...report.coverage!, accepted: gaps };
  return applied;
}

/** A baseline file accepting what failed or warned in `report`: one entry each, its reason to be edited. */
export function baselineYaml(report: Report): string {
  const lines = [
    '# Accepted failures for tmi-conform --baseline (run, validate, proxy). Only failures not listed',
    '# here count in the verdict. Each entry: the requirement, why it is accepted, and optionally',
    '# until: YYYY-MM-DD, after which it counts again. An entry whose requirement passes is reported',
    '# as fixed: remove it then.',
    `# Made from the ${report.kind} report of ${report.finishedAt}${report.target ? ` (${report.target})` : ''}.`,
    'accepted:',
  ];
  const failing = report.requirements.filter((r) => r.status === 'fail' || r.status === 'warn');
  for (const r of failing) {
    lines.push(
      `  - requirement: ${r.id}`,
      `    reason: ${JSON.stringify(`${r.status === 'fail' ? 'fails' : 'warns'} since ${report.finishedAt.slice(0, 10)}: ${r.title}`)}`,
      '    # until: 2099-12-31',
    );
  }
  if (failing.length === 0) lines.push('  []');
  return `${lines.join('\n')}\n`;
}
