// `tmi-conform proxy` as a user runs it: one clear line and exit 2 for every usage error, the
// "listening on" line once ready, a status line while traffic flows, and on SIGTERM or SIGINT
// the recording and the reports written and exit 0.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startReference, type RunningReference } from '../reference/index.ts';
import type { Report } from '../reports/model.ts';
import { startCli, type CliChild } from './helpers/cli.ts';
import { readJournal } from './helpers/proxy.ts';
import { tokenFor } from './helpers/reference.ts';

const dir = mkdtempSync(join(tmpdir(), 'tmi-proxy-cli-'));

/** `tmi-conform proxy ...args` in a child process. */
const start = (args: string[]): CliChild => startCli(['proxy', ...args]);

describe('tmi-conform proxy: usage errors', () => {
  let busy: Server;
  let busyPort: number;

  beforeAll(async () => {
    busy = createServer();
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
    busyPort = (busy.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await new Promise((resolve) => busy.close(resolve));
  });

  it('exit 2 with one line on stderr, no stack trace, nothing on stdout', async () => {
    const cases: Array<[string[], RegExp]> = [
      [[], /--target URL is required/],
      [['--target', 'not a url'], /--target expects an http\(s\) URL/],
      [['--target', 'ftp://example.com'], /--target must be an http or https URL/],
      [['--target', 'http://user:pw@example.com'], /must not carry credentials/],
      [['--target', 'http://127.0.0.1:1', '--bogus'], /unknown option --bogus/],
      [['--target', 'http://127.0.0.1:1', '--listen', 'nowhere'], /--listen expects HOST:PORT/],
      [['--target', 'http://127.0.0.1:1', '--max-body-bytes', 'lots'], /--max-body-bytes expects a whole number/],
      [['--target', 'http://127.0.0.1:1', '--upstream-timeout', '0'], /--upstream-timeout expects a number of seconds above 0/],
      [['--target', 'http://127.0.0.1:1', '--fail-on', 'may'], /--fail-on expects "must" or "should"/],
      [['--target', 'http://127.0.0.1:1', '--listen', `127.0.0.1:${busyPort}`, '--report-dir', join(dir, 'busy')], /the address is in use/],
    ];
    const results = await Promise.all(cases.map(([args]) => start(args).exited));
    results.forEach(({ code, stdout, stderr }, i) => {
      const [args, message] = cases[i]!;
      expect(code, args.join(' ')).toBe(2);
      expect(stdout, args.join(' ')).toBe('');
      expect(stderr.trimEnd().split('\n'), args.join(' ')).toHaveLength(1);
      expect(stderr, args.join(' ')).toMatch(/^tmi-conform: /);
      expect(stderr, args.join(' ')).toMatch(message);
    });
  });

  it('--help explains the flags and exits 0', async () => {
    const { code, stdout } = await start(['--help']).exited;
    expect(code).toBe(0);
    for (const flag of ['--target', '--listen', '--record', '--journal', '--report-dir', '--fail-on', '--max-body-bytes', '--upstream-timeout'])
      expect(stdout).toContain(flag);
  });
});

describe('tmi-conform proxy: a session', () => {
  let ref: RunningReference;

  beforeAll(async () => {
    ref = await startReference();
  });
  afterAll(async () => {
    await ref?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('prints where it listens, a status line while traffic flows, and on SIGTERM writes HAR, journal and reports, exit 0', async () => {
    const harPath = join(dir, 'session.har');
    const reportDir = join(dir, 'session-reports');
    const child = start(['--target', ref.origin, '--listen', '127.0.0.1:0', '--record', harPath, '--report-dir', reportDir, '--status-interval', '0.1']);
    const line = await child.firstLine;
    expect(line).toMatch(/^listening on http:\/\/127\.0\.0\.1:\d+$/);
    const origin = line.slice('listening on '.length);
    const token = await tokenFor(ref, 'full');
    for (const id of ref.fixtures.resource_servers) {
      const response = await fetch(`${origin}/api/v2/resource-servers/${id}`, { headers: { authorization: `Bearer ${token}` } });
      expect(response.status).toBe(200);
    }
    // An operation the document does not detail: judged by the rules of every operation, and named.
    const other = await fetch(`${origin}/api/v2/users/auth0%7C1`, { headers: { authorization: `Bearer ${token}` } });
    await other.arrayBuffer();
    await child.stderrContains('4 exchanges; findings: 0 must, 0 should, 0 client; operations: getResourceServer 3, other operations 1');
    child.kill('SIGTERM');
    const { code, stdout, stderr } = await child.exited;
    expect(code).toBe(0);
    expect(stderr).not.toMatch(/\n\s+at /);
    expect(stdout).toContain('verdict: conforming');
    expect(stdout).toMatch(
      /operations: 1 of the document's operations, 1 other\n {2}GET \/resource-servers\/\{id\} +3 exchange\(s\): 200 × 3\n {2}GET \/users\/\{id\} +1 exchange\(s\): \d{3} × 1\n/,
    );
    expect(readJournal(`${harPath}.jsonl`)).toHaveLength(4);
    const har = JSON.parse(readFileSync(harPath, 'utf8')) as { log: { entries: unknown[] } };
    expect(har.log.entries).toHaveLength(4);
    const report = JSON.parse(readFileSync(join(reportDir, 'report.json'), 'utf8')) as Report;
    expect(report).toMatchObject({ kind: 'proxy', passed: true, traffic: { exchanges: 4 } });
  });

  it('waits for an exchange in flight at the first signal; a second signal cuts it short, still recorded, exit 0', async () => {
    // A target that takes requests and never answers.
    let reached!: () => void;
    const requestReached = new Promise<void>((resolve) => (reached = resolve));
    // (The proxy's start asks it for the tenant's discovery document and JWKS too; those are not the request awaited.)
    const silent = createServer((req, res) => (req.url?.startsWith('/.well-known/') ? res.writeHead(404).end() : reached()));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const reportDir = join(dir, 'cut-reports');
      const child = start([
        '--target',
        `http://127.0.0.1:${(silent.address() as AddressInfo).port}`,
        '--listen',
        '127.0.0.1:0',
        '--report-dir',
        reportDir,
        '--upstream-timeout',
        '600',
        '--status-interval',
        '0',
      ]);
      const origin = (await child.firstLine).slice('listening on '.length);
      const answered = fetch(`${origin}/api/v2/resource-servers/slow`).then(
        (r) => r.status,
        () => 'connection closed',
      );
      await requestReached;
      child.kill('SIGTERM');
      // It says how to cut them short, not that it does.
      await child.stderrContains('stopping: finishing the exchanges in flight (Ctrl-C or SIGTERM again cuts them short)');
      child.kill('SIGTERM');
      const { code, stdout } = await child.exited;
      expect(code).toBe(0);
      expect(await answered).toBe('connection closed');
      expect(stdout).toContain('1 exchanges: 1 judged');
      expect(readJournal(join(reportDir, 'traffic.jsonl'))[0]!._error).toBe('the proxy stopped before the exchange finished');
    } finally {
      silent.closeAllConnections();
      await new Promise((resolve) => silent.close(resolve));
    }
  });

  it('without --record: the journal goes to the report directory; SIGINT stops it the same way', async () => {
    const reportDir = join(dir, 'default-reports');
    const child = start(['--target', ref.origin, '--listen', '127.0.0.1:0', '--report-dir', reportDir, '--status-interval', '0']);
    const origin = (await child.firstLine).slice('listening on '.length);
    const response = await fetch(`${origin}/api/v2/resource-servers/x`);
    expect(response.status).toBe(401);
    child.kill('SIGINT');
    const { code, stdout } = await child.exited;
    expect(code).toBe(0);
    expect(stdout).toContain(`journal: ${join(reportDir, 'traffic.jsonl')} (1 entry)`);
    expect(readJournal(join(reportDir, 'traffic.jsonl'))[0]!.response!.status).toBe(401);
    expect(existsSync(join(reportDir, 'report.html'))).toBe(true);
  });
});
