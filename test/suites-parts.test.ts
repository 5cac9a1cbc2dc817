// The building blocks of the suites, each proven both ways: configuration errors, derived
// tokens, and the arbitraries derived from the schemas (pacing:
// test/pacing.test.ts).
import { createPublicKey, type JsonWebKeyInput } from 'node:crypto';
import fc from 'fast-check';
import { decodeJwt, decodeProtectedHeader, exportJWK, generateKeyPair, importJWK, jwtVerify, SignJWT, type JWK } from 'jose';
import { describe, expect, it } from 'vitest';
import { judgeExchange } from '../rules/index.ts';
import { schemaValidator } from '../rules/schemas.ts';
import {
  arbitraryFromSchema,
  invalidSessionUpdates,
  invalidUpdateExamples,
  malformedAuthorizationExamples,
  malformedAuthorizations,
  ODD_ID_PREFIX,
  oddIdExamples,
  oddIds,
  sessionMetadataSchema,
  validMetadataExamples,
  validSessionMetadata,
} from '../suites/arbitraries.ts';
import { buildExchange } from '../rules/exchange.ts';
import { credentialState } from '../rules/credential.ts';
import { configFromEnv, mergeConfig, resolveConfig } from '../suites/config.ts';
import { assertEdgesThenRandom, boundedPredicate, MAX_SHRINK_STEPS } from '../suites/budget.ts';
import { corruptSignature, tokenRequest, keyConfusionTokens, scopesOfToken, signedByForeignKey, unsignedToken, withScopeAdded } from '../suites/tokens.ts';
import { jwt, claims, getExchange, updateExchange, session } from '../fixtures/exchanges.ts';

describe('configuration', () => {
  it('merges file < environment < flags, credentials and fixtures key by key', () => {
    const file = { base_url: 'http://a/api/v2', credentials: { full: { client_id: 'f', client_secret: 's' } }, fixtures: { resource_servers: ['rs_1'] } };
    const env = configFromEnv({ TMI_BASE_URL: 'http://b/api/v2', TMI_NO_SCOPE_TOKEN: 'eyJ.x.y', TMI_SESSIONS: 'sess_1, sess_2' });
    const merged = resolveConfig(mergeConfig(file, env, { base_url: 'http://c/api/v2/' }));
    expect(merged.baseUrl).toBe('http://c/api/v2');
    expect(merged.authUrl).toBe('http://c');
    expect(merged.audience).toBe('http://c/api/v2/');
    expect(merged.credentials).toEqual({ full: { client_id: 'f', client_secret: 's' }, no_scope: { token: 'eyJ.x.y' } });
    expect(merged.fixtures).toEqual({ sessions: [{ id: 'sess_1' }, { id: 'sess_2' }], resourceServers: ['rs_1'], tokenExchangeProfiles: [] });
    expect(merged.propertyRuns).toBe(25);
  });

  it('a session with its original metadata can be restored; one given by id cannot', () => {
    const config = resolveConfig({ base_url: 'http://a/api/v2', fixtures: { sessions: ['s1', { id: 's2', session_metadata: null }] } });
    expect(config.fixtures.sessions).toEqual([{ id: 's1' }, { id: 's2', original: { session_metadata: null } }]);
  });

  it('bad environment values name the variable', () => {
    expect(() => configFromEnv({ TMI_ALLOW_DESTRUCTIVE: 'perhaps' })).toThrow(/TMI_ALLOW_DESTRUCTIVE: "perhaps" is not true or false/);
    expect(() => configFromEnv({ TMI_BASE_URL: 'ftp://x' })).toThrow(/^run: TMI_BASE_URL: "ftp:\/\/x" is not an http\(s\) URL/);
  });
});

describe('property budget', () => {
  it('a failing property stops shrinking after the budget, keeping a real counterexample', async () => {
    let requests = 0;
    const predicate = boundedPredicate(25 + MAX_SHRINK_STEPS, async (values: number[]) => {
      requests++;
      expect(values.length).toBeLessThan(3);
    });
    const error = await fc
      .assert(fc.asyncProperty(fc.array(fc.integer(), { minLength: 3, maxLength: 200 }), predicate), { numRuns: 25 })
      .catch((e: Error) => e);
    expect(error).toBeInstanceOf(Error);
    expect(String((error as Error).message)).toMatch(/Counterexample: \[\[/);
    expect(requests).toBeLessThanOrEqual(25 + MAX_SHRINK_STEPS);
  });

  it('every edge case runs first, in order, whatever the number of runs; then exactly that many random ones', async () => {
    const edges = Array.from({ length: 12 }, (_, i) => ({ name: `edge ${i}`, value: -1 - i }));
    for (const runs of [1, 5]) {
      const seen: number[] = [];
      await assertEdgesThenRandom(
        fc.nat().map((value) => ({ name: 'random', value })),
        edges,
        runs,
        async ({ value }) => {
          seen.push(value);
        },
      );
      expect(seen.slice(0, edges.length)).toEqual(edges.map((e) => e.value));
      expect(seen).toHaveLength(edges.length + runs);
      expect(seen.slice(edges.length).every((v) => v >= 0)).toBe(true);
    }
  });

  it('a failing edge case is the counterexample, by its name, and costs no shrinking', async () => {
    let calls = 0;
    const edges = [
      { name: 'fine', value: 1 },
      { name: 'the last edge', value: 2 },
    ];
    const error = await assertEdgesThenRandom(fc.constant({ name: 'random', value: 0 }), edges, 1, async ({ value }) => {
      calls++;
      expect(value).not.toBe(2);
    }).catch((e: Error) => e);
    expect(String((error as Error).message)).toMatch(/Counterexample: \[\{"name":"the last edge","value":2\}\]/);
    expect(calls).toBe(2);
  });

  it('the budget counts the edge cases beside the runs and the shrinking steps', async () => {
    let calls = 0;
    const edges = Array.from({ length: 10 }, (_, i) => ({ name: `edge ${i}`, value: [i] }));
    // Every edge passes; every random array fails, and so does every candidate it shrinks to
    // (none is shorter than 100): shrinking goes on for as long as the budget lets it.
    const error = await assertEdgesThenRandom(
      fc.array(fc.integer(), { minLength: 100, maxLength: 200 }).map((value) => ({ name: 'random', value })),
      edges,
      3,
      async ({ value }) => {
        calls++;
        expect(value.length).toBeLessThan(3);
      },
    ).catch((e: Error) => e);
    expect(error).toBeInstanceOf(Error);
    // The whole budget and no more: edges + runs + shrinking steps (the first random run fails;
    // the runs it cut short are left to shrinking).
    expect(calls).toBe(edges.length + 3 + MAX_SHRINK_STEPS);
  });
});

describe('derived tokens', () => {
  it('a corrupted signature keeps header and claims and changes the signature', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 1, maxLength: 300 }), (signature) => {
        const token = `${jwt(claims()).split('.').slice(0, 2).join('.')}.${Buffer.from(signature).toString('base64url')}`;
        const corrupted = corruptSignature(token);
        expect(corrupted.split('.').slice(0, 2)).toEqual(token.split('.').slice(0, 2));
        expect(corrupted.split('.')[2]).not.toBe(token.split('.')[2]);
        expect(decodeJwt(corrupted)).toEqual(decodeJwt(token));
      }),
    );
    expect(scopesOfToken(jwt(claims('read:users update:users')))).toEqual(['read:users', 'update:users']);
    expect(scopesOfToken('opaque')).toEqual([]);
  });
});

describe('arbitraries derived from the JSON Schemas', () => {
  it('generated sessions and resource servers satisfy their schema and give no finding', () => {
    for (const name of ['session', 'resource-server'] as const) {
      const { schema, validate } = schemaValidator(name);
      fc.assert(
        fc.property(arbitraryFromSchema(schema), (document) => {
          expect(validate(document), JSON.stringify(validate.errors)).toBe(true);
        }),
        { numRuns: 100 },
      );
    }
    fc.assert(
      fc.property(arbitraryFromSchema(schemaValidator('resource-server').schema), (rs) => {
        const r = rs as Record<string, unknown>;
        // The cross-field rule is outside the schema: keep generated documents within it.
        if (typeof r['token_lifetime'] === 'number' && typeof r['token_lifetime_for_web'] === 'number' && r['token_lifetime_for_web'] > r['token_lifetime'])
          return;
        const found = judgeExchange(getExchange({ ...r, id: 'rs_1' })).findings.filter((f) => f.check === 'responseBodyMatchesSchema');
        expect(found).toEqual([]);
      }),
      { numRuns: 100 },
    );
  });

  it('each schema constraint rejects its violation (every constraint can fail)', () => {
    const { validate } = schemaValidator('resource-server');
    for (const bad of [
      { signing_alg: 'none' },
      { token_dialect: 'jwt' },
      { name: 'a<b' },
      { signing_secret: 'short' },
      { token_encryption: { format: 'jwe' } },
      { scopes: [{ value: 3 }] },
      { is_system: 1 },
      { token_lifetime: 1.5 },
      { proof_of_possession: { required: 'no' } },
      { authorization_policy: { policy_id: 5 } },
      { subject_type_authorization: { user: 'all' } },
    ]) {
      expect(validate(bad), JSON.stringify(bad)).toBe(false);
    }
    const sessionValidate = schemaValidator('session').validate;
    for (const bad of [
      { created_at: 'monday' },
      { clients: [{ client_id: 1 }] },
      { device: { initial_ip: 1 } },
      { authentication: { methods: [{ timestamp: 'x' }] } },
      { session_metadata: { a: 1 } },
      { session_metadata: [] },
      { cookie: 'c' },
    ]) {
      expect(sessionValidate(bad), JSON.stringify(bad)).toBe(false);
    }
  });

  it('valid session_metadata is valid, and every generated invalid update is refused by the schema', () => {
    const { maxProperties, maxLength } = sessionMetadataSchema();
    expect([maxProperties, maxLength]).toEqual([25, 255]);
    const { validate } = schemaValidator('update-session-request');
    const examples = validMetadataExamples();
    const boundary = examples[0]!.value!;
    expect(Object.keys(boundary)).toHaveLength(25);
    expect(Object.values(boundary).every((v) => v.length === 255)).toBe(true);
    // The other edges: a value of 255 characters (ASCII, then 2-byte UTF-8), an empty value, null and {}.
    expect(examples.slice(1).map((e) => e.value && Object.values(e.value).map((v) => [...v].length))).toEqual([[255], [255], [0], null, []]);
    expect(Buffer.byteLength(Object.values(examples[2]!.value!)[0]!)).toBe(510);
    fc.assert(
      fc.property(fc.oneof(validSessionMetadata(), fc.constantFrom(...examples)), ({ name, value }) => {
        expect(validate({ session_metadata: value }), name).toBe(true);
      }),
      { numRuns: 200 },
    );
    expect(new Set(examples.map((e) => e.name)).size, 'every edge has its own name').toBe(examples.length);
    fc.assert(
      fc.property(fc.oneof(invalidSessionUpdates(), fc.constantFrom(...invalidUpdateExamples())), ({ why, body }) => {
        expect(validate(body), why).toBe(false);
      }),
      { numRuns: 200 },
    );
    // The limits' edges: one past each.
    const [properties, length] = invalidUpdateExamples().map((u) => (u.body as { session_metadata: Record<string, string> }).session_metadata);
    expect(Object.keys(properties!)).toHaveLength(26);
    expect(Object.values(length!).map((v) => v.length)).toEqual([256]);
    expect(new Set(invalidUpdateExamples().map((u) => u.why)).size, 'every edge has its own name').toBe(invalidUpdateExamples().length);
    // And the rule engine sees each as a body that must be refused, were it accepted.
    for (const { body } of invalidUpdateExamples()) {
      expect(judgeExchange(updateExchange(body, session(null))).findings.map((f) => f.requirement)).toContain('SES-INVALID-UPDATE-REFUSED');
    }
  });

  it('odd ids, generated or edges, are never a real fixture id', () => {
    fc.assert(
      fc.property(fc.oneof(oddIds(), fc.constantFrom(...oddIdExamples())), ({ value: id }) => {
        expect(id.startsWith(ODD_ID_PREFIX)).toBe(true);
      }),
    );
  });

  it('the odd id edges: encoded once and twice, a lone percent, unicode beyond the BMP, long', () => {
    const ids = new Map(oddIdExamples().map((e) => [e.name, e.value]));
    expect(ids.size, 'every edge has its own name').toBe(oddIdExamples().length);
    const values = [...ids.values()];
    expect(values).toEqual(expect.arrayContaining([`${ODD_ID_PREFIX}a%2Fb`, `${ODD_ID_PREFIX}a%252Fb`, `${ODD_ID_PREFIX}100%`, `${ODD_ID_PREFIX}𝄞`]));
    expect(values.some((id) => /[^\x00-\x7f]/.test(id))).toBe(true);
    expect(Math.max(...values.map((id) => id.length))).toBe(1000);
  });
});

describe('token attacks: the forged tokens and headers', () => {
  const claimsOf = {
    iss: 'https://tenant.example.com/',
    sub: 'c@clients',
    aud: 'https://tenant.example.com/api/v2/',
    azp: 'c',
    scope: 'read:users',
    iat: 1,
    exp: 4_000_000_000,
  };

  async function signed(): Promise<{ token: string; jwk: JWK }> {
    const { privateKey, publicKey } = await generateKeyPair('RS256');
    const jwk = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' };
    return { token: await new SignJWT(claimsOf).setProtectedHeader({ alg: 'RS256', kid: 'k1' }).sign(privateKey), jwk };
  }

  it('unsigned: the same claims, alg none, an empty signature', async () => {
    const { token } = await signed();
    const forged = unsignedToken(token);
    expect(decodeProtectedHeader(forged)).toEqual({ alg: 'none' });
    expect(forged.endsWith('.')).toBe(true);
    expect(decodeJwt(forged)).toEqual(claimsOf);
  });

  it('scope added: header and signature kept, the scope appended', async () => {
    const { token } = await signed();
    const forged = withScopeAdded(token, 'delete:token_exchange_profiles');
    expect(forged.split('.')[0]).toBe(token.split('.')[0]);
    expect(forged.split('.')[2]).toBe(token.split('.')[2]);
    expect(decodeJwt(forged)).toEqual({ ...claimsOf, scope: 'read:users delete:token_exchange_profiles' });
  });

  it("key confusion: HS256 whose secret is the public key's PEM; private and encryption keys are left out", async () => {
    const { token, jwk } = await signed();
    const privateJwk = { ...jwk, kid: 'private', d: 'x' };
    const encryption = { ...jwk, kid: 'enc', use: 'enc' };
    const forged = await keyConfusionTokens(token, { keys: [jwk, privateJwk, encryption] });
    expect(forged).toHaveLength(1);
    expect(decodeProtectedHeader(forged[0]!)).toMatchObject({ alg: 'HS256', kid: 'k1' });
    const pem = createPublicKey({ key: jwk, format: 'jwk' } as JsonWebKeyInput).export({ type: 'spki', format: 'pem' }) as string;
    expect(pem.endsWith('-----END PUBLIC KEY-----\n')).toBe(true);
    const { payload } = await jwtVerify(forged[0]!, new TextEncoder().encode(pem), { algorithms: ['HS256'] });
    expect(payload).toEqual(claimsOf);
  });

  it('foreign key: the same claims, signed RS256 by a key that does not verify against the original', async () => {
    const { token, jwk } = await signed();
    const forged = await signedByForeignKey(token);
    expect(decodeJwt(forged)).toEqual(claimsOf);
    await expect(jwtVerify(forged, await importJWK(jwk, 'RS256'))).rejects.toThrow(/signature/);
  });

  it('malformed Authorization headers, generated or edges, are all judged absent, malformed or not a JWT', () => {
    fc.assert(
      fc.property(fc.oneof(malformedAuthorizations(), fc.constantFrom(...malformedAuthorizationExamples())), ({ name, value: authorization }) => {
        const requestHeaders = authorization === undefined ? {} : { authorization };
        const exchange = buildExchange({
          startedAt: new Date().toISOString(),
          method: 'GET',
          url: 'http://t/api/v2/resource-servers/x',
          requestHeaders,
          status: 401,
          responseHeaders: {},
          responseBody: '',
        });
        expect(['absent', 'malformed', 'not-jwt'], `${name}: ${authorization}`).toContain(credentialState(exchange));
      }),
      { numRuns: 2000 },
    );
  });

  it('the malformed header edges: one per family the generator draws from, besides no header, an empty one and "Bearer" with spaces', () => {
    const edges = malformedAuthorizationExamples();
    expect(new Set(edges.map((e) => e.name)).size, 'every edge has its own name').toBe(edges.length);
    expect(edges.map((e) => e.value)).toEqual(
      expect.arrayContaining([undefined, '', 'Bearer', 'Bearer   ', 'Bearer not-a-jwt', 'bearer not-a-jwt', 'Bearer not.a.jwt']),
    );
    // A family is the header with its credential replaced by the credential's shape ("<…>"):
    // every shape the generator draws has an edge.
    const shapeOf = (name: string) => /<[^>]*>/.exec(name)?.[0] ?? 'no credential';
    const edgeShapes = new Set(edges.map((e) => shapeOf(e.name)));
    const drawnShapes = new Set(fc.sample(malformedAuthorizations(), { numRuns: 3000, seed: 42 }).map((h) => shapeOf(h.name)));
    expect(drawnShapes.size).toBeGreaterThanOrEqual(6);
    for (const shape of drawnShapes) expect(edgeShapes, shape).toContain(shape);
  });

  it('an expired token comes from credentials.expired or TMI_EXPIRED_TOKEN, apart from the profiles', () => {
    const fromFile = resolveConfig({ base_url: 'http://a/api/v2', credentials: { full: { token: 'f' }, expired: { token: 'old' } } });
    expect(fromFile.expiredToken).toBe('old');
    expect(fromFile.credentials).toEqual({ full: { token: 'f' } });
    expect(resolveConfig(mergeConfig({ base_url: 'http://a/api/v2' }, configFromEnv({ TMI_EXPIRED_TOKEN: 'older' }))).expiredToken).toBe('older');
    expect(resolveConfig({ base_url: 'http://a/api/v2' }).expiredToken).toBeUndefined();
  });

  it('the claim profiles come from credentials.other_audience and not_yet_valid or their TMI_* variables; the other audience is what its token request asks for', () => {
    const env = configFromEnv({
      TMI_OTHER_AUDIENCE_CLIENT_ID: 'c',
      TMI_OTHER_AUDIENCE_CLIENT_SECRET: 's',
      TMI_OTHER_AUDIENCE_AUDIENCE: 'https://orders.example.com/api',
      TMI_NOT_YET_VALID_TOKEN: 'later',
    });
    const config = resolveConfig(mergeConfig({ base_url: 'http://a/api/v2', credentials: { full: { client_id: 'f', client_secret: 'fs' } } }, env));
    expect(config.credentials).toEqual({
      full: { client_id: 'f', client_secret: 'fs' },
      other_audience: { client_id: 'c', client_secret: 's', audience: 'https://orders.example.com/api' },
      not_yet_valid: { token: 'later' },
    });
    const asked = (credential: { client_id: string; client_secret: string; audience?: string }) =>
      new URLSearchParams(tokenRequest(config, credential).body).get('audience');
    expect(asked(config.credentials.other_audience as { client_id: string; client_secret: string; audience: string })).toBe('https://orders.example.com/api');
    expect(asked({ client_id: 'f', client_secret: 'fs' })).toBe('http://a/api/v2/');
    // A client for another audience without the audience is a config error naming both shapes.
    expect(() => configFromEnv({ TMI_OTHER_AUDIENCE_CLIENT_ID: 'c', TMI_OTHER_AUDIENCE_CLIENT_SECRET: 's' })).toThrow(
      /key "credentials\.other_audience": expected \{client_id, client_secret, audience\} or \{token\}/,
    );
    expect(() => configFromEnv({ TMI_NOT_YET_VALID_CLIENT_ID: 'c' })).toThrow(
      /key "credentials\.not_yet_valid": expected \{client_id, client_secret\} or \{token\}/,
    );
  });

  it('callback_url: where the kit listens for it is callback_listen, else every address at its port; callback_listen alone or not HOST:PORT is a config error', () => {
    const base = { base_url: 'https://tenant.example.com/api/v2' };
    expect(resolveConfig({ ...base, callback_url: 'http://10.0.0.5:8123/kit/' }).callback).toEqual({
      url: 'http://10.0.0.5:8123/kit',
      host: '0.0.0.0',
      port: 8123,
    });
    expect(resolveConfig({ ...base, callback_url: 'https://kit.example.com' }).callback).toEqual({
      url: 'https://kit.example.com',
      host: '0.0.0.0',
      port: 443,
    });
    expect(
      resolveConfig(mergeConfig(base, configFromEnv({ TMI_CALLBACK_URL: 'http://10.0.0.5:8123', TMI_CALLBACK_LISTEN: '127.0.0.1:9000' }))).callback,
    ).toEqual({ url: 'http://10.0.0.5:8123', host: '127.0.0.1', port: 9000 });
    expect(resolveConfig(base).callback).toBeUndefined();
    expect(() => resolveConfig({ ...base, callback_listen: '127.0.0.1:9000' })).toThrow(/callback_listen is set but callback_url is not/);
    expect(() => configFromEnv({ TMI_CALLBACK_LISTEN: '9000' })).toThrow(/TMI_CALLBACK_LISTEN: "9000" is not HOST:PORT, e\.g\. 0\.0\.0\.0:8123/);
    expect(() => configFromEnv({ TMI_CALLBACK_LISTEN: '127.0.0.1:70000' })).toThrow(
      /TMI_CALLBACK_LISTEN: "127\.0\.0\.1:70000" is not HOST:PORT with a port up to 65535/,
    );
  });

  it('with allow_destructive, a session given by id only is tested and left cleared; without, left alone', () => {
    const sessions = ['s1', { id: 's2', session_metadata: { a: 'b' } }];
    expect(resolveConfig({ base_url: 'http://a/api/v2', allow_destructive: true, fixtures: { sessions } }).fixtures.sessions).toEqual([
      { id: 's1', original: { session_metadata: null }, leftCleared: true },
      { id: 's2', original: { session_metadata: { a: 'b' } } },
    ]);
    expect(resolveConfig({ base_url: 'http://a/api/v2', fixtures: { sessions } }).fixtures.sessions[0]).toEqual({ id: 's1' });
  });
});
