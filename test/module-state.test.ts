// No module of the product keeps state at module level (docs/architecture.md, "Layers"): every
// product source is parsed with the TypeScript compiler and read as a syntax tree, its names
// resolved by the compiler's binder, never by a regular expression.
//
// Module-level state, as this check defines it:
// - a top-level `let` or `var`;
// - a top-level `const` made with `new C(…)`, unless its declared type is read-only (ReadonlySet,
//   ReadonlyMap, readonly T[], Readonly<…>: the compiler then refuses every change), C makes
//   values nothing changes in place (RegExp, URL, TextEncoder, TextDecoder) or C is a memo of
//   core/memo.ts;
// - a top-level `const`, whatever made it, or an imported binding, that the module changes
//   anywhere (in a function too): a property or element assigned, incremented or deleted, a
//   changing method called on it (push, set, add, delete, clear, …) or Object.assign on it;
// - a write to `globalThis`, `global` or `process.env` (anywhere), or an alias of one of them;
// - a top-level statement that does something when the module loads: anything but imports,
//   exports and declarations, and any top-level `await`. The calls of a test file's vitest API
//   (describe, it, beforeAll, …) are declarations: vitest collects them per file.
// Memos of pure work (core/memo.ts: once, perKey, perFrozenObject, RecentValues) are not state:
// what they answer is what working it out afresh answers.
//
// A statement may keep state when the line before it says why: `// module-state: <reason>`.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { packageRoot } from '../core/paths.ts';

/** The product: package.json's `files` with sources in them (reports/: only its own modules), and the library API. */
const PRODUCT = ['api', 'bin', 'scripts', 'cli', 'core', 'keys', 'judging', 'proxy', 'recordings', 'reference', 'reports', 'rules', 'schemas', 'suites'];

/** Methods that change the object they are called on (arrays, maps, sets, typed arrays). */
const CHANGING_METHODS: ReadonlySet<string> = new Set([
  'push',
  'pop',
  'shift',
  'unshift',
  'splice',
  'sort',
  'reverse',
  'fill',
  'copyWithin',
  'set',
  'add',
  'delete',
  'clear',
]);
/** Object's functions that change their first argument. */
const CHANGING_OBJECT_FUNCTIONS: ReadonlySet<string> = new Set(['assign', 'defineProperty', 'defineProperties', 'setPrototypeOf']);
/** Classes whose instances nothing changes in place, and the memos of core/memo.ts. */
const VALUE_CLASSES: ReadonlySet<string> = new Set(['RegExp', 'URL', 'TextEncoder', 'TextDecoder', 'RecentValues']);
const READ_ONLY_TYPES: ReadonlySet<string> = new Set(['ReadonlySet', 'ReadonlyMap', 'ReadonlyArray', 'Readonly']);
/** vitest's API for declaring a test file's tests and hooks. */
const VITEST_DECLARATIONS: ReadonlySet<string> = new Set(['describe', 'suite', 'it', 'test', 'beforeAll', 'afterAll', 'beforeEach', 'afterEach']);
const GLOBAL_OBJECTS: ReadonlySet<string> = new Set(['globalThis', 'global']);
const EXCUSE = /^\s*\/\/ module-state: \S/;

/** Parentheses, `as`, `satisfies` and `!` say nothing about what an expression is. */
function bare(node: ts.Expression): ts.Expression {
  while (
    ts.isParenthesizedExpression(node) ||
    ts.isAsExpression(node) ||
    ts.isSatisfiesExpression(node) ||
    ts.isNonNullExpression(node) ||
    ts.isTypeAssertionExpression(node)
  )
    node = node.expression;
  return node;
}

/** The object a chain of property and element accesses starts from (`a` of `a.b[c].d`). */
function chainRoot(node: ts.Expression): ts.Expression {
  let at = bare(node);
  while (ts.isPropertyAccessExpression(at) || ts.isElementAccessExpression(at)) at = bare(at.expression);
  return at;
}

/** `globalThis`, `global` or `process.env` itself. */
function isGlobalObject(node: ts.Expression): boolean {
  const at = bare(node);
  if (ts.isIdentifier(at)) return GLOBAL_OBJECTS.has(at.text);
  return (
    ts.isPropertyAccessExpression(at) &&
    at.name.text === 'env' &&
    ts.isIdentifier(bare(at.expression)) &&
    (bare(at.expression) as ts.Identifier).text === 'process'
  );
}

/** The expression is `globalThis`, `global` or `process.env`, or a property of one. */
function isGlobal(node: ts.Expression): boolean {
  let at = bare(node);
  for (;;) {
    if (isGlobalObject(at)) return true;
    if (!ts.isPropertyAccessExpression(at) && !ts.isElementAccessExpression(at)) return false;
    at = bare(at.expression);
  }
}

/** What a node changes in place: the target of an assignment, ++/--, delete, a changing method or Object.assign. */
function changedBy(node: ts.Node): ts.Expression | undefined {
  const isAccess = (e: ts.Expression) => ts.isPropertyAccessExpression(bare(e)) || ts.isElementAccessExpression(bare(e));
  if (
    ts.isBinaryExpression(node) &&
    node.operatorToken.kind >= ts.SyntaxKind.FirstAssignment &&
    node.operatorToken.kind <= ts.SyntaxKind.LastAssignment &&
    isAccess(node.left)
  )
    return node.left;
  if (
    (ts.isPrefixUnaryExpression(node) || ts.isPostfixUnaryExpression(node)) &&
    (node.operator === ts.SyntaxKind.PlusPlusToken || node.operator === ts.SyntaxKind.MinusMinusToken) &&
    isAccess(node.operand)
  )
    return node.operand;
  if (ts.isDeleteExpression(node)) return node.expression;
  if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression)) {
    const { name, expression } = node.expression;
    if (CHANGING_METHODS.has(name.text)) return expression;
    if (CHANGING_OBJECT_FUNCTIONS.has(name.text) && ts.isIdentifier(expression) && expression.text === 'Object' && node.arguments[0]) return node.arguments[0];
  }
  return undefined;
}

const isReadOnlyType = (type: ts.TypeNode | undefined): boolean =>
  type !== undefined &&
  ((ts.isTypeOperatorNode(type) && type.operator === ts.SyntaxKind.ReadonlyKeyword) ||
    (ts.isTypeReferenceNode(type) && READ_ONLY_TYPES.has(type.typeName.getText())));

function containsTopLevelAwait(node: ts.Node): boolean {
  if (ts.isFunctionLike(node) || ts.isClassLike(node)) return false;
  if (ts.isAwaitExpression(node) || (ts.isForOfStatement(node) && node.awaitModifier !== undefined)) return true;
  return ts.forEachChild(node, containsTopLevelAwait) ?? false;
}

/** Names the file imports from vitest. */
function vitestNames(file: ts.SourceFile): Set<string> {
  const names = new Set<string>();
  for (const statement of file.statements) {
    if (!ts.isImportDeclaration(statement) || (statement.moduleSpecifier as ts.StringLiteral).text !== 'vitest') continue;
    const bindings = statement.importClause?.namedBindings;
    if (bindings && ts.isNamedImports(bindings)) for (const element of bindings.elements) names.add(element.name.text);
  }
  return names;
}

/** A top-level call of vitest's declaring API (`describe(…)`, `it.concurrent(…)`, `beforeAll(…)`). */
function declaresTests(statement: ts.Statement, vitest: Set<string>): boolean {
  if (!ts.isExpressionStatement(statement) || !ts.isCallExpression(statement.expression)) return false;
  const root = chainRoot(statement.expression.expression);
  return ts.isIdentifier(root) && vitest.has(root.text) && VITEST_DECLARATIONS.has(root.text);
}

const DECLARATIONS = [
  ts.SyntaxKind.ImportDeclaration,
  ts.SyntaxKind.ImportEqualsDeclaration,
  ts.SyntaxKind.ExportDeclaration,
  ts.SyntaxKind.ExportAssignment,
  ts.SyntaxKind.FunctionDeclaration,
  ts.SyntaxKind.ClassDeclaration,
  ts.SyntaxKind.InterfaceDeclaration,
  ts.SyntaxKind.TypeAliasDeclaration,
  ts.SyntaxKind.EnumDeclaration,
  ts.SyntaxKind.ModuleDeclaration,
  ts.SyntaxKind.VariableStatement,
  ts.SyntaxKind.EmptyStatement,
];

/** The module-level state of each file (path → source), as "file:line: what: `code`", less what a `// module-state:` line excuses. */
function moduleState(sources: ReadonlyMap<string, string>): string[] {
  const host = ts.createCompilerHost({});
  host.getSourceFile = (name, target) => (sources.has(name) ? ts.createSourceFile(name, sources.get(name)!, target, true) : undefined);
  host.fileExists = (name) => sources.has(name);
  host.readFile = (name) => sources.get(name);
  const program = ts.createProgram([...sources.keys()], { noLib: true, noResolve: true, allowJs: true, types: [], target: ts.ScriptTarget.ES2022 }, host);
  const checker = program.getTypeChecker();
  const found: string[] = [];
  for (const name of sources.keys()) found.push(...stateOf(program.getSourceFile(name)!, checker));
  return found;
}

function stateOf(file: ts.SourceFile, checker: ts.TypeChecker): string[] {
  const lines = file.text.split('\n');
  const found: string[] = [];
  const excused = (node: ts.Node) => {
    const line = file.getLineAndCharacterOfPosition(node.getStart(file)).line;
    return line > 0 && EXCUSE.test(lines[line - 1]!);
  };
  const report = (node: ts.Node, what: string) => {
    if (excused(node)) return;
    const line = file.getLineAndCharacterOfPosition(node.getStart(file)).line;
    found.push(`${file.fileName}:${line + 1}: ${what}: ${node.getText(file).split('\n')[0]!.slice(0, 120)}`);
  };
  // The module's own bindings: top-level consts, and what it imports; an excused declaration excuses its changes too.
  const moduleBindings = new Set<ts.Symbol>();
  const vitest = vitestNames(file);
  for (const statement of file.statements) {
    if (!DECLARATIONS.includes(statement.kind) && !declaresTests(statement, vitest)) report(statement, 'runs when the module loads');
    else if (containsTopLevelAwait(statement)) report(statement, 'waits when the module loads (top-level await)');
    if (ts.isImportDeclaration(statement)) {
      const clause = statement.importClause;
      const bindings = clause?.namedBindings;
      const names = [clause?.name, ...(bindings === undefined ? [] : ts.isNamedImports(bindings) ? bindings.elements.map((e) => e.name) : [bindings.name])];
      for (const name of names) if (name) moduleBindings.add(checker.getSymbolAtLocation(name)!);
    }
    if (!ts.isVariableStatement(statement)) continue;
    const { flags, declarations } = statement.declarationList;
    if (!(flags & ts.NodeFlags.Const)) report(statement, `module-level ${flags & ts.NodeFlags.Let ? 'let' : 'var'}`);
    for (const declaration of declarations) {
      if (flags & ts.NodeFlags.Const && declaration.initializer && madeChangeable(declaration)) report(statement, 'module-level object that can change');
      if (ts.isIdentifier(declaration.name) && !excused(statement)) moduleBindings.add(checker.getSymbolAtLocation(declaration.name)!);
    }
  }
  const visit = (node: ts.Node): void => {
    if (ts.isVariableDeclaration(node) && node.initializer && isGlobalObject(node.initializer)) report(node, 'an alias of a global object');
    const changed = changedBy(node);
    if (changed) {
      const root = chainRoot(changed);
      if (isGlobal(changed)) report(node, 'writes a global');
      else if (ts.isIdentifier(root) && moduleBindings.has(checker.getSymbolAtLocation(root)!)) report(node, `changes the module-level ${root.text}`);
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return found;
}

/** A `const` made with `new` of a class whose instances change, not declared read-only. */
function madeChangeable(declaration: ts.VariableDeclaration): boolean {
  const made = bare(declaration.initializer!);
  if (!ts.isNewExpression(made) || isReadOnlyType(declaration.type)) return false;
  return !(ts.isIdentifier(made.expression) && VALUE_CLASSES.has(made.expression.text));
}

function productFiles(dir: string): string[] {
  const files: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'node_modules' || entry.name === 'dist' || entry.name.startsWith('.')) continue;
    const path = join(dir, entry.name);
    // reports/ also holds the reports a run writes there by default (reports/latest/): only its own modules are the product.
    if (entry.isDirectory()) files.push(...(dir === join(packageRoot, 'reports') ? [] : productFiles(path)));
    else if (/\.(?:ts|mts|mjs|js)$/.test(entry.name)) files.push(path);
  }
  return files;
}

const check = (source: string, name = 'm.ts') => moduleState(new Map([[name, source]])).map((line) => line.slice(name.length + 1));

describe('module state', () => {
  it('no product module keeps state at module level, or it says why on the line before', () => {
    const sources = new Map<string, string>();
    for (const folder of PRODUCT)
      for (const path of productFiles(join(packageRoot, folder))) sources.set(relative(packageRoot, path), readFileSync(path, 'utf8'));
    expect(sources.size).toBeGreaterThan(150);
    expect([...sources.keys()]).toEqual(
      expect.arrayContaining(['bin/tmi-conform.js', 'api/entry.js', 'proxy/record/recorder-worker.mjs', 'suites/context.ts']),
    );
    expect(moduleState(sources)).toEqual([]);
    // The whole product is read and bound at once: seconds on a busy machine.
  }, 120_000);

  it('finds a top-level let or var, exported or not, and not one in a function', () => {
    expect(check('let tenantTokens = new TenantTokens({});\nexport var n = 0;\nfunction f() { let local = 1; return local; }\nlet a, b;')).toEqual([
      '1: module-level let: let tenantTokens = new TenantTokens({});',
      '2: module-level var: export var n = 0;',
      '4: module-level let: let a, b;',
    ]);
  });

  it('finds a const made with new, unless read-only, a value or a memo', () => {
    expect(
      check(
        [
          'const agents = new Map<number, Agent>();',
          'const scope = new AsyncLocalStorage<string>();',
          'const FIXED: ReadonlySet<string> = new Set(["a"]);',
          'const TABLE: ReadonlyMap<string, number> = new Map();',
          'const PATTERN = new RegExp("x");',
          'const recent = new RecentValues(4, (k) => k);',
          'const LIST: readonly string[] = new Array<string>();',
        ].join('\n'),
      ),
    ).toEqual([
      '1: module-level object that can change: const agents = new Map<number, Agent>();',
      '2: module-level object that can change: const scope = new AsyncLocalStorage<string>();',
    ]);
  });

  it('finds a module-level const or import the module changes, wherever it changes it, and not a local of the same name', () => {
    const source = [
      "import { cache } from './cache.ts';",
      'const seen: string[] = [];',
      'const counts = { sent: 0 };',
      'const table = make();',
      'const FIXED = ["a", "b"];',
      'export function note(id: string) { seen.push(id); counts.sent++; }',
      'function reset() { delete counts.sent; table["x"] = 1; cache.clear(); Object.assign(counts, { sent: 1 }); }',
      'function local() { const seen: string[] = []; seen.push("x"); const counts = { sent: 0 }; counts.sent = 2; return FIXED.slice().sort(); }',
      'const read = () => FIXED.includes("a") && seen.length;',
    ].join('\n');
    expect(check(source)).toEqual([
      '6: changes the module-level seen: seen.push(id)',
      '6: changes the module-level counts: counts.sent++',
      '7: changes the module-level counts: delete counts.sent',
      '7: changes the module-level table: table["x"] = 1',
      '7: changes the module-level cache: cache.clear()',
      '7: changes the module-level counts: Object.assign(counts, { sent: 1 })',
    ]);
  });

  it('finds writes to globalThis, global and process.env, and their aliases, anywhere', () => {
    const source = [
      'const shared = globalThis as { api?: object };',
      'function f() { (globalThis as any).tmiApi ??= {}; global.x = 1; process.env.TMI_X = "1"; delete process.env["TMI_Y"]; }',
      'const env = process.env;',
      'const home = process.env.HOME;',
      'const url = globalThis.location;',
    ].join('\n');
    expect(check(source)).toEqual([
      '1: an alias of a global object: shared = globalThis as { api?: object }',
      '2: writes a global: (globalThis as any).tmiApi ??= {}',
      '2: writes a global: global.x = 1',
      '2: writes a global: process.env.TMI_X = "1"',
      '2: writes a global: delete process.env["TMI_Y"]',
      '3: an alias of a global object: env = process.env',
    ]);
  });

  it('finds top-level statements that run or wait when the module loads, and not declarations or a test file’s vitest calls', () => {
    const source = [
      "import { parentPort } from 'node:worker_threads';",
      "import { describe, it, beforeAll } from 'vitest';",
      'parentPort!.on("message", () => {});',
      'const settings = await load();',
      'if (settings) start();',
      'for await (const x of y) use(x);',
      'export default await load();',
      'describe("suite", () => { it("works", async () => { await load(); }); });',
      'beforeAll(async () => { await load(); });',
      'it.concurrent("in parallel", async () => {});',
      'export async function start() { await load(); }',
      'export class Owner { async run() { await load(); } }',
      'type T = string; interface I { a: T }',
      'declare module "vitest" { interface ProvidedContext { x: string } }',
    ].join('\n');
    expect(check(source)).toEqual([
      '3: runs when the module loads: parentPort!.on("message", () => {});',
      '4: waits when the module loads (top-level await): const settings = await load();',
      '5: runs when the module loads: if (settings) start();',
      '6: runs when the module loads: for await (const x of y) use(x);',
      '7: waits when the module loads (top-level await): export default await load();',
    ]);
    // describe from elsewhere is any other call.
    expect(check('import { describe } from "./mine.ts";\ndescribe("x");')).toEqual(['2: runs when the module loads: describe("x");']);
  });

  it('a "// module-state: <reason>" line excuses the statement after it, and only that one (a declaration: its changes too)', () => {
    const source = [
      '// module-state: the entry point of the thread',
      'await run();',
      '// module-state:',
      'let a = 1;',
      'let b = 2;',
      '// module-state: kept beside its owner',
      'const byOwner = new WeakMap<object, number>();',
      'const other = new WeakMap<object, number>();',
      'export const note = (owner: object) => { byOwner.set(owner, 1); other.set(owner, 1); };',
    ].join('\n');
    expect(check(source)).toEqual([
      '4: module-level let: let a = 1;',
      '5: module-level let: let b = 2;',
      '8: module-level object that can change: const other = new WeakMap<object, number>();',
      '9: changes the module-level other: other.set(owner, 1)',
    ]);
  });

  it('reads .mjs and .js files too', () => {
    expect(check("import { register } from 'tsx/esm/api';\nregister();", 'entry.mjs')).toEqual(['2: runs when the module loads: register();']);
  });
});
