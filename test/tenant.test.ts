// What the kit learns of the tenant's tokens (keys/tenant.ts), in its order: the issuer from the
// config, else the tenant's discovery document, else the iss of its tokens whose signature
// verifies (never an unverified token's, never the address); the keys from the set the user
// named, else the discovery document's jwks_uri, else {auth_url}/.well-known/jwks.json. And the
// one place that sets a token's facts from it.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exportJWK, generateKeyPair, SignJWT, type JWK } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issuerLine, learnTenant, readDiscovery, TenantTokens, tenantTokensData, withIssuerFromTokens } from '../keys/tenant.ts';
import { buildExchange } from '../rules/exchange.ts';
import { credentialState } from '../rules/credential.ts';
import { signedByForeignKey } from '../suites/tokens.ts';

const dir = mkdtempSync(join(tmpdir(), 'tmi-tenant-'));

type KeyPair = Awaited<ReturnType<typeof generateKeyPair>>;
let tenantKey: KeyPair;
let jwk: (kid: string) => JWK;

/** A tenant's well-known documents: what each path answers (missing: 404). */
let documents: Record<string, unknown> = {};
let server: Server;
let origin: string;

const ISSUER = 'https://tenant.example.invalid/';

/** The token of a request that sends `token`, as every driver reads it. */
const tokenOf = (token: string) =>
  buildExchange({ method: 'GET', url: `${origin}/api/v2/resource-servers/x`, requestHeaders: { authorization: `Bearer ${token}` } }).token;

const sign = (claims: Record<string, unknown>, kid = 'default') =>
  new SignJWT({ aud: `${ISSUER}api/v2/`, scope: 'read:resource_servers', ...claims })
    .setProtectedHeader({ alg: 'RS256', kid, typ: 'JWT' })
    .setIssuedAt()
    .setExpirationTime('1h')
    .sign(tenantKey.privateKey);

beforeAll(async () => {
  tenantKey = await generateKeyPair('RS256', { extractable: true });
  const publicJwk = await exportJWK(tenantKey.publicKey);
  jwk = (kid) => ({ ...publicJwk, kid, alg: 'RS256', use: 'sig' });
  server = createServer((req, res) => {
    const document = documents[req.url ?? ''];
    if (document === undefined) return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(document));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  rmSync(dir, { recursive: true, force: true });
});

/** The discovery document a tenant behind a gateway serves: its canonical issuer, keys at a path of ours. */
const discovery = (extra: Record<string, unknown> = {}) => ({
  issuer: ISSUER,
  token_endpoint: `${ISSUER}oauth/token`,
  jwks_uri: `${origin}/keys/discovered.json`,
  ...extra,
});

describe('the issuer, in order: config, discovery document, verified tokens', () => {
  it('the configured issuer wins over the discovery document', async () => {
    documents = { '/.well-known/openid-configuration': discovery(), '/keys/discovered.json': { keys: [jwk('discovered')] } };
    const tenant = await learnTenant({ issuer: 'https://configured.example.com/', wellKnownAt: origin });
    expect(tenant.issuer).toEqual({ issuer: 'https://configured.example.com/', from: 'config' });
    expect(issuerLine(tenant)).toBe('issuer https://configured.example.com/ (from issuer in the config)');
  });

  it("without one configured, the discovery document's issuer, whatever address the tenant was reached at", async () => {
    documents = { '/.well-known/openid-configuration': discovery(), '/keys/discovered.json': { keys: [jwk('discovered')] } };
    const tenant = await learnTenant({ wellKnownAt: origin });
    expect(tenant.issuer).toEqual({ issuer: ISSUER, from: 'discovery' });
    expect(issuerLine(tenant)).toBe(`issuer ${ISSUER} (from the discovery document)`);
    // A verified token naming another issuer does not override what the tenant said.
    const learned = await withIssuerFromTokens(tenant, [await sign({ iss: 'https://elsewhere.example.com/' }, 'discovered')]);
    expect(learned.issuer).toEqual({ issuer: ISSUER, from: 'discovery' });
  });

  it('without a discovery document, the iss of tokens whose signature verifies against the keys', async () => {
    documents = { '/.well-known/jwks.json': { keys: [jwk('default')] } };
    const tenant = await learnTenant({ wellKnownAt: origin });
    expect(tenant.issuer).toBeUndefined();
    const learned = await withIssuerFromTokens(tenant, [await sign({ iss: ISSUER })]);
    expect(learned.issuer).toEqual({ issuer: ISSUER, from: 'tokens' });
    expect(issuerLine(learned)).toBe(`issuer ${ISSUER} (from the tokens the token endpoint issued)`);
  });

  it("an unverified token's iss is never learned: signed by another key, or no keys to check it with", async () => {
    documents = { '/.well-known/jwks.json': { keys: [jwk('default')] } };
    const withKeys = await learnTenant({ wellKnownAt: origin });
    const foreign = await signedByForeignKey(await sign({ iss: 'https://attacker.example.com/' }));
    expect((await withIssuerFromTokens(withKeys, [foreign])).issuer).toBeUndefined();

    documents = {};
    const withoutKeys = await learnTenant({ wellKnownAt: origin });
    expect(withoutKeys.keys && 'problem' in withoutKeys.keys).toBe(true);
    const learned = await withIssuerFromTokens(withoutKeys, [await sign({ iss: ISSUER })]);
    expect(learned.issuer).toBeUndefined();
    expect(issuerLine(learned)).toBe('issuer not known: not judged');
  });

  it('verified tokens naming different issuers: none is learned', async () => {
    documents = { '/.well-known/jwks.json': { keys: [jwk('default')] } };
    const tenant = await learnTenant({ wellKnownAt: origin });
    const learned = await withIssuerFromTokens(tenant, [await sign({ iss: ISSUER }), await sign({ iss: 'https://other.example.com/' })]);
    expect(learned.issuer).toBeUndefined();
  });

  it('a discovery document that is not JSON, not an object, or not 200 says nothing', async () => {
    documents = { '/.well-known/openid-configuration': ['not', 'an', 'object'] };
    expect(await readDiscovery(origin)).toBeUndefined();
    documents = {};
    expect(await readDiscovery(origin)).toBeUndefined();
    expect(await readDiscovery('http://127.0.0.1:1')).toBeUndefined();
  });
});

describe('the keys, in order: named, the discovery document, the default location', () => {
  it('a named set wins over the discovery document', async () => {
    documents = { '/.well-known/openid-configuration': discovery(), '/keys/discovered.json': { keys: [jwk('discovered')] } };
    const file = join(dir, 'named.json');
    writeFileSync(file, JSON.stringify({ keys: [jwk('named')] }));
    const tenant = await learnTenant({ jwks: file, wellKnownAt: origin });
    expect(tenant.keysFrom).toBe('given');
    expect(tenant.keys && 'jwks' in tenant.keys ? tenant.keys.jwks.keys[0]!.kid : undefined).toBe('named');
    // The issuer still comes from the discovery document.
    expect(tenant.issuer?.from).toBe('discovery');
  });

  it("without a named set, the discovery document's jwks_uri", async () => {
    documents = {
      '/.well-known/openid-configuration': discovery(),
      '/keys/discovered.json': { keys: [jwk('discovered')] },
      '/.well-known/jwks.json': { keys: [jwk('default')] },
    };
    const tenant = await learnTenant({ wellKnownAt: origin });
    expect(tenant.keysFrom).toBe('discovery');
    expect(tenant.keys && 'jwks' in tenant.keys ? tenant.keys.jwks.keys[0]!.kid : undefined).toBe('discovered');
  });

  it('a jwks_uri the kit cannot reach (the public address behind a gateway): the default location', async () => {
    documents = {
      '/.well-known/openid-configuration': discovery({ jwks_uri: `${ISSUER}.well-known/jwks.json` }),
      '/.well-known/jwks.json': { keys: [jwk('default')] },
    };
    const tenant = await learnTenant({ wellKnownAt: origin });
    expect(tenant.keysFrom).toBe('default');
    expect(tenant.keys && 'jwks' in tenant.keys ? tenant.keys.jwks.keys[0]!.kid : undefined).toBe('default');
  });

  it('no discovery document: {auth_url}/.well-known/jwks.json; none there either: why, in words', async () => {
    documents = { '/.well-known/jwks.json': { keys: [jwk('default')] } };
    const found = await learnTenant({ wellKnownAt: origin });
    expect(found.keysFrom).toBe('default');
    expect(found.keys && 'verifier' in found.keys).toBe(true);
    documents = {};
    const none = await learnTenant({ wellKnownAt: origin });
    expect(none.keys && 'problem' in none.keys ? none.keys.problem : undefined).toBe(`${origin}/.well-known/jwks.json answered 404`);
  });

  it('nowhere to ask (validate) and nothing named: no keys and no issuer', async () => {
    const tenant = await learnTenant({});
    expect(tenant).toEqual({});
  });
});

describe('TenantTokens.settle: the one place a token gets its facts', () => {
  it("sets the issuer and the keys' verdict; the tenant's token is valid, one naming another issuer is judged so", async () => {
    documents = { '/.well-known/openid-configuration': discovery(), '/keys/discovered.json': { keys: [jwk('discovered')] } };
    const tenant = TenantTokens.of(await learnTenant({ wellKnownAt: origin }));
    const genuine = await sign({ iss: ISSUER }, 'discovered');
    const token = tokenOf(genuine);
    await tenant.check(token, genuine);
    expect(token).toMatchObject({ signatureValid: true, issuerExpected: ISSUER });
    expect(credentialState({ token, startedAt: new Date().toISOString() })).toBe('valid');

    const otherIssuer = await sign({ iss: 'https://other-tenant.example.com/' }, 'discovered');
    const other = tokenOf(otherIssuer);
    await tenant.check(other, otherIssuer);
    expect(credentialState({ token: other, startedAt: new Date().toISOString() })).toBe('wrong-issuer');
  });

  it('a fact the driver already knows stays (a token the suite forged stays forged)', async () => {
    documents = { '/.well-known/jwks.json': { keys: [jwk('default')] } };
    const tenant = TenantTokens.of(await learnTenant({ wellKnownAt: origin }));
    const genuine = await sign({ iss: ISSUER });
    const token = tokenOf(genuine);
    token.signatureValid = false;
    await tenant.check(token, genuine);
    expect(token.signatureValid).toBe(false);
  });

  it('no issuer known: the issuer is not judged, even for a token naming any issuer', async () => {
    documents = {};
    const tenant = TenantTokens.of(await learnTenant({ wellKnownAt: origin }));
    const anyIssuer = await sign({ iss: 'https://whoever.example.com/' });
    const token = tokenOf(anyIssuer);
    await tenant.check(token, anyIssuer);
    expect(token.issuerExpected).toBeUndefined();
    expect(token.signatureValid).toBeUndefined();
    expect(credentialState({ token, startedAt: new Date().toISOString() })).toBe('unverified');
  });

  it('crosses to another thread or process as data and settles the same', async () => {
    documents = { '/.well-known/openid-configuration': discovery(), '/keys/discovered.json': { keys: [jwk('discovered')] } };
    const data = structuredClone(tenantTokensData(await learnTenant({ wellKnownAt: origin })));
    const tenant = TenantTokens.fromData(data);
    const genuine = await sign({ iss: ISSUER }, 'discovered');
    const token = tokenOf(genuine);
    await tenant.check(token, genuine);
    expect(token).toMatchObject({ signatureValid: true, issuerExpected: ISSUER });
  });
});
