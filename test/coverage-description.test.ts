// Coverage of the user's description (--openapi): its operations exercised of those it declares,
// and the statuses each declares seen (`default` names none; an undeclared status is never
// missing), through the engine, the report builder and every format, report merge (only one and
// the same description adds up), report diff, the gate (description=, description-responses=),
// validate, the proxy's report and the job summary.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BASE, claims, getExchange, jwt, resourceServer, STARTED_AT } from '../fixtures/exchanges.ts';
import { applyBaseline } from '../reports/baseline.ts';
import { ReportBuilder } from '../reports/builder.ts';
import { renderSummary } from '../reports/console.ts';
import { DOCUMENT_COVERAGE_PARTS } from '../reports/coverage.ts';
import { belowCoverageGate, parseMinCoverage } from '../reports/coverage-gate.ts';
import { diffReports } from '../reports/diff.ts';
import { renderHtml } from '../reports/html.ts';
import { renderJunit } from '../reports/junit.ts';
import { renderMarkdown } from '../reports/markdown.ts';
import { mergeReports } from '../reports/merge.ts';
import type { Report } from '../reports/model.ts';
import { reportSchemaError } from '../reports/schema.ts';
import { writeReports } from '../reports/write.ts';
import { buildExchange, type ExchangeParts } from '../rules/exchange.ts';
import { ApiLayout, judgeExchange } from '../rules/index.ts';
import type { OpenApiDescription } from '../rules/openapi/description.ts';
import { loadOpenApiFile } from '../rules/openapi/load.ts';
import type { Exchange } from '../rules/types.ts';
import { recorded, startTestProxy } from './helpers/proxy.ts';

const BIN = fileURLToPath(new URL('../bin/tmi-conform.js', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'tmi-coverage-description-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// Five operations, seven declared statuses: GET /users/{id} 200, 404, 4XX (and `default`, which
// names none); DELETE /users/{id} 204; POST /users 201; GET /resource-servers/{id} (one of the
// document's) 200, 404; GET /health none.
const DESCRIPTION = `openapi: 3.1.0
info: { title: Users API, version: '1.2' }
servers:
  - url: https://tenant.example.com/api/v2
paths:
  /users/{id}:
    get:
      operationId: get_user
      responses:
        '200': { description: the user }
        '404': { description: no such user }
        4XX: { description: another client error }
        default: { description: anything else }
    delete:
      responses:
        '204': { description: gone }
  /users:
    post:
      responses:
        '201': { description: created }
  /resource-servers/{id}:
    get:
      responses:
        '200': { description: the resource server }
        '404': { description: no such resource server }
  /health:
    get: {}
`;
const descriptionPath = join(dir, 'users.yaml');
writeFileSync(descriptionPath, DESCRIPTION);
/** The same operations with one more status declared: another description. */
const otherPath = join(dir, 'users-other.yaml');
writeFileSync(otherPath, DESCRIPTION.replace("'201': { description: created }", "'201': { description: created }\n        '409': { description: taken }"));

const auth = { authorization: `Bearer ${jwt(claims())}`, 'content-type': 'application/json' };
const call = (method: string, path: string, status: number, overrides: Partial<ExchangeParts> = {}): Exchange =>
  buildExchange({
    startedAt: STARTED_AT,
    method,
    url: `${BASE}${path}`,
    requestHeaders: auth,
    status,
    responseHeaders: { 'content-type': 'application/json' },
    responseBody: '{"message":"x"}',
    ...overrides,
  });

/** GET /users 200, 404, 418 (its 4XX), 500 (only `default`); POST /users 400 (undeclared); one resource server. */
const TRAFFIC = (): Exchange[] => [
  call('GET', '/users/u1', 200, { responseBody: '{"user_id":"u1"}' }),
  call('GET', '/users/u2', 404),
  call('GET', '/users/u3', 418),
  call('GET', '/users/u4', 500),
  call('POST', '/users', 400, { requestBody: '{"email":"a@example.com"}' }),
  getExchange(resourceServer()),
];

let openapi: OpenApiDescription;
let other: OpenApiDescription;
beforeAll(async () => {
  openapi = await loadOpenApiFile(descriptionPath);
  other = await loadOpenApiFile(otherPath);
});

function reportOf(exchanges: Exchange[], description = openapi, options: { frameAtStart?: boolean } = {}): Report {
  const layout = new ApiLayout({ openapi: description });
  const builder = new ReportBuilder({
    kind: 'validate',
    source: 'validate:chosen',
    openapi: true,
    ...(options.frameAtStart ? { description: description.coverageFrame() } : {}),
  });
  for (const exchange of exchanges) builder.addExchange(exchange, judgeExchange(exchange, undefined, layout));
  return builder.build({ failOn: 'must' });
}

const exercised = (report: Report) => report.coverage!.description!.byOperation.filter((o) => o.exercised).map((o) => o.operation);
const seenOf = (report: Report) => Object.fromEntries(report.coverage!.description!.byOperation.map((o) => [o.operation, o.seen]));

describe('what one exchange exercised of the description (Judgement.described)', () => {
  it("the operation it matched, the document's too, and the declared status its response selected", () => {
    const layout = new ApiLayout({ openapi });
    const described = (exchange: Exchange) => {
      const { described: d } = judgeExchange(exchange, undefined, layout);
      return d && { operation: d.operation, status: d.status };
    };
    expect(described(getExchange(resourceServer()))).toEqual({ operation: 'GET /resource-servers/{id}', status: '200' });
    expect(described(call('GET', '/users/u2', 404))).toEqual({ operation: 'GET /users/{id}', status: '404' });
    expect(described(call('GET', '/users/u3', 418))).toEqual({ operation: 'GET /users/{id}', status: '4XX' });
    // Only `default` selected: no status of the description seen.
    expect(described(call('GET', '/users/u4', 500))).toEqual({ operation: 'GET /users/{id}', status: undefined });
    expect(described(call('PATCH', '/users/u4', 200))).toEqual({ operation: undefined, status: undefined });
    expect(judgeExchange(getExchange(resourceServer())).described).toBeUndefined();
  });

  it("the document's operations keep the document's rules: matched for the coverage, not judged by the description", () => {
    const layout = new ApiLayout({ openapi });
    const contradicting = getExchange(resourceServer(), 'rs_1', { status: 418 });
    expect(judgeExchange(contradicting, undefined, layout).findings.filter((f) => f.requirement.startsWith('OAS-'))).toEqual([]);
    expect(judgeExchange(contradicting, undefined, layout).operation!.name).toBe('GET /resource-servers/{id}');
  });
});

describe('the description coverage of a report', () => {
  it('counts the operations exercised and the declared statuses seen, and report.json holds it under its schema', () => {
    const report = reportOf(TRAFFIC());
    const description = report.coverage!.description!;
    expect(description).toMatchObject({
      title: 'Users API',
      version: '1.2',
      operations: { examined: 3, applicable: 5 },
      responses: { examined: 4, applicable: 7 },
    });
    expect(description.identity).toMatch(/^[0-9a-f]{16}$/);
    expect(exercised(report)).toEqual(['GET /users/{id}', 'POST /users', 'GET /resource-servers/{id}']);
    // `default` is no status; 400, which POST /users does not declare, is never missing.
    expect(description.byOperation.find((o) => o.operation === 'GET /users/{id}')).toEqual({
      operation: 'GET /users/{id}',
      operationId: 'get_user',
      exercised: true,
      statuses: ['200', '404', '4XX'],
      seen: ['200', '404', '4XX'],
    });
    expect(description.byOperation.find((o) => o.operation === 'POST /users')).toMatchObject({ exercised: true, statuses: ['201'], seen: [] });
    expect(description.byOperation.find((o) => o.operation === 'GET /health')).toMatchObject({ exercised: false, statuses: [], seen: [] });
    expect(reportSchemaError(JSON.parse(JSON.stringify(report)))).toBeUndefined();
  });

  it('without a description there is none; with one known at start, a report before any traffic counts 0 of it', () => {
    const builder = new ReportBuilder({ kind: 'validate', source: 'validate:x' });
    for (const exchange of TRAFFIC()) builder.addExchange(exchange, judgeExchange(exchange));
    expect(builder.build({ failOn: 'must' }).coverage!.description).toBeUndefined();
    expect(reportOf([], openapi).coverage!.description).toBeUndefined();
    expect(reportOf([], openapi, { frameAtStart: true }).coverage!.description).toMatchObject({
      operations: { examined: 0, applicable: 5 },
      responses: { examined: 0, applicable: 7 },
    });
  });

  it('every format says it: the console, report.md, report.html, junit.xml', () => {
    const report = reportOf(TRAFFIC());
    const consoleText = renderSummary(report, { detail: 'table' }).join('\n');
    expect(consoleText).toContain('; description Users API 1.2: operations 3/5, declared statuses 4/7');
    expect(consoleText).toContain('  description operations not exercised: DELETE /users/{id}; GET /health');
    expect(consoleText).toContain('  description statuses not seen: POST /users 201; GET /resource-servers/{id} 404');
    const markdown = renderMarkdown(report);
    expect(markdown).toContain('| description | 3/5 (60 %) operations of the description Users API 1.2 exercised |');
    expect(markdown).toContain('| description-responses | 4/7 (57 %) status codes the description declares, seen |');
    expect(markdown).toContain('| GET /users/{id} (get_user) | ✓ | 200 ✓ 404 ✓ 4XX ✓ |');
    expect(markdown).toContain('| DELETE /users/{id} | ✗ | 204 ✗ |');
    expect(markdown).toContain('| GET /health | ✗ | none declared |');
    const html = renderHtml(report);
    expect(html).toContain('Operations of the description Users API 1.2');
    expect(html).toMatch(/<th scope="row">POST \/users<\/th><td class="seen">✓<\/td><td class="statuses"><span class="unseen">201<\/span><\/td>/);
    const junit = renderJunit(report);
    expect(junit).toContain('<property name="coverage.description" value="3/5 (60 %)"/>');
    expect(junit).toContain('<property name="coverage.description-responses" value="4/7 (57 %)"/>');
  });
});

describe('report merge and report diff', () => {
  const first = () => reportOf(TRAFFIC().slice(0, 2));
  const second = () => reportOf([call('POST', '/users', 201, { requestBody: '{"email":"a@example.com"}' }), call('DELETE', '/users/u1', 204)]);

  it('reports of one description add up', () => {
    const merged = mergeReports([{ report: first() }, { report: second() }], { failOn: 'must' });
    expect(exercised(merged)).toEqual(['GET /users/{id}', 'DELETE /users/{id}', 'POST /users']);
    expect(seenOf(merged)).toMatchObject({ 'GET /users/{id}': ['200', '404'], 'POST /users': ['201'], 'DELETE /users/{id}': ['204'] });
    expect(merged.coverage!.description).toMatchObject({
      title: 'Users API',
      operations: { examined: 3, applicable: 5 },
      responses: { examined: 4, applicable: 7 },
    });
    // A report without one takes nothing away.
    const withRun = mergeReports([{ report: first() }, { report: reportOf([], openapi) }], { failOn: 'must' });
    expect(withRun.coverage!.description!.operations).toEqual({ examined: 1, applicable: 5 });
    expect(reportSchemaError(JSON.parse(JSON.stringify(merged)))).toBeUndefined();
  });

  it('reports of different descriptions (same title and version, other statuses) are not added up, and say so', () => {
    const merged = mergeReports([{ report: first() }, { report: reportOf(TRAFFIC().slice(4, 5), other) }], { failOn: 'must' });
    expect(merged.coverage!.description).toBeUndefined();
    expect(merged.coverage!.descriptionsNotMerged).toEqual(['Users API 1.2']);
    expect(renderSummary(merged, { detail: 'table' }).join('\n')).toContain('; description: not merged (the reports judged different ones: Users API 1.2)');
    expect(belowCoverageGate(merged, { description: 10 })).toBe(
      'coverage below --min-coverage: description < 10 %: the merged reports judged different OpenAPI descriptions (Users API 1.2), so none is counted',
    );
    expect(reportSchemaError(JSON.parse(JSON.stringify(merged)))).toBeUndefined();
    // Merged again with a third report of the first description: still not added up.
    expect(mergeReports([{ report: merged }, { report: second() }], { failOn: 'must' }).coverage!.description).toBeUndefined();
  });

  it('report diff names the description operations and statuses gained and lost', () => {
    const diff = diffReports(first(), second());
    expect(diff.coverage!.gained).toEqual(
      expect.arrayContaining(['description operation DELETE /users/{id}', 'description operation POST /users', 'description response POST /users 201']),
    );
    expect(diff.coverage!.lost).toEqual(expect.arrayContaining(['description operation GET /users/{id}', 'description response GET /users/{id} 404']));
    expect(diff.coverage!.after).toContain('description operations 2/5, statuses 2/7');
  });
});

describe('the gate: description= and description-responses=', () => {
  it('reads them beside the document parts; run, which judges no description, refuses them', () => {
    expect(parseMinCoverage('document=50,description=80,description-responses=50', '--min-coverage')).toEqual({
      document: 50,
      description: 80,
      'description-responses': 50,
    });
    expect(() => parseMinCoverage('description=80', 'run: coverage', DOCUMENT_COVERAGE_PARTS)).toThrow(
      'run: coverage: "description=80" is not a percentage (0 to 100) or PART=N,… with PART one of document, responses, values, operations',
    );
  });

  it('passes at the share, fails above it naming the operations not exercised or the statuses not seen', () => {
    const report = reportOf(TRAFFIC());
    expect(belowCoverageGate(report, { description: 60, 'description-responses': 57 })).toBeUndefined();
    expect(belowCoverageGate(report, { description: 61 })).toBe(
      'coverage below --min-coverage: description 3/5 (60 %) < 61 %; largest gap: 2 operation(s) of the description not exercised (DELETE /users/{id}, GET /health)',
    );
    expect(belowCoverageGate(report, { 'description-responses': 58 })).toBe(
      'coverage below --min-coverage: description-responses 4/7 (57 %) < 58 %; largest gap: DELETE /users/{id}: 204 not seen',
    );
  });

  it('a report without a description is below any description gate, and the line says why', () => {
    const builder = new ReportBuilder({ kind: 'validate', source: 'validate:x' });
    expect(belowCoverageGate(builder.build({ failOn: 'must' }), { description: 0 })).toBe(
      'coverage below --min-coverage: description < 0 %: the report judged no OpenAPI description (--openapi)',
    );
  });

  it('a baseline accepts a description gap by its name in report diff', () => {
    const report = applyBaseline(reportOf(TRAFFIC()), {
      source: 'gaps.yaml',
      entries: [],
      gaps: [{ gap: 'description operation GET /health', reason: 'a probe only the load balancer calls' }],
    });
    expect(report.coverage!.accepted!.map((g) => g.gap)).toEqual(['description operation GET /health']);
    expect(belowCoverageGate(report, { description: 80 })).toBeUndefined();
    expect(belowCoverageGate(report, { description: 81 })).toContain(
      'description 4/5 (80 %) with 1 accepted gap(s) < 81 %; largest gap: 1 operation(s) of the description not exercised (DELETE /users/{id})',
    );
  });
});

function harOf(exchanges: Exchange[]): string {
  const headers = (h: Record<string, string>) => Object.entries(h).map(([name, value]) => ({ name, value }));
  const entries = exchanges.map((e) => ({
    startedDateTime: e.startedAt,
    time: 1,
    request: {
      method: e.request.method,
      url: e.request.url,
      httpVersion: 'HTTP/1.1',
      headers: headers(e.request.headers),
      ...(e.request.body ? { postData: { mimeType: 'application/json', text: e.request.body.text } } : {}),
    },
    response: {
      status: e.response!.status,
      httpVersion: 'HTTP/1.1',
      headers: headers(e.response!.headers),
      content: { size: 0, mimeType: 'application/json', text: e.response!.body?.text ?? '' },
    },
  }));
  const path = join(dir, 'traffic.har');
  writeFileSync(path, JSON.stringify({ log: { version: '1.2', creator: { name: 'x', version: '1' }, entries } }));
  return path;
}

describe('validate --openapi and the job summary', () => {
  const validate = (...args: string[]) =>
    spawnSync(process.execPath, [BIN, 'validate', harOf(TRAFFIC()), '--openapi', descriptionPath, ...args], {
      encoding: 'utf8',
      env: { ...process.env, GITHUB_STEP_SUMMARY: '' },
    });

  it('report.json holds the description coverage; the console line says it; --min-coverage description= gates it', { timeout: 60_000 }, () => {
    const reportDir = join(dir, 'validated');
    const ok = validate('--report-dir', reportDir, '--min-coverage', 'description=60');
    expect(ok.status, ok.stderr).toBe(0);
    expect(ok.stdout).toContain('; description Users API 1.2: operations 3/5, declared statuses 4/7');
    const report = JSON.parse(readFileSync(join(reportDir, 'report.json'), 'utf8')) as Report;
    expect(report.coverage!.description).toMatchObject({ operations: { examined: 3, applicable: 5 }, responses: { examined: 4, applicable: 7 } });
    const below = validate('--report-dir', reportDir, '--min-coverage', 'description-responses=100');
    expect(below.status).toBe(1);
    expect(below.stderr.trim().split('\n')).toEqual([
      'tmi-conform validate: coverage below --min-coverage: description-responses 4/7 (57 %) < 100 %; largest gap: DELETE /users/{id}: 204 not seen',
    ]);
  });

  it('the job summary (GITHUB_STEP_SUMMARY) gets the coverage line under the verdict, and the tables', async () => {
    const summary = join(dir, 'step-summary.md');
    writeFileSync(summary, '');
    const before = process.env['GITHUB_STEP_SUMMARY'];
    process.env['GITHUB_STEP_SUMMARY'] = summary;
    try {
      await writeReports(reportOf(TRAFFIC()), join(dir, 'summary'));
    } finally {
      if (before === undefined) delete process.env['GITHUB_STEP_SUMMARY'];
      else process.env['GITHUB_STEP_SUMMARY'] = before;
    }
    const text = readFileSync(summary, 'utf8');
    const verdictTable = text.indexOf('| pass | fail | warn | skip |');
    const line = text.indexOf('**Coverage**: document ');
    expect(verdictTable).toBeGreaterThan(0);
    // Right under the verdict's table, before anything else.
    expect(text.slice(verdictTable).split('\n\n')[1]).toMatch(
      /^\*\*Coverage\*\*: document \d+\/\d+ requirements .*; description Users API 1\.2: operations 3\/5, declared statuses 4\/7 \(below: what was not reached\)\.$/,
    );
    expect(line).toBeGreaterThan(verdictTable);
    expect(text).toContain('| description | 3/5 (60 %) operations of the description Users API 1.2 exercised |');
    expect(text).toContain('| GET /users/{id} (get_user) | ✓ | 200 ✓ 404 ✓ 4XX ✓ |');
  });
});

describe('the proxy with --openapi', () => {
  let server: Server;
  let origin: string;
  beforeAll(async () => {
    server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        const status = req.url?.startsWith('/api/v2/users/') ? 200 : 404;
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(status === 200 ? '{"user_id":"u1"}' : '{"message":"no"}');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('counts the description from the start, and what the traffic exercised in the report at stop', { timeout: 30_000 }, async () => {
    const idle = await startTestProxy(origin, { openapiPath: descriptionPath });
    const idleSummary = await idle.proxy.stop();
    expect(idleSummary.report.coverage!.description).toMatchObject({ operations: { examined: 0, applicable: 5 }, responses: { examined: 0, applicable: 7 } });
    await idle.dispose();

    const under = await startTestProxy(origin, { openapiPath: descriptionPath });
    try {
      await fetch(`${under.proxy.url}/api/v2/users/u1`, { headers: auth }).then((r) => r.text());
      await fetch(`${under.proxy.url}/api/v2/users`, { method: 'POST', headers: auth, body: '{"email":"a@example.com"}' }).then((r) => r.text());
      await recorded(under.proxy, 2);
      const { report } = await under.proxy.stop();
      expect(report.coverage!.description).toMatchObject({ operations: { examined: 2, applicable: 5 }, responses: { examined: 1, applicable: 7 } });
      expect(JSON.parse(readFileSync(join(under.reportDir, 'report.json'), 'utf8')).coverage.description.operations).toEqual({ examined: 2, applicable: 5 });
    } finally {
      await under.dispose();
    }
  });
});
