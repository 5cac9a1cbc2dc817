// The compiled kit (scripts/compiled.mjs): the command runs dist/ only while it was compiled from
// exactly the sources beside it, and the sources themselves once one changed; either way a run
// gives the same verdict. Worked on a copy of the package, so that the sources every other test
// runs are never touched.
import { spawnSync } from 'node:child_process';
import { appendFileSync, cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { packageRoot } from '../core/paths.ts';
import { userEnv } from './helpers/cli.ts';

const COPIED = ['api', 'bin', 'cli', 'core', 'judging', 'keys', 'proxy', 'recordings', 'reference', 'rules', 'schemas', 'scripts', 'suites', 'package.json'];

let copy: string;
beforeAll(() => {
  copy = mkdtempSync(join(tmpdir(), 'tmi-compiled-'));
  for (const name of COPIED) cpSync(join(packageRoot, name), join(copy, name), { recursive: true });
  cpSync(join(packageRoot, 'reports'), join(copy, 'reports'), { recursive: true, filter: (path) => !/reports\/[^/]+\//.test(path.slice(packageRoot.length)) });
  symlinkSync(join(packageRoot, 'node_modules'), join(copy, 'node_modules'));
});
afterAll(() => rmSync(copy, { recursive: true, force: true }));

function inCopy(...args: string[]) {
  const result = spawnSync(process.execPath, args, { cwd: copy, env: userEnv(), encoding: 'utf8' });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

const compile = () => inCopy('scripts/compiled.mjs');
const upToDate = () =>
  inCopy('--input-type=module', '-e', "import { isCompiledUpToDate } from './scripts/compiled.mjs'; console.log(isCompiledUpToDate());").stdout.trim();
const usage = () => inCopy('bin/tmi-conform.js', '--help').stdout;

/** The statuses of a narrowed run's report, and its exit code. */
function narrowedRun(reportDir: string) {
  const { code, stderr } = inCopy(
    'bin/tmi-conform.js',
    'run',
    '--quiet',
    '--requirement',
    'TEP-DELETE-204',
    '--requirement',
    'SES-METADATA-ECHOED',
    '--report-dir',
    join(copy, reportDir),
  );
  const report = JSON.parse(readFileSync(join(copy, reportDir, 'report.json'), 'utf8')) as {
    requirements: Array<{ id: string; status: string }>;
    tests: Array<{ name: string; file: string; status: string }>;
  };
  return {
    code,
    stderr,
    statuses: Object.fromEntries(report.requirements.map((r) => [r.id, r.status])),
    tests: report.tests.map((t) => `${t.file}: ${t.name}: ${t.status}`).sort(),
  };
}

describe('the compiled kit', () => {
  it('holds each of the kit’s YAML documents as JSON of the same content', () => {
    const documents = readdirSync(join(packageRoot, 'schemas')).filter((name) => name.endsWith('.yaml'));
    expect(documents).toContain('requirements.yaml');
    for (const name of documents) {
      const json = JSON.parse(readFileSync(join(packageRoot, 'dist', 'schemas', name.replace(/\.yaml$/, '.json')), 'utf8'));
      expect(json, name).toEqual(parse(readFileSync(join(packageRoot, 'schemas', name), 'utf8')));
    }
  });

  it('is up to date once compiled, runs from dist/ then, and from the sources once one of them changed', () => {
    expect(compile()).toMatchObject({ code: 0, stdout: 'compiled the kit into dist\n' });
    expect(upToDate()).toBe('true');
    expect(compile().stdout).toBe('dist/ is up to date\n');
    // Told apart by a text that differs between dist/ and the sources.
    const compiledMain = join(copy, 'dist', 'cli', 'main.js');
    writeFileSync(compiledMain, readFileSync(compiledMain, 'utf8').replace('Usage: tmi-conform', 'Usage (compiled): tmi-conform'));
    expect(usage()).toContain('Usage (compiled): tmi-conform');
    // A changed source: the sources run; changed back, dist/ runs again.
    const mainSource = join(copy, 'cli', 'main.ts');
    const original = readFileSync(mainSource, 'utf8');
    appendFileSync(mainSource, '\n// a change\n');
    expect(upToDate()).toBe('false');
    expect(usage()).toContain('Usage: tmi-conform');
    expect(usage()).not.toContain('(compiled)');
    writeFileSync(mainSource, original);
    expect(upToDate()).toBe('true');
    expect(usage()).toContain('Usage (compiled): tmi-conform');
    // One of the YAML documents, which dist/ holds as JSON, is a source too.
    appendFileSync(join(copy, 'schemas', 'scopes.yaml'), '\n# a change\n');
    expect(upToDate()).toBe('false');
  });

  it('a run gives the same verdict and statuses compiled as from the sources', { timeout: 60_000 }, () => {
    expect(upToDate()).toBe('false');
    const fromSources = narrowedRun('from-sources');
    expect(compile().code).toBe(0);
    const compiled = narrowedRun('compiled');
    expect(fromSources.stderr).toBe('');
    expect(compiled.stderr).toBe('');
    expect(fromSources.code).toBe(0);
    expect(compiled.code).toBe(0);
    expect(compiled.statuses).toEqual(fromSources.statuses);
    // The tests, named by their source files either way.
    expect(compiled.tests).toEqual(fromSources.tests);
    expect(compiled.tests.some((t) => t.startsWith('update-session.suite.ts: '))).toBe(true);
    expect(compiled.statuses['TEP-DELETE-204']).toBe('pass');
    expect(compiled.statuses['SES-METADATA-ECHOED']).toBe('pass');
  });
});
