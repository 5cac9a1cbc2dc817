// schemas/openapi.yaml is valid OpenAPI 3.1 (checked by a real validator), and it describes
// exactly the document's three operations with bodies from the JSON Schemas beside it.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Validator } from '@seriousme/openapi-schema-validator';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { schemasDir } from '../core/paths.ts';

const text = readFileSync(join(schemasDir, 'openapi.yaml'), 'utf8');
const spec = parse(text) as Record<string, any>;

describe('openapi.yaml', () => {
  it('is valid OpenAPI 3.1, with its $refs to the JSON Schema files resolved', async () => {
    const validator = new Validator();
    for (const name of ['error', 'session', 'resource-server', 'update-session-request']) {
      await validator.addSpecRef(JSON.parse(readFileSync(join(schemasDir, `${name}.schema.json`), 'utf8')), `./${name}.schema.json`);
    }
    const result = await validator.validate(spec);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
  });

  it('a broken document is rejected by the same validator (the test can fail)', async () => {
    const broken = structuredClone(spec);
    delete broken.paths['/sessions/{id}'].patch.responses;
    broken.paths['/sessions/{id}'].patch.parameters[0].in = 'body';
    expect((await new Validator().validate(broken)).valid).toBe(false);
  });

  it('has the three operations, their ids, security, and the 429 rate-limit headers', () => {
    const ops = Object.entries(spec.paths as Record<string, Record<string, any>>).flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, op]) => ({ path, method, op })),
    );
    expect(ops.map((o) => `${o.method.toUpperCase()} ${o.path} ${o.op.operationId}`).sort()).toEqual([
      'DELETE /token-exchange-profiles/{id} deleteTokenExchangeProfile',
      'GET /resource-servers/{id} getResourceServer',
      'PATCH /sessions/{id} updateSession',
    ]);
    const del = spec.paths['/token-exchange-profiles/{id}'].delete;
    expect(Object.keys(del.responses).sort()).toEqual(['204', '401', '403', '429']);
    expect(del.security).toContainEqual({ oauth2: ['delete:token_exchange_profiles'] });
    expect(spec.components.securitySchemes.oauth2.flows.clientCredentials.tokenUrl).toMatch(/\/oauth\/token\/$/);
    expect(spec.components.securitySchemes.oauth2.description).toContain('{auth_url}/oauth/token/');
    expect(spec.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer', bearerFormat: 'JWT' });
    expect(Object.keys(spec.components.responses.TooManyRequests.headers).sort()).toEqual(['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset']);
    const get = spec.paths['/resource-servers/{id}'].get;
    expect(get.parameters.find((p: any) => p.name === 'include_fields')).toMatchObject({ in: 'query', required: false, schema: { type: 'boolean' } });
  });

  it('every $ref resolves, to a component or a JSON Schema file beside it', () => {
    const refs = [...text.matchAll(/\$ref: '([^']+)'/g)].map((m) => m[1]!);
    expect(refs.length).toBeGreaterThan(10);
    for (const ref of refs) {
      if (ref.startsWith('#/')) {
        const target = ref
          .slice(2)
          .split('/')
          .reduce<any>((node, key) => node?.[key], spec);
        expect(target, ref).toBeDefined();
      } else {
        expect(existsSync(join(schemasDir, ref)), ref).toBe(true);
      }
    }
  });
});
