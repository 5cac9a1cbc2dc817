// The user's own OpenAPI description (3.0 or 3.1), for the operations the document does not cover: which
// operation an exchange is for, whether its status is declared, and whether its bodies match the declared
// schemas. Pure: it takes the already parsed description. Loading only indexes the paths; each schema is
// compiled the first time an exchange needs it, and kept for the next.
import type { ValidateFunction } from 'ajv';
import { UsageError } from '../../core/errors.ts';
import type { DescribedCall, DescriptionFrame } from './coverage.ts';
import { PathMatcher, type RouteInput } from './path-matcher.ts';
import { responseKey } from './response-key.ts';
import { type Location, isRecord, pointerText, resolveObject } from './pointer.ts';
import type { Direction } from './schema-3-0.ts';
import { type SchemaCompiler, problemsOf, schemaCompiler } from './validators.ts';

/** A description that cannot be used, in one line naming it and the cause. Exit code 2, like any bad input. */
export class OpenApiError extends UsageError {
  constructor(message: string) {
    super(message);
    this.name = 'OpenApiError';
  }
}

/** One operation of the description, as `match` finds it. */
export interface OpenApiOperation {
  readonly operationId?: string;
  /** The operationId, else method and path template: "GET /users/{id}". */
  readonly name: string;
  /** Upper-case: "GET". */
  readonly method: string;
  /** The key under `paths`, without any server base path: "/users/{id}". */
  readonly pathTemplate: string;
  /** "GET /users/{id}": how the coverage names it. */
  readonly key: string;
  /** Whether the operation declares the status (exactly, by its range "4XX", or by `default`); undefined when it declares no responses. */
  statusDeclared(status: number): boolean | undefined;
  /**
   * The response body's problems against the schema declared for its status and media type: [] when it
   * conforms; undefined when there is nothing to judge (no body, no such schema); `notJudged` when there
   * is one but the body cannot be judged against it (a schema ajv cannot compile, a `$ref` that leads nowhere).
   */
  responseBodyProblems(status: number, contentType: string | undefined, body: unknown): BodyProblems;
  /** The same for the request body, against the operation's `requestBody`. */
  requestBodyProblems(contentType: string | undefined, body: unknown): BodyProblems;
  /** The declared statuses, `default` aside: "200", "404", "4XX" as written. */
  declaredStatuses(): string[];
  /** The declared status a response's status selects ("404", else its range "4XX"); undefined: only `default`, or none. */
  declaredStatusOf(status: number): string | undefined;
}

/** Why a body the description has a schema for was not judged: "get_user response 200 application/json: schema not compiled (…)". */
export interface SchemaNotJudged {
  notJudged: string;
}

export type BodyProblems = string[] | SchemaNotJudged | undefined;

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

/** A compiled schema, or why it was not: then what it describes is not judged. */
type Compiled = { validate: ValidateFunction } | SchemaNotJudged;

export class OpenApiDescription {
  private readonly schemas: DescriptionSchemas;
  private readonly matcher: PathMatcher<DescribedOperation>;
  readonly operationCount: number;
  /**
   * The base paths of the servers the description declares at its top ("/api/v2", "/" for a mock at
   * the root); undefined when it declares none: it then says nothing of where the API is.
   */
  readonly declaredBasePaths: readonly string[] | undefined;
  /** The keys under `paths` ("/users/{id}/roles"): where the description's paths have names. */
  readonly pathTemplates: readonly string[];
  private readonly operations: readonly DescribedOperation[];
  private readonly info: { title?: string; version?: string };
  private frame: DescriptionFrame | undefined;
  private noOperation: DescribedCall | undefined;

  private constructor(
    document: Record<string, unknown>,
    readonly version: '3.0' | '3.1',
    readonly origin: string,
  ) {
    this.schemas = new DescriptionSchemas(document, version);
    const routes = routesOf(document, this.schemas);
    this.operations = routes.map((route) => route.target);
    this.info = infoOf(document.info);
    this.operationCount = routes.length;
    this.matcher = new PathMatcher(routes);
    this.declaredBasePaths = basePathsOf(document.servers);
    this.pathTemplates = Object.keys(document.paths as Record<string, unknown>).filter((template) => template.startsWith('/'));
  }

  /** Takes a parsed description after checking only its outline; throws OpenApiError when it is not OpenAPI 3.0 or 3.1. */
  static from(document: unknown, origin: string): OpenApiDescription {
    const { outline, version } = outlineChecked(document, origin);
    return new OpenApiDescription(outline, version, origin);
  }

  /** The operation an exchange is for (`url` absolute or origin-form with query); undefined when none is described. */
  match(method: string, url: string): OpenApiOperation | undefined {
    const path = pathOf(url);
    return path === undefined ? undefined : this.matcher.match(method, path);
  }

  /** What the description declares, for the coverage: made on first use, then shared. */
  coverageFrame(): DescriptionFrame {
    this.frame ??= Object.freeze({
      ...this.info,
      operations: Object.freeze(
        this.operations.map((o) =>
          Object.freeze({
            operation: o.key,
            ...(o.operationId !== undefined ? { operationId: o.operationId } : {}),
            statuses: Object.freeze(o.declaredStatuses()),
          }),
        ),
      ),
    });
    return this.frame;
  }

  /** What an exchange exercised of the description: `operation` matched it (else none), `status` its response's. */
  calledWith(operation: OpenApiOperation | undefined, status: number | undefined): DescribedCall {
    if (operation === undefined) {
      this.noOperation ??= Object.freeze({ frame: this.coverageFrame() });
      return this.noOperation;
    }
    const declared = status === undefined ? undefined : operation.declaredStatusOf(status);
    return { frame: this.coverageFrame(), operation: operation.key, ...(declared !== undefined ? { status: declared } : {}) };
  }

  /** What could not be judged so far and why, one line each, in the order met: schemas not compiled, `$ref`s not followed. */
  problems(): readonly string[] {
    return this.schemas.problems();
  }
}

/** The description's objects behind `$ref`s and its compiled schemas, each compiled on first use and kept. */
class DescriptionSchemas {
  private readonly notes: string[] = [];
  private compiler: SchemaCompiler | undefined;
  /** Compiled schemas by direction and pointer: only those some exchange needed. */
  private readonly compiled = new Map<string, Compiled>();

  constructor(
    private readonly document: Record<string, unknown>,
    private readonly version: '3.0' | '3.1',
  ) {}

  problems(): readonly string[] {
    return [...this.notes];
  }

  /** The schema at a location, for bodies travelling one way, compiled on first use; a failure is noted once and never thrown. */
  validatorAt(location: Location, direction: Direction, what: string): Compiled {
    const key = `${direction} ${pointerText(location)}`;
    let compiled = this.compiled.get(key);
    if (compiled === undefined) {
      try {
        this.compiler ??= schemaCompiler(this.document, this.version);
        compiled = { validate: this.compiler.compile(location, direction) };
      } catch (error) {
        const cause = firstLine(error);
        this.note(`${what}: not judged (${cause})`);
        compiled = { notJudged: `${what}: schema not compiled (${cause})` };
      }
      this.compiled.set(key, compiled);
    }
    return compiled;
  }

  /** A response, request body or path item, its `$ref`s followed; a reference that leads nowhere is noted. */
  resolve(value: unknown, location: Location, what: string): { value: Record<string, unknown>; location: Location } | SchemaNotJudged {
    const resolved = resolveObject(this.document, value, location);
    if ('unresolved' in resolved) {
      this.note(`${what}: not judged (${resolved.unresolved})`);
      return { notJudged: `${what}: ${resolved.unresolved}` };
    }
    return resolved;
  }

  private note(line: string): void {
    if (!this.notes.includes(line)) this.notes.push(line);
  }
}

/** Every operation under `paths`, with the base paths of the servers that serve it. */
function routesOf(document: Record<string, unknown>, schemas: DescriptionSchemas): Array<RouteInput<DescribedOperation>> {
  const rootBases = basePathsOf(document.servers) ?? ['/'];
  const routes: Array<RouteInput<DescribedOperation>> = [];
  for (const [template, item] of Object.entries(document.paths as Record<string, unknown>)) {
    if (!template.startsWith('/')) continue; // extensions ("x-…") and stray keys
    const pathItem = schemas.resolve(item, ['paths', template], `path ${template}`);
    if ('notJudged' in pathItem) continue;
    const pathBases = basePathsOf(pathItem.value.servers) ?? rootBases;
    for (const method of METHODS) {
      const operation = pathItem.value[method];
      if (!isRecord(operation)) continue;
      routes.push({
        method,
        template,
        basePaths: basePathsOf(operation.servers) ?? pathBases,
        target: new DescribedOperation(schemas, [...pathItem.location, method], operation, method, template),
      });
    }
  }
  return routes;
}

class DescribedOperation implements OpenApiOperation {
  readonly operationId?: string;
  readonly name: string;
  readonly method: string;
  readonly key: string;

  constructor(
    private readonly schemas: DescriptionSchemas,
    private readonly location: Location,
    private readonly operation: Record<string, unknown>,
    method: string,
    readonly pathTemplate: string,
  ) {
    this.method = method.toUpperCase();
    if (typeof operation.operationId === 'string' && operation.operationId !== '') this.operationId = operation.operationId;
    this.key = `${this.method} ${pathTemplate}`;
    this.name = this.operationId ?? this.key;
  }

  declaredStatuses(): string[] {
    return Object.keys(this.responses() ?? {}).filter((key) => key.toLowerCase() !== 'default');
  }

  declaredStatusOf(status: number): string | undefined {
    const key = responseKey(this.responses() ?? {}, status);
    return key === 'default' ? undefined : key;
  }

  statusDeclared(status: number): boolean | undefined {
    const responses = this.responses();
    if (!responses || Object.keys(responses).length === 0) return undefined;
    return responseKey(responses, status) !== undefined;
  }

  responseBodyProblems(status: number, contentType: string | undefined, body: unknown): BodyProblems {
    const responses = this.responses();
    if (body === undefined || !responses) return undefined;
    const key = responseKey(responses, status);
    if (key === undefined) return undefined;
    const what = `${this.name} response ${key}`;
    const response = this.schemas.resolve(responses[key], [...this.location, 'responses', key], what);
    return 'notJudged' in response ? response : this.bodyProblems(response, 'response', contentType, body, what);
  }

  requestBodyProblems(contentType: string | undefined, body: unknown): BodyProblems {
    if (body === undefined || this.operation.requestBody === undefined) return undefined;
    const what = `${this.name} request body`;
    const requestBody = this.schemas.resolve(this.operation.requestBody, [...this.location, 'requestBody'], what);
    return 'notJudged' in requestBody ? requestBody : this.bodyProblems(requestBody, 'request', contentType, body, what);
  }

  /** Only the declared responses, not the extensions ("x-…") beside them. */
  private responses(): Record<string, unknown> | undefined {
    const responses = this.operation.responses;
    if (!isRecord(responses)) return undefined;
    return Object.fromEntries(Object.entries(responses).filter(([key]) => /^([1-5](\d\d|XX)|default)$/i.test(key)));
  }

  private bodyProblems(
    holder: { value: Record<string, unknown>; location: Location },
    direction: Direction,
    contentType: string | undefined,
    body: unknown,
    what: string,
  ): BodyProblems {
    const content = holder.value.content;
    if (!isRecord(content)) return undefined;
    const mediaKey = mediaTypeKey(Object.keys(content), contentType);
    if (mediaKey === undefined) return undefined;
    const media = content[mediaKey];
    if (!isRecord(media) || media.schema === undefined) return undefined;
    const compiled = this.schemas.validatorAt([...holder.location, 'content', mediaKey, 'schema'], direction, `${what} ${mediaKey}`);
    if ('notJudged' in compiled) return compiled;
    const { validate } = compiled;
    try {
      return validate(body) ? [] : problemsOf(validate.errors);
    } catch (error) {
      // A body ajv cannot walk (nested too deep for the stack) is not judged, and says so.
      return { notJudged: `${what} ${mediaKey}: the body could not be validated (${firstLine(error)})` };
    }
  }
}

/** The description's `info.title` and `info.version`, those that are strings. */
function infoOf(info: unknown): { title?: string; version?: string } {
  if (!isRecord(info)) return {};
  return { ...(typeof info.title === 'string' ? { title: info.title } : {}), ...(typeof info.version === 'string' ? { version: info.version } : {}) };
}

/** "Application/JSON; charset=utf-8" → "application/json". */
function essence(mediaType: string): string {
  return mediaType.split(';', 1)[0]!.trim().toLowerCase();
}

/**
 * The declared media type a content type selects: exactly (parameters aside), else `application/json`
 * for any JSON type ("application/problem+json"), else the wildcard of its type ("application/*"), else the
 * wildcard of all types.
 */
function mediaTypeKey(declared: string[], contentType: string | undefined): string | undefined {
  if (contentType === undefined) return undefined;
  const actual = essence(contentType);
  const find = (wanted: string) => declared.find((key) => essence(key) === wanted);
  const json = actual === 'application/json' || /^application\/[^/]*\+json$/.test(actual) ? find('application/json') : undefined;
  return find(actual) ?? json ?? find(`${actual.split('/', 1)[0]}/*`) ?? find('*/*');
}

/** The path of an absolute URL or of an origin-form request target, without its query. */
function pathOf(url: string): string | undefined {
  if (url.startsWith('/')) return url.split(/[?#]/, 1)[0];
  try {
    return new URL(url).pathname;
  } catch {
    return undefined;
  }
}

/**
 * The base paths of a `servers` list, variables replaced by their defaults; undefined when there is no
 * list (the level above then applies). A relative URL is read as relative to the root ("/api" → "/api",
 * "." → "/"): where the description was published is not known.
 */
function basePathsOf(servers: unknown): string[] | undefined {
  if (!Array.isArray(servers) || servers.length === 0) return undefined;
  const bases = new Set<string>();
  for (const server of servers) {
    if (!isRecord(server) || typeof server.url !== 'string') continue;
    const variables = isRecord(server.variables) ? server.variables : {};
    const url = server.url.replace(/\{([^{}]+)\}/g, (whole, name: string) => {
      const variable = variables[name];
      return isRecord(variable) && typeof variable.default === 'string' ? variable.default : whole;
    });
    bases.add(basePathOf(url));
  }
  return bases.size > 0 ? [...bases] : undefined;
}

function basePathOf(url: string): string {
  try {
    return new URL(url.startsWith('//') ? `http:${url}` : url, 'http://relative.invalid/').pathname;
  } catch {
    return '/';
  }
}

/** The outline: an object with `openapi` 3.0.x or 3.1.x and `paths`. Nothing else is walked. */
function outlineChecked(document: unknown, origin: string): { outline: Record<string, unknown>; version: '3.0' | '3.1' } {
  const notOpenApi = (cause: string) => new OpenApiError(`${origin}: not an OpenAPI 3.0 or 3.1 description (${cause})`);
  if (document === null || document === undefined) throw notOpenApi('empty');
  if (!isRecord(document)) throw notOpenApi(Array.isArray(document) ? 'a list, not an object' : `a ${typeof document}, not an object`);
  if ('swagger' in document)
    throw new OpenApiError(`${origin}: Swagger ${String(document.swagger)} is not supported, only OpenAPI 3.0 and 3.1 (convert it to OpenAPI 3 first)`);
  if (!('openapi' in document)) throw notOpenApi('no "openapi" field');
  const version = versionOf(document, origin);
  if (!isRecord(document.paths)) throw notOpenApi('no "paths" object');
  return { outline: document, version };
}

function versionOf(document: Record<string, unknown>, origin: string): '3.0' | '3.1' {
  const version = document.openapi;
  if (typeof version !== 'string')
    throw new OpenApiError(`${origin}: "openapi" must be a version string such as "3.1.0", not ${JSON.stringify(version)} (quote it in YAML)`);
  const minor = /^3\.([01])(\.\d+)?([-+].*)?$/.exec(version)?.[1];
  if (minor === undefined) throw new OpenApiError(`${origin}: OpenAPI ${version} is not supported, only 3.0.x and 3.1.x`);
  return minor === '0' ? '3.0' : '3.1';
}

function firstLine(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split('\n', 1)[0]!;
}
