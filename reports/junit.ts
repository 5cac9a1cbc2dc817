// junit.xml: one testsuite of requirements (one testcase each) and, when suites ran, one
// testsuite of suite tests per source (one testcase each). CI test viewers read it as is.
// A failed `must` is a <failure>; a warned `should` is a <failure> only with --fail-on should,
// otherwise a <skipped> whose message starts "warning (should)" (the form CI test tabs show
// with its text; a passing testcase's <system-out> they do not show), with the details in
// <system-out>: the failure count always agrees with the exit code. A skipped requirement or
// test is <skipped> with the reason. An interrupted report has one more testsuite,
// "interrupted", whose one testcase is an <error>: a CI view never shows it green. The
// attributes are those of the common JUnit schema (none beyond it: `skipped` is a
// <testsuite>'s count, not the root's).
import { coverageProperties } from './coverage-render.ts';
import type { Evidence, Report, RequirementResult, Status, TestResult } from './model.ts';
import { INTERRUPTED_VERDICT, interruptedSources } from './status.ts';
import { escapeXml as esc } from './xml.ts';
import { notJudgedLine } from './console.ts';

interface Case {
  name: string;
  classname: string;
  seconds: number;
  /** `error`: not a test of the target, the run itself did not end (interrupted). */
  status: Status | 'error';
  /** One line: the failure or skip message. */
  message: string;
  /** Everything else a reader needs: the document's words, the evidence. */
  details: string;
  type: string;
}

interface Counts {
  tests: number;
  failures: number;
  errors: number;
  skipped: number;
  seconds: number;
}

const firstLine = (text: string) => text.split('\n', 1)[0]!;

function evidenceText(e: Evidence): string {
  const exchange = e.exchange
    ? `exchange: ${e.exchange.request.method} ${e.exchange.request.url} → ${e.exchange.response?.status ?? e.exchange.error ?? 'no response'}`
    : undefined;
  return [`[${e.source}]`, e.test ? `test: ${e.test}` : undefined, e.message, e.counterexample ? `counterexample: ${e.counterexample}` : undefined, exchange]
    .filter((x) => x !== undefined)
    .join('\n');
}

function requirementCase(r: RequirementResult): Case {
  const against = r.evidence.filter((e) => e.status === 'fail' || e.status === 'warn');
  const details = [
    `${r.id} (${r.level}): ${r.title}`,
    `"${r.quote}"`,
    r.inferred ? `inferred: ${r.inferred}` : undefined,
    `examined by ${r.counts.exchanges} exchange(s) and ${r.counts.tests} test(s); ${r.counts.findings} against it`,
    ...against.map(evidenceText),
  ].filter((x) => x !== undefined);
  const message = r.status === 'skip' ? (r.reason ?? 'not examined') : firstLine(against[0]?.message ?? r.title);
  // A security finding is its own failure type, so that CI test views can pick it out.
  const type = (r.counts.security ?? 0) > 0 ? `${r.level} security` : r.level;
  const name = `${r.id} ${r.title}`;
  const classname = `tmi-conform.${r.level}.${r.operations.join('+')}`;
  // Accepted by the baseline: skipped, so that the failure count agrees with the exit code.
  if (r.accepted)
    return {
      name,
      classname,
      seconds: 0,
      status: 'skip',
      message: `accepted: ${r.accepted.reason}${r.accepted.until ? ` (until ${r.accepted.until})` : ''}; ${message}`,
      details: details.join('\n\n'),
      type,
    };
  return { name, classname, seconds: 0, status: r.status, message, details: details.join('\n\n'), type };
}

function testCase(t: TestResult): Case {
  const details = [
    t.message,
    t.counterexample ? `counterexample: ${t.counterexample}` : undefined,
    t.requirements.length > 0 ? `requirements: ${t.requirements.join(', ')}` : undefined,
  ].filter((x) => x !== undefined);
  return {
    name: t.name,
    classname: t.file ?? `tmi-conform.tests.${t.source}`,
    seconds: (t.durationMs ?? 0) / 1000,
    status: t.status,
    message: firstLine(t.message ?? (t.status === 'skip' ? 'skipped' : 'failed')),
    details: details.join('\n\n'),
    type: t.status === 'warn' ? 'should' : 'must',
  };
}

function interruptedCase(report: Report): Case {
  const sources = interruptedSources(report).join(', ');
  return {
    name: INTERRUPTED_VERDICT,
    classname: 'tmi-conform.interrupted',
    seconds: 0,
    status: 'error',
    message: `${INTERRUPTED_VERDICT}: ${sources} stopped before it ended`,
    details: `${sources} was interrupted (SIGINT or SIGTERM): the requirements and tests it did not reach are skipped, not run, and the report has no verdict.`,
    type: 'interrupted',
  };
}

function renderCase(c: Case, failOnShould: boolean): string {
  const open = `    <testcase name="${esc(c.name)}" classname="${esc(c.classname)}" time="${c.seconds.toFixed(3)}"`;
  if (c.status === 'fail' || (c.status === 'warn' && failOnShould)) {
    return `${open}>\n      <failure message="${esc(c.message)}" type="${esc(c.type)}">${esc(c.details)}</failure>\n    </testcase>`;
  }
  if (c.status === 'error') return `${open}>\n      <error message="${esc(c.message)}" type="${esc(c.type)}">${esc(c.details)}</error>\n    </testcase>`;
  if (c.status === 'warn')
    return `${open}>\n      <skipped message="${esc(`warning (should): ${c.message}`)}"/>\n      <system-out>${esc(`WARNING (should): ${c.details}`)}</system-out>\n    </testcase>`;
  if (c.status === 'skip') return `${open}>\n      <skipped message="${esc(c.message)}"/>\n    </testcase>`;
  return `${open}/>`;
}

function countsOf(cases: Case[], failOnShould: boolean): Counts {
  return {
    tests: cases.length,
    failures: cases.filter((c) => c.status === 'fail' || (c.status === 'warn' && failOnShould)).length,
    errors: cases.filter((c) => c.status === 'error').length,
    skipped: cases.filter((c) => c.status === 'skip' || (c.status === 'warn' && !failOnShould)).length,
    seconds: cases.reduce((total, c) => total + c.seconds, 0),
  };
}

const countAttributes = (c: Counts) => `tests="${c.tests}" failures="${c.failures}" errors="${c.errors}" skipped="${c.skipped}" time="${c.seconds.toFixed(3)}"`;
/** <testsuites> has no `skipped` attribute in the common schema. */
const rootCountAttributes = (c: Counts) => `tests="${c.tests}" failures="${c.failures}" errors="${c.errors}" time="${c.seconds.toFixed(3)}"`;

function renderSuite(
  name: string,
  cases: Case[],
  report: Report,
  failOnShould: boolean,
  properties: Record<string, string>,
  out: string[] = [],
): { xml: string; counts: Counts } {
  const counts = countsOf(cases, failOnShould);
  const props = Object.entries(properties).map(([key, value]) => `      <property name="${esc(key)}" value="${esc(value)}"/>`);
  const xml = [
    `  <testsuite name="${esc(name)}" ${countAttributes(counts)} timestamp="${esc(report.startedAt)}">`,
    '    <properties>',
    ...props,
    '    </properties>',
    ...cases.map((c) => renderCase(c, failOnShould)),
    ...(out.length > 0 ? [`    <system-out>${esc(out.join('\n'))}</system-out>`] : []),
    '  </testsuite>',
  ].join('\n');
  return { xml, counts };
}

/** What the traffic left unjudged, one line per reason: said beside the requirements, whose verdicts it qualifies. */
function notJudgedLines(report: Report): string[] {
  return (report.traffic?.notJudged ?? []).map(({ reason, count, exchanges }) =>
    notJudgedLine(
      'not judged',
      count,
      reason,
      exchanges.map((id) => `exchange ${id}`),
    ),
  );
}

export function renderJunit(report: Report): string {
  const failOnShould = report.failOn === 'should';
  const common: Record<string, string> = { kind: report.kind, 'fail-on': report.failOn, 'tool.version': report.tool.version };
  if (report.target) common['target'] = report.target;
  const suites = [
    renderSuite(
      'requirements',
      report.requirements.map(requirementCase),
      report,
      failOnShould,
      { ...common, sources: report.sources.map((s) => s.name).join(', '), ...coverageProperties(report) },
      notJudgedLines(report),
    ),
  ];
  for (const source of new Set(report.tests.map((t) => t.source))) {
    const tests = report.tests.filter((t) => t.source === source);
    suites.push(renderSuite(`tests (${source})`, tests.map(testCase), report, failOnShould, { ...common, source }));
  }
  if (report.interrupted === true)
    suites.push(renderSuite('interrupted', [interruptedCase(report)], report, failOnShould, { ...common, interrupted: interruptedSources(report).join(', ') }));
  const total: Counts = { tests: 0, failures: 0, errors: 0, skipped: 0, seconds: 0 };
  for (const { counts } of suites) {
    total.tests += counts.tests;
    total.failures += counts.failures;
    total.errors += counts.errors;
    total.skipped += counts.skipped;
    total.seconds += counts.seconds;
  }
  const title = `tmi-conform ${report.kind}${report.target ? ` ${report.target}` : ''}`;
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="${esc(title)}" ${rootCountAttributes(total)}>`,
    ...suites.map((s) => s.xml),
    '</testsuites>',
    '',
  ].join('\n');
}
