// Which certificate the proxy's HTTPS listener presents: the user's own pair (--tls-cert and
// --tls-key), or a leaf of the local CA kept in --tls-dir (local-ca.ts); and what a client is
// told to do to trust that CA.
import { createPrivateKey, X509Certificate, type KeyObject } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { isIP } from 'node:net';
import { LocalCaError, localCertificates } from './local-ca.ts';

/** Where the listener's certificate comes from. */
export type TlsSource = { certFile: string; keyFile: string } | { dir: string };

export interface ListenerCertificate {
  /** PEM certificate (a chain: leaf first) and PEM private key. */
  cert: string;
  key: string;
  /** Absolute path of the CA certificate that clients trust; undefined with the user's own pair. */
  caPath?: string;
  /** Lines worth telling the user at start: what was made, what looks wrong. */
  notes: string[];
}

/** The pair cannot be used; the message is one line naming the flag and file. */
export class TlsSetupError extends Error {
  override name = 'TlsSetupError';
}

export async function listenerCertificate(source: TlsSource, listenHost: string): Promise<ListenerCertificate> {
  if ('dir' in source) {
    try {
      const local = await localCertificates(source.dir, listenHost);
      return { cert: local.cert, key: local.key, caPath: local.caPath, notes: local.made };
    } catch (error) {
      if (error instanceof LocalCaError) throw new TlsSetupError(error.message);
      throw error;
    }
  }
  return userPair(source.certFile, source.keyFile, listenHost);
}

/** How to make the usual clients trust the CA at `caPath`, a line each. */
export function howToTrust(caPath: string): string[] {
  return [
    `HTTPS certificate issued by the local CA ${caPath}; to trust it:`,
    `  Node:    NODE_EXTRA_CA_CERTS=${caPath}`,
    `  Go:      SSL_CERT_FILE=${caPath}    curl: --cacert ${caPath} (or SSL_CERT_FILE)`,
    `  Python:  REQUESTS_CA_BUNDLE=${caPath} (requests), SSL_CERT_FILE=${caPath} (ssl, httpx)`,
  ];
}

async function userPair(certFile: string, keyFile: string, listenHost: string): Promise<ListenerCertificate> {
  const cert = await readFlagFile('--tls-cert', certFile);
  const key = await readFlagFile('--tls-key', keyFile);
  let certificate: X509Certificate;
  try {
    certificate = new X509Certificate(cert);
  } catch {
    throw new TlsSetupError(`--tls-cert ${certFile} holds no PEM certificate`);
  }
  let privateKey: KeyObject;
  try {
    privateKey = createPrivateKey(key);
  } catch {
    throw new TlsSetupError(`--tls-key ${keyFile} holds no unencrypted PEM private key`);
  }
  if (!certificate.checkPrivateKey(privateKey)) throw new TlsSetupError(`--tls-key ${keyFile} is not the key of the certificate in --tls-cert ${certFile}`);
  const notes: string[] = [];
  if (new Date(certificate.validTo) < new Date())
    notes.push(`warning: the certificate in ${certFile} expired on ${certificate.validTo}; clients will refuse it`);
  const wildcard = listenHost === '0.0.0.0' || listenHost === '::';
  if (!wildcard && (isIP(listenHost) ? certificate.checkIP(listenHost) : certificate.checkHost(listenHost)) === undefined) {
    notes.push(`note: the certificate in ${certFile} does not name ${listenHost}; clients connecting to that name will refuse it`);
  }
  return { cert, key, notes };
}

async function readFlagFile(flag: string, path: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why =
      code === 'ENOENT'
        ? 'no such file'
        : code === 'EACCES'
          ? 'permission denied'
          : code === 'EISDIR'
            ? 'a directory, not a file'
            : (code ?? (error as Error).message);
    throw new TlsSetupError(`cannot read ${flag} ${path}: ${why}`);
  }
}
