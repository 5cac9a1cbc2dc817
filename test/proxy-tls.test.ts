// The proxy's HTTPS listener: the local CA and its leaf (made once, keys 0600, reused, made
// again when the listen host changes or the time is near), the user's own pair, and HTTP/1.1
// keep-alive clients (undici) that trust the CA, every exchange recorded and judged.
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startReference, type RunningReference } from '../reference/index.ts';
import { CA_FILE, CA_KEY_FILE, LEAF_FILE, LEAF_KEY_FILE, leafNames, LocalCaError, localCertificates } from '../proxy/tls/local-ca.ts';
import { listenerCertificate, TlsSetupError } from '../proxy/tls/tls.ts';
import { readJournal, recorded, startTestProxy } from './helpers/proxy.ts';
import { tokenFor } from './helpers/reference.ts';

const DAY_MS = 24 * 60 * 60 * 1000;
const dir = mkdtempSync(join(tmpdir(), 'tmi-proxy-tls-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const modeOf = (path: string) => statSync(path).mode & 0o777;
const read = (tlsDir: string, file: string) => readFileSync(join(tlsDir, file), 'utf8');

describe('the local CA', () => {
  it('is made once with a leaf for the local names and the listen host, keys mode 0600, and kept across starts', async () => {
    const tlsDir = join(dir, 'once');
    const first = await localCertificates(tlsDir, 'proxy.test');
    expect(first.made).toHaveLength(2);
    expect(first.caPath).toBe(join(tlsDir, CA_FILE));
    expect(modeOf(tlsDir)).toBe(0o700);
    // Made here, so kept out of version control: the keys must not reach the user's repository.
    expect(read(tlsDir, '.gitignore')).toMatch(/^\*$/m);
    expect(modeOf(join(tlsDir, CA_KEY_FILE))).toBe(0o600);
    expect(modeOf(join(tlsDir, LEAF_KEY_FILE))).toBe(0o600);

    const ca = new X509Certificate(read(tlsDir, CA_FILE));
    const leaf = new X509Certificate(read(tlsDir, LEAF_FILE));
    expect(ca.ca).toBe(true);
    expect(leaf.ca).toBe(false);
    expect(leaf.checkIssued(ca) && leaf.verify(ca.publicKey)).toBe(true);
    expect(first.cert).toBe(read(tlsDir, LEAF_FILE));
    for (const host of ['localhost', 'proxy.test']) expect(leaf.checkHost(host), host).toBe(host);
    for (const ip of ['127.0.0.1', '::1']) expect(leaf.checkIP(ip), ip).toBe(ip);
    expect(leaf.checkHost('elsewhere.test')).toBeUndefined();

    const caText = read(tlsDir, CA_FILE);
    const again = await localCertificates(tlsDir, 'proxy.test');
    expect(again.made).toEqual([]);
    expect(again.cert).toBe(first.cert);
    expect(again.key).toBe(first.key);
    expect(read(tlsDir, CA_FILE)).toBe(caText);
  });

  it('makes a new leaf from the same CA for another listen host; a wildcard address names no host', async () => {
    const tlsDir = join(dir, 'hosts');
    await localCertificates(tlsDir, '127.0.0.1');
    const caBefore = read(tlsDir, CA_FILE);
    const other = await localCertificates(tlsDir, '10.1.2.3');
    expect(other.made).toEqual(['made a certificate for localhost, 127.0.0.1, ::1, 10.1.2.3 (the old one did not name 10.1.2.3)']);
    expect(read(tlsDir, CA_FILE)).toBe(caBefore);
    expect(new X509Certificate(other.cert).checkIP('10.1.2.3')).toBe('10.1.2.3');
    expect(leafNames('0.0.0.0')).toEqual(['localhost', '127.0.0.1', '::1']);
    expect(leafNames('::')).toEqual(['localhost', '127.0.0.1', '::1']);
  });

  it('makes the leaf again when it is about to expire, and the CA (with a new leaf) when the CA is', async () => {
    const tlsDir = join(dir, 'time');
    const start = await localCertificates(tlsDir, '127.0.0.1');
    const caBefore = read(tlsDir, CA_FILE);
    const nearLeafEnd = await localCertificates(tlsDir, '127.0.0.1', new Date(Date.now() + 340 * DAY_MS));
    expect(nearLeafEnd.made).toEqual(['made a certificate for localhost, 127.0.0.1, ::1 (the old one expires soon)']);
    expect(nearLeafEnd.cert).not.toBe(start.cert);
    expect(read(tlsDir, CA_FILE)).toBe(caBefore);
    const nearCaEnd = await localCertificates(tlsDir, '127.0.0.1', new Date(Date.now() + (5 * 365 - 10) * DAY_MS));
    expect(nearCaEnd.made).toEqual(['made a local CA (the old one expires soon)', 'made a certificate for localhost, 127.0.0.1, ::1']);
    expect(read(tlsDir, CA_FILE)).not.toBe(caBefore);
  });

  it("makes both again when a file does not parse or a key is not its certificate's", async () => {
    const tlsDir = join(dir, 'broken');
    await localCertificates(tlsDir, '127.0.0.1');
    writeFileSync(join(tlsDir, LEAF_KEY_FILE), read(tlsDir, CA_KEY_FILE), { mode: 0o600 });
    expect((await localCertificates(tlsDir, '127.0.0.1')).made).toEqual([
      'made a certificate for localhost, 127.0.0.1, ::1 (leaf-key.pem is not the key of leaf.pem)',
    ]);
    writeFileSync(join(tlsDir, CA_FILE), 'not a certificate');
    expect((await localCertificates(tlsDir, '127.0.0.1')).made).toHaveLength(2);
  });

  it('refuses a --tls-dir that is not a directory, in one line', async () => {
    const file = join(dir, 'a-file');
    writeFileSync(file, '');
    await expect(localCertificates(file, '127.0.0.1')).rejects.toThrow(LocalCaError);
    await expect(listenerCertificate({ dir: file }, '127.0.0.1')).rejects.toThrow(new TlsSetupError(`cannot use --tls-dir ${file}: not a directory`));
  });
});

describe("the user's own pair", () => {
  const pairDir = join(dir, 'pair');
  let cert: string;
  let key: string;
  let otherKey: string;

  beforeAll(async () => {
    await localCertificates(pairDir, 'proxy.test');
    cert = join(pairDir, LEAF_FILE);
    key = join(pairDir, LEAF_KEY_FILE);
    otherKey = join(pairDir, CA_KEY_FILE);
  });

  it('is presented as it is, with no CA path, and a note when it does not name the listen host', async () => {
    const named = await listenerCertificate({ certFile: cert, keyFile: key }, 'proxy.test');
    expect(named).toEqual({ cert: readFileSync(cert, 'utf8'), key: readFileSync(key, 'utf8'), notes: [] });
    const unnamed = await listenerCertificate({ certFile: cert, keyFile: key }, 'elsewhere.test');
    expect(unnamed.notes).toEqual([`note: the certificate in ${cert} does not name elsewhere.test; clients connecting to that name will refuse it`]);
  });

  it("is refused in one line when a file is missing, holds no PEM, or the key is another's", async () => {
    const missing = join(dir, 'missing.pem');
    await expect(listenerCertificate({ certFile: missing, keyFile: key }, '127.0.0.1')).rejects.toThrow(`cannot read --tls-cert ${missing}: no such file`);
    await expect(listenerCertificate({ certFile: cert, keyFile: missing }, '127.0.0.1')).rejects.toThrow(`cannot read --tls-key ${missing}: no such file`);
    await expect(listenerCertificate({ certFile: key, keyFile: key }, '127.0.0.1')).rejects.toThrow(`--tls-cert ${key} holds no PEM certificate`);
    await expect(listenerCertificate({ certFile: cert, keyFile: cert }, '127.0.0.1')).rejects.toThrow(`--tls-key ${cert} holds no unencrypted PEM private key`);
    await expect(listenerCertificate({ certFile: cert, keyFile: otherKey }, '127.0.0.1')).rejects.toThrow(
      `--tls-key ${otherKey} is not the key of the certificate in --tls-cert ${cert}`,
    );
  });
});

describe('HTTPS through the proxy', () => {
  let ref: RunningReference;
  let token: string;

  beforeAll(async () => {
    ref = await startReference();
    token = await tokenFor(ref, 'full');
  });
  afterAll(async () => {
    await ref?.close();
  });

  /**
   * GETs every fixture resource server, one after the other, through `url` with an undici
   * Client (one keep-alive connection, opened again only when the server closes it) that trusts
   * `ca`; resolves with the statuses and how many connections were opened.
   */
  async function getAll(url: string, ca: string): Promise<{ statuses: number[]; connections: number }> {
    const client = new Client(url, { connect: { ca }, keepAliveTimeout: 10_000 });
    let connections = 0;
    client.on('connect', () => connections++);
    try {
      const statuses: number[] = [];
      for (const id of ref.fixtures.resource_servers) {
        const response = await client.request({ method: 'GET', path: `/api/v2/resource-servers/${id}`, headers: { authorization: `Bearer ${token}` } });
        await response.body.text();
        statuses.push(response.statusCode);
      }
      return { statuses, connections };
    } finally {
      await client.close();
    }
  }

  it('with the local CA: an https:// URL and the CA path; a keep-alive client sends every request on one connection, each recorded and judged', async () => {
    const tlsDir = join(dir, 'session');
    const lines: string[] = [];
    const under = await startTestProxy(ref.origin, { tls: { dir: tlsDir }, log: (line) => lines.push(line) });
    try {
      const { proxy } = under;
      expect(proxy.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
      expect(proxy.origin).toBe(proxy.url);
      expect(proxy.caPath).toBe(join(tlsDir, CA_FILE));
      expect(lines).toEqual(
        expect.arrayContaining([
          `  Node:    NODE_EXTRA_CA_CERTS=${proxy.caPath}`,
          expect.stringContaining(`SSL_CERT_FILE=${proxy.caPath}`),
          expect.stringContaining(`--cacert ${proxy.caPath}`),
          expect.stringContaining(`REQUESTS_CA_BUNDLE=${proxy.caPath}`),
        ]),
      );

      const { statuses, connections } = await getAll(proxy.url, readFileSync(proxy.caPath!, 'utf8'));
      expect(statuses).toEqual(ref.fixtures.resource_servers.map(() => 200));
      expect(connections).toBe(1);

      await recorded(proxy, statuses.length);
      await proxy.stop();
      const entries = readJournal(under.journalPath);
      expect(entries.map((e) => [e._conformance.operation, e.response!.status])).toEqual(statuses.map((status) => ['getResourceServer', status]));
      expect(entries.flatMap((e) => e._conformance.findings)).toEqual([]);
    } finally {
      await under.dispose();
    }
  });

  it('a client that does not trust the certificate fails its handshake; the proxy says once which CA to trust', async () => {
    const lines: string[] = [];
    const under = await startTestProxy(ref.origin, { tls: { dir: join(dir, 'untrusted') }, log: (line) => lines.push(line) });
    try {
      for (let i = 0; i < 2; i++) await expect(fetch(`${under.proxy.url}/api/v2/resource-servers/x`)).rejects.toThrow();
      // Node's client closes the connection without a TLS alert: the proxy sees ECONNRESET.
      await expect
        .poll(() => lines.filter((line) => line.includes('TLS handshake')))
        .toEqual([`a client broke off the TLS handshake (ECONNRESET): does it trust ${under.proxy.caPath}? (said once)`]);
      await under.proxy.stop();
      expect(readJournal(under.journalPath)).toEqual([]);
    } finally {
      await under.dispose();
    }
  });

  it("with the user's pair: no CA path, and clients that trust its issuer connect", async () => {
    const pairDir = join(dir, 'own-pair');
    const made = await localCertificates(pairDir, '127.0.0.1');
    const under = await startTestProxy(ref.origin, { tls: { certFile: join(pairDir, LEAF_FILE), keyFile: join(pairDir, LEAF_KEY_FILE) } });
    try {
      expect(under.proxy.url).toMatch(/^https:\/\//);
      expect(under.proxy.caPath).toBeUndefined();
      const { statuses } = await getAll(under.proxy.url, readFileSync(made.caPath, 'utf8'));
      expect(statuses).toEqual(ref.fixtures.resource_servers.map(() => 200));
    } finally {
      await under.dispose();
    }
  });
});
