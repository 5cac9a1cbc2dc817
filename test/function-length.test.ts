// Functions stay short: every function, method and arrow function in cli/, proxy/, recordings/
// and suites/ spans at most MAX_FUNCTION_LINES lines, unless the comment block right above it
// says why it reads better whole (`// long: <reason>`). Lines are counted from the function's
// first line (its signature, not the comments above it) to its last.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { packageRoot } from '../core/paths.ts';

const MAX_FUNCTION_LINES = 60;
const FOLDERS = ['cli', 'proxy', 'recordings', 'suites'];
/** A reason, not just the marker: `// long:` alone does not excuse a function. */
const LONG_REASON = /^\s*\/\/\s*long:\s*\S/;
const COMMENT_LINE = /^\s*(?:\/\/|\/\*|\*)/;

interface LongFunction {
  line: number;
  name: string;
  lines: number;
}

function sourceFiles(dir: string): string[] {
  const files: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) files.push(...sourceFiles(path));
    else if (/\.(ts|mts)$/.test(entry.name) && !entry.name.endsWith('.d.ts')) files.push(path);
  }
  return files;
}

/** What a reader would call the function: its own name, the variable or property it is assigned to, else its kind. */
function functionName(node: ts.FunctionLikeDeclaration, source: ts.SourceFile): string {
  if (node.name !== undefined) return node.name.getText(source);
  const parent = node.parent;
  if ((ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent)) && parent.name !== undefined)
    return parent.name.getText(source);
  if (ts.isCallExpression(parent)) return `(callback of ${parent.expression.getText(source).slice(0, 40)})`;
  return `(${ts.SyntaxKind[node.kind]})`;
}

/** Whether the comment lines directly above `line` (0-based) hold a `// long: <reason>`. */
function excused(lines: string[], line: number): boolean {
  for (let above = line - 1; above >= 0 && COMMENT_LINE.test(lines[above]!); above--) {
    if (LONG_REASON.test(lines[above]!)) return true;
  }
  return false;
}

/** Every function with a body in `text` longer than `max` lines and not excused by a `// long:` comment. */
function longFunctions(fileName: string, text: string, max = MAX_FUNCTION_LINES): LongFunction[] {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true);
  const lines = text.split('\n');
  // An arrow function or function expression starts mid-line; the comment that excuses it sits above the statement's line.
  const lineOf = (position: number) => source.getLineAndCharacterOfPosition(position).line;
  const found: LongFunction[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body !== undefined) {
      const first = lineOf(node.getStart(source));
      const length = lineOf(node.getEnd()) - first + 1;
      if (length > max && !excused(lines, first))
        found.push({ line: first + 1, name: functionName(node as ts.FunctionLikeDeclaration, source), lines: length });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe('function length', () => {
  it(`finds a function over the limit, names it with its line, and lets a "// long:" reason excuse it`, () => {
    const body = (n: number) => Array.from({ length: n }, (_, i) => `  const v${i} = ${i};`).join('\n');
    const text = [
      `export function short(): void {\n${body(3)}\n}`,
      `export function tooLong(): void {\n${body(5)}\n}`,
      `export const arrow = async () => {\n${body(5)}\n};`,
      `class K {\n  method(): void {\n${body(5)}\n  }\n}`,
      `// long: a table that reads better whole\n/** Documented. */\nexport function excusedOne(): void {\n${body(5)}\n}`,
      `//long:\nexport function noReason(): void {\n${body(5)}\n}`,
    ].join('\n');
    expect(longFunctions('sample.ts', text, 6)).toEqual([
      { line: 6, name: 'tooLong', lines: 7 },
      { line: 13, name: 'arrow', lines: 7 },
      { line: 21, name: 'method', lines: 7 },
      { line: 39, name: 'noReason', lines: 7 },
    ]);
    expect(longFunctions('sample.ts', text, 7)).toEqual([]);
  });

  it(`no function in ${FOLDERS.join('/, ')}/ is over ${MAX_FUNCTION_LINES} lines without a "// long: <reason>" comment`, () => {
    const offenders: string[] = [];
    for (const folder of FOLDERS) {
      for (const path of sourceFiles(join(packageRoot, folder))) {
        for (const { line, name, lines } of longFunctions(path, readFileSync(path, 'utf8')))
          offenders.push(`${relative(packageRoot, path)}:${line} ${name} ${lines} lines`);
      }
    }
    expect(offenders).toEqual([]);
  });
});
