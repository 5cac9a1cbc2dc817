// The user's own OpenAPI description (rules/openapi/): which operation an exchange is for, its status
// and bodies judged against the declared schemas (3.1 and 3.0), schemas compiled only when needed, and
// every way a description can be refused.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { UsageError } from '../core/errors.ts';
import { OpenApiDescription, OpenApiError, type OpenApiOperation } from '../rules/openapi/description.ts';
import { loadOpenApiFile } from '../rules/openapi/load.ts';

/** A small 3.1 description: users, with `$ref`s to components, a recursive schema and several servers' rules. */
function users31(): Record<string, unknown> {
  return {
    openapi: '3.1.0',
    info: { title: 'Users', version: '1' },
    servers: [{ url: 'https://{region}.example.com/{version}', variables: { region: { default: 'eu' }, version: { default: 'api/v1' } } }],
    paths: {
      '/users/{id}': {
        get: {
          operationId: 'getUser',
          responses: {
            '200': { description: 'the user', content: { 'application/json': { schema: { $ref: '#/components/schemas/User' } } } },
            '4XX': { $ref: '#/components/responses/Problem' },
          },
        },
        patch: {
          requestBody: { $ref: '#/components/requestBodies/UserUpdate' },
          responses: { '200': { description: 'updated', content: { 'application/vnd.example.user+json': { schema: { $ref: '#/components/schemas/User' } } } } },
        },
      },
      '/users/me': {
        get: {
          operationId: 'getMe',
          responses: { default: { description: 'anything', content: { '*/*': { schema: { type: 'object', required: ['me'] } } } } },
        },
      },
      '/users/{id}/avatar': { get: { responses: { '200': { description: 'an image', content: { 'image/png': {} } } } } },
      '/files/{name}.json': { get: { operationId: 'getFile', responses: {} } },
      '/trees/{id}': {
        get: {
          operationId: 'getTree',
          responses: { '200': { description: 'a tree', content: { 'application/json': { schema: { $ref: '#/components/schemas/Node' } } } } },
        },
      },
      '/imports': {
        get: {
          operationId: 'getImport',
          responses: { '200': { description: 'elsewhere', content: { 'application/json': { schema: { $ref: 'https://schemas.example.com/import.json' } } } } },
        },
      },
      '/internal/health': {
        servers: [{ url: '/' }],
        get: { operationId: 'health', responses: { '200': { description: 'ok' } } },
        post: { operationId: 'probe', servers: [{ url: 'https://probe.example.com/probe' }], responses: { '204': { description: 'ok' } } },
      },
    },
    components: {
      schemas: {
        User: {
          type: 'object',
          required: ['id', 'email'],
          properties: { id: { type: 'string', format: 'user-id' }, email: { type: 'string', format: 'email' }, nickname: { type: ['string', 'null'] } },
        },
        Node: {
          type: 'object',
          required: ['name'],
          properties: { name: { type: 'string' }, children: { type: 'array', items: { $ref: '#/components/schemas/Node' } } },
        },
        Problem: { type: 'object', required: ['message'], properties: { message: { type: 'string' } } },
      },
      responses: { Problem: { description: 'a problem', content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } } } },
      // Examples are data, even when they look like schemas: the same $id twice must not confuse ajv.
      examples: { Stored: { value: { $id: 'https://schemas.example.com/user' } }, Copy: { value: { $id: 'https://schemas.example.com/user' } } },
      requestBodies: {
        UserUpdate: {
          content: {
            'application/json': {
              schema: { type: 'object', additionalProperties: false, properties: { email: { type: 'string' }, nickname: { type: 'string' } } },
            },
          },
        },
      },
    },
  };
}

/** A small 3.0 description: the dialect's own keywords (nullable, boolean exclusive bounds, annotations). */
function orders30(): Record<string, unknown> {
  return {
    openapi: '3.0.3',
    info: { title: 'Orders', version: '1' },
    servers: [{ url: '/shop' }],
    paths: {
      '/orders/{id}': {
        get: {
          operationId: 'getOrder',
          responses: {
            '200': { $ref: '#/components/responses/Order' },
            '404': { $ref: 'errors.yaml#/components/responses/NotFound' },
            default: {
              description: 'error',
              content: { 'application/json': { schema: { type: 'object', required: ['error'], properties: { error: { type: 'string' } } } } },
            },
          },
        },
        put: {
          operationId: 'putOrder',
          requestBody: { content: { 'application/json': { schema: { $ref: '#/components/schemas/Order' } } } },
          responses: { '204': { description: 'stored' } },
        },
      },
      '/categories': {
        get: {
          operationId: 'getCategories',
          responses: { '200': { description: 'a tree', content: { 'application/json': { schema: { $ref: '#/components/schemas/Category' } } } } },
        },
      },
      '/legacy': {
        get: { operationId: 'getLegacy', responses: { '200': { description: 'bad', content: { 'application/json': { schema: { type: 'file' } } } } } },
      },
      '/external': {
        get: {
          operationId: 'getExternal',
          responses: { '200': { description: 'x', content: { 'application/json': { schema: { $ref: 'common.yaml#/components/schemas/Thing' } } } } },
        },
      },
    },
    components: {
      responses: { Order: { description: 'an order', content: { 'application/json; charset=utf-8': { schema: { $ref: '#/components/schemas/Order' } } } } },
      schemas: {
        Order: {
          type: 'object',
          required: ['id', 'quantity', 'note', 'customer', 'pin'],
          example: { id: 'o1', quantity: 2, note: null, customer: null },
          xml: { name: 'order' },
          externalDocs: { url: 'https://example.com/orders' },
          properties: {
            id: { $ref: '#/components/schemas/OrderId' },
            pin: { type: 'string', writeOnly: true },
            quantity: { type: 'integer', minimum: 0, exclusiveMinimum: true, maximum: 100, exclusiveMaximum: false },
            note: { type: 'string', nullable: true },
            status: { type: 'string', enum: ['open', 'closed'], nullable: true },
            customer: { nullable: true, allOf: [{ $ref: '#/components/schemas/Customer' }] },
            discount: { type: 'number' },
          },
        },
        OrderId: { type: 'string', readOnly: true },
        Customer: { type: 'object', required: ['name'], properties: { name: { type: 'string' } }, discriminator: { propertyName: 'kind' } },
        Category: {
          type: 'object',
          required: ['name'],
          properties: { name: { type: 'string' }, parent: { $ref: '#/components/schemas/Category', nullable: true } },
        },
      },
    },
  };
}

const order = { id: 'o1', quantity: 1, note: 'leave at the door', customer: { name: 'Ada' } };

function operation(description: OpenApiDescription, method: string, url: string): OpenApiOperation {
  const found = description.match(method, url);
  if (!found) throw new Error(`no operation for ${method} ${url}`);
  return found;
}

describe('OpenApiDescription: matching a request to an operation', () => {
  const description = OpenApiDescription.from(users31(), 'users.yaml');
  const base = 'https://eu.example.com/api/v1';

  it("fills a path template's parameter with any one segment, and names the operation by its operationId", () => {
    const found = operation(description, 'GET', `${base}/users/u_42?fields=email`);
    expect(found).toMatchObject({ operationId: 'getUser', name: 'getUser', method: 'GET', pathTemplate: '/users/{id}' });
    expect(description.match('GET', `${base}/users/u_42/extra`)).toBeUndefined();
    expect(description.match('GET', `${base}/users/`)).toBeUndefined();
  });

  it('a literal segment wins over a templated one, whatever their order in the description', () => {
    expect(operation(description, 'GET', `${base}/users/me`).name).toBe('getMe');
    const reversed = users31();
    const paths = reversed.paths as Record<string, unknown>;
    reversed.paths = { '/users/me': paths['/users/me'], '/users/{id}': paths['/users/{id}'] };
    expect(operation(OpenApiDescription.from(reversed, 'users.yaml'), 'GET', `${base}/users/me`).name).toBe('getMe');
    expect(operation(OpenApiDescription.from(reversed, 'users.yaml'), 'GET', `${base}/users/meh`).name).toBe('getUser');
  });

  it('without an operationId the name is the method and the path template; the method is matched in any case', () => {
    expect(operation(description, 'patch', `${base}/users/u_1`)).toMatchObject({ name: 'PATCH /users/{id}', method: 'PATCH' });
    expect(operation(description, 'Get', `${base}/users/u_1`).operationId).toBe('getUser');
    expect(description.match('DELETE', `${base}/users/u_1`)).toBeUndefined();
  });

  it('matches origin-form paths, a trailing slash, percent-encoded literal segments and partly templated segments', () => {
    expect(operation(description, 'GET', '/api/v1/users/u_1/').name).toBe('getUser');
    expect(operation(description, 'GET', '/api/v1/users/%6De').name).toBe('getMe');
    expect(operation(description, 'GET', '/api/v1/files/report.json').name).toBe('getFile');
    expect(description.match('GET', '/api/v1/files/report.xml')).toBeUndefined();
  });

  it("requires the servers' base path (variables at their defaults); path-level and operation-level servers take over", () => {
    expect(description.match('GET', 'https://eu.example.com/users/u_1')).toBeUndefined();
    expect(description.match('GET', '/api/v2/users/u_1')).toBeUndefined();
    expect(operation(description, 'GET', '/internal/health').name).toBe('health');
    expect(description.match('GET', '/api/v1/internal/health')).toBeUndefined();
    expect(operation(description, 'POST', 'https://probe.example.com/probe/internal/health').name).toBe('probe');
    expect(description.match('POST', '/internal/health')).toBeUndefined();
  });

  it('a relative server URL is a base path from the root; no servers at all means "/"', () => {
    const shop = OpenApiDescription.from(orders30(), 'orders.yaml');
    expect(operation(shop, 'GET', 'http://localhost:8080/shop/orders/o1').name).toBe('getOrder');
    expect(shop.match('GET', '/orders/o1')).toBeUndefined();
    const noServers = orders30();
    delete noServers.servers;
    expect(operation(OpenApiDescription.from(noServers, 'orders.yaml'), 'GET', '/orders/o1').name).toBe('getOrder');
  });

  it('counts the operations it found under paths', () => {
    expect(description.operationCount).toBe(9);
  });
});

describe('OpenAPI 3.1: status and bodies against the declared responses', () => {
  const description = OpenApiDescription.from(users31(), 'users.yaml');
  const getUser = operation(description, 'GET', '/api/v1/users/u_1');
  const patchUser = operation(description, 'PATCH', '/api/v1/users/u_1');

  it('a status is declared exactly, by its range or by default; undefined when the operation declares no responses', () => {
    expect(getUser.statusDeclared(200)).toBe(true);
    expect(getUser.statusDeclared(404)).toBe(true);
    expect(getUser.statusDeclared(500)).toBe(false);
    expect(getUser.statusDeclared(201)).toBe(false);
    expect(operation(description, 'GET', '/api/v1/users/me').statusDeclared(503)).toBe(true);
    expect(operation(description, 'GET', '/api/v1/files/a.json').statusDeclared(200)).toBeUndefined();
  });

  it('a response body conforming to its schema ($ref to components, a format ajv does not know) has no problems; a violating one names each place', () => {
    expect(getUser.responseBodyProblems(200, 'application/json', { id: 'u_1', email: 'ada@example.com', nickname: null })).toEqual([]);
    expect(getUser.responseBodyProblems(200, 'application/json; charset=utf-8', { id: 'u_1', email: 42 })).toEqual(['/email must be string']);
    expect(getUser.responseBodyProblems(200, 'application/json', { id: 'u_1' })).toEqual(["/ must have required property 'email'"]);
    expect(getUser.responseBodyProblems(200, 'application/json', { id: 'u_1', email: 'not an address' })).toEqual(['/email must match format "email"']);
    // Any JSON media type the description does not name is judged by its application/json schema.
    expect(getUser.responseBodyProblems(200, 'application/vnd.example.v2+json', { id: 'u_1', email: 42 })).toEqual(['/email must be string']);
  });

  it('a range response ($ref to components/responses) judges a +json media type; at most five problems are listed', () => {
    expect(getUser.responseBodyProblems(404, 'application/problem+json', { message: 'no such user' })).toEqual([]);
    expect(getUser.responseBodyProblems(404, 'application/problem+json', { message: 404 })).toEqual(['/message must be string']);
    const many = OpenApiDescription.from(
      {
        openapi: '3.1.1',
        paths: {
          '/x': {
            get: { responses: { '200': { description: 'x', content: { 'application/json': { schema: { type: 'array', items: { type: 'string' } } } } } } },
          },
        },
      },
      'x.json',
    );
    expect(operation(many, 'GET', '/x').responseBodyProblems(200, 'application/json', [1, 2, 3, 4, 5, 6, 7])).toEqual([
      '/0 must be string',
      '/1 must be string',
      '/2 must be string',
      '/3 must be string',
      '/4 must be string',
    ]);
  });

  it('application/json selects a +json schema by its own name, and any JSON type falls back to application/json', () => {
    expect(patchUser.responseBodyProblems(200, 'application/vnd.example.user+json', { id: 'u_1', email: 'ada@example.com' })).toEqual([]);
    expect(patchUser.responseBodyProblems(200, 'application/vnd.example.user+json', { id: 1, email: 'ada@example.com' })).toEqual(['/id must be string']);
    // Declared only as a +json type: a plain application/json body is not that type.
    expect(patchUser.responseBodyProblems(200, 'application/json', { id: 1 })).toBeUndefined();
    const getMe = operation(description, 'GET', '/api/v1/users/me');
    expect(getMe.responseBodyProblems(200, 'text/plain', { me: true })).toEqual([]);
    expect(getMe.responseBodyProblems(500, 'application/json', {})).toEqual(["/ must have required property 'me'"]);
  });

  it('nothing to judge: no body, no content type, an undeclared status or media type, a media type without a schema', () => {
    expect(getUser.responseBodyProblems(200, 'application/json', undefined)).toBeUndefined();
    expect(getUser.responseBodyProblems(200, undefined, { id: 1 })).toBeUndefined();
    expect(getUser.responseBodyProblems(500, 'application/json', { id: 1 })).toBeUndefined();
    expect(getUser.responseBodyProblems(200, 'text/html', '<p>')).toBeUndefined();
    expect(operation(description, 'GET', '/api/v1/users/u_1/avatar').responseBodyProblems(200, 'image/png', 'PNG')).toBeUndefined();
  });

  it('a request body is judged against requestBody ($ref to components/requestBodies)', () => {
    expect(patchUser.requestBodyProblems('application/json', { nickname: 'ada' })).toEqual([]);
    expect(patchUser.requestBodyProblems('application/json', { nickname: 'ada', role: 'admin' })).toEqual(['/ must NOT have additional properties (role)']);
    expect(getUser.requestBodyProblems('application/json', { anything: true })).toBeUndefined();
  });

  it('the rest of the description is not read as schemas: examples shaped like schemas change nothing', () => {
    const fresh = OpenApiDescription.from(users31(), 'users.yaml');
    expect(operation(fresh, 'GET', '/api/v1/users/u_1').responseBodyProblems(200, 'application/json', { id: 7, email: 'ada@example.com' })).toEqual([
      '/id must be string',
    ]);
    expect(fresh.problems()).toEqual([]);
  });

  it('a recursive schema judges every level', () => {
    const getTree = operation(description, 'GET', '/api/v1/trees/t1');
    expect(getTree.responseBodyProblems(200, 'application/json', { name: 'root', children: [{ name: 'a', children: [{ name: 'a1' }] }] })).toEqual([]);
    expect(getTree.responseBodyProblems(200, 'application/json', { name: 'root', children: [{ name: 'a', children: [{ label: 'a1' }] }] })).toEqual([
      "/children/0/children/0 must have required property 'name'",
    ]);
  });

  it('a schema behind an external $ref is not judged (never fetched) and is noted once; the operation still matches', () => {
    const getImport = operation(description, 'GET', '/api/v1/imports');
    expect(getImport.name).toBe('getImport');
    const notFetched = {
      notJudged: expect.stringMatching(/^getImport response 200 application\/json: schema not compiled \(.*https:\/\/schemas\.example\.com\/import\.json/),
    };
    expect(getImport.responseBodyProblems(200, 'application/json', { x: 1 })).toEqual(notFetched);
    expect(getImport.responseBodyProblems(200, 'application/json', { x: 2 })).toEqual(notFetched);
    expect(description.problems().filter((line) => line.startsWith('getImport'))).toEqual([
      expect.stringMatching(/^getImport response 200 application\/json: not judged \(.*https:\/\/schemas\.example\.com\/import\.json/),
    ]);
  });
});

describe('OpenAPI 3.0: its dialect of JSON Schema', () => {
  const description = OpenApiDescription.from(orders30(), 'orders.yaml');
  const getOrder = operation(description, 'GET', '/shop/orders/o1');
  const putOrder = operation(description, 'PUT', '/shop/orders/o1');

  it('a response body conforms or not ($ref to components/responses, a media type declared with parameters)', () => {
    expect(getOrder.responseBodyProblems(200, 'application/json', order)).toEqual([]);
    expect(getOrder.responseBodyProblems(200, 'application/json', { ...order, discount: 'ten' })).toEqual(['/discount must be number']);
  });

  it('nullable lets null through, with or without a type, with an enum or beside a $ref; elsewhere null is reported', () => {
    expect(getOrder.responseBodyProblems(200, 'application/json', { ...order, note: null, status: null, customer: null })).toEqual([]);
    expect(getOrder.responseBodyProblems(200, 'application/json', { ...order, status: 'lost' })).toEqual([
      '/status must be equal to one of the allowed values',
    ]);
    expect(getOrder.responseBodyProblems(200, 'application/json', { ...order, id: null })).toEqual(['/id must be string']);
    expect(getOrder.responseBodyProblems(200, 'application/json', { ...order, customer: {} })).toContain("/customer must have required property 'name'");
  });

  it('boolean exclusiveMinimum / exclusiveMaximum bound as 3.0 means them', () => {
    expect(getOrder.responseBodyProblems(200, 'application/json', { ...order, quantity: 0 })).toEqual(['/quantity must be > 0']);
    expect(getOrder.responseBodyProblems(200, 'application/json', { ...order, quantity: 100 })).toEqual([]);
    expect(getOrder.responseBodyProblems(200, 'application/json', { ...order, quantity: 101 })).toEqual(['/quantity must be <= 100']);
  });

  it("status: exact or default; a default response's body is judged too", () => {
    expect(getOrder.statusDeclared(503)).toBe(true);
    expect(putOrder.statusDeclared(204)).toBe(true);
    expect(putOrder.statusDeclared(200)).toBe(false);
    expect(getOrder.responseBodyProblems(503, 'application/json', { error: 'down' })).toEqual([]);
    expect(getOrder.responseBodyProblems(503, 'application/json', { error: 503 })).toEqual(['/error must be string']);
  });

  it('a request body conforms or not', () => {
    expect(putOrder.requestBodyProblems('application/json', { ...order, pin: '1234' })).toEqual([]);
    expect(putOrder.requestBodyProblems('application/json', { ...order, pin: '1234', quantity: 1.5 })).toEqual(['/quantity must be integer']);
  });

  it('a required readOnly property is required in responses only, a required writeOnly one in requests only', () => {
    const { id: _id, ...withoutId } = order;
    expect(getOrder.responseBodyProblems(200, 'application/json', withoutId)).toEqual(["/ must have required property 'id'"]);
    expect(putOrder.requestBodyProblems('application/json', { ...withoutId, pin: '1234' })).toEqual([]);
    expect(putOrder.requestBodyProblems('application/json', order)).toEqual(["/ must have required property 'pin'"]);
    expect(getOrder.responseBodyProblems(200, 'application/json', order)).toEqual([]);
  });

  it('a recursive schema, nullable beside its $ref', () => {
    const getCategories = operation(description, 'GET', '/shop/categories');
    expect(getCategories.responseBodyProblems(200, 'application/json', { name: 'c', parent: { name: 'b', parent: { name: 'a', parent: null } } })).toEqual([]);
    expect(getCategories.responseBodyProblems(200, 'application/json', { name: 'c', parent: { name: 'b', parent: { title: 'a' } } })).toContain(
      "/parent/parent must have required property 'name'",
    );
  });

  it('an external $ref, to a schema or to a whole response, is not judged and is noted once', () => {
    expect(operation(description, 'GET', '/shop/external').responseBodyProblems(200, 'application/json', { x: 1 })).toEqual({
      notJudged:
        'getExternal response 200 application/json: schema not compiled ($ref common.yaml#/components/schemas/Thing is outside the description (not fetched))',
    });
    expect(getOrder.statusDeclared(404)).toBe(true);
    const notFetched = { notJudged: 'getOrder response 404: $ref errors.yaml#/components/responses/NotFound is outside the description (not fetched)' };
    expect(getOrder.responseBodyProblems(404, 'application/json', { x: 1 })).toEqual(notFetched);
    expect(getOrder.responseBodyProblems(404, 'application/json', { x: 2 })).toEqual(notFetched);
    expect(description.problems()).toEqual([
      'getExternal response 200 application/json: not judged ($ref common.yaml#/components/schemas/Thing is outside the description (not fetched))',
      'getOrder response 404: not judged ($ref errors.yaml#/components/responses/NotFound is outside the description (not fetched))',
    ]);
  });
});

describe('schemas are compiled when first needed, not at load', () => {
  it('a schema ajv cannot compile does not stop the load nor the other operations; it is noted only once it is needed, once', () => {
    const description = OpenApiDescription.from(orders30(), 'orders.yaml');
    expect(description.problems()).toEqual([]);
    expect(operation(description, 'GET', '/shop/orders/o1').responseBodyProblems(200, 'application/json', order)).toEqual([]);
    expect(description.problems()).toEqual([]);
    const getLegacy = operation(description, 'GET', '/shop/legacy');
    expect(getLegacy.statusDeclared(200)).toBe(true);
    expect(description.problems()).toEqual([]);
    const notCompiled = { notJudged: expect.stringMatching(/^getLegacy response 200 application\/json: schema not compiled \(.*file/) };
    expect(getLegacy.responseBodyProblems(200, 'application/json', {})).toEqual(notCompiled);
    expect(getLegacy.responseBodyProblems(200, 'application/json', {})).toEqual(notCompiled);
    expect(description.problems()).toEqual([expect.stringMatching(/^getLegacy response 200 application\/json: not judged \(.*file/)]);
  });

  it('the same holds in 3.1: the other operations are judged before and after', () => {
    const document = users31();
    const paths = document.paths as Record<string, any>;
    paths['/broken'] = {
      get: { operationId: 'broken', responses: { '200': { description: 'x', content: { 'application/json': { schema: { type: 'string', pattern: '(' } } } } } },
    };
    const description = OpenApiDescription.from(document, 'users.yaml');
    const getUser = operation(description, 'GET', '/api/v1/users/u_1');
    expect(getUser.responseBodyProblems(200, 'application/json', { id: 1, email: 'a@example.com' })).toEqual(['/id must be string']);
    expect(operation(description, 'GET', '/api/v1/broken').responseBodyProblems(200, 'application/json', 'x')).toEqual({
      notJudged: expect.stringMatching(/^broken response 200 application\/json: schema not compiled \(/),
    });
    expect(getUser.responseBodyProblems(200, 'application/json', { id: 'u_1', email: 'a@example.com' })).toEqual([]);
    expect(description.problems()).toEqual([expect.stringMatching(/^broken response 200 application\/json: not judged \(/)]);
  });
});

describe('OpenApiError: a description that cannot be used, in one line naming it', () => {
  const refused: Array<[what: string, document: unknown, message: string]> = [
    ['nothing', null, 'spec.yaml: not an OpenAPI 3.0 or 3.1 description (empty)'],
    ['a string', 'hello', 'spec.yaml: not an OpenAPI 3.0 or 3.1 description (a string, not an object)'],
    ['a list', [1], 'spec.yaml: not an OpenAPI 3.0 or 3.1 description (a list, not an object)'],
    ['no openapi field', { paths: {} }, 'spec.yaml: not an OpenAPI 3.0 or 3.1 description (no "openapi" field)'],
    ['Swagger 2.0', { swagger: '2.0', paths: {} }, 'spec.yaml: Swagger 2.0 is not supported, only OpenAPI 3.0 and 3.1 (convert it to OpenAPI 3 first)'],
    ['OpenAPI 3.2', { openapi: '3.2.0', paths: {} }, 'spec.yaml: OpenAPI 3.2.0 is not supported, only 3.0.x and 3.1.x'],
    ['an unquoted version', { openapi: 3.1, paths: {} }, 'spec.yaml: "openapi" must be a version string such as "3.1.0", not 3.1 (quote it in YAML)'],
    ['no paths', { openapi: '3.1.0', webhooks: {} }, 'spec.yaml: not an OpenAPI 3.0 or 3.1 description (no "paths" object)'],
  ];
  for (const [what, document, message] of refused) {
    it(`refuses ${what}`, () => {
      expect(() => OpenApiDescription.from(document, 'spec.yaml')).toThrow(new OpenApiError(message));
    });
  }

  it('is a usage error: exit code 2, one line', () => {
    const error = new OpenApiError('spec.yaml: x');
    expect(error).toBeInstanceOf(UsageError);
    expect(error.exitCode).toBe(2);
    expect(error.name).toBe('OpenApiError');
  });

  it('accepts 3.0.x and 3.1.x', () => {
    expect(OpenApiDescription.from({ openapi: '3.0.0', paths: {} }, 'a.json').version).toBe('3.0');
    expect(OpenApiDescription.from({ openapi: '3.1.1', paths: {} }, 'a.json').version).toBe('3.1');
  });
});

describe('loadOpenApiFile', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tmi-openapi-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const file = (name: string, text: string) => {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  };

  it('reads JSON (by its first character, whatever the file is called) and YAML', async () => {
    const json = await loadOpenApiFile(file('spec.yaml', `\n  ${JSON.stringify(orders30())}`));
    expect(json.match('GET', '/shop/orders/1')?.name).toBe('getOrder');
    const yaml = await loadOpenApiFile(
      file('spec.yml', 'openapi: 3.1.0\npaths:\n  /ping:\n    get:\n      operationId: ping\n      responses:\n        "204": { description: pong }\n'),
    );
    expect(yaml.match('GET', '/ping')?.name).toBe('ping');
    expect(yaml.origin).toBe(join(dir, 'spec.yml'));
  });

  it('a file that cannot be read', async () => {
    const missing = join(dir, 'missing.yaml');
    await expect(loadOpenApiFile(missing)).rejects.toThrow(new OpenApiError(`${missing}: cannot be read (ENOENT)`));
    await expect(loadOpenApiFile(dir)).rejects.toThrow(new OpenApiError(`${dir}: cannot be read (EISDIR)`));
  });

  it('JSON or YAML that does not parse, with the place', async () => {
    const badJson = file('bad.json', '{"openapi": "3.1.0",,}');
    await expect(loadOpenApiFile(badJson)).rejects.toThrow(OpenApiError);
    await expect(loadOpenApiFile(badJson)).rejects.toThrow(new RegExp(`^${badJson.replace(/[.\\]/g, '\\$&')}: not valid JSON \\(.+\\)$`));
    const badYaml = file('bad.yaml', 'openapi: 3.1.0\npaths:\n  /a: b: c\n');
    await expect(loadOpenApiFile(badYaml)).rejects.toThrow(
      new OpenApiError(`${badYaml}: not valid YAML (line 3: Nested mappings are not allowed in compact mappings)`),
    );
  });

  it('YAML whose aliases expand without bound is refused', async () => {
    const lines = ['openapi: 3.1.0', 'paths: {}', 'a: &a [x, x, x, x, x, x, x, x, x, x]'];
    for (let level = 1; level <= 8; level++)
      lines.push(
        `${String.fromCharCode(97 + level)}: &${String.fromCharCode(97 + level)} [${Array(10)
          .fill(`*${String.fromCharCode(96 + level)}`)
          .join(', ')}]`,
      );
    const bomb = file('bomb.yaml', lines.join('\n') + '\n');
    await expect(loadOpenApiFile(bomb)).rejects.toThrow(
      new OpenApiError(`${bomb}: not valid YAML (Excessive alias count indicates a resource exhaustion attack)`),
    );
  });

  it('an empty file or a text that is no description', async () => {
    const empty = file('empty.yaml', '');
    await expect(loadOpenApiFile(empty)).rejects.toThrow(new OpenApiError(`${empty}: not an OpenAPI 3.0 or 3.1 description (empty)`));
    const swagger = file('swagger.json', '{"swagger": "2.0", "paths": {}}');
    await expect(loadOpenApiFile(swagger)).rejects.toThrow(
      new OpenApiError(`${swagger}: Swagger 2.0 is not supported, only OpenAPI 3.0 and 3.1 (convert it to OpenAPI 3 first)`),
    );
  });
});
