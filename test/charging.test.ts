// What a failed suite test, and a judged exchange, is evidence against. A test that ended before
// it examined what it covers (its precondition unmet: the fixture answered 404) charges nothing
// and says why; a test that stopped at a finding charges that finding's requirement; a request
// the target carried out that it should have refused is reported as a security finding, in plain
// words, under every requirement it broke.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startReference, type RunningReference } from '../reference/index.ts';
import { claims, deleteExchange, errorExchange, getExchange, jwt, resourceServer } from '../fixtures/exchanges.ts';
import { HAR_CREATOR, harEntry } from '../recordings/write.ts';
import { ReportBuilder } from '../reports/builder.ts';
import type { Report } from '../reports/model.ts';
import { judgeExchange } from '../rules/index.ts';
import type { Exchange } from '../rules/types.ts';
import { covers } from '../suites/requirement-tags.ts';
import { runCli } from './helpers/cli.ts';

const dir = mkdtempSync(join(tmpdir(), 'tmi-charging-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const run = (args: string[]) => runCli(['run', ...args]);

const readReport = (reportDir: string) => JSON.parse(readFileSync(join(reportDir, 'report.json'), 'utf8')) as Report;

describe('a test that ends early charges nothing it did not examine', () => {
  let ref: RunningReference;
  beforeAll(async () => {
    // A target that answers 404 for a profile it does not have: the configured disposable
    // profile is gone (deleted by hand, or a stale id), so the delete test cannot see a 204.
    ref = await startReference({ faults: ['delete-unknown-404'] });
  });
  afterAll(() => ref.close());

  it('a delete answered 404 leaves TEP-DELETE-204 and TEP-DELETE-NO-BODY not examined, with the reason, in report.json and on the console', async () => {
    const config = ref.config();
    const path = join(dir, 'stale-profile.yaml');
    writeFileSync(
      path,
      stringify({
        ...config,
        fixtures: { ...config.fixtures, token_exchange_profiles: ['tep_gone_long_ago'] },
        allow_destructive: true,
        rate_limit_probe: false,
        property_runs: 2,
      }),
      { mode: 0o600 },
    );
    const reportDir = join(dir, 'stale-profile');
    const { stdout, stderr } = await run(['--config', path, '--report-dir', reportDir]);
    expect(stderr).toBe('');
    const report = readReport(reportDir);
    const byId = new Map(report.requirements.map((r) => [r.id, r]));
    for (const id of ['TEP-DELETE-204', 'TEP-DELETE-NO-BODY']) {
      expect(byId.get(id)!.status, id).toBe('skip');
      expect(byId.get(id)!.reason, id).toContain('not examined: the DELETE answered 404, so no 204 body was seen');
    }
    const test = report.tests.find((t) => t.name.includes('deleting a disposable profile answers 204 with no body'))!;
    expect(test.status).toBe('skip');
    expect(test.message).toMatch(/^not examined: the DELETE answered 404, so no 204 body was seen/);
    expect(stdout).toContain(
      'not examined: the DELETE answered 404, so no 204 body was seen (test "delete a token exchange profile > deleting a disposable profile answers 204',
    );
    expect(stdout).toMatch(/skipped: TEP-DELETE-204, TEP-DELETE-NO-BODY: not examined: the DELETE answered 404/);
    // The console's counts are the report's.
    const counts = { pass: 0, fail: 0, warn: 0, skip: 0 };
    for (const t of report.tests) counts[t.status]++;
    expect(stdout).toContain(`tests: ${counts.pass} passed · ${counts.fail} failed · ${counts.warn} warned · ${counts.skip} skipped`);
    // The 404 itself is judged where a rule speaks of it (a status the delete does not list), and nothing else fails.
    expect(report.requirements.filter((r) => r.status === 'fail').map((r) => r.id)).toEqual([]);
    expect(byId.get('GEN-STATUS-DOCUMENTED')!.status).toBe('warn');
  });
});

describe('a security finding reads as what the target did', () => {
  it('an unsigned token carried out: "security: the target carried out a DELETE sent with an unsigned token (expected a refusal (401), received 204)"', async () => {
    const reportDir = join(dir, 'alg-none');
    const { code, stdout } = await run(['--fault', 'alg-none-accepted', '--property-runs', '2', '--report-dir', reportDir]);
    expect(code).toBe(1);
    expect(stdout).toMatch(
      /FAIL AUTH-CREDENTIAL-REQUIRED +security: the target carried out a DELETE sent with an unsigned token \(alg "none", empty signature\) \(expected a refusal \(401\), received 204\)/,
    );
    expect(stdout).not.toContain('to put AUTH-INVALID-SIGNATURE-401 to the test');
    const report = readReport(reportDir);
    const evidence = report.requirements.find((r) => r.id === 'AUTH-CREDENTIAL-REQUIRED')!.evidence.find((e) => e.status === 'fail' && e.kind === 'exchange')!;
    expect(evidence.findings![0]!.security).toMatch(/^the target carried out a DELETE sent with an unsigned token/);
    // The test that stopped at it is charged with it, and with the 401 rule the same 204 broke.
    const test = report.tests.find((t) => t.status === 'fail' && t.name.includes('delete refuses alg "none"'))!;
    expect(test.charged).toEqual(['AUTH-CREDENTIAL-REQUIRED', 'AUTH-INVALID-SIGNATURE-401']);
  });
});

// A request with a forged or missing credential carried out breaks the rule that a credential is
// required and the rule that such a credential gets 401: every requirement the exchange examined
// and broke fails (or warns), in run, proxy and validate alike, and the message still says first
// that the target carried out what it should have refused.

/** What each credential carried out breaks, on the delete and on the other operations, and the status each requirement gets. */
const FORGED_SIGNATURE_BROKEN = {
  'AUTH-CREDENTIAL-REQUIRED': 'fail',
  'AUTH-INVALID-SIGNATURE-401': 'fail',
  'AUTH-CREDENTIAL-REQUIRED-OTHER': 'fail',
  'AUTH-INVALID-SIGNATURE-401-OTHER': 'warn',
} as const;
const MISSING_TOKEN_BROKEN = { 'AUTH-CREDENTIAL-REQUIRED': 'fail', 'AUTH-MISSING-TOKEN-401': 'fail' } as const;
const MISSING_TOKEN_BROKEN_OTHER = { 'AUTH-CREDENTIAL-REQUIRED-OTHER': 'fail', 'AUTH-MISSING-TOKEN-401-OTHER': 'warn' } as const;
const AUTH_REFUSALS = [
  'AUTH-CREDENTIAL-REQUIRED',
  'AUTH-CREDENTIAL-REQUIRED-OTHER',
  'AUTH-MISSING-TOKEN-401',
  'AUTH-INVALID-SIGNATURE-401',
  'AUTH-INVALID-SIGNATURE-401-OTHER',
];

/** Each requirement in `broken` has the status given, a security finding among its evidence, and nothing calls it not examined. */
function expectBroken(report: Report, broken: Record<string, string>): void {
  for (const [id, status] of Object.entries(broken)) {
    const r = report.requirements.find((x) => x.id === id)!;
    expect(r.status, id).toBe(status);
    expect(r.counts.security, id).toBeGreaterThan(0);
    expect(r.reason, id).toBeUndefined();
    const found = r.evidence.flatMap((e) => e.findings ?? []);
    expect(
      found.some((f) => f.requirement === id && f.message.startsWith(`${id}: security: the target carried out a `)),
      id,
    ).toBe(true);
  }
}

describe('run: a forged or missing credential carried out fails every requirement it broke', () => {
  it.each([['delete-invalid-signature-accepted', 'read-invalid-signature-accepted'], ['missing-token-accepted']])(
    '--fault %s',
    { timeout: 180_000 },
    async (...faults) => {
      const reportDir = join(dir, `carried-out-${faults[0]}`);
      const { code, stdout } = await run([...faults.flatMap((f) => ['--fault', f]), '--property-runs', '2', '--report-dir', reportDir]);
      expect(code).toBe(1);
      const report = readReport(reportDir);
      const forged = faults[0] === 'delete-invalid-signature-accepted';
      const broken: Record<string, string> = forged ? FORGED_SIGNATURE_BROKEN : { ...MISSING_TOKEN_BROKEN, ...MISSING_TOKEN_BROKEN_OTHER };
      expectBroken(report, broken);
      // Each is said as a security finding, on the console too.
      for (const id of Object.keys(broken)) expect(stdout).toMatch(new RegExp(`(FAIL|warn) ${id} +security: the target carried out a `));
      // The suite test named after a 401 rule is charged with it, beside the credential rule.
      const named = forged
        ? {
            'a token with an invalid signature is refused with 401 when deleting': 'AUTH-INVALID-SIGNATURE-401',
            'a token with an invalid signature is refused with 401 when updating': 'AUTH-INVALID-SIGNATURE-401-OTHER',
          }
        : {
            'delete refuses no Authorization header': 'AUTH-MISSING-TOKEN-401',
            'update session and get resource server refuse no Authorization header with 401': 'AUTH-MISSING-TOKEN-401-OTHER',
          };
      for (const [name, id] of Object.entries(named)) {
        const test = report.tests.find((t) => t.name.includes(name))!;
        expect(test.status, name).not.toBe('pass');
        expect(test.charged, name).toContain(id);
      }
    },
  );

  it('the conforming reference: each of these requirements examined and passed', { timeout: 180_000 }, async () => {
    const reportDir = join(dir, 'carried-out-none');
    const { code } = await run(['--property-runs', '2', '--report-dir', reportDir]);
    expect(code).toBe(0);
    const report = readReport(reportDir);
    for (const id of AUTH_REFUSALS) {
      const r = report.requirements.find((x) => x.id === id)!;
      expect(r.status, id).toBe('pass');
      expect(r.counts.security, id).toBe(0);
    }
  });
});

describe('validate: the same exchanges, recorded, give the same statuses', () => {
  const forged = { tokenFacts: { signatureValid: false } };
  const refused = (exchange: Exchange) => errorExchange(exchange, 401, { statusCode: 401, error: 'Unauthorized', message: 'Invalid token' });
  /** A forged delete and a forged read carried out, the same forged token refused behind a lower-case "bearer", and a delete without a credential carried out. */
  const carriedOut = (): Exchange[] => [
    deleteExchange(forged),
    refused(deleteExchange({ ...forged, requestHeaders: { Authorization: `bearer ${jwt(claims())}` } })),
    getExchange(resourceServer(), 'rs_1', forged),
    deleteExchange({ requestHeaders: {} }),
  ];

  /** The exchanges as the kit records them (HAR 1.2, each entry with its `_conformance` note), judged by `tmi-conform validate`. */
  async function validated(name: string, exchanges: Exchange[]): Promise<{ code: number | null; report: Report }> {
    const file = join(dir, `${name}.har`);
    const entries = exchanges.map((e) => harEntry(e, judgeExchange(e)));
    writeFileSync(file, JSON.stringify({ log: { version: '1.2', creator: HAR_CREATOR, entries } }));
    const reportDir = join(dir, `validated-${name}`);
    const { code } = await runCli(['validate', file, '--report-dir', reportDir]);
    return { code, report: readReport(reportDir) };
  }

  it('carried out: every requirement the 2xx broke fails (or warns), none reads as passed or not examined', async () => {
    const { code, report } = await validated('carried-out', carriedOut());
    expect(code).toBe(1);
    expectBroken(report, { ...FORGED_SIGNATURE_BROKEN, ...MISSING_TOKEN_BROKEN });
    // The refusal behind "bearer" examined the 401 rule and complied; the forged 204 still fails it.
    expect(report.requirements.find((r) => r.id === 'AUTH-INVALID-SIGNATURE-401')!.counts).toMatchObject({ exchanges: 2, findings: 1, security: 1 });
  });

  it('refused with 401: the same requirements examined and passed', async () => {
    const { code, report } = await validated('refused', carriedOut().map(refused));
    expect(code).toBe(0);
    for (const id of AUTH_REFUSALS) expect(report.requirements.find((r) => r.id === id)!.status, id).toBe('pass');
  });
});

describe("the rate-limit probe's burst is not charged as scope tests", () => {
  it('against a target that ignores read:resource_servers, the probe still provokes its 429 and SCOPE-READ-RESOURCE-SERVER counts only the deliberate scope test', async () => {
    const reportDir = join(dir, 'read-without-scope');
    const { code, stdout } = await run(['--fault', 'read-resource-server-without-scope', '--property-runs', '2', '--report-dir', reportDir]);
    expect(code).toBe(0);
    const report = readReport(reportDir);
    const byId = new Map(report.requirements.map((r) => [r.id, r]));
    expect(byId.get('SCOPE-READ-RESOURCE-SERVER')).toMatchObject({ status: 'warn', counts: { security: 1 } });
    expect(stdout).toContain('SECURITY: the target carried out requests it should have refused: SCOPE-READ-RESOURCE-SERVER (1 exchange(s))');
    // The probe's purpose is kept: a 429 provoked, its headers judged.
    for (const id of ['RL-429-HEADERS', 'RL-THROTTLED-429']) expect(byId.get(id)!.status, id).toBe('pass');
    const probe = report.tests.find((t) => t.name.includes('a burst beyond the limit gets a 429'))!;
    expect(probe.status).toBe('pass');
  });
});

describe('the report builder charges a failed test with what it names', () => {
  const outcome = {
    name: 'update session > sets metadata',
    requirements: ['SES-RESPONSE-SCHEMA', 'SES-REQUEST-CONTENT-TYPE', 'SES-REQUEST-BODY', 'GEN-JSON-RESPONSE'],
  };
  const statuses = (builder: ReportBuilder) => {
    const report = builder.build({ failOn: 'must' });
    return { report, status: (id: string) => report.requirements.find((r) => r.id === id)!.status };
  };

  it('charged: only those requirements fail; the others it covers are not examined by it', () => {
    const builder = new ReportBuilder({ kind: 'run', source: 'run' });
    expect(builder.addTest({ ...outcome, status: 'fail', charged: ['SES-RESPONSE-SCHEMA'], message: 'SES-RESPONSE-SCHEMA: expected …; received …' })).toBe(
      'fail',
    );
    const { report, status } = statuses(builder);
    expect(status('SES-RESPONSE-SCHEMA')).toBe('fail');
    for (const id of ['SES-REQUEST-CONTENT-TYPE', 'SES-REQUEST-BODY', 'GEN-JSON-RESPONSE']) expect(status(id), id).toBe('skip');
    expect(report.tests[0]!.charged).toEqual(['SES-RESPONSE-SCHEMA']);
  });

  it('nothing charged: the test is not examined (skip), its reason on every requirement it covers, the verdict untouched', () => {
    const builder = new ReportBuilder({ kind: 'run', source: 'run' });
    expect(
      builder.addTest({ ...outcome, status: 'fail', charged: [], message: 'not examined: the PATCH answered 404, so the updated session was not seen' }),
    ).toBe('skip');
    const { report } = statuses(builder);
    expect(report.passed).toBe(true);
    expect(report.tests[0]!.status).toBe('skip');
    for (const r of report.requirements.filter((x) => outcome.requirements.includes(x.id))) {
      expect(r.status, r.id).toBe('skip');
      expect(r.reason, r.id).toBe('not examined: the PATCH answered 404, so the updated session was not seen (test "update session > sets metadata")');
    }
  });

  it('a charge outside what the test covers (a security finding) still fails that requirement', () => {
    const builder = new ReportBuilder({ kind: 'run', source: 'run' });
    expect(
      builder.addTest({
        name: 'refuses a forged token with 401',
        requirements: ['AUTH-INVALID-SIGNATURE-401'],
        status: 'fail',
        charged: ['AUTH-CREDENTIAL-REQUIRED'],
        message: 'AUTH-CREDENTIAL-REQUIRED: security: …',
      }),
    ).toBe('fail');
    const { status } = statuses(builder);
    expect(status('AUTH-CREDENTIAL-REQUIRED')).toBe('fail');
    expect(status('AUTH-INVALID-SIGNATURE-401')).toBe('skip');
  });
});

describe("a suite file's console line", () => {
  /** The least of vitest's TestCase and TestModule the reporter reads. */
  const moduleOf = (moduleId: string, tests = 1) => ({
    moduleId,
    errors: () => [],
    children: {
      *allTests() {
        for (let i = 0; i < tests; i++) yield {};
      },
    },
  });
  const testCaseOf = (module: ReturnType<typeof moduleOf>, [name, { tags }]: ReturnType<typeof covers>, findings: Array<{ level: 'must' | 'should' }>) => ({
    id: `${module.moduleId} ${name}`,
    fullName: `suite > ${name}`,
    name,
    tags,
    module,
    result: () => ({ state: 'passed' }),
    diagnostic: () => ({ duration: 1 }),
    meta: () => ({
      tmi: {
        exchanges: [
          {
            exchange: {
              startedAt: new Date().toISOString(),
              request: { method: 'GET', url: 'https://t.example.com/api/v2/resource-servers/a', headers: {} },
              response: { status: 200, headers: {} },
              token: { headerPresent: false, wellFormed: false },
            },
            judgement: {
              findings: findings.map((f) => ({
                requirement: f.level === 'must' ? 'RS-RESPONSE-SCHEMA' : 'GEN-STATUS-DOCUMENTED',
                level: f.level,
                subject: 'implementation',
                check: 'x',
                expected: 'e',
                received: 'r',
              })),
              examined: [],
            },
          },
        ],
        unplanned429: 0,
        risked429: 0,
      },
    }),
  });

  it('counts a test reported before its file started, and is marked by the findings of its exchanges', async () => {
    const { SuiteReporter } = await import('../suites/reporter.ts');
    const lines: string[] = [];
    const reporter = new SuiteReporter(new ReportBuilder({ kind: 'run', source: 'run' }), (line) => lines.push(line), undefined);
    const module = moduleOf('/x/get-resource-server.suite.ts');
    // The result first, the file's start after it: the line must still count the test.
    reporter.onTestCaseResult(testCaseOf(module, covers('reads', 'RS-RESPONSE-SCHEMA'), [{ level: 'must' }]) as never);
    reporter.onTestModuleStart(module as never);
    reporter.onTestModuleEnd(module as never);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^ {2}✗ get-resource-server +1 passed · 0 failed · 0 warned · 0 skipped; findings in its exchanges: 1 must, 0 should/);
  });

  it("waits for a test whose result comes after its file's end (seen on the rate-limit probe)", async () => {
    const { SuiteReporter } = await import('../suites/reporter.ts');
    const lines: string[] = [];
    const reporter = new SuiteReporter(new ReportBuilder({ kind: 'run', source: 'run' }), (line) => lines.push(line), undefined);
    const module = moduleOf('/x/rate-limits.suite.ts', 2);
    reporter.onTestModuleStart(module as never);
    reporter.onTestCaseResult(testCaseOf(module, covers('values', 'RL-HEADER-VALUES'), []) as never);
    reporter.onTestModuleEnd(module as never);
    expect(lines).toEqual([]);
    reporter.onTestCaseResult(testCaseOf(module, covers('burst', 'RL-429-HEADERS'), []) as never);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^ {2}✓ rate-limits +2 passed · 0 failed · 0 warned · 0 skipped {2}\(/);
  });
});

describe("an interrupted run's tests, as the reporter hands them to the report", () => {
  const module = { moduleId: '/x/update-session.suite.ts', errors: () => [], children: { *allTests() {} } };
  const testCase = ([name, { tags }]: ReturnType<typeof covers>, result: Record<string, unknown>, duration?: number, charged?: string[]) => ({
    id: name,
    fullName: `update session > ${name}`,
    name,
    tags,
    module,
    result: () => result,
    diagnostic: () => (duration === undefined ? undefined : { duration }),
    meta: () => (charged ? { tmi: { exchanges: [], charged, unplanned429: 0, risked429: 0 } } : {}),
  });
  const NOT_RUN = 'not run: the run was interrupted';

  it('never passes a test that did not run to its end; a failure of its own stays a failure; each test once', async () => {
    const { SuiteReporter } = await import('../suites/reporter.ts');
    const builder = new ReportBuilder({ kind: 'run', source: 'run' });
    const reporter = new SuiteReporter(builder, () => {}, undefined);
    // Before the interrupt: vitest never started it.
    reporter.onTestCaseResult(testCase(covers('never started', 'SES-SUCCESS-200'), { state: 'pending' }) as never);
    reporter.interrupt();
    reporter.onTestCaseResult(testCase(covers('ran', 'SES-METADATA-ECHOED'), { state: 'passed' }, 30) as never);
    reporter.onTestCaseResult(testCase(covers('ran', 'SES-METADATA-ECHOED'), { state: 'passed' }, 30) as never);
    reporter.onTestCaseResult(testCase(covers('pending', 'SES-METADATA-CLEARED'), { state: 'pending' }) as never);
    reporter.onTestCaseResult(testCase(covers('cancelled', 'SES-ID-MATCHES'), { state: 'skipped', note: 'The test run was aborted by the user.' }) as never);
    reporter.onTestCaseResult(testCase(covers('reached after the cancel', 'SES-RESPONSE-SCHEMA'), { state: 'skipped' }) as never);
    reporter.onTestCaseResult(
      testCase(covers('cut short', 'SES-INVALID-UPDATE-REFUSED'), { state: 'failed', errors: [{ name: 'RunInterrupted', message: NOT_RUN }] }, 12) as never,
    );
    reporter.onTestCaseResult(testCase(covers('no fixture', 'SES-METADATA-MAX-PROPERTIES'), { state: 'skipped', note: 'no fixture session' }) as never);
    reporter.onTestCaseResult(
      testCase(
        covers('failed', 'SES-REQUEST-BODY'),
        { state: 'failed', errors: [{ name: 'ConformanceFailure', message: 'SES-REQUEST-BODY: expected 400; received 200' }] },
        20,
        ['SES-REQUEST-BODY'],
      ) as never,
    );
    const report = builder.build({ failOn: 'must' });
    const tests = Object.fromEntries(report.tests.map((t) => [t.name.replace('update session > ', ''), [t.status, t.message]]));
    expect(report.tests).toHaveLength(8);
    expect(tests).toEqual({
      'never started [SES-SUCCESS-200]': ['skip', 'not run'],
      'ran [SES-METADATA-ECHOED]': ['pass', undefined],
      'pending [SES-METADATA-CLEARED]': ['skip', NOT_RUN],
      'cancelled [SES-ID-MATCHES]': ['skip', NOT_RUN],
      'reached after the cancel [SES-RESPONSE-SCHEMA]': ['skip', NOT_RUN],
      'cut short [SES-INVALID-UPDATE-REFUSED]': ['skip', NOT_RUN],
      'no fixture [SES-METADATA-MAX-PROPERTIES]': ['skip', 'no fixture session'],
      'failed [SES-REQUEST-BODY]': ['fail', expect.stringContaining('SES-REQUEST-BODY')],
    });
    expect(report.tests.find((t) => t.name.includes('pending'))!.durationMs).toBeUndefined();
  });
});
