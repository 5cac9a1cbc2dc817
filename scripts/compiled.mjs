// The kit's TypeScript, compiled to JavaScript in dist/ (one file per source, the same layout),
// and its YAML documents (schemas/*.yaml) as JSON.
// The command, the package's entry and the recorder thread run dist/ when it was compiled from
// exactly the sources beside it, and the TypeScript through tsx otherwise: Node loads plain
// JavaScript without a loader thread, which took about half of the CPU of starting a run (the
// command's and the suites' worker's modules, and vitest's, all passed through tsx's hooks).
// A source changed since: dist/ is not up to date, and the sources run as they are.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const packageRoot = dirname(dirname(fileURLToPath(import.meta.url)));
const distDir = join(packageRoot, 'dist');
const manifestFile = join(distDir, 'compiled.json');

/** The folders of the kit's own code (package.json "files"); reports/ only at its top level (its subfolders are output). */
const SOURCE_DIRS = ['api', 'cli', 'core', 'judging', 'keys', 'proxy', 'recordings', 'reference', 'reports', 'rules', 'suites'];

/** The kit's sources, relative to the package root: TypeScript to compile, JavaScript modules to copy, its YAML documents (schemas/) to hold as JSON. */
function sourceFiles() {
  const files = readdirSync(join(packageRoot, 'schemas'))
    .filter((name) => name.endsWith('.yaml'))
    .map((name) => `schemas/${name}`);
  for (const dir of SOURCE_DIRS) {
    const entries = readdirSync(join(packageRoot, dir), { recursive: dir !== 'reports', withFileTypes: true });
    for (const entry of entries) {
      if (!entry.isFile() || !/\.(?:ts|mjs)$/.test(entry.name) || entry.name.endsWith('.d.ts')) continue;
      files.push(relative(packageRoot, join(entry.parentPath, entry.name)).replaceAll('\\', '/'));
    }
  }
  return files.sort();
}

/** One hash of every source's path and content: dist/ is up to date when it was compiled from sources with this hash. */
function sourcesHash(files) {
  const hash = createHash('sha256');
  for (const file of files) {
    const content = readFileSync(join(packageRoot, file));
    hash.update(`${file}\0${content.length}\0`).update(content);
  }
  return hash.digest('hex');
}

/** The hash of the sources dist/ was compiled from; undefined: none is (never compiled, or compiling now). */
function compiledFrom() {
  if (!existsSync(manifestFile)) return undefined;
  try {
    return JSON.parse(readFileSync(manifestFile, 'utf8')).sources;
  } catch {
    return undefined;
  }
}

/** Whether dist/ holds the compiled form of exactly the sources beside it. */
export function isCompiledUpToDate() {
  return compiledFrom() === sourcesHash(sourceFiles());
}

/**
 * The module to load for `source` (a path relative to the package root, e.g. `cli/main.ts`):
 * its compiled form in dist/ when dist/ is up to date, else the source itself (run through tsx).
 */
export function kitModule(source, compiled = isCompiledUpToDate()) {
  return pathToFileURL(join(compiled ? distDir : packageRoot, compiled ? source.replace(/\.ts$/, '.js') : source)).href;
}

/**
 * Compiles every source into dist/ (TypeScript's own transpiler, one file at a time, relative
 * imports rewritten from .ts to .js), unless dist/ is up to date. Files are written beside their
 * final name and renamed into place, and the manifest last, so that a process starting meanwhile
 * sees either the old compiled form or the sources. Returns whether it compiled.
 */
export async function compile() {
  const files = sourceFiles();
  const hash = sourcesHash(files);
  if (compiledFrom() === hash) return false;
  const { default: ts } = await import('typescript');
  const { parse } = await import('yaml');
  const options = {
    module: ts.ModuleKind.ESNext,
    target: ts.ScriptTarget.ES2022,
    verbatimModuleSyntax: true,
    rewriteRelativeImportExtensions: true,
  };
  rmSync(manifestFile, { force: true });
  for (const file of files) {
    const text = readFileSync(join(packageRoot, file), 'utf8');
    const target = join(distDir, file.replace(/\.ts$/, '.js').replace(/\.yaml$/, '.json'));
    mkdirSync(dirname(target), { recursive: true });
    if (file.endsWith('.mjs')) {
      writeAtomically(target, text);
      continue;
    }
    if (file.endsWith('.yaml')) {
      writeAtomically(target, JSON.stringify(parse(text)));
      continue;
    }
    // No source maps: the output keeps the source's comments and names, readable as it is.
    writeAtomically(target, ts.transpileModule(text, { compilerOptions: options, fileName: join(packageRoot, file) }).outputText);
  }
  writeAtomically(manifestFile, `${JSON.stringify({ sources: hash, files: files.length })}\n`);
  return true;
}

function writeAtomically(file, text) {
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(temporary, text);
  renameSync(temporary, file);
}

// `node scripts/compiled.mjs`: compile now (npm's prepare and prepack run it).
// module-state: run as a script, the module compiles; imported, it only offers its functions.
if (process.argv[1] && pathToFileURL(process.argv[1]).href === import.meta.url) {
  const compiled = await compile();
  process.stdout.write(compiled ? `compiled the kit into ${relative(process.cwd(), distDir) || '.'}\n` : 'dist/ is up to date\n');
}
