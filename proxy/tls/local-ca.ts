// The local certificate authority of the proxy's HTTPS listener: a CA and a leaf certificate
// for the listen host, made with @peculiar/x509 on Node's WebCrypto and kept in one directory
// (default .tmi-conform/tls/), so that a client told once to trust ca.pem keeps trusting the
// proxy across starts. Keys are written with mode 0600. The leaf is made again when it does not
// name a host it must cover or is about to expire; the CA (and with it the leaf) when it is
// missing, unusable or about to expire.
import { createPrivateKey, randomBytes, webcrypto, X509Certificate, type KeyObject } from 'node:crypto';
import { mkdir, open, readFile, rename, stat, unlink, writeFile } from 'node:fs/promises';
import { isIP } from 'node:net';
import { join, resolve } from 'node:path';

export const CA_FILE = 'ca.pem';
export const CA_KEY_FILE = 'ca-key.pem';
export const LEAF_FILE = 'leaf.pem';
export const LEAF_KEY_FILE = 'leaf-key.pem';

const CA_DAYS = 5 * 365;
/** Short enough for clients that cap a server certificate's life (Apple's limit is 825 days). */
const LEAF_DAYS = 365;
/** A certificate with less left than this is made again, so that a long proxy run does not outlive it. */
const RENEW_DAYS = 30;
const DAY_MS = 24 * 60 * 60 * 1000;
/** The names every leaf covers, whatever the listen host. */
const LOCAL_NAMES = ['localhost', '127.0.0.1', '::1'];
/** ECDSA P-256 with SHA-256: small keys, made in milliseconds, accepted by Node, Go, curl and Python alike. */
const KEY_ALGORITHM = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };
/** Another process making certificates in the same directory holds this file; one older than this was left behind by a crash. */
const LOCK_FILE = '.lock';
const STALE_LOCK_MS = 30_000;
const LOCK_WAIT_MS = 10_000;
/** Written into a directory made here, so that its private keys never end up in the user's git repository. */
const GITIGNORE = '# Made by tmi-conform proxy --tls: a local CA and its private keys. Not for version control.\n*\n';

/** The directory cannot be used (unreadable, not a directory, files that cannot be written). */
export class LocalCaError extends Error {
  override name = 'LocalCaError';
}

export interface LocalCertificates {
  /** Absolute path of the CA certificate clients are told to trust. */
  caPath: string;
  /** The leaf's PEM certificate and PEM private key, for the listener. */
  cert: string;
  key: string;
  /** What was made on this start (empty when both were kept): said to the user. */
  made: string[];
}

/** The names a leaf for `listenHost` covers: the local ones and the listen host (a wildcard address names no host). */
export function leafNames(listenHost: string): string[] {
  const names = [...LOCAL_NAMES];
  if (listenHost !== '0.0.0.0' && listenHost !== '::' && !names.includes(listenHost)) names.push(listenHost);
  return names;
}

/** The CA and a leaf covering `listenHost`, kept from an earlier start when still good, made otherwise. */
export async function localCertificates(directory: string, listenHost: string, now: Date = new Date()): Promise<LocalCertificates> {
  const dir = resolve(directory);
  try {
    const made = await mkdir(dir, { recursive: true, mode: 0o700 });
    if (made !== undefined) await writeFile(join(dir, '.gitignore'), GITIGNORE);
  } catch (error) {
    throw new LocalCaError(`cannot use --tls-dir ${directory}: ${describe(error)}`);
  }
  const caPath = join(dir, CA_FILE);
  const release = await lock(dir, directory);
  try {
    const made: string[] = [];
    const renewAfter = new Date(now.getTime() + RENEW_DAYS * DAY_MS);
    let ca = await readPair(dir, CA_FILE, CA_KEY_FILE, directory);
    const caProblem = ca === undefined ? 'none yet' : caUnusable(ca, renewAfter);
    if (caProblem !== undefined) {
      ca = await makeCa(now);
      await writePair(dir, CA_FILE, CA_KEY_FILE, ca, directory);
      made.push(`made a local CA (${caProblem === 'none yet' ? 'none was there' : caProblem})`);
    }
    const names = leafNames(listenHost);
    let leaf = caProblem === undefined ? await readPair(dir, LEAF_FILE, LEAF_KEY_FILE, directory) : undefined;
    const leafProblem = leaf === undefined ? 'none yet' : leafUnusable(leaf, ca!, names, renewAfter);
    if (leafProblem !== undefined) {
      leaf = await makeLeaf(ca!, names, now);
      await writePair(dir, LEAF_FILE, LEAF_KEY_FILE, leaf, directory);
      made.push(`made a certificate for ${names.join(', ')}${leafProblem === 'none yet' || caProblem !== undefined ? '' : ` (${leafProblem})`}`);
    }
    return { caPath, cert: leaf!.certPem, key: leaf!.keyPem, made };
  } finally {
    await release();
  }
}

interface Pair {
  certPem: string;
  keyPem: string;
  cert: X509Certificate;
  key: KeyObject;
}

/** A certificate and its key from two files; undefined when either is missing or does not parse (it is made again). */
async function readPair(dir: string, certFile: string, keyFile: string, shownDir: string): Promise<Pair | undefined> {
  let certPem: string;
  let keyPem: string;
  try {
    [certPem, keyPem] = await Promise.all([readFile(join(dir, certFile), 'utf8'), readFile(join(dir, keyFile), 'utf8')]);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new LocalCaError(`cannot use --tls-dir ${shownDir}: ${describe(error)}`);
  }
  try {
    return { certPem, keyPem, cert: new X509Certificate(certPem), key: createPrivateKey(keyPem) };
  } catch {
    return undefined;
  }
}

function caUnusable(ca: Pair, renewAfter: Date): string | undefined {
  if (!ca.cert.ca) return 'ca.pem is not a CA certificate';
  if (!ca.cert.checkPrivateKey(ca.key)) return 'ca-key.pem is not the key of ca.pem';
  if (new Date(ca.cert.validTo) < renewAfter) return 'the old one expires soon';
  return undefined;
}

function leafUnusable(leaf: Pair, ca: Pair, names: string[], renewAfter: Date): string | undefined {
  if (!leaf.cert.checkPrivateKey(leaf.key)) return 'leaf-key.pem is not the key of leaf.pem';
  if (!leaf.cert.checkIssued(ca.cert) || !leaf.cert.verify(ca.cert.publicKey)) return 'the old one was not issued by ca.pem';
  if (new Date(leaf.cert.validTo) < renewAfter) return 'the old one expires soon';
  const missing = names.filter((name) => (isIP(name) ? leaf.cert.checkIP(name) : leaf.cert.checkHost(name)) === undefined);
  if (missing.length > 0) return `the old one did not name ${missing.join(', ')}`;
  return undefined;
}

async function makeCa(now: Date): Promise<Pair> {
  const x509 = await x509Library();
  const keys = await newKeys();
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serialNumber(),
    name: `CN=tmi-conform local CA ${now.toISOString().slice(0, 10)} ${randomBytes(3).toString('hex')}, O=tmi-conform`,
    notBefore: new Date(now.getTime() - DAY_MS),
    notAfter: new Date(now.getTime() + CA_DAYS * DAY_MS),
    keys,
    signingAlgorithm: KEY_ALGORITHM,
    extensions: [
      // A CA that signs leaf certificates only (path length 0).
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return pair(cert.toString('pem'), await privateKeyPem(keys.privateKey));
}

async function makeLeaf(ca: Pair, names: string[], now: Date): Promise<Pair> {
  const x509 = await x509Library();
  const keys = await newKeys();
  const caCert = new x509.X509Certificate(ca.certPem);
  const caKey = await webcrypto.subtle.importKey('pkcs8', ca.key.export({ type: 'pkcs8', format: 'der' }), KEY_ALGORITHM, false, ['sign']);
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: serialNumber(),
    subject: `CN=${names.at(-1)}, O=tmi-conform`,
    issuer: caCert.subject,
    notBefore: new Date(now.getTime() - DAY_MS),
    notAfter: new Date(now.getTime() + LEAF_DAYS * DAY_MS),
    signingKey: caKey,
    publicKey: keys.publicKey,
    signingAlgorithm: KEY_ALGORITHM,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
      new x509.SubjectAlternativeNameExtension(names.map((name) => ({ type: isIP(name) ? ('ip' as const) : ('dns' as const), value: name }))),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
      await x509.AuthorityKeyIdentifierExtension.create(caCert),
    ],
  });
  return pair(cert.toString('pem'), await privateKeyPem(keys.privateKey));
}

/** Loaded on first use only: a plain HTTP proxy never needs it. @peculiar/x509 wants a Reflect polyfill loaded before it. */
async function x509Library(): Promise<typeof import('@peculiar/x509')> {
  await import('reflect-metadata');
  const x509 = await import('@peculiar/x509');
  x509.cryptoProvider.set(webcrypto as unknown as Crypto);
  return x509;
}

async function newKeys(): Promise<CryptoKeyPair> {
  return (await webcrypto.subtle.generateKey(KEY_ALGORITHM, true, ['sign', 'verify'])) as CryptoKeyPair;
}

async function privateKeyPem(key: CryptoKey): Promise<string> {
  const der = Buffer.from(await webcrypto.subtle.exportKey('pkcs8', key as webcrypto.CryptoKey));
  return `-----BEGIN PRIVATE KEY-----\n${der.toString('base64').replace(/.{64}/g, '$&\n').replace(/\n?$/, '\n')}-----END PRIVATE KEY-----\n`;
}

function pair(certPem: string, keyPem: string): Pair {
  return { certPem, keyPem, cert: new X509Certificate(certPem), key: createPrivateKey(keyPem) };
}

/** 16 random bytes, the first below 0x80 so that the number is positive (RFC 5280 §4.1.2.2). */
function serialNumber(): string {
  const bytes = randomBytes(16);
  bytes[0] = bytes[0]! & 0x7f;
  return bytes.toString('hex');
}

/** Each file is written beside its place and renamed into it, so that a reader never sees half a key. */
async function writePair(dir: string, certFile: string, keyFile: string, value: Pair, shownDir: string): Promise<void> {
  try {
    await writeAtomically(join(dir, keyFile), value.keyPem, 0o600);
    await writeAtomically(join(dir, certFile), value.certPem, 0o644);
  } catch (error) {
    throw new LocalCaError(`cannot use --tls-dir ${shownDir}: ${describe(error)}`);
  }
}

async function writeAtomically(path: string, text: string, mode: number): Promise<void> {
  const temporary = `${path}.${process.pid}.tmp`;
  await writeFile(temporary, text, { mode });
  await rename(temporary, path);
}

/** Two proxies starting at once in one directory must not each make a CA and keep the other's leaf. */
async function lock(dir: string, shownDir: string): Promise<() => Promise<void>> {
  const path = join(dir, LOCK_FILE);
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (;;) {
    try {
      await (await open(path, 'wx', 0o600)).close();
      return () => unlink(path).catch(() => {});
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw new LocalCaError(`cannot use --tls-dir ${shownDir}: ${describe(error)}`);
    }
    const age = await stat(path).then(
      (s) => Date.now() - s.mtimeMs,
      () => 0,
    );
    if (age > STALE_LOCK_MS) await unlink(path).catch(() => {});
    else if (Date.now() > deadline)
      throw new LocalCaError(`cannot use --tls-dir ${shownDir}: another process is making certificates there (remove ${path} if none is)`);
    else await new Promise((done) => setTimeout(done, 50));
  }
}

function describe(error: unknown): string {
  const { code, message } = error as NodeJS.ErrnoException;
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied';
  if (code === 'ENOTDIR' || code === 'EEXIST') return 'not a directory';
  return code ?? message;
}
