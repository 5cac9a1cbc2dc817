// Compiling the description's schemas with ajv, one location at a time, on first use: a description of
// several MB holds thousands of schemas, and a run judges the few its traffic reaches.
import { Ajv, type ErrorObject, type Options, type ValidateFunction } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import * as addFormatsModule from 'ajv-formats';
import { type Direction, draft07Of } from './schema-3-0.ts';
import { type Location, fragmentOf, isRecord, localRefTarget, pointerText, resolveObject, valueAt } from './pointer.ts';

// ajv-formats ships CommonJS; its default export arrives wrapped under ESM.
const addFormats = addFormatsModule.default as unknown as typeof addFormatsModule.default.default;

/** Problems reported for one body at most: the first few say what is wrong, the rest is noise. */
const MAX_PROBLEMS = 5;

/**
 * The user's description is not ours to reject: keywords ajv does not know (OpenAPI's annotations,
 * extensions) and formats it does not know are ignored rather than thrown or logged, and the schemas
 * are not checked against their meta-schema (a schema ajv cannot compile is simply not judged).
 * Referenced schemas are compiled as functions of their own, not inlined: shared components are compiled
 * once, which makes the first compile of a large response schema several times faster.
 */
const AJV_OPTIONS: Options = { strict: false, allErrors: true, logger: false, validateSchema: false, inlineRefs: false };

/** The made-up base URI under which a description's schemas are registered with ajv. */
const BASE_URI = 'https://openapi.invalid/';

/** Compiles the schema found at a location of the description, for bodies travelling one way; throws what ajv or the description lacks. */
export interface SchemaCompiler {
  compile(location: Location, direction: Direction): ValidateFunction;
}

export function schemaCompiler(document: Record<string, unknown>, version: '3.0' | '3.1'): SchemaCompiler {
  return version === '3.1' ? new Dialect31Compiler(document) : new Dialect30Compiler(document);
}

/**
 * OpenAPI 3.1 schemas are JSON Schema 2020-12: the description is registered with ajv as it is, and
 * each location compiled as a `$ref` into it, so that ajv follows `$ref`s (recursive ones included)
 * itself and compiles only the schemas they reach.
 */
class Dialect31Compiler implements SchemaCompiler {
  private readonly ajv = new Ajv2020(AJV_OPTIONS);
  private readonly documentUri = BASE_URI + 'description';

  constructor(document: Record<string, unknown>) {
    addFormats(this.ajv);
    // ajv walks every key of a schema it is given, to collect `$id`s and `$anchor`s: a walk of the whole
    // description (hundreds of ms for a large one, and examples holding such keys would confuse it). It
    // is given a view that has no keys of its own; its JSON-pointer lookups still read through to the
    // description. `$anchor`s and embedded `$id`s are therefore not found: such a `$ref` fails to compile,
    // and what it describes is not judged.
    const unlisted = new Proxy({}, { get: (_view, key) => Reflect.get(document, key) });
    this.ajv.addSchema(unlisted, this.documentUri);
  }

  /** JSON Schema 2020-12 says the same of a body either way: `readOnly` and `writeOnly` are annotations. */
  compile(location: Location): ValidateFunction {
    return this.ajv.compile({ $ref: this.documentUri + fragmentOf(location) });
  }
}

/**
 * OpenAPI 3.0 schemas are rewritten as draft-07 (schema-3-0.ts) before ajv sees them: each schema a
 * location reaches through `$ref`s is rewritten once and registered under an id of its own, the
 * `$ref`s pointing at those ids, so that operations sharing components share their compiled code.
 */
class Dialect30Compiler implements SchemaCompiler {
  private readonly ajv = new Ajv(AJV_OPTIONS);
  /** The id each rewritten location was registered under, by direction and pointer ("request /components/…"). */
  private readonly registered = new Map<string, string>();

  constructor(private readonly document: Record<string, unknown>) {
    addFormats(this.ajv);
  }

  compile(location: Location, direction: Direction): ValidateFunction {
    const id = this.register(location, direction);
    const validate = this.ajv.getSchema(id);
    if (!validate) throw new Error(`nothing compiled at ${pointerText(location)}`);
    return validate;
  }

  /** Registers the schema at `root` and every schema it reaches, all or none; returns root's id. */
  private register(root: Location, direction: Direction): string {
    const added = new Map<string, string>();
    const waiting: Location[] = [];
    const idOf = (location: Location): string => {
      const pointer = `${direction} ${pointerText(location)}`;
      let id = this.registered.get(pointer) ?? added.get(pointer);
      if (id === undefined) {
        id = `${BASE_URI}schema/${this.registered.size + added.size}`;
        added.set(pointer, id);
        waiting.push(location);
      }
      return id;
    };
    const context = {
      direction,
      refTo: (ref: string): string => {
        const target = localRefTarget(ref);
        if (target === undefined) throw new Error(`$ref ${ref} is outside the description (not fetched)`);
        return idOf(target);
      },
      resolve: (schema: unknown): unknown => {
        const resolved = resolveObject(this.document, schema, []);
        return 'value' in resolved ? resolved.value : undefined;
      },
    };
    const rootId = idOf(root);
    const schemas: Array<{ id: string; schema: unknown }> = [];
    for (let location = waiting.pop(); location !== undefined; location = waiting.pop()) {
      const schema = valueAt(this.document, location);
      if (!isRecord(schema) && typeof schema !== 'boolean') throw new Error(`no schema at ${pointerText(location)}`);
      schemas.push({ id: idOf(location), schema: draft07Of(schema, context) });
    }
    for (const { id, schema } of schemas) this.ajv.addSchema(schema as Record<string, unknown>, id);
    for (const [pointer, id] of added) this.registered.set(pointer, id);
    return rootId;
  }
}

/** ajv's errors as short lines naming where in the body ("/email must be string"), at most a few. */
export function problemsOf(errors: ErrorObject[] | null | undefined): string[] {
  const problems = new Set<string>();
  for (const error of errors ?? []) {
    const where = error.instancePath || '/';
    const extra = error.keyword === 'additionalProperties' ? ` (${String(error.params.additionalProperty)})` : '';
    problems.add(`${where} ${error.message ?? error.keyword}${extra}`);
    if (problems.size === MAX_PROBLEMS) break;
  }
  return [...problems];
}
