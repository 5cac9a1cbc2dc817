// junit.xml: one testcase per requirement, in one testsuite per document section group.
// A failed `must` is a <failure>; a failed `should` is a <failure> only with --fail-on should,
// otherwise it passes with the warning in <system-out>; a skipped requirement is <skipped>.
import type { Report, RequirementResult } from './model.ts';
import { escapeXml } from './xml.ts';

function testcase(r: RequirementResult, failOnShould: boolean): string {
  const name = escapeXml(`${r.id} ${r.title}`);
  const classname = escapeXml(`tmi-conform.${r.level}.${r.operations.join('+')}`);
  const details = r.evidence
    .filter((e) => e.status === 'fail' || e.status === 'warn')
    .map((e) => [e.test ? `test: ${e.test}` : undefined, e.message, e.counterexample ? `counterexample: ${e.counterexample}` : undefined, e.exchange ? `exchange: ${e.exchange.request.method} ${e.exchange.request.url} → ${e.exchange.response?.status ?? e.exchange.error}` : undefined].filter(Boolean).join('\n'))
    .join('\n\n');
  const quote = `"${r.quote}"`;
  let body = '';
  if (r.status === 'fail' || (r.status === 'warn' && failOnShould)) {
    const first = r.evidence.find((e) => e.status === r.status)?.message?.split('\n')[0] ?? r.title;
    body = `<failure message="${escapeXml(first)}" type="${r.level}">${escapeXml(`${quote}\n\n${details}`)}</failure>`;
  } else if (r.status === 'warn') {
    body = `<system-out>${escapeXml(`WARNING (should, inferred: ${r.inferred ?? ''})\n${quote}\n\n${details}`)}</system-out>`;
  } else if (r.status === 'skip') {
    body = `<skipped message="${escapeXml(r.reason ?? 'not examined')}"/>`;
  }
  return `    <testcase name="${name}" classname="${classname}" time="0">${body}</testcase>`;
}

export function renderJunit(report: Report): string {
  const failOnShould = report.failOn === 'should';
  const cases = report.requirements.map((r) => testcase(r, failOnShould));
  const failures = report.requirements.filter((r) => r.status === 'fail' || (r.status === 'warn' && failOnShould)).length;
  const skipped = report.requirements.filter((r) => r.status === 'skip').length;
  const seconds = Math.max(0, (Date.parse(report.finishedAt) - Date.parse(report.startedAt)) / 1000).toFixed(3);
  const suite = `  <testsuite name="tmi-conform ${escapeXml(report.kind)}${report.target ? ` ${escapeXml(report.target)}` : ''}" tests="${cases.length}" failures="${failures}" errors="0" skipped="${skipped}" timestamp="${escapeXml(report.startedAt)}" time="${seconds}">`;
  return ['<?xml version="1.0" encoding="UTF-8"?>', `<testsuites name="tmi-conform" tests="${cases.length}" failures="${failures}" errors="0" skipped="${skipped}" time="${seconds}">`, suite, ...cases, '  </testsuite>', '</testsuites>', ''].join('\n');
}
