// How `proxy --tls -- CMD` makes CMD trust the proxy's local CA, through the variables each TLS
// stack reads. NODE_EXTRA_CA_CERTS adds certificates to Node's roots; SSL_CERT_FILE (Go,
// OpenSSL, Python's ssl), REQUESTS_CA_BUNDLE (Python requests) and CURL_CA_BUNDLE (curl)
// replace the roots. Pointed at the CA alone, the latter would break every other HTTPS call of
// CMD (a registry, an identity provider), and a variable the user already set names roots they
// chose (a corporate bundle). So each variable gets a file of the roots it would have had —
// the file it already names, else for the replacing ones the system's roots — with the CA after them.
import { readFile, rename, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { rootCertificates } from 'node:tls';

/** Adds to Node's roots: the CA alone when unset. */
export const ADDING_VARIABLE = 'NODE_EXTRA_CA_CERTS';
/** Replace the roots: the system's roots plus the CA when unset. */
export const REPLACING_VARIABLES = ['SSL_CERT_FILE', 'REQUESTS_CA_BUNDLE', 'CURL_CA_BUNDLE'] as const;
/** The system's roots plus the CA, beside the CA. */
export const CA_BUNDLE_NAME = 'ca-bundle.pem';

/** Where the system keeps its roots as one PEM file (the places Go looks, in its order). */
const SYSTEM_BUNDLES = [
  '/etc/ssl/certs/ca-certificates.crt',
  '/etc/pki/tls/certs/ca-bundle.crt',
  '/etc/ssl/ca-bundle.pem',
  '/etc/pki/tls/cacert.pem',
  '/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem',
  '/etc/ssl/cert.pem',
];

/** Sets the trust variables in `env` (CMD's environment) so that CMD trusts the CA at `caPath`. */
export async function trustCa(env: NodeJS.ProcessEnv, caPath: string, log: (line: string) => void): Promise<void> {
  const ca = (await readFile(caPath, 'utf8')).trimEnd();
  let systemBundle: string | undefined;
  for (const name of [ADDING_VARIABLE, ...REPLACING_VARIABLES]) {
    const current = env[name];
    if (!current) {
      if (name === ADDING_VARIABLE) env[name] = caPath;
      else env[name] = systemBundle ??= await writeBundle(join(dirname(caPath), CA_BUNDLE_NAME), await systemRoots(), ca);
      continue;
    }
    let roots: string;
    try {
      roots = await readFile(current, 'utf8');
    } catch (error) {
      log(`${name} names ${current}, which cannot be read (${(error as Error).message}): left as it is, so what reads it may not trust the proxy`);
      continue;
    }
    if (roots.includes(ca)) continue; // trusts the CA already
    env[name] = await writeBundle(join(dirname(caPath), `${name.toLowerCase().replaceAll('_', '-')}-with-ca.pem`), roots, ca);
  }
}

async function systemRoots(): Promise<string> {
  for (const file of SYSTEM_BUNDLES) {
    try {
      return await readFile(file, 'utf8');
    } catch {
      // not this system's place
    }
  }
  return rootCertificates.join('\n'); // Node's own (Mozilla's list)
}

/** Writes `roots` then `ca` to `path` (through a temporary name: a reader never sees half a file). */
async function writeBundle(path: string, roots: string, ca: string): Promise<string> {
  const temporary = `${path}.${process.pid}.tmp`;
  await writeFile(temporary, `${roots.trimEnd()}\n${ca}\n`, { mode: 0o644 });
  await rename(temporary, path);
  return path;
}
