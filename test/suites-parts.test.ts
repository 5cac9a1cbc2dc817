// The building blocks of the suites, each proven both ways: configuration errors, derived
// tokens, requirement names and blame, and the arbitraries derived from the schemas (pacing:
// test/pacing.test.ts).
import fc from 'fast-check';
import { decodeJwt } from 'jose';
import { describe, expect, it } from 'vitest';
import { judgeExchange } from '../rules/index.ts';
import { schemaValidator } from '../rules/schemas.ts';
import { arbitraryFromSchema, invalidSessionUpdates, invalidUpdateExamples, oddIds, sessionMetadataSchema, validMetadataExamples, validSessionMetadata } from '../suites/arbitraries.ts';
import { configFromEnv, mergeConfig, resolveConfig } from '../suites/config.ts';
import { boundedPredicate, MAX_SHRINK_STEPS } from '../suites/budget.ts';
import { blamed } from '../suites/reporter.ts';
import { covers, requirementsOfTestName, testNamePatternFor } from '../suites/requirement-names.ts';
import { corruptSignature, scopesOfToken } from '../suites/tokens.ts';
import { jwt, claims, getExchange, updateExchange, session } from './helpers/exchanges.ts';

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
    expect(() => configFromEnv({ TMI_ALLOW_DESTRUCTIVE: 'perhaps' })).toThrow(/TMI_ALLOW_DESTRUCTIVE: expected true or false/);
    expect(() => configFromEnv({ TMI_BASE_URL: 'ftp://x' })).toThrow(/environment \(TMI_\*\): key "base_url"/);
  });
});

describe('property budget', () => {
  it('a failing property stops shrinking after the budget, keeping a real counterexample', async () => {
    let requests = 0;
    const predicate = boundedPredicate(25 + MAX_SHRINK_STEPS, async (values: number[]) => {
      requests++;
      expect(values.length).toBeLessThan(3);
    });
    const error = await fc.assert(fc.asyncProperty(fc.array(fc.integer(), { minLength: 3, maxLength: 200 }), predicate), { numRuns: 25 }).catch((e: Error) => e);
    expect(error).toBeInstanceOf(Error);
    expect(String((error as Error).message)).toMatch(/Counterexample: \[\[/);
    expect(requests).toBeLessThanOrEqual(25 + MAX_SHRINK_STEPS);
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

describe('requirement names', () => {
  it('a test name carries its requirements, of one level only', () => {
    const name = covers('null clears', 'SES-METADATA-CLEARED', 'SES-RESPONSE-SCHEMA');
    expect(requirementsOfTestName(name)).toEqual(['SES-METADATA-CLEARED', 'SES-RESPONSE-SCHEMA']);
    expect(() => covers('mixed', 'SES-METADATA-CLEARED', 'SES-METADATA-ECHOED')).toThrow(/one level/);
    expect(() => covers('none')).toThrow();
    expect(requirementsOfTestName('no brackets')).toEqual([]);
  });

  it('--requirement selects exactly the tests naming the id', () => {
    const pattern = testNamePatternFor(['RS-SIGNING-ALG']);
    expect(pattern.test('x [RS-RESPONSE-SCHEMA RS-SIGNING-ALG GEN-JSON-RESPONSE]')).toBe(true);
    expect(pattern.test('x [RS-SIGNING-ALG]')).toBe(true);
    expect(pattern.test('x [RS-SIGNING-ALGORITHM]')).toBe(false);
    expect(pattern.test('x [RS-RESPONSE-SCHEMA]')).toBe(false);
  });

  it('a failed test is evidence against the requirements its findings name, else against all it covers', () => {
    expect(blamed(['A-1', 'B-2'], 'GET … → 200\nB-2: expected x; received y')).toEqual(['B-2']);
    expect(blamed(['A-1', 'B-2'], 'expected 200 to be 204')).toEqual(['A-1', 'B-2']);
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
        if (typeof r['token_lifetime'] === 'number' && typeof r['token_lifetime_for_web'] === 'number' && r['token_lifetime_for_web'] > r['token_lifetime']) return;
        const found = judgeExchange(getExchange({ ...r, id: 'rs_1' })).findings.filter((f) => f.check === 'responseBodyMatchesSchema');
        expect(found).toEqual([]);
      }),
      { numRuns: 100 },
    );
  });

  it('each schema constraint rejects its violation (every constraint can fail)', () => {
    const { validate } = schemaValidator('resource-server');
    for (const bad of [{ signing_alg: 'none' }, { token_dialect: 'jwt' }, { name: 'a<b' }, { signing_secret: 'short' }, { token_encryption: { format: 'jwe' } }, { scopes: [{ value: 3 }] }, { is_system: 1 }, { token_lifetime: 1.5 }, { proof_of_possession: { required: 'no' } }, { authorization_policy: { policy_id: 5 } }, { subject_type_authorization: { user: 'all' } }]) {
      expect(validate(bad), JSON.stringify(bad)).toBe(false);
    }
    const sessionValidate = schemaValidator('session').validate;
    for (const bad of [{ created_at: 'monday' }, { clients: [{ client_id: 1 }] }, { device: { initial_ip: 1 } }, { authentication: { methods: [{ timestamp: 'x' }] } }, { session_metadata: { a: 1 } }, { session_metadata: [] }, { cookie: 'c' }]) {
      expect(sessionValidate(bad), JSON.stringify(bad)).toBe(false);
    }
  });

  it('valid session_metadata is valid, and every generated invalid update is refused by the schema', () => {
    const { maxProperties, maxLength } = sessionMetadataSchema();
    expect([maxProperties, maxLength]).toEqual([25, 255]);
    const { validate } = schemaValidator('update-session-request');
    const examples = validMetadataExamples();
    expect(Object.keys(examples[0]!)).toHaveLength(25);
    expect(Object.values(examples[0]!).every((v) => v.length === 255)).toBe(true);
    fc.assert(fc.property(fc.oneof(validSessionMetadata(), fc.constantFrom(...examples)), (m) => {
          expect(validate({ session_metadata: m })).toBe(true);
        }), { numRuns: 200 });
    fc.assert(fc.property(fc.oneof(invalidSessionUpdates(), fc.constantFrom(...invalidUpdateExamples())), ({ body }) => {
          expect(validate(body)).toBe(false);
        }), { numRuns: 200 });
    // And the rule engine sees each as a body that must be refused, were it accepted.
    for (const { body } of invalidUpdateExamples()) {
      expect(judgeExchange(updateExchange(body, session(null))).findings.map((f) => f.requirement)).toContain('SES-INVALID-UPDATE-REFUSED');
    }
  });

  it('odd ids are never a real fixture id', () => {
    fc.assert(
      fc.property(oddIds(), (id) => {
        expect(id.startsWith('tmi-conform-')).toBe(true);
      }),
    );
  });
});
