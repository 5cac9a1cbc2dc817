// report.json: the model the builder makes, held to schemas/report.schema.json with the
// project's Ajv setup, and the model's own rules (statuses, counts, groups, redaction).
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { matchOperation } from '../rules/index.ts';
import { loadRequirements } from '../rules/requirements.ts';
import { createAjv } from '../rules/schemas.ts';
import { ReportBuilder } from '../reports/builder.ts';
import { mergeReports } from '../reports/merge.ts';
import type { Report } from '../reports/model.ts';
import { reportSchema, reportSchemaError } from '../reports/schema.ts';
import { writeReports } from '../reports/write.ts';
import { getExchange } from '../fixtures/exchanges.ts';
import { disagreeingReport, LEAKED_JWT, LEAKED_TOKEN, sampleReport, XSS } from './report-fixtures.ts';

const dir = mkdtempSync(join(tmpdir(), 'tmi-report-json-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const validate = createAjv().compile(reportSchema());
const byId = (report: Report) => new Map(report.requirements.map((r) => [r.id, r]));

describe('report.json', () => {
  it('every kind of generated report, as written to disk, validates against schemas/report.schema.json', async () => {
    const reports: Record<string, Report> = {
      sample: sampleReport(),
      'fail-on should': sampleReport({ failOn: 'should' }),
      proxy: disagreeingReport(),
      'nothing seen': new ReportBuilder({ kind: 'validate', source: 'validate:empty.har' }).build({ failOn: 'must' }),
      merged: mergeReports([{ report: sampleReport(), origin: 'ci/report.json' }, { report: disagreeingReport() }], { failOn: 'must' }),
    };
    for (const [name, report] of Object.entries(reports)) {
      const [jsonPath] = await writeReports(report, join(dir, name.replace(/\W+/g, '-')));
      const written = JSON.parse(readFileSync(jsonPath!, 'utf8')) as unknown;
      expect(validate(written), `${name}: ${JSON.stringify(validate.errors?.slice(0, 3))}`).toBe(true);
      expect(written).toEqual(report);
    }
  });

  it('the schema rejects what is not a report (it is not a schema that accepts anything)', () => {
    const report = sampleReport();
    expect(reportSchemaError(report)).toBeUndefined();
    expect(reportSchemaError({ ...report, summary: { pass: 1, fail: 0, warn: 0 } })).toMatch(/summary/);
    expect(reportSchemaError({ ...report, requirements: [{ ...report.requirements[0]!, status: 'flaky' }] })).toMatch(/requirements\/0\/status/);
    expect(reportSchemaError({ ...report, surprise: true })).toMatch(/additional properties/);
    expect(reportSchemaError({ ...report, schemaVersion: 2 })).toMatch(/schemaVersion/);
  });

  it("holds every requirement of the catalog once (those of a user's OpenAPI description only when one was given), and the summary counts their statuses", () => {
    const report = sampleReport();
    expect(report.requirements.map((r) => r.id)).toEqual(
      loadRequirements()
        .map((r) => r.id)
        .filter((id) => !id.startsWith('OAS-')),
    );
    expect(new ReportBuilder({ kind: 'validate', source: 'x', openapi: true }).build({ failOn: 'must' }).requirements.map((r) => r.id)).toEqual(
      loadRequirements().map((r) => r.id),
    );
    const counted = { pass: 0, fail: 0, warn: 0, skip: 0 };
    for (const r of report.requirements) counted[r.status]++;
    expect(report.summary).toEqual(counted);
    for (const status of ['pass', 'fail', 'warn', 'skip'] as const) expect(report.summary[status], status).toBeGreaterThan(0);
    expect(report.passed).toBe(false);
  });

  it('a must violation fails, a should violation warns, a skip says why, and evidence backs each verdict', () => {
    const r = byId(sampleReport());
    const alg = r.get('RS-SIGNING-ALG')!;
    expect(alg).toMatchObject({ status: 'fail', level: 'must', quote: expect.stringContaining('HS256') });
    expect(alg.evidence[0]).toMatchObject({
      kind: 'exchange',
      status: 'fail',
      source: 'run',
      exchange: { request: { method: 'GET' }, response: { status: 200 } },
    });
    expect(alg.evidence[0]!.findings![0]).toEqual({
      requirement: 'RS-SIGNING-ALG',
      level: 'must',
      subject: 'implementation',
      check: expect.any(String),
      expected: 'signing_alg to be one of "HS256", "RS256", "RS512", "PS256"',
      received: '"HS512"',
      pointer: '/signing_alg',
      message: expect.stringContaining('"HS512"'),
    });
    expect(r.get('GEN-STATUS-DOCUMENTED')).toMatchObject({ status: 'warn', level: 'should', inferred: expect.any(String) });
    const cleared = r.get('SES-METADATA-CLEARED')!;
    expect(cleared.status).toBe('fail');
    expect(cleared.evidence[0]).toMatchObject({
      kind: 'test',
      test: 'updateSession > clears metadata with null or {}',
      counterexample: expect.stringContaining('session_metadata'),
    });
    expect(r.get('AUTH-NON-GLOBAL-401')).toMatchObject({
      status: 'skip',
      reason: 'no "non_global" credential profile in the config',
      coverage: { tests: ['authentication > non-global client is refused'] },
    });
    expect(r.get('AUTH-TOKEN-AUDIENCE')!.reason).toBe('token requests were not observed (credentials given as tokens)');
    expect(r.get('TEP-DELETE-204')).toMatchObject({ status: 'pass', counts: { tests: 1 } });
  });

  it('lists every suite test; a failed test naming only should requirements is a warning', () => {
    const tests = sampleReport().tests;
    expect(tests).toHaveLength(5);
    const status = Object.fromEntries(tests.map((t) => [t.name, t.status]));
    expect(status['deleteTokenExchangeProfile > answers 204 with no body']).toBe('pass');
    expect(status['updateSession > clears metadata with null or {}']).toBe('fail');
    expect(status['updateSession > answers 200']).toBe('warn');
    expect(status['authentication > non-global client is refused']).toBe('skip');
    expect(tests.every((t) => t.source === 'run')).toBe(true);
  });

  it('groups requirements per operation, with "all" for those of every operation', () => {
    const report = sampleReport();
    const groups = new Map(report.operations.map((g) => [g.operation, g]));
    expect([...groups.keys()]).toEqual(['all', 'deleteTokenExchangeProfile', 'updateSession', 'getResourceServer', 'getToken', 'otherOperation']);
    expect(groups.get('all')!.requirements).toContain('RL-429-HEADERS');
    expect(groups.get('getResourceServer')!.requirements).toContain('RS-SIGNING-ALG');
    expect(groups.get('getResourceServer')!.requirements).not.toContain('RL-429-HEADERS');
    expect(groups.get('getResourceServer')!.status).toBe('fail');
    expect(groups.get('getToken')).toMatchObject({ status: 'skip', requirements: ['AUTH-TOKEN-AUDIENCE'] });
    for (const g of report.operations) {
      expect(g.summary.pass + g.summary.fail + g.summary.warn + g.summary.skip).toBe(g.requirements.length);
    }
  });

  it('keeps traffic statistics: exchanges per operation and status, and the rate-limit series', () => {
    const { traffic } = sampleReport();
    expect(traffic!.exchanges).toBe(
      Object.values(traffic!.byOperation)
        .flatMap((s) => Object.values(s))
        .reduce((a, b) => a + b, 0) + traffic!.notCovered,
    );
    expect(traffic!.byOperation['getResourceServer']).toMatchObject({ '200': expect.any(Number), '302': 1 });
    expect((traffic!.byOperation['getResourceServer']!['429'] ?? 0) + (traffic!.byOperation['deleteTokenExchangeProfile']!['429'] ?? 0)).toBe(10);
    const orders = traffic!.rateLimitSeries.filter((p) => p.client === 'orders-service');
    expect(orders).toHaveLength(70);
    expect(orders[0]).toEqual({ t: '2027-01-15T08:00:01.000Z', client: 'orders-service', status: 204, limit: 30, remaining: 29, reset: 1_800_000_060 });
    expect(orders.filter((p) => p.status === 429)).toHaveLength(10);
  });

  it('client findings are beside the verdict, not in it', () => {
    const report = sampleReport();
    expect(report.clientFindings).toEqual([
      expect.objectContaining({
        requirement: 'SES-METADATA-MAX-PROPERTIES',
        subject: 'client',
        count: 1,
        example: expect.objectContaining({ response: expect.objectContaining({ status: 400 }) }),
      }),
    ]);
    expect(byId(report).get('SES-METADATA-MAX-PROPERTIES')!.status).not.toBe('fail');
  });

  it('a finding that quotes a secret of its exchange is masked like the exchange', () => {
    const exchange = getExchange();
    const builder = new ReportBuilder({ kind: 'validate', source: 'validate:x.har' });
    const quoting = {
      requirement: 'RS-SIGNING-SECRET-LENGTH',
      level: 'must' as const,
      subject: 'implementation' as const,
      check: 'test',
      expected: 'a signing secret of 32 characters or more',
      received: 'signing_secret "a-secret-of-32-characters-length"',
    };
    builder.addExchange(exchange, {
      operation: matchOperation(exchange.request.method, exchange.request.url)!,
      findings: [quoting],
      examined: ['RS-SIGNING-SECRET-LENGTH'],
    });
    const text = JSON.stringify(builder.build({ failOn: 'must' }));
    expect(text).not.toContain('a-secret-of-32-characters-length');
    expect(text).toContain('received signing_secret \\"[REDACTED]**********************\\"');
  });

  it('secrets never reach the file: tokens in headers and test messages, signing secrets in bodies, credentials in the target', async () => {
    const report = sampleReport({ target: 'https://admin:hunter2hunter2@tenant.example.com/api/v2?access_token=abcdefgh12345678' });
    const [jsonPath] = await writeReports(report, join(dir, 'secrets'));
    const text = readFileSync(jsonPath!, 'utf8');
    for (const secret of [LEAKED_TOKEN, LEAKED_JWT, 'a-secret-of-32-characters-length', 'hunter2hunter2', 'abcdefgh12345678'])
      expect(text).not.toContain(secret);
    expect(text).toContain('Bearer [REDACTED]');
    // Hostile strings are data in JSON: kept as they came, for the writers to escape.
    expect(text).toContain(JSON.stringify(XSS.test).slice(1, -1));
  });
});

describe('writing the reports', () => {
  it('a write that fails part-way leaves every earlier file as it was and no temporary behind', async () => {
    const out = join(dir, 'part-way');
    await writeReports(sampleReport(), out);
    const before = Object.fromEntries(readdirSync(out).map((name) => [name, readFileSync(join(out, name))]));
    // The second file's temporary name is taken by a directory: writing it fails after report.json's was written.
    mkdirSync(join(out, `junit.xml.${process.pid}.tmp`));
    await expect(writeReports(sampleReport({ failOn: 'should' }), out)).rejects.toThrow(new RegExp(`^cannot write reports to ${out}: `));
    rmSync(join(out, `junit.xml.${process.pid}.tmp`), { recursive: true });
    expect(readdirSync(out).sort()).toEqual(Object.keys(before).sort());
    for (const [name, bytes] of Object.entries(before)) expect(readFileSync(join(out, name)).equals(bytes), name).toBe(true);
  });
});
