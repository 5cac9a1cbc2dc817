// `tmi-conform proxy --tls` as a user runs it: the https:// ready line, the CA's path and how to
// trust it on stderr, curl --cacert sending two requests over one kept-alive connection, the
// CA kept for the next start, and one line with exit 2 for every unusable TLS input.
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run as runProxy } from '../cli/proxy.ts';
import { UsageError } from '../core/errors.ts';
import { startReference, type RunningReference } from '../reference/index.ts';
import { CA_KEY_FILE, LEAF_FILE, LEAF_KEY_FILE, localCertificates } from '../proxy/tls/local-ca.ts';
import { startCli } from './helpers/cli.ts';
import { readJournal } from './helpers/proxy.ts';
import { tokenFor } from './helpers/reference.ts';

const dir = mkdtempSync(join(tmpdir(), 'tmi-proxy-tls-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** curl GETs each URL in turn, reusing its connection; one line per transfer: status and new connections made. */
async function curl(caPath: string, token: string, urls: string[]): Promise<string> {
  const outputs = urls.flatMap((url) => ['-o', '/dev/null', url]);
  const { stdout } = await promisify(execFile)(
    'curl',
    ['--silent', '--show-error', '--cacert', caPath, '-H', `Authorization: Bearer ${token}`, '-w', '%{http_code} %{num_connects}\\n', ...outputs],
    { timeout: 20_000 },
  );
  return stdout;
}

describe('tmi-conform proxy --tls', () => {
  it('listens on https://, says how to trust its CA (made in .tmi-conform/tls/), curl --cacert keeps one connection for two requests; the next start keeps the CA', async () => {
    const ref = await startReference();
    try {
      await sessionsOverHttps(ref, await tokenFor(ref, 'full'));
    } finally {
      await ref.close();
    }
  });

  async function sessionsOverHttps(ref: RunningReference, token: string): Promise<void> {
    const caPath = join(dir, '.tmi-conform', 'tls', 'ca.pem');
    const first = startCli(['proxy', '--target', ref.origin, '--listen', '127.0.0.1:0', '--tls', '--report-dir', 'first', '--status-interval', '0'], {
      cwd: dir,
    });
    const line = await first.firstLine;
    expect(line).toMatch(/^listening on https:\/\/127\.0\.0\.1:\d+$/);
    const url = line.slice('listening on '.length);
    const [a, b] = ref.fixtures.resource_servers;
    expect(await curl(caPath, token, [`${url}/api/v2/resource-servers/${a}`, `${url}/api/v2/resource-servers/${b}`])).toBe('200 1\n200 0\n');
    first.kill('SIGTERM');
    const stopped = await first.exited;
    expect(stopped.code).toBe(0);
    expect(stopped.stderr).toContain('made a local CA');
    for (const hint of [`NODE_EXTRA_CA_CERTS=${caPath}`, `SSL_CERT_FILE=${caPath}`, `--cacert ${caPath}`, `REQUESTS_CA_BUNDLE=${caPath}`])
      expect(stopped.stderr).toContain(hint);
    expect(stopped.stdout).toContain('verdict: conforming');
    expect(readJournal(join(dir, 'first', 'traffic.jsonl')).map((e) => [e._conformance.operation, e.response!.status])).toEqual([
      ['getResourceServer', 200],
      ['getResourceServer', 200],
    ]);

    const ca = readFileSync(caPath, 'utf8');
    const second = startCli([
      'proxy',
      '--target',
      ref.origin,
      '--listen',
      '127.0.0.1:0',
      '--tls-dir',
      join(dir, '.tmi-conform', 'tls'),
      '--report-dir',
      join(dir, 'second'),
      '--status-interval',
      '0',
    ]);
    const secondUrl = (await second.firstLine).slice('listening on '.length);
    expect(await curl(caPath, token, [`${secondUrl}/api/v2/resource-servers/${a}`])).toBe('200 1\n');
    second.kill('SIGTERM');
    const again = await second.exited;
    expect(again.code).toBe(0);
    expect(again.stderr).not.toContain('made a');
    expect(again.stderr).toContain(`NODE_EXTRA_CA_CERTS=${caPath}`);
    expect(readFileSync(caPath, 'utf8')).toBe(ca);
  }

  it('--help lists the TLS options', async () => {
    const { code, stdout } = await startCli(['proxy', '--help']).exited;
    expect(code).toBe(0);
    for (const flag of ['--tls ', '--tls-dir DIR', '--tls-cert FILE', '--tls-key FILE', 'NODE_EXTRA_CA_CERTS', 'SSL_CERT_FILE', 'REQUESTS_CA_BUNDLE'])
      expect(stdout).toContain(flag);
  });

  describe('unusable TLS input', () => {
    const pair = join(dir, 'pair');
    const cert = join(pair, LEAF_FILE);
    const key = join(pair, LEAF_KEY_FILE);
    const missing = join(dir, 'missing.pem');
    const notADir = join(dir, 'not-a-dir');
    const target = ['--target', 'http://127.0.0.1:1', '--listen', '127.0.0.1:0'];
    let errors = 0;
    const reportDir = () => ['--report-dir', join(dir, 'errors', String(errors++))];

    beforeAll(async () => {
      await localCertificates(pair, '127.0.0.1');
      writeFileSync(notADir, '');
      mkdirSync(join(dir, 'errors'));
    });

    it('as the user sees it: exit 2, one line on stderr, nothing on stdout, before and after the flags are read', async () => {
      const cases: Array<[string[], string]> = [
        [['--tls-key', key], '--tls-key needs --tls-cert (the certificate of that key, a PEM file)'],
        [['--tls', '--tls-dir', notADir], `cannot use --tls-dir ${notADir}: not a directory`],
      ];
      const results = await Promise.all(cases.map(([args]) => startCli(['proxy', ...target, ...reportDir(), ...args]).exited));
      results.forEach(({ code, stdout, stderr }, i) => {
        const [args, message] = cases[i]!;
        expect(code, args.join(' ')).toBe(2);
        expect(stdout, args.join(' ')).toBe('');
        expect(stderr.trimEnd().split('\n'), args.join(' ')).toHaveLength(1);
        expect(stderr, args.join(' ')).toBe(`tmi-conform: proxy: ${message}\n`);
      });
    });

    it('each a usage error (exit 2) whose line names the flag and the file', async () => {
      const cases: Array<[string[], string]> = [
        [['--tls', '--tls-cert', cert], '--tls-cert needs --tls-key'],
        [['--tls-cert', missing, '--tls-key', key], `cannot read --tls-cert ${missing}: no such file`],
        [['--tls-cert', cert, '--tls-key', missing], `cannot read --tls-key ${missing}: no such file`],
        [
          ['--tls-cert', cert, '--tls-key', join(pair, CA_KEY_FILE)],
          `--tls-key ${join(pair, CA_KEY_FILE)} is not the key of the certificate in --tls-cert ${cert}`,
        ],
        [['--tls-cert', key, '--tls-key', key], `--tls-cert ${key} holds no PEM certificate`],
        [['--tls-cert', cert, '--tls-key', key, '--tls-dir', pair], '--tls-dir is where the proxy makes its own certificate'],
      ];
      for (const [args, message] of cases) {
        const error = await runProxy([...target, ...reportDir(), ...args], { stopped: new Promise(() => {}), out: () => {}, err: () => {} }).then(
          () => undefined,
          (thrown: unknown) => thrown,
        );
        expect(error, args.join(' ')).toBeInstanceOf(UsageError);
        expect((error as UsageError).exitCode, args.join(' ')).toBe(2);
        expect((error as UsageError).message, args.join(' ')).toContain(`proxy: ${message}`);
      }
    });
  });
});
