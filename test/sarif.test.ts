// report.sarif: a SARIF 2.1.0 log that validates against the official schema, one rule per
// requirement, one result per failed requirement, operation and place in the body located at the
// quote's line in the document, fingerprints that do not change between runs of the same fault
// (nor with the keys and indices of generated bodies), a baseline's
// acceptance as a suppression, and no secret from an exchange. Three runs of the reference are
// shared by the cases (a fault, the same fault under a baseline, a conforming run), side by side.
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import AjvDraft04 from 'ajv-draft-04';
import addFormats from 'ajv-formats';
import type { Log, Result } from 'sarif';
import { parse } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packageRoot, schemasDir } from '../core/paths.ts';
import { mask } from '../core/redact.ts';
import { errorExchange, getExchange, resourceServer, session, updateExchange } from '../fixtures/exchanges.ts';
import { judgeExchange } from '../rules/index.ts';
import { ReportBuilder } from '../reports/builder.ts';
import type { Report } from '../reports/model.ts';
import { renderSarif } from '../reports/sarif.ts';
import { runCli } from './helpers/cli.ts';
import { reportOfRead } from './helpers/reports.ts';

// The official SARIF 2.1.0 schema (draft-04), as @microsoft/jest-sarif ships it.
const require = createRequire(import.meta.url);
const SCHEMA = require.resolve('@microsoft/jest-sarif/lib/schemas/sarif-2.1.0-rtm.5.json');
// Both packages are CommonJS whose module object is also their `default`: typed as such under ESM.
// The schema's `language` pattern is not a valid Unicode-mode regular expression, only a plain one.
const ajv = new AjvDraft04.default({ allErrors: true, unicodeRegExp: false });
addFormats.default(ajv);
const validateSarif = ajv.compile(JSON.parse(readFileSync(SCHEMA, 'utf8')));
/** The schema's complaints about `log`, as lines; empty when it is valid. */
const schemaErrors = (log: unknown): string[] => (validateSarif(log) ? [] : (validateSarif.errors ?? []).map((e) => `${e.instancePath} ${e.message}`));

const FAULT = 'delete-without-scope';
const REQUIREMENT = 'SCOPE-DELETE-REQUIRED';
const ACCEPTED_REASON = 'the vendor ships the scope check in release 4.2';
const DOCUMENT_LINES = readFileSync(join(schemasDir, 'tenant-management-api.md'), 'utf8').split('\n');

const dir = mkdtempSync(join(tmpdir(), 'tmi-sarif-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const readLog = (reportDir: string): Log => JSON.parse(readFileSync(join(reportDir, 'report.sarif'), 'utf8')) as Log;
const resultsOf = (log: Log): Result[] => log.runs[0]!.results ?? [];
const fingerprints = (log: Log): string[] =>
  resultsOf(log)
    .map((r) => JSON.stringify(r.partialFingerprints))
    .sort();
const logOf = (report: Report): Log => JSON.parse(renderSarif(report)) as Log;

interface Run {
  code: number | null;
  dir: string;
}
const runs: Record<'faulty' | 'baselined' | 'conforming', Run> = {} as never;

beforeAll(async () => {
  const baseline = join(dir, 'baseline.yaml');
  writeFileSync(baseline, `accepted:\n  - requirement: ${REQUIREMENT}\n    reason: ${ACCEPTED_REASON}\n`);
  const faulty = ['run', '--fault', FAULT, '--requirement', REQUIREMENT, '--property-runs', '5'];
  const started = {
    faulty: runCli([...faulty, '--report-dir', join(dir, 'faulty')]),
    baselined: runCli([...faulty, '--baseline', baseline, '--report-dir', join(dir, 'baselined')]),
    conforming: runCli(['run', '--property-runs', '5', '--report-dir', join(dir, 'conforming')]),
  };
  for (const [name, child] of Object.entries(started)) {
    const { code, stderr } = await child;
    if (code !== 0 && code !== 1) throw new Error(`${name} run exited ${code}: ${stderr.slice(-2000)}`);
    runs[name as keyof typeof runs] = { code, dir: join(dir, name) };
  }
}, 180_000);

describe('the SARIF schema check', () => {
  it('rejects a broken log: a wrong version, a result without a message, an unknown level', () => {
    const log = logOf(reportOfRead({ signing_alg: 'HS512' }));
    expect(schemaErrors(log)).toEqual([]);
    expect(schemaErrors({ ...log, version: '2.0.0' })).not.toEqual([]);
    const run = log.runs[0]!;
    const result = resultsOf(log)[0]!;
    const withoutMessage: Partial<Result> = { ...result };
    delete withoutMessage.message;
    expect(schemaErrors({ ...log, runs: [{ ...run, results: [withoutMessage] }] })).not.toEqual([]);
    expect(schemaErrors({ ...log, runs: [{ ...run, results: [{ ...result, level: 'fatal' }] }] })).not.toEqual([]);
  });
});

describe('report.sarif of a faulty run', () => {
  it('is valid SARIF 2.1.0 from tmi-conform, one rule per requirement, the must ones errors', () => {
    expect(runs.faulty.code).toBe(1);
    const log = readLog(runs.faulty.dir);
    expect(schemaErrors(log)).toEqual([]);
    expect(log.version).toBe('2.1.0');
    expect(log.$schema).toMatch(/sarif-schema-2\.1\.0\.json$/);
    const report = JSON.parse(readFileSync(join(runs.faulty.dir, 'report.json'), 'utf8')) as Report;
    const { driver } = log.runs[0]!.tool;
    expect(driver).toMatchObject({ name: 'tmi-conform', version: report.tool.version, informationUri: expect.stringMatching(/^https:\/\//) });
    expect(driver.rules!.map((r) => r.id)).toEqual(report.requirements.map((r) => r.id));
    for (const [i, rule] of driver.rules!.entries()) {
      const requirement = report.requirements[i]!;
      expect(rule.shortDescription?.text).toBe(requirement.title);
      expect(rule.fullDescription?.text).toBe(requirement.quote);
      expect(rule.defaultConfiguration?.level, rule.id).toBe(requirement.level === 'must' ? 'error' : 'warning');
      expect(rule.properties).toMatchObject({ level: requirement.level, subject: requirement.subject, section: requirement.section });
    }
  });

  it('has an error result for the faulty requirement, on its operation, located at the line of its quote', () => {
    const log = readLog(runs.faulty.dir);
    const results = resultsOf(log);
    expect(results.map((r) => r.ruleId)).toEqual([REQUIREMENT]);
    const [result] = results;
    const rules = log.runs[0]!.tool.driver.rules!;
    expect(rules[result!.ruleIndex!]!.id).toBe(REQUIREMENT);
    expect(result!.level).toBe('error');
    expect(result!.properties).toMatchObject({ operation: 'deleteTokenExchangeProfile' });
    // Expected and received, and the exchange behind them.
    expect(result!.message.text).toMatch(/expected a refusal \(403\), received 204/);
    expect(result!.message.text).toMatch(/DELETE http:\/\/127\.0\.0\.1:\d+\/api\/v2\/token-exchange-profiles\/\S+ → 204/);
    const quote = rules.find((r) => r.id === REQUIREMENT)!.fullDescription!.text;
    const physical = result!.locations![0]!.physicalLocation!;
    expect(physical.artifactLocation).toEqual({ uri: 'schemas/tenant-management-api.md', uriBaseId: 'TMI_CONFORM' });
    expect(physical.region?.startLine).toBe(DOCUMENT_LINES.findIndex((line) => line.includes(quote)) + 1);
    expect(result!.locations![0]!.logicalLocations).toEqual([expect.objectContaining({ name: 'Endpoints / Authentication' })]);
    expect(result!.suppressions).toBeUndefined();
  });

  it('marks the requirement of a security finding with the security tag and a security-severity', () => {
    const rule = readLog(runs.faulty.dir).runs[0]!.tool.driver.rules!.find((r) => r.id === REQUIREMENT)!;
    expect(rule.properties).toMatchObject({ tags: ['security'], 'security-severity': '8.0' });
    const conforming = readLog(runs.conforming.dir).runs[0]!.tool.driver.rules!.find((r) => r.id === REQUIREMENT)!;
    expect(conforming.properties?.tags).toBeUndefined();
    expect(conforming.properties?.['security-severity']).toBeUndefined();
  });

  it('gives the same fingerprints in two runs of the same fault, though ports, times and seeds differ', () => {
    const first = readLog(runs.faulty.dir);
    const second = readLog(runs.baselined.dir);
    expect(fingerprints(first)).toHaveLength(1);
    expect(fingerprints(second)).toEqual(fingerprints(first));
    // What differs between runs stays out of them: the same report with other times, ports, seeds and exchange ids.
    const report = JSON.parse(readFileSync(join(runs.faulty.dir, 'report.json'), 'utf8')) as Report;
    const moved = JSON.parse(
      JSON.stringify({ ...report, startedAt: '2030-01-01T00:00:00.000Z', sources: report.sources.map((s) => ({ ...s, seed: 1 })) }).replace(
        /127\.0\.0\.1:\d+/g,
        '127.0.0.1:1',
      ),
    ) as Report;
    for (const r of moved.requirements) for (const e of r.evidence) if (e.exchange) e.exchange.id = 'other';
    expect(renderSarif(moved)).not.toBe(renderSarif(report));
    expect(fingerprints(logOf(moved))).toEqual(fingerprints(first));
  });
});

describe('report.sarif of a conforming run', () => {
  it('is valid and holds no error result, and no result for a requirement that passed', () => {
    expect(runs.conforming.code).toBe(0);
    const log = readLog(runs.conforming.dir);
    expect(schemaErrors(log)).toEqual([]);
    expect(log.runs[0]!.tool.driver.rules!.length).toBeGreaterThan(40);
    expect(resultsOf(log).filter((r) => r.level === 'error')).toEqual([]);
    const report = JSON.parse(readFileSync(join(runs.conforming.dir, 'report.json'), 'utf8')) as Report;
    const warned = new Set(report.requirements.filter((r) => r.status === 'warn').map((r) => r.id));
    expect(resultsOf(log).filter((r) => !warned.has(r.ruleId!))).toEqual([]);
  });
});

describe('report.sarif with a baseline', () => {
  it('keeps the accepted failure as a result suppressed externally with the baseline reason', () => {
    expect(runs.baselined.code).toBe(0);
    const log = readLog(runs.baselined.dir);
    expect(schemaErrors(log)).toEqual([]);
    const [result] = resultsOf(log);
    expect(result).toMatchObject({ ruleId: REQUIREMENT, level: 'error' });
    expect(result!.suppressions).toEqual([{ kind: 'external', status: 'accepted', justification: ACCEPTED_REASON }]);
  });
});

describe('report merge', () => {
  it('writes report.sarif too: the merged log holds the fault', async () => {
    const out = join(dir, 'merged');
    const { code, stderr } = await runCli(['report', 'merge', runs.faulty.dir, runs.conforming.dir, '--out', out]);
    expect(code, stderr).toBe(1);
    const log = readLog(out);
    expect(schemaErrors(log)).toEqual([]);
    expect(resultsOf(log).map((r) => r.ruleId)).toEqual([REQUIREMENT]);
    expect(fingerprints(log)).toEqual(fingerprints(readLog(runs.faulty.dir)));
  });
});

describe('renderSarif', () => {
  it('locates every requirement at its quote: the region holds the quote, white space aside', () => {
    const report = reportOfRead({});
    const failing: Report = { ...report, requirements: report.requirements.map((r) => ({ ...r, status: r.level === 'must' ? 'fail' : 'warn' })) };
    const results = resultsOf(logOf(failing));
    expect(new Set(results.map((r) => r.ruleId)).size).toBe(report.requirements.length);
    const flat = (text: string) => text.replace(/\s+/g, ' ').trim();
    for (const result of results) {
      const quote = report.requirements[result.ruleIndex!]!.quote;
      const region = result.locations![0]!.physicalLocation!.region!;
      const lines = DOCUMENT_LINES.slice(region.startLine! - 1, region.endLine!);
      lines[lines.length - 1] = lines.at(-1)!.slice(0, region.endColumn! - 1);
      lines[0] = lines[0]!.slice(region.startColumn! - 1);
      expect(flat(lines.join('\n')), result.ruleId).toBe(flat(quote.split(' … ')[0]!));
    }
  });

  it('one result per operation a requirement of every operation failed on, each with its own fingerprint and exchange', () => {
    const builder = new ReportBuilder({ kind: 'validate', source: 'test' });
    for (const exchange of [errorExchange(getExchange(), 500, { message: 'boom' }), errorExchange(updateExchange(), 500, { message: 'boom' })])
      builder.addExchange(exchange, judgeExchange(exchange));
    const log = logOf(builder.build({ failOn: 'must' }));
    expect(schemaErrors(log)).toEqual([]);
    const serverErrors = resultsOf(log).filter((r) => r.ruleId === 'GEN-NO-SERVER-ERROR');
    expect(serverErrors.map((r) => [r.properties?.['operation'], r.level])).toEqual([
      ['getResourceServer', 'warning'],
      ['updateSession', 'warning'],
    ]);
    expect(serverErrors[0]!.message.text).toContain('GET https://tenant.example.com/api/v2/resource-servers/rs_1 → 500');
    expect(serverErrors[1]!.message.text).toContain('PATCH https://tenant.example.com/api/v2/sessions/sess_1 → 500');
    expect(new Set(fingerprints(log)).size).toBe(resultsOf(log).length);
  });

  it('one result per place a requirement failed at on an operation, each fingerprint its own and the same whatever keys and indices the inputs had', () => {
    // A session whose created_at and one client's client_id are wrong, and whose metadata has a value too long, under generated keys.
    const logFor = (key: string, index: number): Log => {
      const metadata = { [key]: 'v'.repeat(256) };
      const clients = [...Array.from({ length: index }, (_, i) => ({ client_id: `app_${i}` })), { client_id: 7 }];
      const exchange = updateExchange({ session_metadata: metadata }, { ...session(metadata), created_at: 'yesterday', clients });
      const builder = new ReportBuilder({ kind: 'validate', source: 'test' });
      builder.addExchange(exchange, judgeExchange(exchange));
      return logOf(builder.build({ failOn: 'must' }));
    };
    const first = logFor('plan', 0);
    const second = logFor('zz-tier', 3);
    for (const log of [first, second]) expect(schemaErrors(log)).toEqual([]);
    expect(JSON.stringify(second)).not.toBe(JSON.stringify(first)); // the messages quote the body's own keys and indices
    const schema = resultsOf(first).filter((r) => r.ruleId === 'SES-RESPONSE-SCHEMA');
    expect(schema.map((r) => r.properties)).toEqual([
      { operation: 'updateSession', pointer: '/clients/*/client_id' },
      { operation: 'updateSession', pointer: '/created_at' },
    ]);
    const [clientId, createdAt] = schema.map((r) => r.partialFingerprints!);
    expect(clientId!['tmiConformRequirementOperationPointer/v1']).not.toBe(createdAt!['tmiConformRequirementOperationPointer/v1']);
    expect(clientId!['tmiConformRequirementOperationPointer/v1']).toBe(
      createHash('sha256')
        .update(JSON.stringify(['SES-RESPONSE-SCHEMA', 'updateSession', '/clients/*/client_id']))
        .digest('hex'),
    );
    // One key only: results of one operation share no fingerprint, so no viewer merges their places.
    for (const fingerprint of [clientId!, createdAt!]) expect(Object.keys(fingerprint)).toEqual(['tmiConformRequirementOperationPointer/v1']);
    expect(schema[0]!.message.text).toMatch(
      /^SES-RESPONSE-SCHEMA: expected clients\.0\.client_id must be string; received 7 \(at \/clients\/\*\/client_id of the response body\)\n/,
    );
    expect(schema[1]!.message.text).toMatch(
      /^SES-RESPONSE-SCHEMA: expected created_at must match format "date-time"; received "yesterday" \(at \/created_at of the response body\)\n/,
    );
    expect(resultsOf(first).find((r) => r.ruleId === 'SES-METADATA-VALUE-LENGTH')!.properties).toEqual({
      operation: 'updateSession',
      pointer: '/session_metadata/*',
    });
    expect(fingerprints(second)).toEqual(fingerprints(first));
    expect(new Set(fingerprints(first)).size).toBe(resultsOf(first).length);
  });

  it('a place the sampled evidence does not show is named without another place\'s finding; a failure at no place is at ""', () => {
    const builder = new ReportBuilder({ kind: 'validate', source: 'test' });
    const exchanges = [
      ...Array.from({ length: 12 }, () => updateExchange(undefined, { ...session(), created_at: 'yesterday' })),
      updateExchange(undefined, { ...session(), device: { last_ip: 10 } }),
    ];
    for (const exchange of exchanges) builder.addExchange(exchange, judgeExchange(exchange));
    const log = logOf(builder.build({ failOn: 'must' }));
    expect(schemaErrors(log)).toEqual([]);
    const lastIp = resultsOf(log).find((r) => r.properties?.['pointer'] === '/device/last_ip')!;
    expect(lastIp.message.text).toBe(
      'SES-RESPONSE-SCHEMA: The update answers with the session in the documented shape, not met on updateSession at /device/last_ip of the response body. The sampled evidence is in report.html and report.json.',
    );
    const created = getExchange(resourceServer(), 'rs_1', { status: 201 });
    const createdReport = new ReportBuilder({ kind: 'validate', source: 'test' });
    createdReport.addExchange(created, judgeExchange(created));
    const status = resultsOf(logOf(createdReport.build({ failOn: 'must' }))).find((r) => r.ruleId === 'RS-SUCCESS-200')!;
    expect(status.properties).toEqual({ operation: 'getResourceServer', pointer: '' });
    expect(status.message.text).toMatch(/^RS-SUCCESS-200: expected 200 on success; received 201\n/);
  });

  it('at most as many results per operation as a report keeps places; the "" result says the others are counted in it', () => {
    const exchange = updateExchange(undefined, { ...session(), created_at: 'yesterday' });
    const judgement = judgeExchange(exchange);
    const [schemaFinding] = judgement.findings.filter((f) => f.requirement === 'SES-RESPONSE-SCHEMA');
    const findings = Array.from({ length: 20 }, (_, i) => ({ ...schemaFinding!, pointer: `/field_${String(i).padStart(2, '0')}` }));
    const builder = new ReportBuilder({ kind: 'validate', source: 'test' });
    builder.addExchange(exchange, { ...judgement, findings });
    const log = logOf(builder.build({ failOn: 'must' }));
    expect(schemaErrors(log)).toEqual([]);
    const results = resultsOf(log).filter((r) => r.ruleId === 'SES-RESPONSE-SCHEMA');
    expect(results).toHaveLength(16);
    expect(results[0]!.properties).toEqual({ operation: 'updateSession', pointer: '' });
    expect(results[0]!.message.text).toContain('It failed at more places on updateSession than a report lists; the others are counted here.');
    expect(results[1]!.message.text).not.toContain('more places');
  });

  it('never holds a secret an exchange carried: the received value is there, masked', () => {
    const secret = 'k7Qw9ZpR2xL4vN8mT1sB6yH3cF5jD0aE';
    const exchange = getExchange(resourceServer({ id: secret, signing_secret: secret }), 'rs_lookup');
    expect(exchange.response!.body!.text).toContain(secret);
    const builder = new ReportBuilder({ kind: 'validate', source: 'validate:echo.har' });
    builder.addExchange(exchange, judgeExchange(exchange));
    const text = renderSarif(builder.build({ failOn: 'must' }));
    const lookup = resultsOf(JSON.parse(text) as Log).find((r) => r.ruleId === 'RS-LOOKUP-BY-ID-OR-AUDIENCE')!;
    expect(lookup.message.text).toContain(`id "${mask(secret)}"`);
    expect(text).not.toContain(secret);
  });
});

describe('docs/ci workflows', () => {
  interface Step {
    uses?: string;
    run?: string;
    if?: string;
    with?: Record<string, unknown>;
  }
  const stepsOf = (file: string): Step[] => {
    const workflow = parse(readFileSync(join(packageRoot, 'docs', 'ci', file), 'utf8')) as { jobs: Record<string, { steps: Step[] }> };
    return Object.values(workflow.jobs)[0]!.steps;
  };

  it.each([
    ['github-actions.yml', /^reports\/ci\/report\.sarif$/, /\S/],
    ['github-actions-matrix.yml', /^reports\/\$\{\{ matrix\.target \}\}\/report\.sarif$/, /\$\{\{ matrix\.target \}\}/],
  ])('%s uploads report.sarif to code scanning after the run, whatever its verdict, one category per target', (file, sarif, category) => {
    const steps = stepsOf(file);
    const run = steps.findIndex((s) => /tmi-conform run/.test(s.run ?? ''));
    const upload = steps.findIndex((s) => (s.uses ?? '').startsWith('github/codeql-action/upload-sarif@v3'));
    expect(upload).toBeGreaterThan(run);
    expect(run).toBeGreaterThan(-1);
    expect(steps[upload]!.if).toMatch(/always\(\)/);
    expect(steps[upload]!.with).toMatchObject({ sarif_file: expect.stringMatching(sarif), category: expect.stringMatching(category) });
  });
});
