// A token whose jku or x5u header names a key URL: a target on loopback that fetches it is seen
// doing so by the kit's key server (suites/key-url-server.ts), a security warning of its own
// (AUTH-KEY-URL-NOT-FETCHED), whether it then accepts the token or not. A conforming target
// fetches nothing.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { run } from '../cli/run.ts';
import type { Report } from '../reports/model.ts';
import { keyUrlServerOptions, startKeyUrlServer } from '../suites/key-url-server.ts';

const dir = mkdtempSync(join(tmpdir(), 'tmi-key-url-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function runAgainst(name: string, faults: string[], options: string[] = []): Promise<{ code: number | string; report: Report }> {
  const reportDir = join(dir, name);
  const write = process.stdout.write.bind(process.stdout);
  process.stdout.write = (() => true) as typeof process.stdout.write;
  const fault = faults.flatMap((f) => ['--fault', f]);
  const code = await run([...fault, ...options, '--requirement', 'AUTH-KEY-URL-NOT-FETCHED', '--fail-on', 'should', '--report-dir', reportDir]).finally(() => {
    process.stdout.write = write;
  });
  return { code, report: JSON.parse(readFileSync(join(reportDir, 'report.json'), 'utf8')) as Report };
}

describe('a key URL a token names', () => {
  it('fetched by the target (jku-followed, x5u-followed): a warning naming the request the kit saw; not fetched by the conforming reference', {
    timeout: 120_000,
  }, async () => {
    const faulty = await runAgainst('faulty', ['jku-followed', 'x5u-followed']);
    const requirement = faulty.report.requirements.find((r) => r.id === 'AUTH-KEY-URL-NOT-FETCHED')!;
    expect(faulty.code).toBe(1);
    expect(requirement.status).toBe('warn');
    const failed = faulty.report.tests.find((t) => t.name.includes('fetches the key URL'))!;
    // The token was carried out as well: each broken requirement is a line of the failure.
    expect(failed.message).toMatch(/AUTH-KEY-URL-NOT-FETCHED: security: the target fetched the key URL a token named, answering a GET/);
    const conforming = await runAgainst('conforming', []);
    expect(conforming.code).toBe(0);
    expect(conforming.report.requirements.find((r) => r.id === 'AUTH-KEY-URL-NOT-FETCHED')!.status).toBe('pass');
  });
});

/** A free loopback port (listened on and given up at once). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** What stands between a remote target and the kit (a port mapping): forwards every request to `port`, noting its path. */
async function startForwarder(port: number): Promise<{ server: Server; url: string; paths: string[] }> {
  const paths: string[] = [];
  const server = createServer((req, res) => {
    paths.push(req.url ?? '/');
    const forwarded = request({ host: '127.0.0.1', port, path: req.url, method: req.method, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    forwarded.on('error', () => res.writeHead(502).end());
    req.pipe(forwarded);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/kit`, paths };
}

describe('callback_url: the key URLs of a target that cannot reach this machine', () => {
  it('a target elsewhere without callback_url: not examined; with it, the URLs are served where callback_listen says, under callback_url', async () => {
    expect(keyUrlServerOptions('https://tenant.example.com/api/v2', undefined)).toBeUndefined();
    expect(keyUrlServerOptions('http://127.0.0.1:8080/api/v2', undefined)).toEqual({ host: '127.0.0.1', port: 0 });
    const callback = { url: 'http://10.0.0.5:8123/kit', host: '127.0.0.1', port: 0 };
    expect(keyUrlServerOptions('https://tenant.example.com/api/v2', callback)).toEqual({ host: '127.0.0.1', port: 0, publicUrl: 'http://10.0.0.5:8123/kit' });
    const server = await startKeyUrlServer({ host: '127.0.0.1', port: 0, publicUrl: 'http://10.0.0.5:8123/kit/' });
    try {
      expect(server.url('jku', 'fetch-jku')).toBe('http://10.0.0.5:8123/kit/fetch-jku/jwks.json');
      expect(server.url('x5u', 'a b')).toBe('http://10.0.0.5:8123/kit/a%20b/cert.pem');
    } finally {
      await server.close();
    }
  });

  it('given: the target fetches the key URLs through the mapping (jku-followed, x5u-followed), a warning; the conforming reference fetches nothing', {
    timeout: 120_000,
  }, async () => {
    const listen = await freePort();
    const forwarder = await startForwarder(listen);
    try {
      const options = ['--callback-url', forwarder.url, '--callback-listen', `127.0.0.1:${listen}`];
      const faulty = await runAgainst('callback-faulty', ['jku-followed', 'x5u-followed'], options);
      expect(faulty.code).toBe(1);
      expect(faulty.report.requirements.find((r) => r.id === 'AUTH-KEY-URL-NOT-FETCHED')!.status).toBe('warn');
      // The key URL the token named went through callback_url (the test stops at the first fetch seen).
      expect(forwarder.paths).toContain('/kit/fetch-jku/jwks.json');
      forwarder.paths.length = 0;
      const conforming = await runAgainst('callback-conforming', [], options);
      expect(conforming.code).toBe(0);
      expect(conforming.report.requirements.find((r) => r.id === 'AUTH-KEY-URL-NOT-FETCHED')!.status).toBe('pass');
      expect(forwarder.paths).toEqual([]);
    } finally {
      forwarder.server.closeAllConnections();
      await new Promise<void>((resolve) => forwarder.server.close(() => resolve()));
    }
  });
});
