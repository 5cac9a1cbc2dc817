// What two routes judging the same traffic must agree on, as a small comparable value: each
// requirement's status and counts, the traffic's counts, the findings of the failing evidence
// as a sorted multiset, and whether a secret the traffic carried reached the report.
import type { Report } from '../../reports/model.ts';

export interface RouteProjection {
  verdict: 'passed' | 'failed';
  /** requirement id → "status exchanges/failing exchanges/client findings/security" (only requirements something examined or broke). */
  requirements: Record<string, string>;
  traffic: { exchanges: number; notCovered: number; byOperation: Record<string, Record<string, number>>; notJudged: Record<string, number> };
  /** "REQUIREMENT subject METHOD operation STATUS [security]", one per finding of the failing or warning exchange evidence, sorted. */
  findings: string[];
  /** The secrets (given to project) found anywhere in the report's JSON. */
  secretsInReport: number;
}

export interface ProjectOptions {
  /** Values that must never reach a report (a client secret the traffic echoed). */
  secrets?: string[];
  /**
   * What a suite run's report can be compared on with the report of an observer of its traffic
   * (the proxy in front of the target):
   * - client findings are left out: the suites drop them on the requests they send on purpose
   *   (a request without a token is no client's mistake), and count such a request as examined;
   *   so a requirement whose subject is the client is compared by its status only;
   * - a failed test counts in a requirement's findings (reports/requirement-tally.ts): only the
   *   failing exchanges are compared;
   * - GEN-OPERATION-SERVED is left out: only the run's preflight judges it, over several of its
   *   requests at once;
   * - the rate-limit rules are compared by status only: they compare a client's exchanges
   *   answered before another was sent, which the client's clock and the proxy's see
   *   differently when requests overlap;
   * - findings are compared as a set: a run keeps each failure kind (and token attack) beyond
   *   the evidence limit, an observer the first few.
   */
  suitesComparable?: boolean;
}

export function projectReport(report: Report, options: ProjectOptions = {}): RouteProjection {
  const suites = options.suitesComparable === true;
  const requirements: Record<string, string> = {};
  const findings: string[] = [];
  for (const r of report.requirements) {
    if (r.status === 'skip' || (suites && r.id === 'GEN-OPERATION-SERVED')) continue;
    const c = r.counts;
    const failingExchanges = c.findings - failingTests(report, r.id);
    const statusOnly = suites && (r.subject !== 'implementation' || r.id.startsWith('RL-'));
    requirements[r.id] = statusOnly ? r.status : `${r.status} ${c.exchanges}/${failingExchanges}/${suites ? '-' : c.clientFindings}/${c.security ?? 0}`;
    for (const e of r.evidence) {
      if (e.kind !== 'exchange' || (e.status !== 'fail' && e.status !== 'warn')) continue;
      for (const f of e.findings ?? []) {
        if (f.requirement !== r.id || (suites && f.subject !== 'implementation')) continue;
        findings.push(
          [
            f.requirement,
            f.subject,
            e.exchange?.request.method,
            e.exchange?.operation ?? pathOf(e.exchange?.request.url),
            e.exchange?.response?.status ?? 'error',
            f.security ? 'security' : '',
          ]
            .join(' ')
            .trim(),
        );
      }
    }
  }
  const t = report.traffic;
  const notJudged: Record<string, number> = {};
  for (const tally of t?.notJudged ?? []) notJudged[tally.reason] = (notJudged[tally.reason] ?? 0) + tally.count;
  const json = JSON.stringify(report);
  return {
    verdict: report.passed ? 'passed' : 'failed',
    requirements,
    traffic: { exchanges: t?.exchanges ?? 0, notCovered: t?.notCovered ?? 0, byOperation: t?.byOperation ?? {}, notJudged },
    findings: suites ? [...new Set(findings)].sort() : findings.sort(),
    secretsInReport: (options.secrets ?? []).filter((s) => json.includes(s)).length,
  };
}

/** The suite tests whose failure counts against the requirement (none in an observer's report). */
function failingTests(report: Report, id: string): number {
  return report.tests.filter((t) => (t.status === 'fail' || t.status === 'warn') && (t.charged ?? t.requirements).includes(id)).length;
}

const pathOf = (url: string | undefined) => (url === undefined ? '?' : new URL(url).pathname);

/** The parts of `route` that differ from `expected`, by key, for a failure message that names them. */
/** JSON with every object's keys in order: the routes list operations in the order they first met them. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v !== null && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => a.localeCompare(b)))
      : v,
  );
}

export function projectionDiff(expected: RouteProjection, route: RouteProjection): string[] {
  const lines: string[] = [];
  if (expected.verdict !== route.verdict) lines.push(`verdict: expected ${expected.verdict}, got ${route.verdict}`);
  const ids = new Set([...Object.keys(expected.requirements), ...Object.keys(route.requirements)]);
  for (const id of [...ids].sort()) {
    if (expected.requirements[id] !== route.requirements[id])
      lines.push(`requirement ${id}: expected ${expected.requirements[id] ?? '(not examined)'}, got ${route.requirements[id] ?? '(not examined)'}`);
  }
  if (canonical(expected.traffic) !== canonical(route.traffic)) lines.push(`traffic: expected ${canonical(expected.traffic)}, got ${canonical(route.traffic)}`);
  const missing = multisetMinus(expected.findings, route.findings);
  const extra = multisetMinus(route.findings, expected.findings);
  for (const f of missing) lines.push(`finding missing: ${f}`);
  for (const f of extra) lines.push(`finding extra: ${f}`);
  if (expected.secretsInReport !== route.secretsInReport)
    lines.push(`secrets in the report: expected ${expected.secretsInReport}, got ${route.secretsInReport}`);
  return lines;
}

function multisetMinus(a: string[], b: string[]): string[] {
  const rest = [...b];
  return a.filter((x) => {
    const i = rest.indexOf(x);
    if (i === -1) return true;
    rest.splice(i, 1);
    return false;
  });
}
