// What a user sees of a failure, proven on a failing run against reference fault switches: the
// console summary, report.md and report.html (in headless Chromium) say what was expected,
// what was received and the exchange, a property failure shows its shrunk counterexample, and
// each failing requirement carries a curl command that sends the exchange again (the bearer
// token as $TOKEN; run here against the still-running target, it gets the same answer);
// report.json validates against its schema with findings as data; the run's seed replays its
// generated inputs.
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { chromium, type Browser } from 'playwright-core';
import { stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startReference, type RunningReference } from '../reference/index.ts';
import type { Report } from '../reports/model.ts';
import { reportSchemaError } from '../reports/schema.ts';
import { CHROMIUM_ARGS, findChromium } from './helpers/chromium.ts';

const BIN = fileURLToPath(new URL('../bin/tmi-conform.js', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'tmi-failure-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const FAULTS = ['rs-signing-alg-invalid', 'session-metadata-long-value-stored', 'rs-lookup-by-audience-404'];
const SEED = 4242;

function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !k.startsWith('VITEST') && !k.startsWith('TMI_') && k !== 'NODE_ENV' && k !== 'GITHUB_STEP_SUMMARY'),
  );
  return { ...env, ...extra };
}

function run(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [BIN, 'run', ...args], { env: cleanEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c) => (stdout += c));
  child.stderr.on('data', (c) => (stderr += c));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}

const readReport = (reportDir: string) => JSON.parse(readFileSync(join(reportDir, 'report.json'), 'utf8')) as Report;

/** The console's lines about one requirement: its FAIL line and the indented lines under it. */
function consoleBlock(stdout: string, id: string): string[] {
  const lines = stdout.split('\n');
  const start = lines.findIndex((l) => new RegExp(`^  (FAIL|warn) ${id} `).test(l));
  if (start === -1) return [];
  const block = [lines[start]!];
  for (const line of lines.slice(start + 1)) {
    if (!line.startsWith('       ')) break;
    block.push(line.trim());
  }
  return block;
}

/** A markdown section of one requirement, up to the next heading. */
const markdownSection = (md: string, id: string) => {
  const start = md.indexOf(` ${id} (`);
  return start === -1 ? '' : md.slice(start, md.indexOf('\n#', start + 1) === -1 ? undefined : md.indexOf('\n#', start + 1));
};

/** A bearer token of the reference's full client, as a user would get one for $TOKEN. */
async function fullToken(ref: RunningReference): Promise<string> {
  const config = ref.config();
  const { client_id, client_secret } = config.credentials.full as { client_id: string; client_secret: string };
  const response = await fetch(`${config.auth_url}/oauth/token/`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'client_credentials', client_id, client_secret, audience: config.audience ?? `${config.base_url}/` }).toString(),
  });
  return ((await response.json()) as { access_token: string }).access_token;
}

/** Runs a curl command line as a shell would, with TOKEN set. */
function shell(command: string, token: string): Promise<string> {
  return new Promise((resolve, reject) =>
    execFile('sh', ['-c', command], { env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', TOKEN: token }, timeout: 10_000 }, (error, stdout) =>
      error ? reject(error) : resolve(stdout),
    ),
  );
}

describe('a failing run against fault switches', () => {
  let ref: RunningReference;
  let stdout: string;
  let code: number | null;
  let report: Report;
  const reportDir = join(dir, 'failing');

  beforeAll(async () => {
    ref = await startReference({ faults: FAULTS });
    const path = join(dir, 'failing.yaml');
    writeFileSync(path, stringify({ ...ref.config(), rate_limit_probe: false }), { mode: 0o600 });
    ({ code, stdout } = await run([
      '--config',
      path,
      '--requirement',
      'RS-SIGNING-ALG',
      '--requirement',
      'SES-METADATA-VALUE-LENGTH',
      '--requirement',
      'RS-LOOKUP-BY-ID-OR-AUDIENCE',
      '--property-runs',
      '5',
      '--seed',
      String(SEED),
      '--report-dir',
      reportDir,
    ]));
    report = readReport(reportDir);
  }, 120_000);
  afterAll(() => ref?.close());

  it('exits 1, and the console summary says what was expected, what was received, the exchange and a curl command', () => {
    expect(code, stdout).toBe(1);
    const alg = consoleBlock(stdout, 'RS-SIGNING-ALG');
    expect(alg[0]).toMatch(/^ {2}FAIL RS-SIGNING-ALG +expected signing_alg to be one of "HS256", "RS256", "RS512", "PS256"; received "ES256"$/);
    expect(alg[1]).toMatch(new RegExp(`^GET ${ref.origin}/api/v2/resource-servers/\\S+ → 200 `));
    expect(alg.at(-1)).toMatch(
      new RegExp(`^curl -i '${ref.origin}/api/v2/resource-servers/\\S+' -H 'accept: application/json' -H "authorization: Bearer \\$TOKEN"$`),
    );
    const length = consoleBlock(stdout, 'SES-METADATA-VALUE-LENGTH');
    expect(length[0]).toMatch(/FAIL SES-METADATA-VALUE-LENGTH +expected session_metadata\.\S+ must NOT have more than 255 characters; received "a+/);
    expect(length[1]).toMatch(/^PATCH \S+\/sessions\/\S+ → 200 +\(test "update session > session_metadata that breaks the rules is refused/);
    expect(length.find((l) => l.startsWith('counterexample: '))).toContain('"why":"a value of 256 characters"');
    expect(length.at(-1)).toMatch(
      /^curl -i -X 'PATCH' '\S+\/sessions\/\S+' .*-H "authorization: Bearer \$TOKEN" -H 'content-type: application\/json' --data-raw '\{"session_metadata":\{/,
    );
    // A scenario's expectation about the answer, in the same words (not "expected 404 to be 200").
    const lookup = consoleBlock(stdout, 'RS-LOOKUP-BY-ID-OR-AUDIENCE');
    expect(lookup[0]).toMatch(/FAIL RS-LOOKUP-BY-ID-OR-AUDIENCE +expected the audience \S+ to be found \(2xx\); received 404$/);
    expect(lookup[1]).toMatch(/^GET \S+\/resource-servers\/http%3A%2F%2F\S+ → 404 +\(test "get a resource server > each fixture is found by its audience/);
    expect(lookup.at(-1)).toMatch(/^curl -i '\S+\/resource-servers\/http%3A%2F%2F\S+' /);
    // Counted as the reports count them; the seed is printed.
    expect(stdout).toMatch(/✗ update-session\s+\d+ passed · 1 failed · 0 warned · \d+ skipped/);
    expect(stdout).toContain(`seed: ${SEED} (tmi-conform run --seed ${SEED} generates the same inputs again)`);
    expect(stdout).not.toMatch(/Object\.is|Property failed after|Bearer eyJ/);
  });

  it('the curl command is ready: with TOKEN set, it sends the exchange again and gets the same answer', async () => {
    const command = consoleBlock(stdout, 'RS-SIGNING-ALG').at(-1)!;
    const answer = await shell(command, await fullToken(ref));
    expect(answer).toMatch(/^HTTP\/1\.1 200/);
    expect(answer).toContain('"signing_alg":"ES256"');
  });

  it('report.json validates against its schema; findings carry expected and received; the seed is recorded', () => {
    expect(reportSchemaError(report)).toBeUndefined();
    expect(report.sources[0]!.seed).toBe(SEED);
    const alg = report.requirements.find((r) => r.id === 'RS-SIGNING-ALG')!;
    expect(alg.status).toBe('fail');
    expect(alg.evidence.flatMap((e) => e.findings ?? [])).toContainEqual(
      expect.objectContaining({
        requirement: 'RS-SIGNING-ALG',
        check: 'responseBodyMatchesSchema',
        expected: 'signing_alg to be one of "HS256", "RS256", "RS512", "PS256"',
        received: '"ES256"',
      }),
    );
    const property = report.tests.find((t) => t.name.startsWith('update session > session_metadata that breaks the rules is refused'))!;
    expect(property.status).toBe('fail');
    // The kit's words first, the exchange, then the shrunk counterexample with fast-check's replay path.
    expect(property.message).toMatch(/^SES-METADATA-VALUE-LENGTH: expected session_metadata\.\S+ must NOT have more than 255 characters; received "a+/);
    expect(property.message).toMatch(/\n {2}PATCH \S+\/sessions\/\S+ → 200 /);
    expect(property.message).toMatch(
      /\n {2}counterexample: \[\{"why":"a value of 256 characters".*\(shrunk \d+ time\(s\); fast-check seed 4242, path "[\d:]+"\)$/,
    );
    expect(property.counterexample).toContain('a value of 256 characters');
    expect(JSON.stringify(report)).not.toMatch(/Object\.is|Bearer eyJ/);
  });

  it('report.md: each failing requirement with expected and received, its exchange, the counterexample and a curl block', () => {
    const md = readFileSync(join(reportDir, 'report.md'), 'utf8');
    const alg = markdownSection(md, 'RS-SIGNING-ALG');
    expect(alg).toContain('RS-SIGNING-ALG: expected signing\\_alg to be one of "HS256", "RS256", "RS512", "PS256"; received "ES256"');
    expect(alg).toMatch(/`GET http:\/\/127\.0\.0\.1:\d+\/api\/v2\/resource-servers\/\S+` → 200/);
    expect(alg).toContain('Reproduce (set `TOKEN` first: a bearer token of the same client; the report masks credentials):');
    expect(alg).toMatch(/```sh\ncurl -i '\S+\/resource-servers\/\S+' -H 'accept: application\/json' -H "authorization: Bearer \$TOKEN"\n```/);
    const length = markdownSection(md, 'SES-METADATA-VALUE-LENGTH');
    expect(length).toContain('counterexample: `[{"why":"a value of 256 characters"');
    expect(length).toMatch(/```sh\ncurl -i -X 'PATCH' .*--data-raw '\{"session_metadata"/);
    expect(md).not.toMatch(/Bearer eyJ|Object\.is/);
  });

  describe.skipIf(!findChromium())('report.html in headless Chromium', () => {
    let browser: Browser;
    // biome-ignore lint/suspicious/noDuplicateTestHooks: this hook is in describe.skipIf(…)'s block, which the rule does not see as one
    afterAll(() => browser?.close());

    it('shows expected/received, the exchange, the counterexample and the curl command of each failing requirement, with no console error', async () => {
      browser = await chromium.launch({ executablePath: findChromium(), args: CHROMIUM_ARGS });
      const page = await browser.newPage();
      const errors: string[] = [];
      page.on('console', (message) => {
        if (message.type() === 'error') errors.push(message.text());
      });
      page.on('pageerror', (error) => errors.push(error.message));
      await page.goto(pathToFileURL(join(reportDir, 'report.html')).href, { waitUntil: 'load' });
      expect(errors).toEqual([]);

      const alg = page.locator('#req-RS-SIGNING-ALG');
      const curl = (await alg.locator('pre.curl').textContent())!;
      expect(curl).toMatch(/^curl -i '\S+\/resource-servers\/\S+' -H 'accept: application\/json' -H "authorization: Bearer \$TOKEN"$/);
      expect(await alg.locator('pre.curl').isVisible()).toBe(true);
      const evidence = alg.locator('details.evidence').first();
      await evidence.locator('summary').first().click();
      expect(await evidence.locator('pre.message').first().textContent()).toBe(
        'RS-SIGNING-ALG: expected signing_alg to be one of "HS256", "RS256", "RS512", "PS256"; received "ES256"',
      );
      expect(await evidence.locator('.exchange pre').first().textContent()).toMatch(/^GET \S+\/resource-servers\/\S+\n.*authorization: Bearer \[REDACTED\]/s);

      const length = page.locator('#req-SES-METADATA-VALUE-LENGTH');
      expect(await length.locator('pre.curl').textContent()).toMatch(/^curl -i -X 'PATCH' .*--data-raw '\{"session_metadata"/);
      const test = length.locator('details.evidence', { hasText: 'a value of 256 characters' }).first();
      await test.locator('summary').first().click();
      expect(await test.locator('pre.message').textContent()).toMatch(
        /^SES-METADATA-VALUE-LENGTH: expected session_metadata\.\S+ must NOT have more than 255 characters; received "a+/,
      );
      expect(await test.locator('h4', { hasText: 'Counterexample' }).isVisible()).toBe(true);
      expect(await page.content()).not.toMatch(/Bearer eyJ/);
    }, 60_000);
  });
});

describe('the seed replays the generated inputs', () => {
  /** The failing property tests of a run: name → counterexample and fast-check's path. */
  const failures = (report: Report) =>
    Object.fromEntries(
      report.tests.filter((t) => t.status !== 'pass' && t.status !== 'skip').map((t) => [t.name, t.message!.slice(t.message!.indexOf('counterexample: '))]),
    );
  const args = (reportDir: string) => [
    '--fault',
    'server-error-on-non-ascii-id',
    '--requirement',
    'GEN-NO-SERVER-ERROR',
    '--property-runs',
    '5',
    '--report-dir',
    reportDir,
  ];

  it('a run given no seed prints and records a new one; TMI_SEED set to it generates the same inputs and the same counterexamples', async () => {
    const first = await run(args(join(dir, 'seed-1')));
    const printed = /^seed (\d+) \(tmi-conform run --seed \d+ generates the same inputs again\)$/m.exec(first.stdout)?.[1];
    expect(printed, first.stdout).toBeDefined();
    const a = readReport(join(dir, 'seed-1'));
    expect(a.sources[0]!.seed).toBe(Number(printed));
    // GEN-NO-SERVER-ERROR is a `should`: its failed tests are warnings, on the console as in the report.
    const warned = [...first.stdout.matchAll(/^ {2}[✓✗⚠] \S+\s+\d+ passed · (\d+) failed · (\d+) warned/gm)];
    expect(warned.map((m) => Number(m[1])).reduce((x, y) => x + y, 0)).toBe(0);
    expect(warned.map((m) => Number(m[2])).reduce((x, y) => x + y, 0)).toBe(a.tests.filter((t) => t.status === 'warn').length);
    expect(first.stdout).toMatch(/^ {2}⚠ delete-token-exchange-profile\s+\d+ passed · 0 failed · 1 warned/m);
    const again = await run(args(join(dir, 'seed-2')), { TMI_SEED: printed! });
    const b = readReport(join(dir, 'seed-2'));
    expect(b.sources[0]!.seed).toBe(Number(printed));
    // The id properties generate their ids from the seed: the same failures, counterexamples and traffic.
    expect(Object.keys(failures(a)).length, first.stdout).toBeGreaterThan(0);
    expect(failures(b), again.stdout).toEqual(failures(a));
    expect(b.traffic!.byOperation).toEqual(a.traffic!.byOperation);
    expect(b.traffic!.exchanges).toBe(a.traffic!.exchanges);
  }, 180_000);
});
