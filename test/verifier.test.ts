// Reading a tenant's JWKS (URL or file) and checking token signatures against it with jose:
// the tenant's own token verifies; tampered, unsigned, foreign-key and key-confusion tokens do
// not; results are remembered per token; a token naming an unknown key id makes a remote set
// be fetched again, at most once per cooldown.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exportJWK, exportSPKI, generateKeyPair, SignJWT, type JWK } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadJwks, readJwks } from '../keys/jwks.ts';
import { tenantKeys } from '../keys/tenant-keys.ts';
import { JWKS_REFETCH_COOLDOWN_MS, TokenVerifier } from '../keys/verifier.ts';
import { keyConfusionTokens, signedByForeignKey, unsignedToken, withScopeAdded } from '../suites/tokens.ts';

const dir = mkdtempSync(join(tmpdir(), 'tmi-keys-'));
let server: Server;
let origin: string;
/** What the key server serves at /jwks.json, and how often it was asked. */
let served: { keys: JWK[] } = { keys: [] };
let fetches = 0;

type KeyPair = Awaited<ReturnType<typeof generateKeyPair>>;
let tenant: KeyPair;
let rotated: KeyPair;
let tenantJwk: JWK;
let rotatedJwk: JWK;

const sign = (key: KeyPair, kid: string, claims: Record<string, unknown> = { scope: 'read:resource_servers', aud: '/api/v2/' }) =>
  new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid, typ: 'JWT' }).setIssuedAt().setExpirationTime('1h').sign(key.privateKey);

beforeAll(async () => {
  [tenant, rotated] = await Promise.all([generateKeyPair('RS256', { extractable: true }), generateKeyPair('RS256', { extractable: true })]);
  tenantJwk = { ...(await exportJWK(tenant.publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' };
  rotatedJwk = { ...(await exportJWK(rotated.publicKey)), kid: 'k2', alg: 'RS256', use: 'sig' };
  served = { keys: [tenantJwk] };
  server = createServer((req, res) => {
    if (req.url === '/jwks.json') {
      fetches++;
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(served));
    } else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  rmSync(dir, { recursive: true, force: true });
});

describe('loadJwks / readJwks', () => {
  it('reads a key set from a URL, a file path and a file: URL', async () => {
    expect((await loadJwks(`${origin}/jwks.json`))?.keys[0]?.kid).toBe('k1');
    const file = join(dir, 'jwks.json');
    writeFileSync(file, JSON.stringify({ keys: [tenantJwk] }));
    expect((await loadJwks(file))?.keys).toHaveLength(1);
    expect((await loadJwks(`file://${file}`))?.keys).toHaveLength(1);
  });

  it('says why it cannot, and never throws', async () => {
    expect(await readJwks(`${origin}/missing`)).toEqual({ problem: `${origin}/missing answered 404` });
    expect(await readJwks(join(dir, 'nope.json'))).toMatchObject({ problem: expect.stringContaining('could not be read (ENOENT)') });
    writeFileSync(join(dir, 'not-json.json'), '<html>');
    expect(await readJwks(join(dir, 'not-json.json'))).toMatchObject({ problem: expect.stringContaining('is not JSON') });
    writeFileSync(join(dir, 'no-keys.json'), '{"issuer":"x"}');
    expect(await readJwks(join(dir, 'no-keys.json'))).toMatchObject({ problem: expect.stringContaining('no "keys" array') });
    expect(await loadJwks(`${origin}/missing`)).toBeUndefined();
    const refused = await readJwks('http://127.0.0.1:9/jwks.json');
    expect('problem' in refused && refused.problem).toMatch(/could not be fetched/);
    expect(await readJwks('http://127.0.0.1:70000/jwks.json')).toEqual({
      problem: 'http://127.0.0.1:70000/jwks.json is not a usable URL: port 70000 is above 65535',
    });
  });
});

describe('TokenVerifier', () => {
  it("the tenant's token verifies; tampered, unsigned, foreign-key and key-confusion tokens do not", async () => {
    const verifier = new TokenVerifier({ keys: [tenantJwk] });
    const token = await sign(tenant, 'k1');
    expect(await verifier.verify(token)).toBe(true);
    expect(await verifier.verify(withScopeAdded(token, 'delete:token_exchange_profiles'))).toBe(false);
    expect(await verifier.verify(unsignedToken(token))).toBe(false);
    expect(await verifier.verify(await signedByForeignKey(token))).toBe(false);
    const confused = await keyConfusionTokens(token, { keys: [tenantJwk] });
    expect(confused.length).toBeGreaterThan(0);
    for (const t of confused) expect(await verifier.verify(t)).toBe(false);
    // The same key's PEM as an HMAC secret, made here too: the check does not depend on the suite's builder.
    const pem = await exportSPKI(tenant.publicKey);
    const hs256 = await new SignJWT({ scope: 'delete:token_exchange_profiles' })
      .setProtectedHeader({ alg: 'HS256', kid: 'k1' })
      .sign(new TextEncoder().encode(pem));
    expect(await verifier.verify(hs256)).toBe(false);
    expect(await verifier.verify('not-a-jwt')).toBeUndefined();
  });

  it('tries every key when the token names none', async () => {
    const verifier = new TokenVerifier({ keys: [rotatedJwk, tenantJwk] });
    const noKid = await new SignJWT({ aud: '/api/v2/' }).setProtectedHeader({ alg: 'RS256' }).sign(tenant.privateKey);
    expect(await verifier.verify(noKid)).toBe(true);
    expect(await verifier.verify(await signedByForeignKey(noKid))).toBe(false);
  });

  it('remembers each token: one check per token, however often it comes', async () => {
    const verifier = new TokenVerifier({ keys: [tenantJwk] });
    const token = await sign(tenant, 'k1');
    expect(verifier.cached(token)).toBe('unknown');
    const [a, b] = await Promise.all([verifier.verify(token), verifier.verify(token)]);
    expect([a, b]).toEqual([true, true]);
    expect(verifier.cached(token)).toBe(true);
    const started = performance.now();
    for (let i = 0; i < 10_000; i++) verifier.cached(token);
    expect(performance.now() - started).toBeLessThan(200);
  });

  it('fetches a remote set again on an unknown key id, at most once per cooldown', async () => {
    let now = 1_000_000;
    served = { keys: [tenantJwk] };
    const source = `${origin}/jwks.json`;
    const keys = await tenantKeys(source);
    expect('verifier' in keys).toBe(true);
    const verifier = new TokenVerifier((keys as { jwks: { keys: JWK[] } }).jwks, { refetchFrom: source, now: () => now });
    const before = fetches;
    // Within the cooldown of the first fetch: an unknown kid is not the tenant's, no refetch.
    expect(await verifier.verify(await sign(rotated, 'k2'))).toBe(false);
    expect(fetches).toBe(before);
    // The tenant rotated its keys; after the cooldown a token with the new kid makes one refetch.
    served = { keys: [tenantJwk, rotatedJwk] };
    now += JWKS_REFETCH_COOLDOWN_MS;
    expect(await verifier.verify(await sign(rotated, 'k2', { n: 1 }))).toBe(true);
    expect(fetches).toBe(before + 1);
    expect(verifier.refetches).toBe(1);
    // Another unknown kid right after: no second fetch within the cooldown.
    expect(await verifier.verify(await sign(rotated, 'k3'))).toBe(false);
    expect(fetches).toBe(before + 1);
  });

  it('a file set is never fetched again', async () => {
    const file = join(dir, 'file-jwks.json');
    writeFileSync(file, JSON.stringify({ keys: [tenantJwk] }));
    const keys = await tenantKeys(file);
    if (!('verifier' in keys)) throw new Error(keys.problem);
    expect(await keys.verifier.verify(await sign(rotated, 'k2'))).toBe(false);
    expect(keys.verifier.refetches).toBe(0);
  });
});
