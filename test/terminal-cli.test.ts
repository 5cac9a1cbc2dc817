// run, validate and proxy on the terminal, as a user runs them: colour only where it is wanted
// (never in a pipe unless FORCE_COLOR or --color asks), --quiet, --json events that all parse,
// and progress lines while a paced run goes quiet.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deleteExchange, errorExchange, getExchange } from '../fixtures/exchanges.ts';
import { startStubTarget } from '../fixtures/stub-target.ts';
import type { Exchange } from '../rules/types.ts';
import { runCli, startCli } from './helpers/cli.ts';

const dir = mkdtempSync(join(tmpdir(), 'tmi-terminal-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const ESCAPE = /\x1b\[/;
/** A user's shell that says nothing of colour: whatever the test runner's environment says. */
const NO_SAY = { NO_COLOR: '', FORCE_COLOR: '' };

function writeHar(name: string, exchanges: Exchange[]): string {
  const headers = (h: Record<string, string>) => Object.entries(h).map(([n, value]) => ({ name: n, value }));
  const entries = exchanges.map((e) => ({
    startedDateTime: e.startedAt,
    time: 1,
    request: { method: e.request.method, url: e.request.url, httpVersion: 'HTTP/1.1', headers: headers(e.request.headers) },
    response: {
      status: e.response!.status,
      httpVersion: 'HTTP/1.1',
      headers: headers(e.response!.headers),
      content: { size: e.response!.body?.text.length ?? 0, mimeType: 'application/json', ...(e.response!.body ? { text: e.response!.body.text } : {}) },
    },
  }));
  const path = join(dir, name);
  writeFileSync(path, JSON.stringify({ log: { version: '1.2', creator: { name: 'test', version: '1' }, entries } }));
  return path;
}

/** Every line of stdout, parsed: throws on one that is not JSON. */
const events = (stdout: string): Array<Record<string, unknown>> =>
  stdout
    .trimEnd()
    .split('\n')
    .map((line) => JSON.parse(line) as Record<string, unknown>);

const VERDICT_KEYS = ['event', 'passed', 'failOn', 'requirements', 'reports'];

describe('validate on the terminal', () => {
  let har: string;
  beforeAll(() => {
    // A warning (418 is not a documented status) and a pass: counts of every kind to colour.
    har = writeHar('mixed.har', [getExchange(), errorExchange(deleteExchange(), 418, { message: 'teapot' })]);
  });
  const validate = (args: string[], env: Record<string, string>) => runCli(['validate', har, '--report-dir', join(dir, 'validate'), ...args], env);

  it('piped, and with NO_COLOR=1: no escape code; FORCE_COLOR=1: the verdict coloured', async () => {
    const [piped, noColor, forced] = await Promise.all([
      validate([], NO_SAY),
      validate([], { ...NO_SAY, NO_COLOR: '1' }),
      validate([], { ...NO_SAY, FORCE_COLOR: '1' }),
    ]);
    for (const { code, stdout } of [piped, noColor, forced]) {
      expect(code).toBe(0);
      expect(stdout).toContain('verdict: conforming');
    }
    expect(piped.stdout).not.toMatch(ESCAPE);
    expect(noColor.stdout).not.toMatch(ESCAPE);
    expect(forced.stdout).toMatch(/\x1b\[32m[^\n]*verdict: conforming/);
    expect(forced.stdout).toMatch(/\x1b\[33m1 warn/);
  });

  it('--no-color is accepted and wins over FORCE_COLOR; --color over NO_COLOR; both at once is a usage error', async () => {
    const [noColor, color, both] = await Promise.all([
      validate(['--no-color'], { ...NO_SAY, FORCE_COLOR: '1' }),
      validate(['--color'], { ...NO_SAY, NO_COLOR: '1' }),
      validate(['--color', '--no-color'], NO_SAY),
    ]);
    expect(noColor.code).toBe(0);
    expect(noColor.stdout).toContain('verdict: conforming');
    expect(noColor.stdout).not.toMatch(ESCAPE);
    expect(color.stdout).toMatch(ESCAPE);
    expect(both.code).toBe(2);
    expect(both.stderr).toBe('tmi-conform: validate: --color and --no-color exclude each other\n');
  });

  it('--quiet: only the verdict and the reports lines', async () => {
    const { code, stdout, stderr } = await validate(['--quiet'], NO_SAY);
    expect(code).toBe(0);
    expect(stderr).toBe('');
    const lines = stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toBe('verdict: conforming');
    expect(lines[1]).toMatch(/^reports: .*report\.json/);
  });

  it('--json: every stdout line is an event; a finding per warned requirement, then the verdict', async () => {
    const { code, stdout, stderr } = await validate(['--json'], { ...NO_SAY, FORCE_COLOR: '1' });
    expect(code).toBe(0);
    expect(stdout).not.toMatch(ESCAPE);
    const all = events(stdout);
    expect(all.map((e) => e['event'])).toEqual(['finding', 'verdict']);
    expect(all[0]).toMatchObject({ event: 'finding', requirement: 'GEN-STATUS-DOCUMENTED', level: 'should', status: 'warn', exchanges: 1 });
    expect(all[0]!['message']).toMatch(/received 418/);
    expect(Object.keys(all[1]!)).toEqual(expect.arrayContaining(VERDICT_KEYS));
    expect(all[1]).toMatchObject({ passed: true, failOn: 'must', requirements: { fail: 0, warn: 1 }, exchanges: 2, judged: 2 });
    expect((all[1]!['reports'] as string[]).some((file) => file.endsWith('report.json'))).toBe(true);
    // The human lines went to stderr.
    expect(stderr).toContain('verdict: conforming');
  });
});

describe('run on the terminal', () => {
  // Against the embedded reference, one requirement's tests: a few seconds.
  const run = (args: string[], env: Record<string, string>) =>
    runCli(['run', '--requirement', 'AUTH-INVALID-SIGNATURE-401', '--property-runs', '2', ...args], env);

  it('FORCE_COLOR=1 colours the suite marks and the verdict; --quiet prints the verdict and reports lines only', async () => {
    const [forced, quiet] = await Promise.all([
      run(['--report-dir', join(dir, 'run-colour')], { ...NO_SAY, FORCE_COLOR: '1' }),
      run(['--quiet', '--report-dir', join(dir, 'run-quiet')], NO_SAY),
    ]);
    expect(forced.code).toBe(0);
    expect(forced.stdout).toMatch(/\x1b\[32m✓\x1b\[39m token-attacks/);
    expect(forced.stdout).toMatch(/\x1b\[32m[^\n]*verdict: conforming/);
    expect(quiet.code).toBe(0);
    const lines = quiet.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^verdict: conforming \(fail-on must\) in [\d.]+ s/);
    expect(lines[1]).toMatch(/^reports: .*report\.json/);
  }, 90_000);

  it('--json: a test event per test as it ends, then the verdict; nothing else on stdout', async () => {
    const { code, stdout, stderr } = await run(['--json', '--report-dir', join(dir, 'run-json')], NO_SAY);
    expect(code).toBe(0);
    const all = events(stdout);
    const tests = all.filter((e) => e['event'] === 'test');
    expect(all.at(-1)!['event']).toBe('verdict');
    expect(all.every((e) => ['test', 'progress', 'finding', 'verdict'].includes(e['event'] as string))).toBe(true);
    const passed = tests.filter((e) => e['status'] === 'pass');
    expect(passed.length).toBeGreaterThan(0);
    for (const test of passed) {
      expect(test).toMatchObject({ suite: expect.any(String), name: expect.any(String), requirements: expect.arrayContaining(['AUTH-INVALID-SIGNATURE-401']) });
    }
    const verdict = all.at(-1)!;
    expect(verdict).toMatchObject({ passed: true, interrupted: false, failOn: 'must', tests: { pass: passed.length, fail: 0 } });
    expect((verdict['tests'] as Record<string, number>)['skip']).toBe(tests.filter((e) => e['status'] === 'skip').length);
    expect(stderr).toContain('verdict: conforming');
  }, 90_000);

  it('a paced run says where it stands while a suite file goes quiet', async () => {
    // 5 requests a second: the token attacks on the other two operations take 15 to 20 s.
    const { code, stdout } = await runCli(
      ['run', '--rate-limit', '5/1', '--requirement', 'AUTH-CREDENTIAL-REQUIRED-OTHER', '--report-dir', join(dir, 'run-paced')],
      NO_SAY,
    );
    expect(code).toBe(0);
    const progress = stdout.split('\n').filter((line) => line.startsWith('  … token-attacks: '));
    expect(progress.length).toBeGreaterThan(0);
    for (const line of progress)
      expect(line).toMatch(/^ {2}… token-attacks: \d+ of \d+ tests finished; [1-9]\d* requests sent; pacer: 5 per 1\.\d s(, waiting \d+\.\d s)?$/);
  }, 120_000);
});

describe('proxy on the terminal', () => {
  let target: Awaited<ReturnType<typeof startStubTarget>>;
  beforeAll(async () => {
    target = await startStubTarget();
  });
  afterAll(() => target.close());

  it('--json: the listening event first, the verdict at stop, nothing but JSON on stdout', async () => {
    const child = startCli(['proxy', '--target', target.origin, '--listen', '127.0.0.1:0', '--report-dir', join(dir, 'proxy-json'), '--json']);
    const listening = JSON.parse(await child.firstLine) as { event: string; url: string };
    expect(listening.event).toBe('listening');
    await fetch(`${listening.url}/api/v2/resource-servers/rs-1`);
    child.kill('SIGINT');
    const { code, stdout } = await child.exited;
    expect(code).toBe(0);
    const all = events(stdout);
    expect(all[0]).toEqual({ event: 'listening', url: listening.url });
    expect(all.at(-1)).toMatchObject({ event: 'verdict', exchanges: 1, failOn: 'must' });
    expect(Object.keys(all.at(-1)!)).toEqual(expect.arrayContaining(VERDICT_KEYS));
  });

  it('--quiet: the listening line, then the verdict and reports lines only', async () => {
    const child = startCli(['proxy', '--target', target.origin, '--listen', '127.0.0.1:0', '--report-dir', join(dir, 'proxy-quiet'), '--quiet']);
    expect(await child.firstLine).toMatch(/^listening on http:\/\/127\.0\.0\.1:\d+$/);
    child.kill('SIGINT');
    const { code, stdout } = await child.exited;
    expect(code).toBe(0);
    const lines = stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(3);
    expect(lines[1]).toMatch(/^verdict: /);
    expect(lines[2]).toMatch(/^reports: /);
  });
});
