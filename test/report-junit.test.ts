// junit.xml: parsed with a real XML parser, as a CI test viewer reads it. One testcase per
// requirement and per suite test; failures carry their message; counts agree with the cases
// and with the verdict.
import { readFileSync } from 'node:fs';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { validateXML } from 'xmllint-wasm';
import { describe, expect, it } from 'vitest';
import { loadRequirements } from '../rules/requirements.ts';
import { renderJunit } from '../reports/junit.ts';
import { mergeReports } from '../reports/merge.ts';
import type { Report } from '../reports/model.ts';
import { disagreeingReport, LEAKED_TOKEN, sampleReport, XSS } from './report-fixtures.ts';

interface Testcase {
  '@_name': string;
  '@_classname': string;
  '@_time': string;
  failure?: { '@_message': string; '@_type': string; '#text'?: string };
  skipped?: { '@_message': string };
  'system-out'?: string;
}
interface Testsuite {
  '@_name': string;
  '@_tests': string;
  '@_failures': string;
  '@_skipped': string;
  '@_errors': string;
  properties: { property: Array<{ '@_name': string; '@_value': string }> };
  testcase: Testcase[];
}

function parse(report: Report): { suites: Testsuite[]; root: Record<string, string> } {
  const xml = renderJunit(report);
  expect(XMLValidator.validate(xml)).toBe(true);
  const parser = new XMLParser({
    ignoreAttributes: false,
    attributeNamePrefix: '@_',
    parseAttributeValue: false,
    isArray: (name) => ['testsuite', 'testcase', 'property'].includes(name),
  });
  const doc = parser.parse(xml) as { testsuites: Record<string, string> & { testsuite: Testsuite[] } };
  return { suites: doc.testsuites.testsuite, root: doc.testsuites };
}

// Without a user's OpenAPI description, its requirements (OAS-*) are not in the report.
const requirementCount = loadRequirements().filter((r) => !r.id.startsWith('OAS-')).length;

describe('junit.xml', () => {
  it('has a testsuite of requirements (one testcase each) and a testsuite of suite tests', () => {
    const report = sampleReport();
    const { suites, root } = parse(report);
    expect(suites.map((s) => s['@_name'])).toEqual(['requirements', 'tests (run)']);
    const [requirements, tests] = suites as [Testsuite, Testsuite];
    expect(requirements.testcase).toHaveLength(requirementCount);
    expect(requirements.testcase.map((c) => c['@_name'].split(' ')[0])).toEqual(report.requirements.map((r) => r.id));
    expect(tests.testcase.map((c) => c['@_name'])).toEqual(report.tests.map((t) => t.name));
    expect(Number(root['@_tests'])).toBe(requirementCount + report.tests.length);
  });

  it('a failed must is a failure with its message and the document quote; a skip is skipped with its reason', () => {
    const report = sampleReport();
    const cases = new Map(parse(report).suites[0]!.testcase.map((c) => [c['@_name'].split(' ')[0], c]));
    const alg = cases.get('RS-SIGNING-ALG')!;
    expect(alg.failure!['@_type']).toBe('must');
    expect(alg.failure!['@_message']).toContain('expected signing_alg to be one of');
    expect(alg.failure!['#text']).toContain('HS256'); // the quote
    expect(alg.failure!['#text']).toContain('GET https://tenant.example.com/api/v2/resource-servers/rs_1 → 200');
    const cleared = cases.get('SES-METADATA-CLEARED')!;
    expect(cleared.failure!['#text']).toContain('counterexample: [{"session_metadata":{}');
    expect(cases.get('AUTH-NON-GLOBAL-401')!.skipped!['@_message']).toBe('no "non_global" credential profile in the config');
    expect(cases.get('TEP-DELETE-204')!.failure).toBeUndefined();
    expect(cases.get('TEP-DELETE-204')!.skipped).toBeUndefined();
  });

  it('counts agree with the cases and the verdict: a warned should fails only with --fail-on should', () => {
    for (const failOn of ['must', 'should'] as const) {
      const report = sampleReport({ failOn });
      const { suites, root } = parse(report);
      const all = suites.flatMap((s) => s.testcase);
      const failing = all.filter((c) => c.failure !== undefined).length;
      const skipped = all.filter((c) => c.skipped !== undefined).length;
      expect(Number(root['@_failures']), failOn).toBe(failing);
      expect(root['@_skipped'], 'no skipped attribute on <testsuites> in the common schema').toBeUndefined();
      expect(
        suites.reduce((sum, s) => sum + Number(s['@_skipped']), 0),
        failOn,
      ).toBe(skipped);
      for (const suite of suites) {
        expect(Number(suite['@_tests'])).toBe(suite.testcase.length);
        expect(Number(suite['@_failures'])).toBe(suite.testcase.filter((c) => c.failure !== undefined).length);
        expect(suite['@_errors']).toBe('0');
      }
      const requirementFailures = suites[0]!.testcase.filter((c) => c.failure !== undefined).length;
      expect(requirementFailures, failOn).toBe(report.summary.fail + (failOn === 'should' ? report.summary.warn : 0));
      const warned = suites[0]!.testcase.find((c) => c['@_name'].startsWith('GEN-STATUS-DOCUMENTED '))!;
      if (failOn === 'must') {
        // Shown where CI test tabs look: a skipped case with the warning as its message.
        expect(warned.skipped!['@_message']).toMatch(/^warning \(should\): \S/);
        expect(warned['system-out']).toMatch(/^WARNING \(should\)/);
        expect(warned.failure).toBeUndefined();
      } else {
        expect(warned.failure!['@_type']).toBe('should');
        expect(warned.skipped).toBeUndefined();
      }
    }
  });

  it('is valid against the common JUnit schema, whatever the report holds', async () => {
    const schema = readFileSync(new URL('./junit/common-junit.xsd', import.meta.url), 'utf8');
    for (const report of [sampleReport(), sampleReport({ failOn: 'should' }), disagreeingReport()]) {
      const result = await validateXML({
        xml: [{ fileName: 'junit.xml', contents: renderJunit(report) }],
        schema: [{ fileName: 'common-junit.xsd', contents: schema }],
      });
      expect(result.errors.map((e) => e.rawMessage)).toEqual([]);
      expect(result.valid).toBe(true);
    }
  });

  it('suite tests carry their outcome, file and time', () => {
    const tests = parse(sampleReport()).suites[1]!.testcase;
    const byName = new Map(tests.map((c) => [c['@_name'], c]));
    const failed = byName.get('updateSession > clears metadata with null or {}')!;
    expect(failed).toMatchObject({ '@_classname': 'suites/sessions.test.ts', '@_time': '0.812' });
    expect(failed.failure!['@_message']).toBe('expected session_metadata to be cleared; received {"plan":"gold"}');
    expect(byName.get('authentication > non-global client is refused')!.skipped!['@_message']).toBe('no "non_global" credential profile in the config');
    expect(byName.get('updateSession > answers 200')!['system-out']).toContain('expected 200, received 201');
  });

  it('hostile strings survive as text, secrets do not', () => {
    const report = sampleReport();
    const xml = renderJunit(report);
    expect(xml).not.toContain(LEAKED_TOKEN);
    expect(xml).not.toContain('<script>');
    const names = parse(report).suites[1]!.testcase.map((c) => c['@_name']);
    // The parser returns the name with entities still encoded: decode the five XML ones.
    const decoded = names.map((n) =>
      n
        .replace(/&lt;/g, '<')
        .replace(/&gt;/g, '>')
        .replace(/&quot;/g, '"')
        .replace(/&#39;/g, "'")
        .replace(/&amp;/g, '&'),
    );
    expect(decoded).toContain(`resource servers > ${XSS.test}`);
  });

  it('a merged report has one testsuite of tests per source that ran tests', () => {
    const merged = mergeReports([{ report: sampleReport() }, { report: disagreeingReport() }], { failOn: 'must' });
    const { suites } = parse(merged);
    expect(suites.map((s) => s['@_name'])).toEqual(['requirements', 'tests (run)', 'tests (proxy)']);
    const properties = Object.fromEntries(suites[0]!.properties.property.map((p) => [p['@_name'], p['@_value']]));
    expect(properties).toMatchObject({ kind: 'merge', 'fail-on': 'must', sources: 'run, proxy' });
  });
});
