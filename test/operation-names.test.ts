// Operations the document does not detail are named by their templated path: identifiers
// collapsed, collections and actions kept, so that a recording with thousands of distinct ids
// still has one row per operation.
import { describe, expect, it } from 'vitest';
import { matchOperation, templatePath } from '../rules/operations.ts';
import { TrafficTally } from '../reports/traffic.ts';
import { judgeExchange } from '../rules/index.ts';
import { buildExchange } from '../rules/exchange.ts';
import { ReportBuilder } from '../reports/builder.ts';
import { errorExchange, getExchange } from '../fixtures/exchanges.ts';
import { ApiLayout } from '../rules/api-layout.ts';
import { apiBaseAt, apiBaseOfTarget, apiBaseOfUrl } from '../rules/api-base.ts';
import { OpenApiDescription } from '../rules/openapi/description.ts';

const REAL_LOOKING: Array<[method: string, path: string, name: string]> = [
  ['GET', '/api/v2/users/auth0|5f7c8ec7c33c6c004bbafe82', 'GET /users/{id}'],
  ['GET', '/api/v2/users/auth0%7C5f7c8ec7c33c6c004bbafe82', 'GET /users/{id}'],
  ['GET', '/api/v2/users/auth0%257C5f7c8ec7c33c6c004bbafe82', 'GET /users/{id}'],
  ['GET', '/api/v2/users/google-oauth2%7C109876543210987654321/roles', 'GET /users/{id}/roles'],
  ['POST', '/api/v2/users/email%7Cabc123/roles', 'POST /users/{id}/roles'],
  ['DELETE', '/api/v2/users/auth0|123/identities/google-oauth2/109876543210', 'DELETE /users/{id}/identities/{id2}/{id3}'],
  ['GET', '/api/v2/users', 'GET /users'],
  ['GET', '/api/v2/users/', 'GET /users'],
  ['GET', '/api/v2/users-by-email?email=a%40example.com', 'GET /users-by-email'],
  ['GET', '/api/v2/clients', 'GET /clients'],
  ['GET', '/api/v2/clients/AaiyAPdpYdesoKnqjj8HJqRn4T5titww', 'GET /clients/{id}'],
  ['PATCH', '/api/v2/clients/AaiyAPdpYdesoKnqjj8HJqRn4T5titww', 'PATCH /clients/{id}'],
  ['GET', '/api/v2/roles/rol_0a1B2c3D4e5F6g7H/permissions', 'GET /roles/{id}/permissions'],
  ['GET', '/api/v2/connections/con_ABCdef123/status', 'GET /connections/{id}/status'],
  ['GET', '/api/v2/organizations/org_W30i4bOCP1hNavvE/members', 'GET /organizations/{id}/members'],
  ['GET', '/api/v2/organizations/name/acme', 'GET /organizations/name/{id}'],
  ['GET', '/api/v2/logs?q=type%3As&per_page=50', 'GET /logs'],
  ['GET', '/api/v2/logs/90020231120123456789012345678901234567890123456789', 'GET /logs/{id}'],
  ['GET', '/api/v2/jobs/job_A1b2C3d4E5f6/errors', 'GET /jobs/{id}/errors'],
  ['POST', '/api/v2/jobs/verification-email', 'POST /jobs/verification-email'],
  ['GET', '/api/v2/actions/actions/8a3d2f4e-6b1c-4d2e-9f0a-1b2c3d4e5f60/versions', 'GET /actions/actions/{id}/versions'],
  ['GET', '/api/v2/actions/triggers/post-login/bindings', 'GET /actions/triggers/{id}/bindings'],
  ['PUT', '/api/v2/prompts/login/custom-text/en', 'PUT /prompts/{id}/custom-text/{id2}'],
  ['GET', '/api/v2/attack-protection/breached-password-detection', 'GET /attack-protection/breached-password-detection'],
  ['PATCH', '/api/v2/resource-servers/https%3A%2F%2Fapi.example.com%2F', 'PATCH /resource-servers/{id}'],
  ['GET', '/api/v2/resource-servers', 'GET /resource-servers'],
  ['DELETE', '/api/v2/grants/cgr_1234567890abcdef', 'DELETE /grants/{id}'],
  ['GET', '/api/v2/guardian/factors/sms/providers/twilio', 'GET /guardian/factors/sms/providers/twilio'],
  ['POST', '/api/v2/keys/signing/rotate', 'POST /keys/signing/rotate'],
  ['PUT', '/api/v2/keys/encryption/5hQ9x-KbS2vX0nGQ/wrapping-key', 'PUT /keys/encryption/{id}/wrapping-key'],
  ['get', '/api/v2/tenants/settings', 'GET /tenants/settings'],
  ['GET', '/tenant/path/api/v2/stats/daily?from=20240101', 'GET /stats/daily'],
];

describe('templatePath', () => {
  it.each(REAL_LOOKING)('%s %s is "%s"', (method, path, name) => {
    expect(matchOperation(method, `https://tenant.example.com${path}`)).toMatchObject({ operation: 'otherOperation', name });
  });

  it('keeps the shape of the path: empty segments, the root', () => {
    expect(templatePath('/users//roles')).toBe('/users//roles');
    expect(templatePath('/users/x1/')).toBe('/users/{id}');
    expect(templatePath('/Users')).toBe('/{id}');
  });

  it('a recording with thousands of distinct ids has one row per operation', () => {
    const tally = new TrafficTally();
    for (let i = 0; i < 3000; i++) {
      const exchange = buildExchange({
        id: String(i),
        method: 'GET',
        url: `https://tenant.example.com/api/v2/users/auth0|${i.toString(36)}x${i}/roles`,
        status: 200,
      });
      tally.coveredExchange(exchange, 'otherOperation', judgeExchange(exchange), null);
    }
    const rows = tally.stats()!.operations!;
    expect(rows.map((r) => [r.name, r.exchanges, r.byStatus])).toEqual([['GET /users/{id}/roles', 3000, { '200': 3000 }]]);
    expect(rows[0]!.requirements).toContain('AUTH-CREDENTIAL-REQUIRED-OTHER');
  });
});

const nameOf = (method: string, path: string, layout?: ApiLayout) =>
  (layout ? layout.match(method, `https://tenant.example.com${path}`) : matchOperation(method, `https://tenant.example.com${path}`))?.name;

describe('a segment is a name only where a known path has that name at that place', () => {
  it('identifiers of any shape are one operation: lower-case words with "_", ids with digits, uuids', () => {
    for (const [method, paths, name] of [
      [
        'GET',
        ['/clients/cl_a/credentials', '/clients/cl_b/credentials', '/clients/cl_full/credentials', '/clients/AaiyAPdpYdesoKnqjj8HJqRn4T5titww/credentials'],
        'GET /clients/{id}/credentials',
      ],
      [
        'GET',
        ['/organizations/org_acme/members', '/organizations/org_W30i4bOCP1hNavvE/members', '/organizations/acme/members'],
        'GET /organizations/{id}/members',
      ],
      ['PATCH', ['/resource-servers/rs_main', '/resource-servers/rs_1', '/resource-servers/https%3A%2F%2Fapi.example.com%2F'], 'PATCH /resource-servers/{id}'],
      ['GET', ['/roles/rol_admin/users', '/roles/rol_0a1B2c3D4e5F6g7H/users', '/roles/8a3d2f4e-6b1c-4d2e-9f0a-1b2c3d4e5f60/users'], 'GET /roles/{id}/users'],
      ['DELETE', ['/clients/cl_main/credentials/cred_primary', '/clients/cl_b/credentials/cred_1a2B'], 'DELETE /clients/{id}/credentials/{id2}'],
    ] as const) {
      for (const path of paths) expect(nameOf(method, `/api/v2${path}`), path).toBe(name);
    }
  });

  it('real names stay names, "_" or not, and a name is not one at another place', () => {
    expect(nameOf('GET', '/api/v2/resource-servers')).toBe('GET /resource-servers');
    expect(nameOf('GET', '/api/v2/clients/cl_a/credentials')).toBe('GET /clients/{id}/credentials');
    expect(nameOf('GET', '/api/v2/organizations/org_acme/members')).toBe('GET /organizations/{id}/members');
    expect(nameOf('GET', '/api/v2/organizations/org_acme/enabled_connections')).toBe('GET /organizations/{id}/enabled_connections');
    expect(nameOf('GET', '/api/v2/organizations/name/org_acme')).toBe('GET /organizations/name/{id}');
    // "members" names a collection under an organization, not an organization under /organizations.
    expect(nameOf('GET', '/api/v2/organizations/members')).toBe('GET /organizations/{id}');
    // Below a place no known path names, nothing is a name.
    expect(nameOf('GET', '/api/v2/widgets/wd_a/parts')).toBe('GET /{id}/{id2}/{id3}');
  });

  it("the user's description names the places of its paths, for any method", () => {
    const openapi = OpenApiDescription.from(
      { openapi: '3.1.0', info: { title: 't', version: '1' }, paths: { '/widgets/{widget_id}/parts': { get: { responses: {} } } } },
      'widgets.yaml',
    );
    const layout = new ApiLayout({ openapi });
    for (const path of ['/api/v2/widgets/wd_a/parts', '/api/v2/widgets/wd_b/parts']) expect(nameOf('DELETE', path, layout)).toBe('DELETE /widgets/{id}/parts');
    expect(nameOf('GET', '/api/v2/clients/cl_a/credentials', layout)).toBe('GET /clients/{id}/credentials');
  });
});

describe("the API base path: one value for the document's operations, the other operations and the description", () => {
  it("at the root, every path is under it: the document's operations and the others alike", () => {
    const root = new ApiLayout({ base: apiBaseOfUrl('http://127.0.0.1:4010') });
    expect(root.match('GET', 'http://127.0.0.1:4010/resource-servers/rs_main')).toMatchObject({ operation: 'getResourceServer', id: 'rs_main', prefix: '' });
    expect(root.match('GET', 'http://127.0.0.1:4010/clients/cl_a/credentials')).toMatchObject({
      operation: 'otherOperation',
      name: 'GET /clients/{id}/credentials',
      prefix: '',
    });
    expect(root.match('GET', 'http://127.0.0.1:4010/')).toBeUndefined();
  });

  it('at /api/v2, a path beside it is outside, and the judgement says which base path', () => {
    const judged = judgeExchange(
      buildExchange({ method: 'GET', url: 'https://tenant.example.com/clients/cl_a/credentials', status: 200 }),
      undefined,
      new ApiLayout({ base: apiBaseOfUrl('https://tenant.example.com/api/v2') }),
    );
    expect(judged).toEqual({ findings: [], examined: [], notCovered: 'outside the API base path /api/v2 (not an operation of the interface)' });
    const atRoot = judgeExchange(
      buildExchange({ method: 'GET', url: 'https://tenant.example.com/api/v2/x', status: 200 }),
      undefined,
      new ApiLayout({ base: apiBaseAt(['/mock']) }),
    );
    expect(atRoot.notCovered).toBe('outside the API base path /mock (not an operation of the interface)');
  });

  it("comes from the target when it names the API, else from the description's servers, else /api/v2 below the target", () => {
    expect(apiBaseOfTarget('/api/v2', ['/'])).toEqual({ paths: ['/api/v2'] });
    expect(apiBaseOfTarget('', ['/'])).toEqual({ paths: [''] });
    expect(apiBaseOfTarget('')).toEqual({ paths: ['/api/v2'] });
    expect(apiBaseOfTarget('/tenant-a/')).toEqual({ paths: ['/tenant-a/api/v2'] });
    const described = (servers: unknown) =>
      new ApiLayout({
        openapi: OpenApiDescription.from({ openapi: '3.1.0', info: { title: 't', version: '1' }, ...(servers ? { servers } : {}), paths: {} }, 'd.yaml'),
      }).base;
    expect(described([{ url: 'http://127.0.0.1:4010' }])).toEqual({ paths: [''] });
    expect(described([{ url: 'https://{tenant}/api/v2', variables: { tenant: { default: 'tenant.example.com' } } }])).toEqual({ paths: ['/api/v2'] });
    // A description without servers says nothing of where the API is: the document's /api/v2 after any tenant path.
    expect(described(undefined)).toEqual({});
  });
});

describe('the per-operation table', () => {
  it("shows each operation's own result for a requirement of several: a failure on another operation is not the session update's", () => {
    const builder = new ReportBuilder({ kind: 'validate', source: 'test' });
    const carriedOut = buildExchange({
      id: '1',
      method: 'GET',
      url: 'https://tenant.example.com/api/v2/users/u1',
      status: 200,
      responseHeaders: { 'content-type': 'application/json' },
      responseBody: '{}',
    });
    const refused = errorExchange(getExchange(undefined, 'rs_1', { requestHeaders: {} }), 401, { message: 'no token' });
    for (const exchange of [carriedOut, refused]) builder.addExchange(exchange, judgeExchange(exchange));
    const report = builder.build({ failOn: 'must' });
    const credential = report.requirements.find((r) => r.id === 'AUTH-CREDENTIAL-REQUIRED-OTHER')!;
    expect(credential.status).toBe('fail');
    expect(credential.byOperation).toEqual({ otherOperation: { exchanges: 1, findings: 1 }, getResourceServer: { exchanges: 1, findings: 0 } });
    const group = (id: string) => report.operations.find((g) => g.operation === id)!;
    expect(group('otherOperation').status).toBe('fail');
    expect(group('getResourceServer').status).not.toBe('fail');
    expect(group('updateSession').status).not.toBe('fail');
  });

  it("a suite test speaks for the document's operations, never for the others", () => {
    const builder = new ReportBuilder({ kind: 'run', source: 'run' });
    builder.addTest({
      name: 'a forged token is refused',
      requirements: ['AUTH-CREDENTIAL-REQUIRED-OTHER'],
      status: 'fail',
      charged: ['AUTH-CREDENTIAL-REQUIRED-OTHER'],
      message: 'carried out',
    });
    const report = builder.build({ failOn: 'must' });
    const group = (id: string) => report.operations.find((g) => g.operation === id)!;
    expect(group('getResourceServer').status).toBe('fail');
    expect(group('otherOperation').status).toBe('skip');
  });
});

describe('the 401 rules on an operation the document does not detail', () => {
  it('a 404 without a credential is not charged (the path may be no operation of this tenant); a 403 is', () => {
    const refused = (status: number) =>
      judgeExchange(
        buildExchange({
          method: 'GET',
          url: 'https://tenant.example.com/api/v2/nothing-here/x1',
          status,
          responseHeaders: { 'content-type': 'application/json' },
          responseBody: '{"message":"no"}',
        }),
      )
        .findings.filter((f) => f.subject === 'implementation')
        .map((f) => f.requirement);
    expect(refused(404)).toEqual([]);
    expect(refused(403)).toEqual(['AUTH-MISSING-TOKEN-401-OTHER']);
  });
});
