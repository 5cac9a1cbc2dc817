// The trust file for SSL_CERT_FILE and REQUESTS_CA_BUNDLE in `proxy --tls -- CMD`. Those two
// replace the roots a program trusts (Go, curl and OpenSSL, Python), where NODE_EXTRA_CA_CERTS
// adds to them: pointed at the proxy's CA alone, every other HTTPS call of CMD (a package
// registry, an identity provider) would fail to verify. So they get the system's roots with the
// proxy's CA after them.
import { readFile, rename, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { rootCertificates } from 'node:tls';

/** Where the system keeps its roots as one PEM file (the places Go looks, in its order). */
const SYSTEM_BUNDLES = [
  '/etc/ssl/certs/ca-certificates.crt',
  '/etc/pki/tls/certs/ca-bundle.crt',
  '/etc/ssl/ca-bundle.pem',
  '/etc/pki/tls/cacert.pem',
  '/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem',
  '/etc/ssl/cert.pem',
];

export const CA_BUNDLE_NAME = 'ca-bundle.pem';

/**
 * Writes the system's roots (else Node's own, Mozilla's list) plus the CA at `caPath` next to
 * it, as ca-bundle.pem; returns its path.
 */
export async function writeCaBundle(caPath: string): Promise<string> {
  const ca = await readFile(caPath, 'utf8');
  let roots: string | undefined;
  for (const file of SYSTEM_BUNDLES) {
    try {
      roots = await readFile(file, 'utf8');
      break;
    } catch {
      // not this system's place
    }
  }
  const bundle = join(dirname(caPath), CA_BUNDLE_NAME);
  const temporary = `${bundle}.${process.pid}.tmp`;
  await writeFile(temporary, `${(roots ?? rootCertificates.join('\n')).trimEnd()}\n${ca.trimEnd()}\n`, { mode: 0o644 });
  await rename(temporary, bundle);
  return bundle;
}
