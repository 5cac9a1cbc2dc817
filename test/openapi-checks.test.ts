// --openapi FILE: the operations the document does not detail are checked against the user's
// description: the status declared, the response body, the request body (a client finding),
// each a warning named OAS-*, the operation named by the description. The document's own
// operations keep the document's rules. Through the engine, validate and the proxy.
import { spawnSync } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BASE, claims, getExchange, jwt, resourceServer, STARTED_AT } from '../fixtures/exchanges.ts';
import { startReference, type RunningReference } from '../reference/index.ts';
import type { Report } from '../reports/model.ts';
import { buildExchange, type ExchangeParts } from '../rules/exchange.ts';
import { ApiLayout, judgeExchange } from '../rules/index.ts';
import type { OpenApiDescription } from '../rules/openapi/description.ts';
import { loadOpenApiFile } from '../rules/openapi/load.ts';
import { startCli } from './helpers/cli.ts';
import { startTestProxy } from './helpers/proxy.ts';
import { tokenFor } from './helpers/reference.ts';

const BIN = fileURLToPath(new URL('../bin/tmi-conform.js', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'tmi-openapi-checks-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const DESCRIPTION = `openapi: 3.1.0
info: { title: tenant, version: '2' }
servers:
  - url: https://tenant.example.com/api/v2
paths:
  /users/{id}:
    get:
      operationId: get_user
      responses:
        '200':
          description: the user
          content:
            application/json:
              schema: { $ref: '#/components/schemas/User' }
        '404': { description: no such user }
  /users:
    post:
      operationId: post_users
      requestBody:
        content:
          application/json:
            schema:
              type: object
              required: [email]
              properties: { email: { type: string } }
      responses:
        '201':
          description: created
          content:
            application/json:
              schema: { $ref: '#/components/schemas/User' }
  /resource-servers/{id}:
    get:
      responses:
        '200':
          description: contradicts the document on purpose
          content:
            application/json:
              schema: { type: object, required: [not_in_the_document] }
components:
  schemas:
    User:
      type: object
      required: [user_id]
      properties: { user_id: { type: string } }
`;
const descriptionPath = join(dir, 'tenant.yaml');
writeFileSync(descriptionPath, DESCRIPTION);

const auth = { authorization: `Bearer ${jwt(claims())}`, 'content-type': 'application/json' };
const call = (overrides: Partial<ExchangeParts>) =>
  buildExchange({
    startedAt: STARTED_AT,
    method: 'GET',
    url: `${BASE}/users/auth0%7C1`,
    requestHeaders: auth,
    status: 200,
    responseHeaders: { 'content-type': 'application/json' },
    responseBody: '{"user_id":"auth0|1"}',
    ...overrides,
  });

let openapi: OpenApiDescription;
beforeAll(async () => {
  openapi = await loadOpenApiFile(descriptionPath);
});

/** requirement: received, of the OAS findings of one exchange. */
const oas = (parts: Partial<ExchangeParts>) =>
  judgeExchange(call(parts), undefined, new ApiLayout({ openapi }))
    .findings.filter((f) => f.requirement.startsWith('OAS-'))
    .map((f) => `${f.requirement} ${f.subject} ${f.level}: ${f.received}`);

describe('the OAS checks, through the engine', () => {
  it('name the operation as the description does', () => {
    expect(judgeExchange(call({}), undefined, new ApiLayout({ openapi })).operation).toMatchObject({
      operation: 'otherOperation',
      name: 'GET /users/{id} (get_user)',
    });
    expect(judgeExchange(call({}), undefined).operation!.name).toBe('GET /users/{id}');
  });

  it('status: declared passes, undeclared warns', () => {
    expect(oas({ status: 404, responseBody: '{"message":"no"}' })).toEqual([]);
    expect(oas({ status: 418, responseBody: '{"message":"teapot"}' })).toEqual(['OAS-STATUS-DECLARED implementation should: 418']);
  });

  it("status: 401 and 429, which the document states for every operation, and a 5xx are not the description's to judge", () => {
    for (const status of [401, 429, 500, 503]) expect(oas({ status, responseBody: '{"message":"x"}' }), String(status)).toEqual([]);
    expect(oas({ status: 403, responseBody: '{"message":"x"}' })).toEqual(['OAS-STATUS-DECLARED implementation should: 403']);
  });

  it('response body: matching passes, not matching warns with the instance path', () => {
    expect(oas({})).toEqual([]);
    expect(oas({ responseBody: '{"user_id":5}' })).toEqual(['OAS-RESPONSE-SCHEMA implementation should: "/user_id must be string"']);
  });

  it('request body: matching passes, not matching is a client finding', () => {
    const post = { method: 'POST', url: `${BASE}/users`, status: 201 };
    expect(oas({ ...post, requestBody: '{"email":"a@example.com"}' })).toEqual([]);
    expect(oas({ ...post, requestBody: '{"name":"x"}' })).toEqual(['OAS-REQUEST-SCHEMA client should: "/ must have required property \'email\'"']);
  });

  it("the document's operations keep the document's rules: the description is not applied to them", () => {
    const judgement = judgeExchange(getExchange(resourceServer()), undefined, new ApiLayout({ openapi }));
    expect(judgement.operation!.operation).toBe('getResourceServer');
    expect(judgement.findings).toEqual([]);
  });
});

function harOf(name: string, exchanges: ReturnType<typeof call>[]): string {
  const headers = (h: Record<string, string>) => Object.entries(h).map(([n, value]) => ({ name: n, value }));
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
      headers: headers({ ...e.response!.headers, date: 'Fri, 15 Jan 2027 08:00:00 GMT' }),
      content: { size: 0, mimeType: 'application/json', text: e.response!.body?.text ?? '' },
    },
  }));
  const path = join(dir, `${name}.har`);
  writeFileSync(path, JSON.stringify({ log: { version: '1.2', creator: { name: 'x', version: '1' }, entries } }));
  return path;
}

function validate(...args: string[]) {
  const result = spawnSync(process.execPath, [BIN, 'validate', ...args], { encoding: 'utf8', env: { ...process.env, GITHUB_STEP_SUMMARY: '' } });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe('validate --openapi', () => {
  const har = harOf('users', [call({}), call({ responseBody: '{"user_id":5}' }), call({ status: 418, responseBody: '{}' })]);

  it('judges the other operations against it: warnings, so exit 0; the report names the operation and holds the OAS requirements', () => {
    const reportDir = join(dir, 'with');
    const { code, stdout, stderr } = validate(har, '--openapi', descriptionPath, '--report-dir', reportDir);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout).toContain(`openapi: ${descriptionPath} (OpenAPI 3.1, 3 operations)`);
    expect(stdout).toContain('GET /users/{id} (get_user)');
    const report = JSON.parse(readFileSync(join(reportDir, 'report.json'), 'utf8')) as Report;
    const byId = new Map(report.requirements.map((r) => [r.id, r]));
    expect(byId.get('OAS-RESPONSE-SCHEMA')).toMatchObject({ status: 'warn', counts: { findings: 1 } });
    expect(byId.get('OAS-STATUS-DECLARED')).toMatchObject({ status: 'warn', counts: { findings: 1 } });
    expect(byId.get('OAS-REQUEST-SCHEMA')!.status).toBe('skip');
    expect(report.traffic!.operations!.map((o) => o.name)).toEqual(['GET /users/{id} (get_user)']);
  });

  it('without it, the reports hold no OAS requirement', () => {
    const reportDir = join(dir, 'without');
    expect(validate(har, '--report-dir', reportDir).code).toBe(0);
    const report = JSON.parse(readFileSync(join(reportDir, 'report.json'), 'utf8')) as Report;
    expect(report.requirements.some((r) => r.id.startsWith('OAS-'))).toBe(false);
  });

  it('a description that cannot be used: exit 2, one line naming the file and why, no report', () => {
    const broken = join(dir, 'broken.json');
    writeFileSync(broken, '{"swagger":"2.0","paths":{}}');
    const missing = validate(har, '--openapi', join(dir, 'nope.yaml'), '--report-dir', join(dir, 'bad'));
    expect(missing.code).toBe(2);
    expect(missing.stderr.trim().split('\n')).toEqual([expect.stringContaining('nope.yaml: cannot be read (ENOENT)')]);
    const swagger = validate(har, '--openapi', broken, '--report-dir', join(dir, 'bad'));
    expect(swagger.code).toBe(2);
    expect(swagger.stderr.trim().split('\n')).toHaveLength(1);
    expect(swagger.stderr).toContain('broken.json');
  });
});

describe('proxy --openapi', () => {
  let ref: RunningReference;
  beforeAll(async () => {
    ref = await startReference({ rateLimit: false });
  });
  afterAll(async () => {
    await ref?.close();
  });

  it('judges the other operations live against the description', async () => {
    // The reference serves no /users: its 404 is declared; a 405-like status on POST is not.
    const description = DESCRIPTION.replace('https://tenant.example.com/api/v2', '/api/v2').replace(
      "'404': { description: no such user }",
      "'401': { description: no }",
    );
    const path = join(dir, 'live.yaml');
    writeFileSync(path, description);
    const under = await startTestProxy(ref.origin, { openapiPath: path });
    try {
      const token = await tokenFor(ref, 'full');
      const answer = await fetch(`${under.proxy.url}/api/v2/users/auth0%7C1`, { headers: { authorization: `Bearer ${token}` } });
      await answer.arrayBuffer();
      await under.proxy.stop();
      const report = JSON.parse(readFileSync(join(under.reportDir, 'report.json'), 'utf8')) as Report;
      const status = report.requirements.find((r) => r.id === 'OAS-STATUS-DECLARED')!;
      expect(status.status).toBe('warn');
      expect(status.evidence[0]!.message).toContain(`received ${answer.status}`);
      expect(report.traffic!.operations!.map((o) => o.name)).toContain('GET /users/{id} (get_user)');
    } finally {
      await under.dispose();
    }
  });
});

describe('a target that serves the operations at the root (a mock of the description), with --openapi', () => {
  // A mock without a server prefix: the document's resource server read and a client's credentials, at the root.
  const ROOT_DESCRIPTION = `openapi: 3.1.0
info: { title: mock, version: '2' }
servers:
  - url: http://127.0.0.1:4010
paths:
  /resource-servers/{id}:
    get:
      operationId: getResourceServer
      responses: { '200': { description: the resource server } }
  /clients/{client_id}/credentials:
    get:
      operationId: get_credentials
      responses:
        '200':
          description: the credentials
          content: { application/json: { schema: { type: array } } }
`;
  let mock: Server;
  let origin: string;
  beforeAll(async () => {
    mock = createServer((req, res) => {
      const json = (status: number, body: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      if (req.url?.startsWith('/resource-servers/')) return json(200, resourceServer({ id: 'rs_main' }));
      if (/^\/clients\/[^/]+\/credentials$/.test(req.url ?? '')) return json(200, []);
      return json(404, { message: 'not found' });
    });
    await new Promise<void>((resolve) => mock.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(mock.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => mock.close(() => resolve())));

  it('proxy, then validate of its recording: every exchange calls an operation, lower-case ids with "_" collapse into one', async () => {
    const descriptionAtRoot = join(dir, 'root.yaml');
    writeFileSync(descriptionAtRoot, ROOT_DESCRIPTION);
    const under = await startTestProxy(origin, { openapiPath: descriptionAtRoot });
    try {
      const token = jwt(claims('read:resource_servers read:clients read:client_credentials'));
      for (const path of ['/resource-servers/rs_main', '/clients/cl_a/credentials', '/clients/cl_b/credentials', '/clients/cl_full/credentials']) {
        const answer = await fetch(`${under.proxy.url}${path}`, { headers: { authorization: `Bearer ${token}` } });
        await answer.arrayBuffer();
      }
      await under.proxy.stop();
      const operations = (report: Report) => [report.traffic!.notCovered, report.traffic!.operations!.map((o) => [o.name, o.exchanges])];
      const expected = [
        0,
        [
          ['GET /resource-servers/{id}', 1],
          ['GET /clients/{client_id}/credentials (get_credentials)', 3],
        ],
      ];
      const live = JSON.parse(readFileSync(join(under.reportDir, 'report.json'), 'utf8')) as Report;
      expect(operations(live)).toEqual(expected);
      expect(JSON.stringify(live)).not.toContain('outside the API base path');

      const reportDir = join(dir, 'root-validate');
      const { code, stdout, stderr } = validate(under.journalPath, '--openapi', descriptionAtRoot, '--report-dir', reportDir);
      expect(stderr).toBe('');
      expect(code).toBe(0);
      expect(stdout).not.toContain('outside the API base path');
      const offline = JSON.parse(readFileSync(join(reportDir, 'report.json'), 'utf8')) as Report;
      expect(operations(offline)).toEqual(expected);
      // The description's checks ran on the operations it describes.
      expect(offline.requirements.find((r) => r.id === 'OAS-STATUS-DECLARED')!.status).toBe('pass');
    } finally {
      await under.dispose();
    }
  });
});

// A pattern found in real descriptions: "\-" outside a character class is an identity escape,
// which ajv's Unicode regular expressions reject ("Invalid escape"), so the schema holding it
// cannot be compiled and no body is judged against it.
const UNCOMPILABLE = `openapi: 3.1.0
info: { title: tenant, version: '2' }
servers:
  - url: /api/v2
paths:
  /phones/{id}:
    get:
      operationId: getPhone
      responses:
        '200': &phone
          description: the phone
          content:
            application/json:
              schema:
                type: object
                properties: { number: { type: string, pattern: '^\\d{3}\\-\\d{4}$' } }
        '404': *phone
`;
const uncompilablePath = join(dir, 'uncompilable.yaml');
writeFileSync(uncompilablePath, UNCOMPILABLE);
const NOT_COMPILED = 'its response body against the OpenAPI description (OAS-RESPONSE-SCHEMA): getPhone response';
const NOT_COMPILED_CAUSE = 'application/json: schema not compiled (Invalid regular expression: ';

/** Each of the five report files names the schema not compiled and how many exchanges it held for. */
function expectNamedInEveryReport(reportDir: string, exchanges: number): void {
  const report = JSON.parse(readFileSync(join(reportDir, 'report.json'), 'utf8')) as Report;
  const tally = report.traffic!.notJudged!.find((t) => t.reason.startsWith(NOT_COMPILED));
  expect(tally, JSON.stringify(report.traffic!.notJudged)).toMatchObject({ count: exchanges });
  expect(tally!.reason).toContain(NOT_COMPILED_CAUSE);
  expect(report.requirements.find((r) => r.id === 'OAS-RESPONSE-SCHEMA')!.status).toBe('skip');
  for (const file of ['report.md', 'report.html', 'junit.xml', 'report.sarif']) {
    const text = readFileSync(join(reportDir, file), 'utf8');
    expect(text, file).toContain(NOT_COMPILED);
    expect(text, file).toContain(NOT_COMPILED_CAUSE);
  }
  const sarif = JSON.parse(readFileSync(join(reportDir, 'report.sarif'), 'utf8')) as {
    runs: Array<{ invocations: Array<{ toolExecutionNotifications?: Array<{ level: string; message: { text: string } }> }> }>;
  };
  expect(sarif.runs[0]!.invocations[0]!.toolExecutionNotifications).toContainEqual({
    level: 'warning',
    message: { text: expect.stringContaining(`not judged: ${exchanges} exchange(s), ${NOT_COMPILED}`) },
    descriptor: { id: 'not-judged' },
  });
}

describe('a schema of the description that cannot be compiled', () => {
  const phone = (id: string) => call({ url: `${BASE}/phones/${id}`, responseBody: '{"number":"555-0100"}' });

  it('the engine examines nothing against it and says why, in the judgement', async () => {
    const description = await loadOpenApiFile(uncompilablePath);
    const judgement = judgeExchange(phone('p1'), undefined, new ApiLayout({ openapi: description }));
    expect(judgement.examined).not.toContain('OAS-RESPONSE-SCHEMA');
    expect(judgement.partsNotJudged).toEqual([
      expect.stringMatching(
        /^its response body against the OpenAPI description \(OAS-RESPONSE-SCHEMA\): getPhone response 200 application\/json: schema not compiled \(Invalid regular expression: .*Invalid escape\)$/,
      ),
    ]);
  });

  it('validate: the console names it with the exchanges it held for, and so does every report', () => {
    const reportDir = join(dir, 'uncompilable-validate');
    const { code, stdout } = validate(harOf('phones', [phone('p1'), phone('p2')]), '--openapi', uncompilablePath, '--report-dir', reportDir);
    expect(code).toBe(0);
    expect(stdout).toMatch(
      /^not judged: 2 exchange\(s\), its response body against the OpenAPI description \(OAS-RESPONSE-SCHEMA\): getPhone response 200 application\/json: schema not compiled \(Invalid regular expression: .*\): \S*phones\.har log\.entries \[0\], \S*phones\.har log\.entries \[1\]$/m,
    );
    expectNamedInEveryReport(reportDir, 2);
  });

  it('proxy: the console says it live, once, when first met; the summary at stop and every report name it', async () => {
    const ref = await startReference({ rateLimit: false });
    const reportDir = join(dir, 'uncompilable-proxy');
    const child = startCli([
      'proxy',
      '--target',
      ref.origin,
      '--listen',
      '127.0.0.1:0',
      '--report-dir',
      reportDir,
      '--status-interval',
      '0',
      '--openapi',
      uncompilablePath,
    ]);
    try {
      const origin = (await child.firstLine).slice('listening on '.length);
      const token = await tokenFor(ref, 'full');
      // The reference serves no /phones: its JSON 404 is declared, with the schema that cannot be compiled.
      for (const id of ['p1', 'p2']) expect((await fetch(`${origin}/api/v2/phones/${id}`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(404);
      await child.stderrContains(`not judged: ${NOT_COMPILED}`);
      child.kill('SIGTERM');
      const { code, stdout, stderr } = await child.exited;
      expect(code).toBe(0);
      expect(stderr.split('\n').filter((line) => line.includes(NOT_COMPILED))).toEqual([
        expect.stringMatching(
          /^tmi-conform proxy: not judged: its response body .*schema not compiled \(Invalid regular expression: .*\(first met in exchange 1; /,
        ),
      ]);
      expect(stdout).toMatch(
        /^not judged: 2 exchange\(s\), its response body against the OpenAPI description \(OAS-RESPONSE-SCHEMA\): getPhone response 404 application\/json: schema not compiled \(Invalid regular expression: .*\): exchange 1, exchange 2$/m,
      );
      expectNamedInEveryReport(reportDir, 2);
    } finally {
      child.kill('SIGKILL');
      await ref.close();
    }
  });
});
