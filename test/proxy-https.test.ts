// An https target: the proxy checks the target's certificate like any TLS client. A
// self-signed one (made here with the openssl command) is refused with a 502 that names the
// problem, and trusted once its certificate is given to Node (NODE_EXTRA_CA_CERTS, read when
// the process starts): then every exchange goes through, is judged and recorded.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claims, jwt, resourceServer } from '../fixtures/exchanges.ts';
import { readJournal, recorded, startTestProxy } from './helpers/proxy.ts';

const BIN = fileURLToPath(new URL('../bin/tmi-conform.js', import.meta.url));
const TOKEN = jwt(claims());
const dir = mkdtempSync(join(tmpdir(), 'tmi-proxy-https-'));
const keyPath = join(dir, 'key.pem');
const certPath = join(dir, 'cert.pem');

/** A self-signed certificate for 127.0.0.1, valid for a day; the reason when there is none. */
function makeCertificate(): string | undefined {
  const made = spawnSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      keyPath,
      '-out',
      certPath,
      '-days',
      '1',
      '-subj',
      '/CN=127.0.0.1',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
    ],
    { encoding: 'utf8' },
  );
  if (made.error) return `the openssl command is not available (${made.error.message})`;
  if (made.status !== 0) return `openssl could not make a certificate: ${made.stderr.trim().split('\n').at(-1)}`;
  return undefined;
}

const noCertificate = makeCertificate();
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const title = noCertificate === undefined ? 'an https target' : `an https target: SKIPPED, ${noCertificate}`;

describe.skipIf(noCertificate !== undefined)(title, () => {
  let target: Server;
  let origin: string;
  const hosts: string[] = [];

  beforeAll(async () => {
    target = createServer({ key: readFileSync(keyPath), cert: readFileSync(certPath) }, (req, res) => {
      hosts.push(req.headers.host ?? '');
      req.resume();
      const id = decodeURIComponent((req.url ?? '').split('?')[0]!.split('/').at(-1) ?? '');
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(resourceServer({ id })));
    });
    await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve));
    origin = `https://127.0.0.1:${(target.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    target?.closeAllConnections();
    await new Promise((resolve) => (target ? target.close(resolve) : resolve(undefined)));
  });

  it('refuses an untrusted certificate: 502 naming the problem, recorded with its error', async () => {
    const under = await startTestProxy(origin);
    try {
      const response = await fetch(`${under.proxy.origin}/api/v2/resource-servers/rs_1`, { headers: { authorization: `Bearer ${TOKEN}` } });
      const body = (await response.json()) as { message: string };
      expect(response.status).toBe(502);
      expect(body.message).toMatch(/upstream failed: (DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN)/);
      await recorded(under.proxy, 1);
      await under.proxy.stop();
      const [entry] = readJournal(under.journalPath);
      expect(entry!.request!.url).toBe(`${origin}/api/v2/resource-servers/rs_1`);
      expect((entry as { _error?: string })._error).toMatch(/SELF_SIGNED/);
    } finally {
      await under.dispose();
    }
  });

  it('with the certificate trusted (NODE_EXTRA_CA_CERTS), forwards, judges and records every exchange', async () => {
    const journal = join(dir, 'https.jsonl');
    const child = spawn(
      process.execPath,
      [BIN, 'proxy', '--target', origin, '--listen', '127.0.0.1:0', '--journal', journal, '--report-dir', join(dir, 'reports'), '--status-interval', '0'],
      {
        env: { ...process.env, NODE_EXTRA_CA_CERTS: certPath, GITHUB_STEP_SUMMARY: '' },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stdout = '';
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    try {
      const proxyOrigin = await new Promise<string>((resolve, reject) => {
        child.stdout.on('data', (chunk: Buffer) => {
          stdout += chunk.toString();
          const match = /^listening on (http:\/\/\S+)$/m.exec(stdout);
          if (match) resolve(match[1]!);
        });
        void exited.then(() => reject(new Error(`the proxy exited before listening: ${stderr}`)));
      });
      for (const id of ['rs_1', 'rs_2']) {
        const response = await fetch(`${proxyOrigin}/api/v2/resource-servers/${id}`, { headers: { authorization: `Bearer ${TOKEN}` } });
        expect(response.status).toBe(200);
        expect(((await response.json()) as { id: string }).id).toBe(id);
      }
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
    expect(stdout).toContain('2 exchanges: 2 judged');
    // The target is asked for by its own name, never the proxy's.
    expect(hosts.slice(-2)).toEqual([origin.slice('https://'.length), origin.slice('https://'.length)]);
    const entries = readJournal(journal);
    expect(entries.map((e) => [e.request!.url, e.response!.status, e._conformance.operation])).toEqual([
      [`${origin}/api/v2/resource-servers/rs_1`, 200, 'getResourceServer'],
      [`${origin}/api/v2/resource-servers/rs_2`, 200, 'getResourceServer'],
    ]);
  });
});
