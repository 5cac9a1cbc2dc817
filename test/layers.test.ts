// Layers only point down (docs/architecture.md, "Layers"): every relative import of every module
// (.ts, .mts, .mjs, and bin/'s .js), read with a regular expression, goes to the importer's own
// folder or to a lower layer. Module-level state is test/module-state.test.ts's.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { packageRoot } from '../core/paths.ts';

/**
 * The layers from the bottom up, each with the layers it may import (besides its own folder).
 * A layer may only name layers listed before it: that the table points down is tested too.
 */
const LAYERS: Array<[layer: string, uses: string[]]> = [
  // How the kit is compiled into dist/, and which form of it runs (the command's entry decides).
  ['scripts', []],
  ['rules/types.ts', []],
  ['core', ['rules/types.ts']],
  ['rules', ['rules/types.ts', 'core']],
  ['keys', ['rules/types.ts', 'core', 'rules']],
  ['recordings', ['rules/types.ts', 'core', 'rules']],
  ['reports', ['rules/types.ts', 'core', 'rules']],
  ['judging', ['rules/types.ts', 'core', 'rules', 'keys', 'recordings', 'reports']],
  ['suites', ['rules/types.ts', 'core', 'rules', 'keys', 'reports', 'judging']],
  ['proxy', ['rules/types.ts', 'core', 'rules', 'keys', 'recordings', 'reports', 'judging']],
  ['reference', ['rules/types.ts', 'core', 'rules']],
  ['fixtures', ['rules/types.ts', 'core', 'rules']],
  ['cli', ['rules/types.ts', 'core', 'rules', 'keys', 'recordings', 'reports', 'suites', 'proxy', 'judging', 'reference']],
  ['api', ['rules/types.ts', 'core', 'rules', 'keys', 'recordings', 'reports', 'suites', 'proxy', 'judging', 'reference']],
  ['bench', ['rules/types.ts', 'core', 'rules', 'keys', 'recordings', 'reports', 'suites', 'proxy', 'judging', 'reference', 'fixtures', 'cli', 'api']],
  [
    'test',
    ['scripts', 'rules/types.ts', 'core', 'rules', 'keys', 'recordings', 'reports', 'suites', 'proxy', 'judging', 'reference', 'fixtures', 'cli', 'api'],
  ],
  ['bin', ['scripts', 'cli']],
];
const USES = new Map(LAYERS);

/** What every layer uses lives in core/ alone: a module of that name anywhere else is in the wrong place. */
const CORE_MODULES = ['version.ts', 'errors.ts', 'paths.ts', 'redact.ts'];

/** A file's layer: the file itself when it is a layer of its own, otherwise its top-level folder. */
function layerOf(file: string): string | undefined {
  if (USES.has(file)) return file;
  const folder = file.split('/')[0]!;
  return USES.has(folder) ? folder : undefined;
}

interface Edge {
  from: string;
  to: string;
}

/** Imports that point up or sideways, leave the known layers, or take a core module from elsewhere. */
function wrongWay(edges: Edge[]): string[] {
  const wrong: string[] = [];
  for (const { from, to } of edges) {
    const a = layerOf(from);
    const b = layerOf(to);
    if (a === undefined || b === undefined) wrong.push(`${from} → ${to} (not in a known layer)`);
    else if (a !== b && !USES.get(a)!.includes(b)) wrong.push(`${from} → ${to}`);
    else if (b !== 'core' && CORE_MODULES.includes(to.split('/').at(-1)!)) wrong.push(`${from} → ${to} (belongs in core/)`);
  }
  return wrong;
}

/** import … from, export … from, import '…' and import('…'): every relative specifier. */
const IMPORT = /(?:\bfrom\s*|\bimport\s*\(?\s*)['"](\.{1,2}\/[^'"]+)['"]/g;

function sourceFiles(dir: string): string[] {
  const files: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    // dist/: the type declarations npm pack generates (git-ignored), not modules of the kit.
    if (entry.name === 'node_modules' || entry.name.startsWith('.') || entry.name === 'out' || entry.name === 'dist') continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) files.push(...sourceFiles(path));
    else if (/\.(ts|mts|mjs)$/.test(entry.name) || (dir === join(packageRoot, 'bin') && entry.name.endsWith('.js'))) files.push(path);
  }
  return files;
}

function importGraph(): Edge[] {
  const edges: Edge[] = [];
  for (const path of sourceFiles(packageRoot)) {
    const from = relative(packageRoot, path);
    if (!from.includes('/')) continue; // vitest.config.ts and the like: configuration, not a layer
    for (const match of readFileSync(path, 'utf8').matchAll(IMPORT)) {
      edges.push({ from, to: relative(packageRoot, resolve(dirname(path), match[1]!)) });
    }
  }
  return edges;
}

/** Modules that import each other, directly or round a loop: each cycle once, as "a → b → a". */
function cycles(edges: Edge[]): string[] {
  const next = new Map<string, string[]>();
  for (const { from, to } of edges) next.set(from, [...(next.get(from) ?? []), to]);
  // Tarjan's strongly connected components, iterative: a component of more than one module (or one importing itself) is a cycle.
  let index = 0;
  const indexOf = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[] = [];
  for (const start of next.keys()) {
    if (indexOf.has(start)) continue;
    const work: Array<{ node: string; i: number }> = [{ node: start, i: 0 }];
    indexOf.set(start, index);
    low.set(start, index++);
    stack.push(start);
    onStack.add(start);
    while (work.length > 0) {
      const frame = work.at(-1)!;
      const targets = next.get(frame.node) ?? [];
      if (frame.i < targets.length) {
        const to = targets[frame.i++]!;
        if (!indexOf.has(to)) {
          indexOf.set(to, index);
          low.set(to, index++);
          stack.push(to);
          onStack.add(to);
          work.push({ node: to, i: 0 });
        } else if (onStack.has(to)) low.set(frame.node, Math.min(low.get(frame.node)!, indexOf.get(to)!));
        continue;
      }
      work.pop();
      if (work.length > 0) low.set(work.at(-1)!.node, Math.min(low.get(work.at(-1)!.node)!, low.get(frame.node)!));
      if (low.get(frame.node) !== indexOf.get(frame.node)) continue;
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== frame.node);
      if (component.length > 1 || targets.includes(frame.node)) found.push([...component.sort(), component[0]].join(' → '));
    }
  }
  return found;
}

describe('layers', () => {
  it('no import cycle, direct or round a loop', () => {
    expect(cycles(importGraph())).toEqual([]);
    const planted: Edge[] = [
      { from: 'proxy/server.ts', to: 'proxy/transit.ts' },
      { from: 'proxy/transit.ts', to: 'proxy/server.ts' },
      { from: 'a/x.ts', to: 'a/y.ts' },
      { from: 'a/y.ts', to: 'a/z.ts' },
      { from: 'a/z.ts', to: 'a/x.ts' },
      { from: 'a/z.ts', to: 'b/w.ts' },
    ];
    expect(cycles(planted).sort()).toEqual(['a/x.ts → a/y.ts → a/z.ts → a/x.ts', 'proxy/server.ts → proxy/transit.ts → proxy/server.ts']);
  });

  it('reads the import graph: a few hundred imports between the folders', () => {
    const edges = importGraph();
    expect(edges.length).toBeGreaterThan(200);
    expect(edges).toContainEqual({ from: 'cli/main.ts', to: 'core/errors.ts' });
    expect(edges).toContainEqual({ from: 'bin/tmi-conform.js', to: 'scripts/compiled.mjs' });
  });

  it('the table points down: a layer uses only layers below it', () => {
    LAYERS.forEach(([layer, uses], rank) => {
      for (const used of uses)
        expect(
          LAYERS.findIndex(([name]) => name === used),
          `${layer} uses ${used}`,
        ).toBeLessThan(rank);
    });
  });

  it('every import points down or stays in its folder', () => {
    expect(wrongWay(importGraph())).toEqual([]);
  });

  it('the checker flags an import up or sideways, and a core module taken from elsewhere (the imports the layers once had)', () => {
    const before: Edge[] = [
      { from: 'recordings/write.ts', to: 'cli/version.ts' },
      { from: 'reports/builder.ts', to: 'cli/version.ts' },
      { from: 'reports/merge.ts', to: 'cli/version.ts' },
      { from: 'reports/fail-on.ts', to: 'cli/errors.ts' },
      { from: 'suites/config.ts', to: 'cli/errors.ts' },
      { from: 'cli/version.ts', to: 'rules/paths.ts' },
      { from: 'bench/proxy.ts', to: 'rules/paths.ts' },
      { from: 'reports/builder.ts', to: 'recordings/redact.ts' },
      { from: 'reports/redact-text.ts', to: 'recordings/redact.ts' },
      { from: 'suites/evidence.ts', to: 'recordings/redact.ts' },
      { from: 'bench/validate.ts', to: 'test/helpers/exchanges.ts' },
      { from: 'bench/proxy.ts', to: 'test/helpers/proxy.ts' },
    ];
    expect(wrongWay(before)).toEqual([
      'recordings/write.ts → cli/version.ts',
      'reports/builder.ts → cli/version.ts',
      'reports/merge.ts → cli/version.ts',
      'reports/fail-on.ts → cli/errors.ts',
      'suites/config.ts → cli/errors.ts',
      'cli/version.ts → rules/paths.ts (belongs in core/)',
      'bench/proxy.ts → rules/paths.ts (belongs in core/)',
      'reports/builder.ts → recordings/redact.ts',
      'reports/redact-text.ts → recordings/redact.ts',
      'suites/evidence.ts → recordings/redact.ts',
      'bench/validate.ts → test/helpers/exchanges.ts',
      'bench/proxy.ts → test/helpers/proxy.ts',
    ]);
    // And where those modules live now, the same imports are fine.
    expect(
      wrongWay([
        { from: 'reports/builder.ts', to: 'core/version.ts' },
        { from: 'suites/evidence.ts', to: 'core/redact.ts' },
        { from: 'bench/validate.ts', to: 'fixtures/exchanges.ts' },
      ]),
    ).toEqual([]);
  });
});
