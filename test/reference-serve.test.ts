// `tmi-conform serve`: starts the reference alone, prints how to reach it, writes a config file
// that docs/architecture.md's config format describes, and stops cleanly on SIGTERM.
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run } from '../cli/serve.ts';
import { UsageError } from '../core/errors.ts';
import { FAULT_NAMES } from '../reference/index.ts';

const BIN = fileURLToPath(new URL('../bin/tmi-conform.js', import.meta.url));

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tmi-serve-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('tmi-conform serve (a child process)', () => {
  it('prints the base URL and demo credentials, writes a usable config, and exits 0 on SIGTERM', async () => {
    const configFile = join(dir, 'config.yaml');
    const child = spawn(process.execPath, [BIN, 'serve', '--listen', '127.0.0.1:0', '--config-out', configFile], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stderr.on('data', (c) => (stderr += c));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      const origin = await new Promise<string>((resolve, reject) => {
        child.stdout.on('data', (c) => {
          stdout += c;
          if (stdout.includes('Ctrl-C to stop')) resolve(/listening on (http:\/\/\S+)/.exec(stdout)![1]!);
        });
        child.on('exit', () => reject(new Error(`serve exited early: ${stderr}`)));
      });
      expect(stdout).toContain(`base_url   ${origin}/api/v2`);
      expect(stdout).toMatch(/full\s+client_id=ref_full_client\s+client_secret=\S{20,}/);

      const config = parse(await readFile(configFile, 'utf8')) as Record<string, any>;
      expect((await stat(configFile)).mode & 0o077).toBe(0); // it holds secrets: owner only
      expect(Object.keys(config).sort()).toEqual(['allow_destructive', 'audience', 'auth_url', 'base_url', 'credentials', 'fixtures', 'rate_limit_probe']);
      expect(config['base_url']).toBe(`${origin}/api/v2`);
      expect(stdout).toContain(config['credentials'].full.client_secret);

      // The config works as written: a token for the full client reads a fixture.
      const tokenResponse = await fetch(`${config['auth_url']}/oauth/token/`, {
        method: 'POST',
        body: new URLSearchParams({ grant_type: 'client_credentials', ...config['credentials'].full, audience: config['audience'] }),
      });
      const { access_token } = (await tokenResponse.json()) as { access_token: string };
      const read = await fetch(`${config['base_url']}/resource-servers/${config['fixtures'].resource_servers[0]}`, {
        headers: { authorization: `Bearer ${access_token}` },
      });
      expect(read.status).toBe(200);

      child.kill('SIGTERM');
      expect(await exited).toBe(0);
      expect(stderr).toBe('');
      await expect(fetch(`${origin}/.well-known/jwks.json`)).rejects.toThrow();
    } finally {
      child.kill('SIGKILL');
    }
  });
});

/** Runs the command in process; `ready` resolves with the origin once it has printed all. */
function serveInProcess(argv: string[]) {
  let output = '';
  let stop!: () => void;
  let ready!: (origin: string) => void;
  const stopped = new Promise<void>((resolve) => (stop = resolve));
  const origin = new Promise<string>((resolve) => (ready = resolve));
  const exit = run(argv, {
    stopped,
    out: (text) => {
      output += text;
      if (output.includes('Ctrl-C to stop')) ready(/listening on (\S+)/.exec(output)![1]!);
    },
  });
  return { origin, stop, exit, output: () => output };
}

describe('tmi-conform serve (in process)', () => {
  it('serves until told to stop, then closes', async () => {
    const serve = serveInProcess(['--listen', '127.0.0.1:0', '--fault', 'rs-is-system-string', '--rate-limit', '5/2']);
    const origin = await serve.origin;
    const output = serve.output();
    expect(output).toContain('faults on  rs-is-system-string (NOT conforming)');
    expect(output).toContain('rate limit 5 requests per 2 s per client');
    expect((await fetch(`${origin}/.well-known/jwks.json`)).status).toBe(200);
    serve.stop();
    expect(await serve.exit).toBe(0);
    await expect(fetch(`${origin}/.well-known/jwks.json`)).rejects.toThrow();
  });

  it('lists the faults', async () => {
    let output = '';
    expect(await run(['--list-faults'], { out: (t) => (output += t) })).toBe(0);
    expect(output.trim().split('\n')).toHaveLength(FAULT_NAMES.length);
    expect(output).toMatch(/^delete-returns-200\s+TEP-DELETE-204\s+/m);
  });

  it.each([
    [['--fault', 'nope'], /unknown fault "nope"/],
    [['--rate-limit', 'fast'], /--rate-limit expects N\/SECONDS/],
    [['--rate-limit', '0/10'], /--rate-limit expects N\/SECONDS/],
    [['--listen', 'localhost'], /--listen expects HOST:PORT/],
    [['--tenant-domain', 'https://x/'], /--tenant-domain expects a bare host name/],
    [['--bogus'], /unknown option --bogus/],
    [['extra'], /unexpected argument "extra"/],
  ])('refuses %j with a usage error', async (argv, message) => {
    await expect(run(argv, { stopped: Promise.resolve(), out: () => {} })).rejects.toThrow(message);
    await expect(run(argv, { stopped: Promise.resolve(), out: () => {} })).rejects.toBeInstanceOf(UsageError);
  });

  it('says so in one line when the port is taken', async () => {
    const first = serveInProcess(['--listen', '127.0.0.1:0']);
    const { port } = new URL(await first.origin);
    await expect(run(['--listen', `127.0.0.1:${port}`], { stopped: Promise.resolve(), out: () => {} })).rejects.toThrow(/address is in use/);
    first.stop();
    expect(await first.exit).toBe(0);
  });
});
