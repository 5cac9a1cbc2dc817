// `tmi-conform run`: the suites against the embedded reference and against a target given by
// config, the contract's exit codes, skips with reasons, and fixture sessions put back.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer, request as httpRequest, type Server } from 'node:http';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startReference, type RunningReference } from '../reference/index.ts';
import type { Report } from '../reports/model.ts';
import { reportSchemaError } from '../reports/schema.ts';
import { invalidUpdateExamples, malformedAuthorizationExamples, oddIdExamples, validMetadataExamples } from '../suites/arbitraries.ts';

const BIN = fileURLToPath(new URL('../bin/tmi-conform.js', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'tmi-run-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The environment of a user's shell: none of the test runner's own variables. */
function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !k.startsWith('VITEST') && !k.startsWith('TMI_') && k !== 'NODE_ENV' && k !== 'GITHUB_STEP_SUMMARY'),
  );
  return { ...env, ...extra };
}

/** Runs the command in a child process; asynchronous, so a reference in this process keeps answering. */
function run(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string; ms: number }> {
  const started = Date.now();
  const child = spawn(process.execPath, [BIN, 'run', ...args], { env: cleanEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c) => (stdout += c));
  child.stderr.on('data', (c) => (stderr += c));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr, ms: Date.now() - started })));
}

const readReport = (reportDir: string) => JSON.parse(readFileSync(join(reportDir, 'report.json'), 'utf8')) as Report;
const byId = (report: Report) => new Map(report.requirements.map((r) => [r.id, r]));

function writeConfig(name: string, config: unknown): string {
  const path = join(dir, name);
  writeFileSync(path, typeof config === 'string' ? config : stringify(config), { mode: 0o600 });
  return path;
}

describe('tmi-conform run against the embedded reference', () => {
  it('exits 0, prints a line per suite and a summary, and every requirement is examined and passes', async () => {
    const reportDir = join(dir, 'embedded');
    const { code, stdout, stderr } = await run(['--report-dir', reportDir]);
    expect(stderr).toBe('');
    expect(code, stdout).toBe(0);
    for (const suite of ['authentication', 'token-attacks', 'delete-token-exchange-profile', 'update-session', 'get-resource-server', 'rate-limits'])
      expect(stdout).toMatch(new RegExp(`✓ ${suite}\\s+\\d+ passed · 0 failed · 0 warned · 0 skipped`));
    expect(stdout).toMatch(/unplanned 429s: 0/);
    expect(stdout).toContain('verdict: conforming');
    const report = readReport(reportDir);
    expect(report.kind).toBe('run');
    expect(report.summary).toMatchObject({ fail: 0, warn: 0, skip: 0 });
    for (const r of report.requirements) expect(r.counts.tests + r.counts.exchanges, r.id).toBeGreaterThan(0);
    // The probe provoked a 429 and the 429 rule judged it.
    expect(byId(report).get('RL-429-HEADERS')!.counts.exchanges).toBeGreaterThan(0);
    // Secrets of the run never reach the report.
    const text = readFileSync(join(reportDir, 'report.json'), 'utf8');
    expect(text).not.toMatch(/Bearer eyJ/);
    expect(text).not.toMatch(/client_secret=[^&"[]/);
    // Its coverage: every requirement examined; of what the document names, what the run did not reach, said.
    const { coverage } = report;
    expect(coverage!.document).toMatchObject({ examined: report.requirements.length, applicable: report.requirements.length, notExamined: [] });
    expect(coverage!.operations).toMatchObject({ examined: 3, applicable: 3 });
    const deleted = coverage!.responses.byOperation.find((o) => o.operation === 'deleteTokenExchangeProfile')!;
    expect(deleted).toMatchObject({ named: ['204', '401', '403', '429'], seen: ['204', '401', '403'] });
    const values = new Map(coverage!.values.byName.map((d) => [d.name, d]));
    expect(values.get('session_metadata')!.reached).toEqual(values.get('session_metadata')!.values);
    expect(values.get('signing_alg')!.reached).toEqual(expect.arrayContaining(['HS256', 'RS256']));
    expect(stdout).toMatch(
      new RegExp(
        `coverage: document ${report.requirements.length}/${report.requirements.length} requirements \\(100 %; must \\d+/\\d+, should \\d+/\\d+\\), responses 3/4, enum values and limits \\d+/14, operations 3/3`,
      ),
    );
    expect(stdout).toContain('  responses not seen: DELETE /token-exchange-profiles/{id} 429');
    const notReached = coverage!.values.byName.flatMap((d) => d.values.filter((v) => !d.reached.includes(v)));
    if (notReached.length > 0) expect(stdout).toMatch(/ {2}values not reached: /);
  });
});

describe('tmi-conform run against a target given by config', () => {
  let ref: RunningReference;
  beforeAll(async () => {
    ref = await startReference();
  });
  afterAll(() => ref.close());

  it('restores fixture sessions with known metadata, and without allow_destructive leaves sessions given by id alone', async () => {
    const config = ref.config();
    const [first, second] = config.fixtures.sessions;
    const before = [ref.sessionMetadata(first!.id), ref.sessionMetadata(second!.id)];
    const path = writeConfig('restore.yaml', {
      ...config,
      fixtures: { ...config.fixtures, sessions: [first, second!.id], token_exchange_profiles: [] },
      allow_destructive: false,
      rate_limit_probe: false,
      property_runs: 5,
    });
    const { code, stdout } = await run(['--config', path, '--report-dir', join(dir, 'restore')]);
    expect(code, stdout).toBe(0);
    expect(stdout).toContain('restored session_metadata of 1 fixture session(s)');
    expect(stdout).toContain(`left untouched (original session_metadata unknown): ${second!.id}`);
    expect([ref.sessionMetadata(first!.id), ref.sessionMetadata(second!.id)]).toEqual(before);
  });

  it('with allow_destructive, tests sessions given by id only: says so before it starts, leaves them cleared, and the report lists them', async () => {
    const own = await startReference();
    try {
      const config = own.config();
      const [first, second] = config.fixtures.sessions;
      expect(first!.session_metadata, 'the seed gives the first session metadata').not.toBeNull();
      const path = writeConfig('by-id.yaml', {
        ...config,
        fixtures: { ...config.fixtures, sessions: [first!.id, second], token_exchange_profiles: [] },
        rate_limit_probe: false,
        property_runs: 3,
      });
      const reportDir = join(dir, 'by-id');
      const { code, stdout } = await run(['--config', path, '--report-dir', reportDir]);
      expect(code, stdout).toBe(0);
      const announced = stdout.indexOf(`will be tested and left with session_metadata cleared: ${first!.id}`);
      expect(announced, stdout).toBeGreaterThan(-1);
      expect(announced, 'announced before the first suite runs').toBeLessThan(stdout.indexOf('✓ authentication'));
      expect(stdout).not.toContain('left untouched');
      expect(own.sessionMetadata(first!.id)).toBeNull();
      expect(own.sessionMetadata(second!.id)).toEqual(second!.session_metadata);
      const report = readReport(reportDir);
      expect(report.tests.find((t) => t.name.includes('left with session_metadata cleared'))).toMatchObject({
        status: 'pass',
        name: expect.stringContaining(first!.id),
      });
      // The session was tested: the update tests ran instead of being skipped.
      expect(byId(report).get('SES-METADATA-CLEARED')!.status).toBe('pass');
    } finally {
      await own.close();
    }
  });

  it('a missing profile or fixture skips exactly the tests that need it, with the reason', async () => {
    const config = ref.config();
    const path = writeConfig('partial.yaml', {
      base_url: config.base_url,
      credentials: { full: config.credentials.full },
      fixtures: { resource_servers: config.fixtures.resource_servers },
      property_runs: 3,
    });
    const reportDir = join(dir, 'partial');
    const { code, stdout } = await run(['--config', path, '--report-dir', reportDir]);
    expect(code, stdout).toBe(0);
    const report = byId(readReport(reportDir));
    expect(report.get('AUTH-NON-GLOBAL-401')).toMatchObject({ status: 'skip', reason: expect.stringContaining('no "non_global" credentials') });
    expect(report.get('SCOPE-DELETE-403')).toMatchObject({ status: 'skip', reason: expect.stringContaining('no "no_scope" credentials') });
    // Without allow_destructive only the delete of an id that exists nowhere runs.
    expect(stdout).toMatch(/delete-token-exchange-profile\s+1 passed · 0 failed · 0 warned · 3 skipped/);
    expect(report.get('SES-METADATA-CLEARED')!.reason).toContain('no fixture session');
    expect(report.get('RL-429-HEADERS')!.reason).toContain('rate_limit_probe is not set');
    expect(report.get('RS-RESPONSE-SCHEMA')!.status).toBe('pass');
    // Coverage counts each of them not examined, with the same reason.
    const { coverage, requirements } = readReport(reportDir);
    const skipped = requirements.filter((r) => r.status === 'skip');
    expect(coverage!.document.examined).toBe(requirements.length - skipped.length);
    expect(coverage!.document.notExamined).toEqual(skipped.map((r) => ({ requirement: r.id, level: r.level, operations: r.operations, reason: r.reason })));
    expect(coverage!.document.notExamined.find((n) => n.requirement === 'AUTH-NON-GLOBAL-401')!.reason).toContain('no "non_global" credentials');
    expect(stdout).toContain(`coverage: document ${requirements.length - skipped.length}/${requirements.length} requirements`);
  });

  it('environment variables configure the target and flags win over them', async () => {
    const config = ref.config();
    const env = {
      TMI_BASE_URL: 'http://127.0.0.1:9/api/v2',
      TMI_FULL_CLIENT_ID: config.credentials.full.client_id,
      TMI_FULL_CLIENT_SECRET: config.credentials.full.client_secret,
      TMI_RESOURCE_SERVERS: config.fixtures.resource_servers.join(','),
      TMI_PROPERTY_RUNS: '2',
    };
    const reportDir = join(dir, 'env');
    const { code, stdout } = await run(['--base-url', config.base_url, '--requirement', 'RS-RESPONSE-SCHEMA', '--report-dir', reportDir], env);
    expect(code, stdout).toBe(0);
    expect(byId(readReport(reportDir)).get('RS-RESPONSE-SCHEMA')!.status).toBe('pass');
  });

  it('credentials refused: exit 2, one line naming the profile', async () => {
    const config = ref.config();
    const path = writeConfig('refused.yaml', {
      base_url: config.base_url,
      credentials: { full: config.credentials.full, no_scope: { client_id: config.credentials.no_scope.client_id, client_secret: 'wrong-secret-value' } },
    });
    const { code, stderr } = await run(['--config', path, '--report-dir', join(dir, 'refused')]);
    expect(code).toBe(2);
    expect(stderr.trim().split('\n')).toHaveLength(1);
    expect(stderr).toMatch(/credentials of profile "no_scope" were refused by the token endpoint \(401/);
    expect(stderr).not.toContain('wrong-secret-value');
  });
});

describe('tmi-conform run, interrupted', () => {
  // A slow target (5 requests a second): the update tests are under way when the signal comes.
  // Only they are selected, so the run reaches them within seconds.
  let slow: RunningReference;
  beforeAll(async () => {
    slow = await startReference({ rateLimit: { limit: 5, windowSeconds: 1 } });
  });
  afterAll(() => slow.close());

  // A terminal's Ctrl-C reaches the whole process group (the suites' worker too); a CI runner's
  // or `kill`'s signal the process alone, or its group.
  it.each([
    { signal: 'SIGINT', to: 'group' },
    { signal: 'SIGTERM', to: 'process' },
    { signal: 'SIGTERM', to: 'group' },
  ] as const)(
    '$signal to the $to: exit 130 within seconds, sessions restored, every report says interrupted and nothing not run passed',
    { timeout: 60_000 },
    async ({ signal, to }) => {
      const config = slow.config();
      const sessions = config.fixtures.sessions.map((s) => s.id);
      const metadata = () => JSON.stringify(sessions.map((id) => slow.sessionMetadata(id)));
      const before = metadata();
      const path = writeConfig(`slow-${signal}-${to}.yaml`, { ...config, rate_limit_probe: false, property_runs: 3 });
      const reportDir = join(dir, `interrupted-${signal}-${to}`);
      const selected = ['SES-RESPONSE-SCHEMA', 'SES-METADATA-CLEARED', 'SES-INVALID-UPDATE-REFUSED', 'SES-METADATA-ECHOED'].flatMap((id) => [
        '--requirement',
        id,
      ]);
      const child = spawn(process.execPath, [BIN, 'run', '--config', path, '--report-dir', reportDir, ...selected], {
        env: cleanEnv(),
        stdio: ['ignore', 'pipe', 'pipe'],
        detached: to === 'group',
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk) => (stdout += chunk));
      child.stderr.on('data', (chunk) => (stderr += chunk));
      const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
      let code: number | null;
      let stoppedInMs: number;
      try {
        // Interrupt once the update tests have changed a session (after the preflight: its line about the issuer is out).
        const changed = () => stdout.includes('issuer') && metadata() !== before;
        const deadline = Date.now() + 45_000;
        while (!changed() && child.exitCode === null && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
        expect(changed(), `the update tests changed a session\n${stdout}${stderr}`).toBe(true);
        const signalled = Date.now();
        if (to === 'group') process.kill(-child.pid!, signal);
        else child.kill(signal);
        code = await Promise.race([exited, new Promise<null>((r) => setTimeout(() => r(null), 20_000))]);
        stoppedInMs = Date.now() - signalled;
      } finally {
        // Never left behind, whatever failed.
        if (child.exitCode === null && child.signalCode === null) process.kill(to === 'group' ? -child.pid! : child.pid!, 'SIGKILL');
      }
      expect(code, stdout + stderr).toBe(130);
      expect(stoppedInMs, `stopped ${stoppedInMs} ms after ${signal}`).toBeLessThan(5_000);
      expect(stdout).toContain('interrupted: no verdict');
      expect(stdout).toMatch(/restored session_metadata of \d+ fixture session/);
      expect(metadata(), 'sessions restored').toBe(before);

      const text = readFileSync(join(reportDir, 'report.json'), 'utf8');
      const report = JSON.parse(text) as Report;
      expect(reportSchemaError(report)).toBeUndefined();
      expect(report).toMatchObject({ kind: 'run', interrupted: true, passed: false, sources: [{ name: 'run', interrupted: true }] });
      // Nothing that did not run to its end passed: a passing test ran for a while, the others are skipped with the reason.
      for (const test of report.tests.filter((t) => t.status === 'pass')) expect(test.durationMs ?? 0, test.name).toBeGreaterThan(0);
      const notRun = report.tests.filter((t) => t.status === 'skip' && t.message === 'not run: the run was interrupted');
      expect(notRun.length, JSON.stringify(report.tests.map((t) => [t.status, t.message, t.name]))).toBeGreaterThan(0);
      expect(notRun.every((t) => t.file === 'update-session.suite.ts' || t.file === 'get-resource-server.suite.ts' || t.file === 'rate-limits.suite.ts')).toBe(
        true,
      );
      // A requirement nothing examined before the interrupt is skipped as not run, never passed.
      const notExamined = report.requirements.filter((r) => r.counts.exchanges + r.counts.tests === 0);
      expect(notExamined.length).toBeGreaterThan(0);
      for (const r of notExamined) expect(r.status, r.id).toBe('skip');
      expect(report.requirements.some((r) => r.reason?.includes('not run: the run was interrupted'))).toBe(true);

      const markdown = readFileSync(join(reportDir, 'report.md'), 'utf8');
      expect(markdown).toContain('## tmi-conform run: ⏹ interrupted: no verdict');
      expect(markdown).not.toContain('✅ conforming');
      const html = readFileSync(join(reportDir, 'report.html'), 'utf8');
      expect(html).toContain('<div class="verdict interrupted">Interrupted: no verdict</div>');
      expect(html).not.toContain('verdict ok');
      const junit = readFileSync(join(reportDir, 'junit.xml'), 'utf8');
      expect(junit).toMatch(/<testsuites [^>]*errors="1"/);
      expect(junit).toContain('<error message="interrupted: no verdict: run stopped before it ended" type="interrupted">');
      const sarif = JSON.parse(readFileSync(join(reportDir, 'report.sarif'), 'utf8'));
      expect(sarif.runs[0].invocations[0]).toMatchObject({ executionSuccessful: false, toolExecutionNotifications: [{ level: 'error' }] });
      expect(sarif.runs[0].properties).toMatchObject({ interrupted: true, passed: false });
    },
  );
});

describe('tmi-conform run: the issuer is learned from what the tenant says, not from the address it is reached at', () => {
  // A tenant behind a gateway: its canonical issuer and API identifier are not the address the
  // kit reaches it at (a plain forwarding host in front of the reference).
  const PUBLIC_URL = 'https://tenant.example.invalid';
  let ref: RunningReference;
  let forwarder: Server;
  let forwarderOrigin: string;

  beforeAll(async () => {
    ref = await startReference({ publicUrl: PUBLIC_URL });
    const { port } = new URL(ref.origin);
    forwarder = createHttpServer((req, res) => {
      const upstream = httpRequest({ host: '127.0.0.1', port, method: req.method, path: req.url, headers: req.headers }, (answer) => {
        res.writeHead(answer.statusCode!, answer.headers);
        answer.pipe(res);
      });
      upstream.on('error', () => res.destroy());
      req.pipe(upstream);
    });
    await new Promise<void>((resolve) => forwarder.listen(0, '127.0.0.1', resolve));
    forwarderOrigin = `http://127.0.0.1:${(forwarder.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    forwarder?.closeAllConnections();
    await new Promise((resolve) => forwarder?.close(resolve));
    await ref?.close();
  });

  it('a conforming tenant reached through a forwarding host passes, and the run says where the issuer came from', { timeout: 120_000 }, async () => {
    const { auth_url: _reachedAt, ...config } = ref.config();
    expect(config.audience).toBe(`${PUBLIC_URL}/api/v2/`);
    const path = writeConfig('gateway.yaml', { ...config, base_url: `${forwarderOrigin}/api/v2`, audience: `${PUBLIC_URL}/api/v2/`, property_runs: 5 });
    const reportDir = join(dir, 'gateway');
    const { code, stdout, stderr } = await run(['--config', path, '--report-dir', reportDir]);
    expect(stdout).not.toContain('FAIL');
    expect(stderr).toBe('');
    expect(code, stdout).toBe(0);
    expect(stdout.match(/^issuer .*$/gm)).toEqual([`issuer ${PUBLIC_URL}/ (from the discovery document)`]);
    const report = readReport(reportDir);
    expect(report.summary).toMatchObject({ fail: 0 });
    // The attack with a token from another issuer ran (the issuer is known) and was refused.
    expect(report.tests.filter((t) => t.name.includes('a token from another issuer')).map((t) => t.status)).toEqual(['pass', 'pass', 'pass']);
  });

  it('a tenant that accepts a token from another issuer fails the run, with the issuer learned from its discovery document', { timeout: 120_000 }, async () => {
    const reportDir = join(dir, 'other-issuer');
    const { code, stdout } = await run([
      '--fault',
      'other-issuer-accepted',
      '--requirement',
      'AUTH-CREDENTIAL-REQUIRED',
      '--property-runs',
      '2',
      '--report-dir',
      reportDir,
    ]);
    expect(code, stdout).toBe(1);
    expect(stdout).toMatch(/^issuer http:\/\/127\.0\.0\.1:\d+\/ \(from the discovery document\)$/m);
    const report = readReport(reportDir);
    expect(byId(report).get('AUTH-CREDENTIAL-REQUIRED')!.status).toBe('fail');
    expect(report.tests.filter((t) => t.status === 'fail').map((t) => t.name)).toEqual([expect.stringContaining('a token from another issuer')]);
  });

  it('the issuer in the config wins over the discovery document: tokens naming another are judged so', { timeout: 120_000 }, async () => {
    const { code, stdout } = await run([
      '--issuer',
      'https://configured.example.com/',
      '--requirement',
      'AUTH-CREDENTIAL-REQUIRED',
      '--property-runs',
      '2',
      '--fail-on',
      'should',
      '--report-dir',
      join(dir, 'configured-issuer'),
    ]);
    expect(stdout.match(/^issuer .*$/gm)).toEqual(['issuer https://configured.example.com/ (from issuer in the config)']);
    // The reference's own tokens name another issuer than the one configured: judged so, not as the discovery document says.
    expect(code, stdout).toBe(1);
    expect(stdout).toMatch(/a token from another issuer \(iss "http:\/\/127\.0\.0\.1:\d+\/", expected "https:\/\/configured\.example\.com\/"\)/);
  });
});

describe('tmi-conform run: usage and configuration errors (exit 2, one line)', () => {
  const cases: Array<[string, () => string[], RegExp]> = [
    ['unknown config key', () => ['--config', writeConfig('unknown.yaml', { base_url: 'http://127.0.0.1:9/api/v2', colour: 'blue' })], /unknown key "colour"/],
    [
      'nested unknown key',
      () => ['--config', writeConfig('nested.yaml', { base_url: 'http://127.0.0.1:9/api/v2', fixtures: { session: ['x'] } })],
      /unknown key "fixtures.session"/,
    ],
    [
      'wrong type',
      () => ['--config', writeConfig('type.yaml', { base_url: 'http://127.0.0.1:9/api/v2', allow_destructive: 'yes' })],
      /key "allow_destructive": "yes" is not true or false/,
    ],
    [
      'profile of the wrong shape',
      () => ['--config', writeConfig('profile.yaml', { base_url: 'http://127.0.0.1:9/api/v2', credentials: { full: { client_id: 'x' } } })],
      /key "credentials.full": expected \{client_id, client_secret\} or \{token\}/,
    ],
    ['not YAML', () => ['--config', writeConfig('bad.yaml', 'base_url: [unclosed')], /not valid YAML/],
    [
      'a YAML tag',
      () => ['--config', writeConfig('tag.yaml', 'base_url: !!js/function "function () {}"')],
      /config .*tag\.yaml: unknown tag !!js\/function at line 1 \(the config is plain YAML, without tags\)\n/,
    ],
    [
      'a port above 65535',
      () => ['--base-url', 'http://127.0.0.1:99999/api/v2'],
      /--base-url: port 99999 is above 65535 in "http:\/\/127\.0\.0\.1:99999\/api\/v2"\n/,
    ],
    ['unreadable file', () => ['--config', join(dir, 'missing.yaml')], /cannot read it \(ENOENT\)/],
    ['unknown requirement', () => ['--requirement', 'NOPE-1'], /unknown requirement NOPE-1/],
    ['unknown fault', () => ['--fault', 'everything-broken'], /unknown fault "everything-broken"/],
    [
      'credentials without a target',
      () => ['--config', writeConfig('creds.yaml', { credentials: { full: { token: 'x' } } })],
      /run: credentials or fixtures are configured but no base_url/,
    ],
    ['fault with a target', () => ['--base-url', 'http://127.0.0.1:9/api/v2', '--fault', 'delete-returns-200'], /apply to the embedded reference only/],
    ['bad --fail-on', () => ['--fail-on', 'sometimes'], /--fail-on expects "must" or "should"/],
    ['unknown flag', () => ['--colour'], /unknown option --colour/],
    ['--seed not a number', () => ['--seed', 'abc'], /--seed: "abc" is not a whole number from 0 to /],
    [
      'seed out of range',
      () => ['--config', writeConfig('seed.yaml', { base_url: 'http://127.0.0.1:9/api/v2', seed: -1 })],
      /key "seed": -1 is not a whole number from 0 to /,
    ],
  ];
  it.each(cases)('%s', async (_name, args, message) => {
    const { code, stderr } = await run(args());
    expect(code).toBe(2);
    expect(stderr.trim().split('\n'), stderr).toHaveLength(1);
    expect(stderr).toMatch(message);
    expect(stderr).not.toMatch(/\n\s+at /);
  });

  it('an invalid environment variable names itself', async () => {
    const { code, stderr } = await run([], { TMI_PROPERTY_RUNS: 'many' });
    expect(code).toBe(2);
    expect(stderr).toMatch(/TMI_PROPERTY_RUNS: "[^"]*" is not a whole number from 1 to 1000/);
  });

  it('target unreachable: exit 2 within 10 s, one line', async () => {
    // A port that was free a moment ago and has nothing listening now.
    const port = await new Promise<number>((resolve) => {
      const server = createServer().listen(0, '127.0.0.1', () => {
        const { port } = server.address() as { port: number };
        server.close(() => resolve(port));
      });
    });
    const { code, stderr, ms } = await run(['--base-url', `http://127.0.0.1:${port}/api/v2`, '--report-dir', join(dir, 'unreachable')]);
    expect(code).toBe(2);
    expect(stderr).toMatch(/target unreachable: .*ECONNREFUSED/);
    expect(stderr.trim().split('\n')).toHaveLength(1);
    expect(ms).toBeLessThan(10_000);
  });
});

/** A request as it reached the target. */
interface Seen {
  method: string;
  url: string;
  authorization: string | undefined;
  body: string;
}

/** A pass-through in front of `target` (an origin) that notes every request before forwarding it. */
async function recordingProxy(target: string): Promise<{ origin: string; seen: Seen[]; close: () => Promise<void> }> {
  const seen: Seen[] = [];
  const server = createHttpServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      seen.push({ method: req.method!, url: req.url!, authorization: req.headers.authorization, body: body.toString('utf8') });
      const upstream = httpRequest(new URL(req.url!, target), { method: req.method, headers: req.headers }, (answer) => {
        res.writeHead(answer.statusCode!, answer.headers);
        answer.pipe(res);
      });
      upstream.on('error', () => res.destroy());
      upstream.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return { origin: `http://127.0.0.1:${port}`, seen, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

describe('tmi-conform run --property-runs 1', () => {
  it('sends every named edge case of every property, whatever the number of runs', { timeout: 120_000 }, async () => {
    const own = await startReference();
    const proxy = await recordingProxy(own.origin);
    try {
      const config = own.config();
      // API requests go through the proxy; tokens and keys come from the reference itself.
      const path = writeConfig('edges.yaml', { ...config, base_url: `${proxy.origin}/api/v2`, rate_limit_probe: false });
      const { code, stdout } = await run(['--config', path, '--property-runs', '1', '--report-dir', join(dir, 'edges')]);
      expect(code, stdout).toBe(0);
      const api = proxy.seen.filter((r) => r.url.startsWith('/api/v2/'));
      const sentWith = (method: string, authorization: string | undefined) => api.some((r) => r.method === method && r.authorization === authorization);
      const missing: string[] = [];
      for (const { name, value } of malformedAuthorizationExamples()) {
        // node:http drops the whitespace that ends a header value ("Bearer   " arrives as "Bearer").
        const arrives = value?.trimEnd();
        for (const method of ['DELETE', 'PATCH', 'GET']) if (!sentWith(method, arrives)) missing.push(`${method} with Authorization ${name}`);
      }
      const patched = (body: unknown) => api.some((r) => r.method === 'PATCH' && r.body === JSON.stringify(body));
      for (const { name, value } of validMetadataExamples()) if (!patched({ session_metadata: value })) missing.push(`valid metadata: ${name}`);
      for (const { why, body } of invalidUpdateExamples()) if (!patched(body)) missing.push(`invalid update: ${why}`);
      for (const { name, value } of oddIdExamples()) {
        for (const method of ['DELETE', 'PATCH', 'GET'])
          if (!api.some((r) => r.method === method && r.url.endsWith(`/${encodeURIComponent(value)}`))) missing.push(`${method} of odd id: ${name}`);
      }
      expect(missing).toEqual([]);
    } finally {
      await proxy.close();
      await own.close();
    }
  });
});

describe('tmi-conform run: a password in base_url', () => {
  it('never reaches the console', { timeout: 60_000 }, async () => {
    const { code, stdout, stderr } = await run(['--base-url', 'http://operator:s3cretPassw0rd@127.0.0.1:9/api/v2']);
    expect(code).toBe(2);
    expect(stdout.split('\n')[0]).toBe('tmi-conform run → http://[REDACTED]@127.0.0.1:9/api/v2');
    expect(stdout + stderr).not.toContain('s3cretPassw0rd');
  });
});
