// A finding's place: the RFC 6901 JSON pointer into the documented shape of the body, read from
// ajv's schema path (never the instance path, whose keys and indices change with generated
// inputs); the checks that judge one field name it; a report keeps the places each operation
// failed at (bounded), report.json's schema holds them, and `report merge` unions them.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { finding } from '../rules/checks/check.ts';
import { pointerOfSchemaError, schemaFindings } from '../rules/checks/schema.ts';
import { judgeExchange } from '../rules/index.ts';
import { loadSchema } from '../rules/schemas.ts';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { Exchange, Finding } from '../rules/types.ts';
import { recordExchange } from '../recordings/write.ts';
import { ReportBuilder } from '../reports/builder.ts';
import { PLACES_PER_OPERATION } from '../reports/failed-places.ts';
import { mergeReports } from '../reports/merge.ts';
import type { Report, RequirementResult } from '../reports/model.ts';
import { reportSchemaError } from '../reports/schema.ts';
import { getExchange, resourceServer, session, updateExchange } from '../fixtures/exchanges.ts';

/** The places of every error `value` gets against `schema`, as ajv (2020-12, as the kit's schemas) reports them. */
function placesOf(schema: Record<string, unknown>, value: unknown): string[] {
  // Not strict: these schemas leave out the `type` beside each keyword that strict mode asks for.
  const validate = new Ajv2020({ allErrors: true, strict: false }).compile(schema);
  expect(validate(value)).toBe(false);
  return validate.errors!.map((error) => pointerOfSchemaError(error));
}

describe('pointerOfSchemaError', () => {
  it('a property: /<name>; the body itself: ""', () => {
    expect(placesOf({ type: 'object', properties: { signing_alg: { enum: ['HS256'] } } }, { signing_alg: 'HS512' })).toEqual(['/signing_alg']);
    expect(placesOf({ type: 'object' }, [])).toEqual(['']);
  });

  it('a nested property: /<name>/<name>, through allOf, anyOf and oneOf branches', () => {
    expect(
      placesOf({ properties: { token_encryption: { properties: { format: { const: 'compact-nested-jwe' } } } } }, { token_encryption: { format: 'jwe' } }),
    ).toEqual(['/token_encryption/format']);
    expect(placesOf({ properties: { name: { type: 'string', allOf: [{ pattern: '^[^<>]*$' }] } } }, { name: '<b>' })).toEqual(['/name']);
    const branches = { properties: { a: { anyOf: [{ properties: { b: { type: 'string' } } }, { properties: { b: { type: 'integer' } } }] } } };
    expect(placesOf(branches, { a: { b: true } })).toEqual(['/a/b', '/a/b', '/a']);
  });

  it('a free key: /<name>/* whatever the key, under additionalProperties and patternProperties', () => {
    const schema = { properties: { session_metadata: { additionalProperties: { type: 'string', maxLength: 3 } } } };
    fc.assert(
      fc.property(fc.string({ minLength: 1, maxLength: 8 }), (key) => {
        expect(placesOf(schema, { session_metadata: { [key]: 'long value' } })).toEqual(['/session_metadata/*']);
      }),
      { numRuns: 30 },
    );
    expect(placesOf({ patternProperties: { '^x-': { type: 'string' } } }, { 'x-a': 1 })).toEqual(['/*']);
  });

  it('an array element: /<name>/*/<name> whatever the index, under items and prefixItems', () => {
    const schema = { properties: { scopes: { type: 'array', items: { properties: { value: { type: 'string' } } } } } };
    fc.assert(
      fc.property(fc.nat(6), (index) => {
        const scopes = [...Array.from({ length: index }, () => ({ value: 'read' })), { value: 7 }];
        expect(placesOf(schema, { scopes })).toEqual(['/scopes/*/value']);
      }),
      { numRuns: 20 },
    );
    expect(placesOf({ prefixItems: [{ type: 'string' }] }, [1])).toEqual(['/*']);
  });

  it('required: the missing property is the place', () => {
    expect(placesOf({ required: ['id'] }, {})).toEqual(['/id']);
    expect(placesOf({ properties: { encryption_key: { required: ['pem'] } } }, { encryption_key: {} })).toEqual(['/encryption_key/pem']);
  });

  it('the failing keyword itself is dropped: additionalProperties false and contains are about the object or the array', () => {
    expect(placesOf({ properties: { c: { additionalProperties: false } } }, { c: { x: 1 } })).toEqual(['/c']);
    expect(placesOf({ properties: { d: { contains: { type: 'string' } } } }, { d: [1] })).toEqual(['/d/*', '/d']);
  });

  it('a name or an index after allOf, dependentSchemas or $defs is never read as a keyword', () => {
    expect(placesOf({ properties: { a: { dependentSchemas: { properties: { required: ['b'] } } } } }, { a: { properties: 1 } })).toEqual(['/a/b']);
    // Through a $ref ajv's path starts at the definition, and so does the place: the kit's schemas have none (below).
    expect(placesOf({ properties: { list: { $ref: '#/$defs/items' } }, $defs: { items: { type: 'array' } } }, { list: 1 })).toEqual(['']);
  });

  it("the kit's schemas have no $ref, so every place is read from the root of the body", () => {
    for (const name of ['session', 'resource-server', 'update-session-request', 'error'] as const)
      expect(JSON.stringify(loadSchema(name)), name).not.toContain('"$ref"');
  });

  it('escapes ~ and / in a name (RFC 6901)', () => {
    expect(placesOf({ properties: { 'a/b~c': { type: 'string' } } }, { 'a/b~c': 1 })).toEqual(['/a~1b~0c']);
    expect(placesOf({ required: ['x/y'] }, {})).toEqual(['/x~1y']);
  });
});

describe('the findings of the kit schemas', () => {
  const findingsOf = (exchange: Exchange, requirement: string): Finding[] => judgeExchange(exchange).findings.filter((f) => f.requirement === requirement);

  it.each([
    [{ signing_alg: 'HS512' }, 'RS-SIGNING-ALG', '/signing_alg'],
    [{ name: 'Orders <API>' }, 'RS-NAME-CHARACTERS', '/name'],
    [{ token_encryption: { format: 'jwe', encryption_key: { pem: 'p', name: 'k', kid: '1' } } }, 'RS-TOKEN-ENCRYPTION', '/token_encryption/format'],
    [
      {
        scopes: [
          { value: 'a', description: 'b' },
          { value: 1, description: 'x' },
        ],
      },
      'RS-RESPONSE-SCHEMA',
      '/scopes/*/value',
    ],
  ])('a resource server with %j: %s at %s', (body, requirement, pointer) => {
    expect(findingsOf(getExchange(resourceServer(body)), requirement).map((f) => f.pointer)).toEqual([pointer]);
  });

  it('session metadata: the same place whatever keys were generated, in the response and the request', () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.stringMatching(/^[a-z]{1,8}$/), { minLength: 1, maxLength: 3 }), (keys) => {
        const metadata = Object.fromEntries(keys.map((k) => [k, 'v'.repeat(256)]));
        const exchange = updateExchange({ session_metadata: metadata }, session(metadata));
        expect(new Set(findingsOf(exchange, 'SES-METADATA-VALUE-LENGTH').map((f) => `${f.subject} ${f.pointer}`))).toEqual(
          new Set(['implementation /session_metadata/*', 'client /session_metadata/*']),
        );
      }),
      { numRuns: 20 },
    );
    const tooMany = Object.fromEntries(Array.from({ length: 26 }, (_, i) => [`k${i}`, 'v']));
    expect(schemaFindings('session', { session_metadata: tooMany }, 'implementation').map((f) => f.pointer)).toEqual(['/session_metadata']);
    expect(schemaFindings('session', 'a session', 'implementation').map((f) => f.pointer)).toEqual(['']);
  });

  it('the checks that judge one field of the returned body name it; header and status checks name none', () => {
    const sent = { session_metadata: { plan: 'gold' } };
    expect(findingsOf(updateExchange(sent, session({ plan: 'gold', old: 'kept' })), 'SES-METADATA-ECHOED').map((f) => f.pointer)).toEqual([
      '/session_metadata',
    ]);
    expect(findingsOf(updateExchange({ session_metadata: null }, session({ left: 'x' })), 'SES-METADATA-CLEARED').map((f) => f.pointer)).toEqual([
      '/session_metadata',
    ]);
    expect(findingsOf(updateExchange(undefined, session({ plan: 'gold' }, 'sess_2')), 'SES-ID-MATCHES').map((f) => f.pointer)).toEqual(['/id']);
    expect(
      findingsOf(getExchange(resourceServer({ token_lifetime: 60, token_lifetime_for_web: 120 })), 'RS-TOKEN-LIFETIME-FOR-WEB').map((f) => f.pointer),
    ).toEqual(['/token_lifetime_for_web']);
    const created = findingsOf(getExchange(resourceServer(), 'rs_1', { status: 201 }), 'RS-SUCCESS-200');
    expect(created).toHaveLength(1);
    expect(created[0]!.pointer).toBeUndefined();
  });
});

/** A report of `exchanges` (each judged, its findings replaced by `findings` when given), with `test` named on them. */
function reportOf(exchanges: Array<{ exchange: Exchange; findings?: Finding[] }>, test?: string): Report {
  const builder = new ReportBuilder({ kind: 'validate', source: 'test' });
  for (const { exchange, findings } of exchanges) {
    const judgement = judgeExchange(exchange);
    builder.addExchange(exchange, findings ? { ...judgement, findings } : judgement, test);
  }
  return builder.build({ failOn: 'must' });
}

const requirement = (report: Report, id: string): RequirementResult => report.requirements.find((r) => r.id === id)!;
const badSession = (fields: Record<string, unknown>) => updateExchange(undefined, { ...session(), ...fields });

describe('a report', () => {
  it('keeps the pointer of each finding, and the places of every failing exchange, not only the kept ones', () => {
    const report = reportOf([
      ...Array.from({ length: 12 }, () => ({ exchange: badSession({ created_at: 'yesterday' }) })),
      { exchange: badSession({ device: { last_ip: 10 } }) },
    ]);
    expect(reportSchemaError(report)).toBeUndefined();
    const schema = requirement(report, 'SES-RESPONSE-SCHEMA');
    // The last failure was not kept as evidence, yet its place is recorded.
    expect(schema.evidence.flatMap((e) => e.findings ?? []).map((f) => f.pointer)).not.toContain('/device/last_ip');
    expect(schema.pointers).toEqual({ updateSession: ['/created_at', '/device/last_ip'] });
    expect(schema.pointersFolded).toBeUndefined();
    expect(schema.evidence[0]!.findings).toEqual([expect.objectContaining({ requirement: 'SES-RESPONSE-SCHEMA', pointer: '/created_at' })]);
    expect(requirement(report, 'SES-RESPONSE-SCHEMA').byOperation).toBeUndefined(); // a single operation: no byOperation, places all the same
    expect(requirement(report, 'SES-ID-MATCHES').pointers).toBeUndefined(); // passed
  });

  it('a finding without a pointer, and a failed test without a finding of its exchange, are at ""', () => {
    const created = reportOf([{ exchange: getExchange(resourceServer(), 'rs_1', { status: 201 }) }]);
    expect(requirement(created, 'RS-SUCCESS-200').pointers).toEqual({ getResourceServer: [''] });

    const builder = new ReportBuilder({ kind: 'run', source: 'run' });
    const exchange = badSession({ created_at: 'yesterday' });
    builder.addExchange(exchange, judgeExchange(exchange), 'updateSession > returns the session');
    builder.addTest({
      name: 'updateSession > returns the session',
      requirements: ['SES-RESPONSE-SCHEMA'],
      status: 'fail',
      charged: ['SES-RESPONSE-SCHEMA'],
      message: 'a finding',
    });
    builder.addTest({
      name: 'updateSession > clears metadata',
      requirements: ['SES-ID-MATCHES'],
      status: 'fail',
      charged: ['SES-ID-MATCHES'],
      message: 'expected 200, received 500',
    });
    const report = builder.build({ failOn: 'must' });
    expect(requirement(report, 'SES-RESPONSE-SCHEMA').pointers).toEqual({ updateSession: ['/created_at'] });
    expect(requirement(report, 'SES-ID-MATCHES').pointers).toEqual({ updateSession: [''] });
    expect(reportSchemaError(report)).toBeUndefined();
  });

  it(`keeps at most ${PLACES_PER_OPERATION} places per operation, the first in order; the rest folded into "" and said so`, () => {
    const places = Array.from({ length: 20 }, (_, i) => `/field_${String(i).padStart(2, '0')}`);
    const findings = places
      .reverse()
      .map((p) => ({ ...finding('SES-RESPONSE-SCHEMA', 'implementation', 'a string', '1', p), check: 'responseBodyMatchesSchema' }));
    const report = reportOf([{ exchange: badSession({}), findings }]);
    const schema = requirement(report, 'SES-RESPONSE-SCHEMA');
    expect(schema.pointers!['updateSession']).toEqual(['', ...[...places].sort().slice(0, PLACES_PER_OPERATION - 1)]);
    expect(schema.pointersFolded).toEqual(['updateSession']);
    expect(reportSchemaError(report)).toBeUndefined();
    // The schema holds the bound too.
    const over = structuredClone(report);
    requirement(over, 'SES-RESPONSE-SCHEMA').pointers!['updateSession'] = [...places].sort();
    expect(reportSchemaError(over)).toMatch(/pointers\/updateSession must NOT have more than 16 items/);
  });

  it("report.json's schema holds pointers and refuses what is not one", () => {
    const report = reportOf([{ exchange: badSession({ created_at: 'yesterday' }) }]);
    expect(reportSchemaError(report)).toBeUndefined();
    const badPlace = structuredClone(report);
    requirement(badPlace, 'SES-RESPONSE-SCHEMA').pointers = { updateSession: ['created_at'] };
    expect(reportSchemaError(badPlace)).toMatch(/pointers\/updateSession\/0 must match pattern/);
    const badFinding = structuredClone(report);
    requirement(badFinding, 'SES-RESPONSE-SCHEMA').evidence[0]!.findings![0]!.pointer = 'created_at';
    expect(reportSchemaError(badFinding)).toMatch(/findings\/0\/pointer must match pattern/);
  });

  it('from the proxy: the findings it scrubs keep their pointer', () => {
    const exchange = getExchange(resourceServer({ signing_alg: 'HS512' }));
    const { findings } = recordExchange(exchange, judgeExchange(exchange));
    expect(findings.find((f) => f.requirement === 'RS-SIGNING-ALG')?.pointer).toBe('/signing_alg');
  });
});

describe('report merge', () => {
  it('unions the places of each operation, bounded again, and keeps what was folded', () => {
    const first = reportOf([{ exchange: badSession({ created_at: 'yesterday' }) }]);
    const second = reportOf([{ exchange: badSession({ clients: [{ client_id: 7 }] }) }, { exchange: badSession({ created_at: 'yesterday' }) }]);
    const merged = mergeReports([{ report: first }, { report: second }], { failOn: 'must' });
    expect(requirement(merged, 'SES-RESPONSE-SCHEMA').pointers).toEqual({ updateSession: ['/clients/*/client_id', '/created_at'] });
    expect(reportSchemaError(merged)).toBeUndefined();

    const places = Array.from({ length: PLACES_PER_OPERATION }, (_, i) => `/a${String(i).padStart(2, '0')}`);
    const many = reportOf([
      {
        exchange: badSession({}),
        findings: places.map((p) => ({ ...finding('SES-RESPONSE-SCHEMA', 'implementation', 'a string', '1', p), check: 'responseBodyMatchesSchema' })),
      },
    ]);
    const folded = mergeReports([{ report: many }, { report: first }], { failOn: 'must' });
    expect(requirement(many, 'SES-RESPONSE-SCHEMA').pointersFolded).toBeUndefined();
    expect(requirement(folded, 'SES-RESPONSE-SCHEMA').pointers!['updateSession']).toEqual(['', ...places.slice(0, PLACES_PER_OPERATION - 1)]);
    expect(requirement(folded, 'SES-RESPONSE-SCHEMA').pointersFolded).toEqual(['updateSession']);
    const again = mergeReports([{ report: folded }], { failOn: 'must' });
    expect(requirement(again, 'SES-RESPONSE-SCHEMA').pointersFolded).toEqual(['updateSession']);
    expect(requirement(again, 'SES-RESPONSE-SCHEMA').pointers).toEqual(requirement(folded, 'SES-RESPONSE-SCHEMA').pointers);
  });
});
