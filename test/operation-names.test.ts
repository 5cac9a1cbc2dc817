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
  ['GET', '/api/v2/organizations/name/acme', 'GET /organizations/name/acme'],
  ['GET', '/api/v2/logs?q=type%3As&per_page=50', 'GET /logs'],
  ['GET', '/api/v2/logs/90020231120123456789012345678901234567890123456789', 'GET /logs/{id}'],
  ['GET', '/api/v2/jobs/job_A1b2C3d4E5f6/errors', 'GET /jobs/{id}/errors'],
  ['POST', '/api/v2/jobs/verification-email', 'POST /jobs/verification-email'],
  ['GET', '/api/v2/actions/actions/8a3d2f4e-6b1c-4d2e-9f0a-1b2c3d4e5f60/versions', 'GET /actions/actions/{id}/versions'],
  ['GET', '/api/v2/actions/triggers/post-login/bindings', 'GET /actions/triggers/post-login/bindings'],
  ['PUT', '/api/v2/prompts/login/custom-text/en', 'PUT /prompts/login/custom-text/en'],
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
    expect(templatePath('/a//b')).toBe('/a//b');
    expect(templatePath('/users/x1/')).toBe('/users/{id}');
    expect(templatePath('/Users')).toBe('/{id}');
  });

  it("a recording with thousands of distinct ids has one row per operation", () => {
    const tally = new TrafficTally();
    for (let i = 0; i < 3000; i++) {
      const exchange = buildExchange({ id: String(i), method: 'GET', url: `https://tenant.example.com/api/v2/users/auth0|${i.toString(36)}x${i}/roles`, status: 200 });
      tally.coveredExchange(exchange, 'otherOperation', judgeExchange(exchange), null);
    }
    const rows = tally.stats()!.operations!;
    expect(rows.map((r) => [r.name, r.exchanges, r.byStatus])).toEqual([['GET /users/{id}/roles', 3000, { '200': 3000 }]]);
    expect(rows[0]!.requirements).toContain('AUTH-CREDENTIAL-REQUIRED-OTHER');
  });
});

describe("the per-operation table", () => {
  it("shows each operation's own result for a requirement of several: a failure on another operation is not the session update's", () => {
    const builder = new ReportBuilder({ kind: 'validate', source: 'test' });
    const carriedOut = buildExchange({ id: '1', method: 'GET', url: 'https://tenant.example.com/api/v2/users/u1', status: 200, responseHeaders: { 'content-type': 'application/json' }, responseBody: '{}' });
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

  it('a suite test speaks for the document\'s operations, never for the others', () => {
    const builder = new ReportBuilder({ kind: 'run', source: 'run' });
    builder.addTest({ name: 'a forged token is refused', requirements: ['AUTH-CREDENTIAL-REQUIRED-OTHER'], status: 'fail', charged: ['AUTH-CREDENTIAL-REQUIRED-OTHER'], message: 'carried out' });
    const report = builder.build({ failOn: 'must' });
    const group = (id: string) => report.operations.find((g) => g.operation === id)!;
    expect(group('getResourceServer').status).toBe('fail');
    expect(group('otherOperation').status).toBe('skip');
  });
});

describe('the 401 rules on an operation the document does not detail', () => {
  it('a 404 without a credential is not charged (the path may be no operation of this tenant); a 403 is', () => {
    const refused = (status: number) =>
      judgeExchange(buildExchange({ method: 'GET', url: 'https://tenant.example.com/api/v2/nothing-here/x1', status, responseHeaders: { 'content-type': 'application/json' }, responseBody: '{"message":"no"}' }))
        .findings.filter((f) => f.subject === 'implementation')
        .map((f) => f.requirement);
    expect(refused(404)).toEqual([]);
    expect(refused(403)).toEqual(['AUTH-MISSING-TOKEN-401-OTHER']);
  });
});
