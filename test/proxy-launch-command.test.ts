// `tmi-conform proxy … -- CMD ARGS…` as CI runs it: CMD starts once the proxy listens, finds
// the proxy in TMI_PROXY_URL, gets SIGINT/SIGTERM passed on, and when it ends the proxy stops
// and writes everything. The exit code is CMD's when it failed, else the verdict; one line on
// stderr says which decided. A CMD that cannot be run is refused before the proxy starts.
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { rootCertificates } from 'node:tls';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { help as proxyHelp } from '../cli/proxy.ts';
import type { RunningReference } from '../reference/index.ts';
import type { Report } from '../reports/model.ts';
import { startConformingAndFaulty } from './helpers/reference.ts';

const BIN = fileURLToPath(new URL('../bin/tmi-conform.js', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'tmi-proxy-command-'));

/**
 * The command run through the proxy: one authenticated GET of a resource server through
 * TMI_PROXY_URL, what it saw written to TEST_OUT, then exit TEST_EXIT; or, with TEST_WAIT,
 * waiting to be signalled (exit 42 on SIGTERM with TEST_HANDLE set, else killed by it).
 */
const COMMAND = join(dir, 'command.mjs');
writeFileSync(
  COMMAND,
  `import { writeFileSync } from 'node:fs';
const env = process.env;
if (env.TEST_HANDLE) process.on('SIGTERM', () => process.exit(42));
const response = await fetch(env.TMI_PROXY_URL + '/resource-servers/' + env.TEST_RS, { headers: { authorization: 'Bearer ' + env.TEST_TOKEN } });
await response.text();
writeFileSync(env.TEST_OUT, JSON.stringify({ status: response.status, url: env.TMI_PROXY_URL, origin: env.TMI_PROXY_ORIGIN, ca: env.NODE_EXTRA_CA_CERTS ?? null, sslCertFile: env.SSL_CERT_FILE ?? null, requestsCaBundle: env.REQUESTS_CA_BUNDLE ?? null, args: process.argv.slice(2) }));
if (env.TEST_WAIT) setInterval(() => {}, 1000);
else process.exit(Number(env.TEST_EXIT ?? 0));
`,
);

interface Ended {
  code: number | null;
  stdout: string;
  stderr: string;
}

let ref: RunningReference;
let faulty: RunningReference;
let token: string;
let faultyToken: string;

beforeAll(async () => {
  ({ ref, faulty, token, faultyToken } = await startConformingAndFaulty());
});

afterAll(async () => {
  await Promise.all([ref?.close(), faulty?.close()]);
  rmSync(dir, { recursive: true, force: true });
});

let runs = 0;
const TRUST_VARIABLES = ['NODE_EXTRA_CA_CERTS', 'SSL_CERT_FILE', 'REQUESTS_CA_BUNDLE', 'CURL_CA_BUNDLE'];

/** Runs `tmi-conform proxy --target … -- CMD…`; `onOutput` sees the command's report once written. */
function proxyWith(options: {
  target?: string;
  extra?: string[];
  command: string[];
  env?: Record<string, string>;
  keepTrustVariables?: boolean;
  whileRunning?: (child: ReturnType<typeof spawn>, out: string) => Promise<void>;
}) {
  const name = `run-${++runs}`;
  const out = join(dir, `${name}.json`);
  const harPath = join(dir, `${name}.har`);
  const reportDir = join(dir, `${name}-reports`);
  const target = options.target ?? ref.origin;
  const useFaulty = target.startsWith(faulty.origin);
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    GITHUB_STEP_SUMMARY: '',
    TEST_OUT: out,
    TEST_TOKEN: useFaulty ? faultyToken : token,
    TEST_RS: (useFaulty ? faulty : ref).fixtures.resource_servers[0]!,
    ...options.env,
  };
  // The trust variables as the test sets them, unless the machine's own are kept on purpose.
  if (!options.keepTrustVariables) for (const name of TRUST_VARIABLES) if (!options.env?.[name]) delete env[name];
  const child = spawn(
    process.execPath,
    [
      BIN,
      'proxy',
      '--target',
      target,
      '--listen',
      '127.0.0.1:0',
      '--record',
      harPath,
      '--report-dir',
      reportDir,
      '--status-interval',
      '0',
      ...(options.extra ?? []),
      '--',
      ...options.command,
    ],
    {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const ended = new Promise<Ended>((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
  const during = options.whileRunning?.(child, out);
  return {
    out,
    harPath,
    reportDir,
    ended: during ? during.then(() => ended) : ended,
    seen: () =>
      JSON.parse(readFileSync(out, 'utf8')) as {
        status: number;
        url: string;
        origin: string;
        ca: string | null;
        sslCertFile: string | null;
        requestsCaBundle: string | null;
        args: string[];
      },
  };
}

function onPath(name: string): boolean {
  return (process.env['PATH'] ?? '').split(delimiter).some((folder) => folder !== '' && existsSync(join(folder, name)));
}

async function fileAppears(path: string): Promise<void> {
  while (!existsSync(path)) await new Promise((resolve) => setTimeout(resolve, 20));
}

/** The one line that says which decided the exit code. */
const decisionLines = (stderr: string) => stderr.split('\n').filter((line) => /^tmi-conform proxy: exit \d+: /.test(line));

describe('proxy -- CMD: exit codes', () => {
  it("CMD's non-zero code wins; the proxy still stops cleanly and writes the HAR and the reports", async () => {
    const run = proxyWith({ command: [process.execPath, COMMAND], env: { TEST_EXIT: '3' } });
    const { code, stdout, stderr } = await run.ended;
    expect(code).toBe(3);
    expect(stdout.split('\n')[0]).toMatch(/^listening on http:\/\/127\.0\.0\.1:\d+$/);
    expect(decisionLines(stderr)).toEqual([
      expect.stringMatching(/exit 3: .*node exited with 3, which decides \(the traffic is conforming under --fail-on must\)$/),
    ]);
    expect(run.seen().status).toBe(200);
    const har = JSON.parse(readFileSync(run.harPath, 'utf8')) as { log: { entries: unknown[] } };
    expect(har.log.entries).toHaveLength(1);
    expect(existsSync(join(run.reportDir, 'report.json'))).toBe(true);
  });

  it('CMD succeeds and the traffic conforms: exit 0, the verdict decided', async () => {
    const run = proxyWith({ command: [process.execPath, COMMAND] });
    const { code, stderr } = await run.ended;
    expect(code).toBe(0);
    expect(decisionLines(stderr)).toEqual([
      expect.stringMatching(/exit 0: .*node exited with 0; the traffic is conforming under --fail-on must, which decides$/),
    ]);
  });

  it('CMD succeeds but the traffic does not conform: exit 1, the verdict decided', async () => {
    const run = proxyWith({ target: faulty.origin, command: [process.execPath, COMMAND] });
    const { code, stderr } = await run.ended;
    expect(code).toBe(1);
    expect(decisionLines(stderr)).toEqual([
      expect.stringMatching(/exit 1: .*node exited with 0; the traffic is NOT conforming under --fail-on must, which decides$/),
    ]);
    const report = JSON.parse(readFileSync(join(run.reportDir, 'report.json'), 'utf8')) as Report;
    expect(report.passed).toBe(false);
  });
});

describe('proxy -- CMD: signals', () => {
  it('SIGTERM to the proxy is passed on to CMD; CMD exits 42, which becomes the exit code', async () => {
    const run = proxyWith({
      command: [process.execPath, COMMAND],
      env: { TEST_WAIT: '1', TEST_HANDLE: '1' },
      whileRunning: async (child, out) => {
        await fileAppears(out);
        child.kill('SIGTERM');
      },
    });
    const { code, stderr } = await run.ended;
    expect(code).toBe(42);
    expect(decisionLines(stderr)).toEqual([expect.stringMatching(/exit 42: .*node exited with 42, which decides/)]);
    expect(JSON.parse(readFileSync(run.harPath, 'utf8')).log.entries).toHaveLength(1);
  });

  it('a CMD ended by the signal passed on gives 128 + its number, as a shell reports it', async () => {
    const run = proxyWith({
      command: [process.execPath, COMMAND],
      env: { TEST_WAIT: '1' },
      whileRunning: async (child, out) => {
        await fileAppears(out);
        child.kill('SIGINT');
      },
    });
    const { code, stderr } = await run.ended;
    expect(code).toBe(130);
    expect(decisionLines(stderr)).toEqual([expect.stringMatching(/exit 130: .*node was ended by SIGINT, which decides/)]);
    expect(existsSync(join(run.reportDir, 'report.json'))).toBe(true);
  });
});

describe('proxy -- CMD: its environment and arguments', () => {
  it("TMI_PROXY_URL is the API base URL through the proxy, TMI_PROXY_ORIGIN the proxy itself; no CA variable without --tls; --help after -- is CMD's", async () => {
    const run = proxyWith({ command: [process.execPath, COMMAND, '--help', 'x y'] });
    const { code, stdout } = await run.ended;
    expect(code).toBe(0);
    const origin = /^listening on (\S+)/.exec(stdout)![1]!;
    expect(run.seen()).toEqual({ status: 200, url: `${origin}/api/v2`, origin, ca: null, sslCertFile: null, requestsCaBundle: null, args: ['--help', 'x y'] });
  });

  it('with --tls: an https TMI_PROXY_URL the command trusts through NODE_EXTRA_CA_CERTS; SSL_CERT_FILE gets the system roots plus the CA; one already set keeps its roots, with the CA added', async () => {
    const tlsDir = join(dir, 'tls');
    const corporate = join(dir, 'corporate.pem');
    writeFileSync(corporate, `${rootCertificates[0]}\n`);
    const run = proxyWith({ extra: ['--tls', '--tls-dir', tlsDir], command: [process.execPath, COMMAND], env: { REQUESTS_CA_BUNDLE: corporate } });
    const { code, stdout } = await run.ended;
    expect(code).toBe(0);
    const origin = /^listening on (\S+)/.exec(stdout)![1]!;
    expect(origin).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    const caPath = join(tlsDir, 'ca.pem');
    const ca = readFileSync(caPath, 'utf8').trimEnd();
    expect(run.seen()).toMatchObject({
      status: 200,
      url: `${origin}/api/v2`,
      ca: caPath,
      sslCertFile: join(tlsDir, 'ca-bundle.pem'),
      requestsCaBundle: join(tlsDir, 'requests-ca-bundle-with-ca.pem'),
    });
    const bundle = readFileSync(join(tlsDir, 'ca-bundle.pem'), 'utf8');
    expect(bundle.trimEnd().endsWith(ca)).toBe(true);
    expect(bundle.match(/-----BEGIN CERTIFICATE-----/g)!.length).toBeGreaterThan(10);
    expect(readFileSync(join(tlsDir, 'requests-ca-bundle-with-ca.pem'), 'utf8')).toBe(`${rootCertificates[0]}\n${ca}\n`);
  });

  it.skipIf(!onPath('curl'))(
    "with --tls: curl in CMD verifies the proxy with the variables it was given (the machine's own trust variables kept)",
    async () => {
      const script = 'curl -sS -o /dev/null -w "%{http_code}" -H "authorization: Bearer $TEST_TOKEN" "$TMI_PROXY_URL/resource-servers/$TEST_RS" > "$TEST_OUT"';
      const run = proxyWith({ extra: ['--tls', '--tls-dir', join(dir, 'tls')], command: ['sh', '-c', script], keepTrustVariables: true });
      const { code, stderr } = await run.ended;
      expect(stderr).not.toContain('broke off the TLS handshake');
      expect(readFileSync(run.out, 'utf8')).toBe('200');
      expect(code).toBe(0);
    },
  );

  it('a --target that already ends in /api/v2 makes the proxy root the API base URL', async () => {
    const run = proxyWith({ target: `${ref.origin}/api/v2`, command: [process.execPath, COMMAND] });
    const { code, stdout } = await run.ended;
    expect(code).toBe(0);
    const origin = /^listening on (\S+)/.exec(stdout)![1]!;
    expect(run.seen()).toMatchObject({ status: 200, url: origin, origin });
  });
});

describe('tmi-conform proxy --help', () => {
  it('explains -- CMD, its environment and exit codes, --append and --overwrite, and the stop when the launcher goes away', () => {
    for (const text of [
      '[-- CMD [ARGS...]]',
      '[--append | --overwrite]',
      '--append ',
      '--overwrite ',
      'TMI_PROXY_URL',
      'TMI_PROXY_ORIGIN',
      'NODE_EXTRA_CA_CERTS',
      'SSL_CERT_FILE',
      'REQUESTS_CA_BUNDLE',
      'CMD not found: 127',
      'the process that launched it\ngoes away',
    ]) {
      expect(proxyHelp).toContain(text);
    }
  });
});

describe('proxy -- CMD: a command that cannot run', () => {
  it('not found: exit 127 and not executable: exit 126, one line each, before the proxy starts (no journal, nothing on stdout)', async () => {
    const plain = join(dir, 'not-executable.sh');
    writeFileSync(plain, '#!/bin/sh\nexit 0\n');
    chmodSync(plain, 0o644);
    for (const [command, expected, message] of [
      ['no-such-command-tmi', 127, /^tmi-conform: proxy: cannot run "no-such-command-tmi": command not found on PATH\n$/],
      [plain, 126, /^tmi-conform: proxy: cannot run ".*not-executable\.sh": .* is not executable\n$/],
      [join(dir, 'missing', 'cmd'), 127, /^tmi-conform: proxy: cannot run ".*": no such file\n$/],
    ] as const) {
      const run = proxyWith({ command: [command] });
      const { code, stdout, stderr } = await run.ended;
      expect(code).toBe(expected);
      expect(stderr).toMatch(message);
      expect(stdout).toBe('');
      expect(existsSync(`${run.harPath}.jsonl`)).toBe(false);
    }
  });

  it('"--" without a command: exit 2', async () => {
    const run = proxyWith({ command: [] });
    const { code, stderr } = await run.ended;
    expect(code).toBe(2);
    expect(stderr).toBe('tmi-conform: proxy: "--" must be followed by the command to run through the proxy (e.g. -- npm test)\n');
  });
});
