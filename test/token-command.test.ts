// `tmi-conform token --attack NAME`: makes an attack case's token again from a valid token in
// TOKEN, the way the suites make it (suites/tokens.ts); bad input is one line and exit 2.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createHmac, createPublicKey, createSecretKey, X509Certificate } from 'node:crypto';
import {
  compactVerify,
  createLocalJWKSet,
  decodeJwt,
  decodeProtectedHeader,
  exportJWK,
  generateKeyPair,
  importJWK,
  importX509,
  jwtVerify,
  SignJWT,
  type JSONWebKeySet,
} from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run } from '../cli/token.ts';
import { UsageError } from '../core/errors.ts';

const BIN = fileURLToPath(new URL('../bin/tmi-conform.js', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'tmi-token-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function cli(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => k !== 'TOKEN' && !k.startsWith('VITEST')));
  const child = spawn(process.execPath, [BIN, 'token', ...args], { env: { ...base, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c) => (stdout += c));
  child.stderr.on('data', (c) => (stderr += c));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}

/** The attack token `run` prints for TOKEN=`token`. */
async function made(token: string, ...args: string[]): Promise<string> {
  let printed = '';
  expect(await run(args, { env: { TOKEN: token }, out: (text) => (printed += text) })).toBe(0);
  expect(printed.endsWith('\n')).toBe(true);
  return printed.trim();
}

describe('tmi-conform token', () => {
  let tenantKey: Awaited<ReturnType<typeof generateKeyPair>>;
  let token: string;
  let jwksFile: string;
  const claims = {
    iss: 'https://tenant.example.com/',
    sub: 'client-full@clients',
    aud: 'https://tenant.example.com/api/v2/',
    azp: 'client-full',
    scope: 'read:resource_servers',
    exp: 4102444800,
  };

  beforeAll(async () => {
    tenantKey = await generateKeyPair('RS256', { extractable: true });
    token = await new SignJWT(claims).setProtectedHeader({ alg: 'RS256', typ: 'JWT', kid: 'tenant-1' }).sign(tenantKey.privateKey);
    jwksFile = join(dir, 'jwks.json');
    writeFileSync(jwksFile, JSON.stringify({ keys: [{ ...(await exportJWK(tenantKey.publicKey)), kid: 'tenant-1', use: 'sig', alg: 'RS256' }] }));
  });

  it('--help says how, and bad input is one line on stderr with exit code 2', async () => {
    const [help, noToken, unknown, expired, onCommandLine, noScope, notJwt] = await Promise.all([
      cli(['--help']),
      cli(['--attack', 'unsigned']),
      cli(['--attack', 'alg-none'], { TOKEN: token }),
      cli(['--attack', 'expired'], { TOKEN: token }),
      cli(['--attack', 'unsigned', token]),
      cli(['--attack', 'tampered-scope'], { TOKEN: token }),
      cli(['--attack', 'unsigned'], { TOKEN: 'not-a-token' }),
    ]);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage: TOKEN=… tmi-conform token --attack NAME/);
    expect(help.stdout).toContain('expired              cannot be made');
    const oneLine = (r: { code: number | null; stdout: string; stderr: string }, cause: RegExp) => {
      expect(r.code, r.stderr).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
      expect(r.stderr).toMatch(cause);
    };
    oneLine(noToken, /^tmi-conform: token: set TOKEN to a valid bearer token of the client/);
    oneLine(
      unknown,
      /unknown attack "alg-none" \(attacks: unsigned, alg-none-capitalized, .*, key-confusion, foreign-key, other-issuer, embedded-jwk, .*, hs256-client-secret\)/,
    );
    oneLine(expired, /an expired token cannot be made/);
    oneLine(onCommandLine, /unexpected argument \(the valid token is read from TOKEN, never from the command line\)/);
    oneLine(noScope, /--attack tampered-scope needs --scope S/);
    oneLine(notJwt, /TOKEN is not a JWT/);
    // The token given on the command line is not echoed back in the error.
    expect(onCommandLine.stderr).not.toContain(token.split('.')[2]!);
  }, 60_000);

  it('unsigned: the same claims, alg "none", an empty signature', async () => {
    const attack = await made(token, '--attack', 'unsigned');
    expect(decodeProtectedHeader(attack).alg).toBe('none');
    expect(attack.endsWith('.')).toBe(true);
    expect(decodeJwt(attack)).toEqual(claims);
  });

  it('corrupted-signature: header and claims kept, the signature altered (it no longer verifies)', async () => {
    const attack = await made(`Bearer ${token}`, '--attack', 'corrupted-signature');
    expect(attack.split('.').slice(0, 2)).toEqual(token.split('.').slice(0, 2));
    expect(attack.split('.')[2]).not.toBe(token.split('.')[2]);
    await expect(compactVerify(attack, tenantKey.publicKey)).rejects.toThrow();
  });

  it('tampered-scope: the scope added to the claims, the original signature kept', async () => {
    const attack = await made(token, '--attack', 'tampered-scope', '--scope', 'delete:token_exchange_profiles');
    expect(decodeJwt(attack).scope).toBe('read:resource_servers delete:token_exchange_profiles');
    expect(attack.split('.')[2]).toBe(token.split('.')[2]);
    expect(attack.split('.')[0]).toBe(token.split('.')[0]);
  });

  it("key-confusion: HS256 keyed with the tenant's public key as PEM, from --jwks", async () => {
    const attack = await made(token, '--attack', 'key-confusion', '--jwks', jwksFile);
    expect(decodeProtectedHeader(attack)).toMatchObject({ alg: 'HS256', kid: 'tenant-1' });
    const pem = createPublicKey({ key: await exportJWK(tenantKey.publicKey), format: 'jwk' }).export({ type: 'spki', format: 'pem' }) as string;
    expect((await jwtVerify(attack, new TextEncoder().encode(pem))).payload).toEqual(claims);
    await expect(run(['--attack', 'key-confusion'], { env: { TOKEN: token }, out: () => undefined })).rejects.toThrow(UsageError);
    await expect(run(['--attack', 'key-confusion', '--jwks', join(dir, 'missing.json')], { env: { TOKEN: token }, out: () => undefined })).rejects.toThrow(
      /--jwks: .*could not be read/,
    );
  });

  it("foreign-key: the same header and claims signed RS256 by a key that is not the tenant's", async () => {
    const attack = await made(token, '--attack', 'foreign-key');
    expect(decodeProtectedHeader(attack)).toMatchObject({ alg: 'RS256', kid: 'tenant-1' });
    expect(decodeJwt(attack)).toEqual(claims);
    await expect(compactVerify(attack, tenantKey.publicKey)).rejects.toThrow();
  });

  it('the alg none spellings, the signature removed, emptied or zeroed, and the psychic ECDSA signature', async () => {
    const [header, payload, signature] = token.split('.') as [string, string, string];
    for (const [attack, alg] of [
      ['alg-none-capitalized', 'None'],
      ['alg-none-uppercase', 'NONE'],
      ['alg-none-mixed-case', 'nOnE'],
    ] as const) {
      const made_ = await made(token, '--attack', attack);
      expect(decodeProtectedHeader(made_).alg, attack).toBe(alg);
      expect(made_.endsWith('.'), attack).toBe(true);
      expect(decodeJwt(made_), attack).toEqual(claims);
    }
    expect(await made(token, '--attack', 'signature-stripped')).toBe(`${header}.${payload}`);
    expect(await made(token, '--attack', 'signature-empty')).toBe(`${header}.${payload}.`);
    const zero = await made(token, '--attack', 'zero-signature');
    expect(zero.split('.').slice(0, 2)).toEqual([header, payload]);
    expect(Buffer.from(zero.split('.')[2]!, 'base64url')).toEqual(Buffer.alloc(Buffer.from(signature, 'base64url').length));
    for (const [attack, alg, bytes] of [
      ['psychic-es256', 'ES256', 64],
      ['psychic-es384', 'ES384', 96],
    ] as const) {
      const psychic = await made(token, '--attack', attack);
      expect(decodeProtectedHeader(psychic), attack).toMatchObject({ alg, kid: 'tenant-1' });
      expect(Buffer.from(psychic.split('.')[2]!, 'base64url'), attack).toEqual(Buffer.alloc(bytes));
    }
  });

  it('embedded-jwk, embedded-x5c, jku and x5u: signed by the attacker key the header carries or names; --key-set prints what the URL serves', async () => {
    const jwk = await made(token, '--attack', 'embedded-jwk');
    const jwkHeader = decodeProtectedHeader(jwk);
    expect((await jwtVerify(jwk, await importJWK(jwkHeader.jwk!, 'RS256'))).payload).toEqual(claims);
    const x5c = await made(token, '--attack', 'embedded-x5c');
    const der = decodeProtectedHeader(x5c).x5c![0]!;
    const certificate = new X509Certificate(Buffer.from(der, 'base64'));
    expect(certificate.verify(certificate.publicKey)).toBe(true);
    expect((await jwtVerify(x5c, certificate.publicKey)).payload).toEqual(claims);
    let keySet = '';
    expect(await run(['--key-set', 'jku'], { out: (text) => (keySet += text) })).toBe(0);
    let pem = '';
    expect(await run(['--key-set', 'x5u'], { out: (text) => (pem += text) })).toBe(0);
    const jku = await made(token, '--attack', 'jku', '--key-url', 'http://127.0.0.1:9/jwks.json');
    expect(decodeProtectedHeader(jku).jku).toBe('http://127.0.0.1:9/jwks.json');
    expect((await jwtVerify(jku, createLocalJWKSet(JSON.parse(keySet) as JSONWebKeySet))).payload).toEqual(claims);
    const x5u = await made(token, '--attack', 'x5u', '--key-url', 'http://127.0.0.1:9/cert.pem');
    expect(decodeProtectedHeader(x5u).x5u).toBe('http://127.0.0.1:9/cert.pem');
    expect((await jwtVerify(x5u, await importX509(pem, 'RS256'))).payload).toEqual(claims);
    await expect(run(['--attack', 'jku'], { env: { TOKEN: token }, out: () => undefined })).rejects.toThrow(/--attack jku needs --key-url URL/);
    await expect(run(['--attack', 'unsigned', '--key-url', 'http://x'], { env: { TOKEN: token }, out: () => undefined })).rejects.toThrow(
      /--key-url goes with --attack jku or x5u only/,
    );
  });

  it('kid injection and HS256 with secrets an attacker may know: the client secret read from CLIENT_SECRET, never the command line', async () => {
    const hmacKey = (secret: string) => createSecretKey(Buffer.from(secret));
    const traversal = await made(token, '--attack', 'kid-path-traversal');
    expect(decodeProtectedHeader(traversal)).toMatchObject({ alg: 'HS256', kid: '../../../../../../dev/null' });
    expect(traversal.split('.')[2]).toBe(createHmac('sha256', '').update(traversal.split('.').slice(0, 2).join('.')).digest('base64url'));
    const injection = await made(token, '--attack', 'kid-sql-injection');
    const injected = /UNION SELECT '([^']+)'/.exec(String(decodeProtectedHeader(injection).kid))![1]!;
    expect((await jwtVerify(injection, hmacKey(injected))).payload).toEqual(claims);
    const empty = await made(token, '--attack', 'hs256-empty-secret');
    expect(empty.split('.')[2]).toBe(createHmac('sha256', '').update(empty.split('.').slice(0, 2).join('.')).digest('base64url'));
    expect((await jwtVerify(await made(token, '--attack', 'hs256-weak-secret', '--secret', 'changeme'), hmacKey('changeme'))).payload).toEqual(claims);
    let printed = '';
    expect(
      await run(['--attack', 'hs256-client-secret', '--scope', 'delete:token_exchange_profiles'], {
        env: { TOKEN: token, CLIENT_SECRET: 'the-clients-own' },
        out: (text) => (printed += text),
      }),
    ).toBe(0);
    expect((await jwtVerify(printed.trim(), hmacKey('the-clients-own'))).payload.scope).toBe('read:resource_servers delete:token_exchange_profiles');
    await expect(run(['--attack', 'hs256-client-secret', '--scope', 'x'], { env: { TOKEN: token }, out: () => undefined })).rejects.toThrow(
      /CLIENT_SECRET in the environment/,
    );
    await expect(run(['--attack', 'hs256-client-secret', '--secret', 'x'], { env: { TOKEN: token }, out: () => undefined })).rejects.toThrow(
      /--secret goes with --attack hs256-weak-secret only/,
    );
  });

  it("other-issuer: the same claims naming another issuer than the token's own, signed by a key that is not the tenant's", async () => {
    const attack = await made(token, '--attack', 'other-issuer');
    const { iss, ...rest } = decodeJwt(attack);
    expect(iss).toEqual(expect.any(String));
    expect(iss).not.toBe(claims['iss']);
    const { iss: _own, ...expected } = claims;
    expect(rest).toEqual(expected);
    await expect(compactVerify(attack, tenantKey.publicKey)).rejects.toThrow();
  });
});
