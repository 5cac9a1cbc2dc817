// The library API as a user gets it: the packed tarball installed into a new project, a small
// consumer compiled with `tsc --strict` against the declared types, then run: it runs the suites
// against the embedded reference from code and reads the verdict.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { packageRoot } from '../core/paths.ts';

const dir = mkdtempSync(join(tmpdir(), 'tmi-package-api-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const npm = (args: string[], cwd: string) =>
  execFileSync('npm', args, {
    cwd,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, npm_config_audit: 'false', npm_config_fund: 'false', npm_config_update_notifier: 'false' },
  });

const CONSUMER = `import { conformanceDispatcher, judgeRecording, loadReport, runSuites, startProxy, type ConformanceDispatcher, type Report, type RunSuitesOptions } from 'tmi-conform';

const options: RunSuitesOptions = { requirements: ['RS-SIGNING-ALG'], faults: ['rs-signing-alg-invalid'] };
const report: Report = await runSuites(options);
const status: 'pass' | 'fail' | 'warn' | 'skip' | undefined = report.requirements.find((r) => r.id === 'RS-SIGNING-ALG')?.status;
const judging: (options: { target: string }) => Promise<ConformanceDispatcher> = conformanceDispatcher;
console.log(JSON.stringify({ passed: report.passed, status, api: [typeof judgeRecording, typeof loadReport, typeof startProxy, typeof judging] }));
`;

describe('the packed package, from a new project', () => {
  it('installs, compiles with tsc --strict against its types, and runs the suites from code', () => {
    const pack = join(dir, 'pack');
    mkdirSync(pack);
    npm(['pack', '--pack-destination', pack], packageRoot);
    const tarball = join(pack, readdirSync(pack).find((f) => f.endsWith('.tgz'))!);
    const project = join(dir, 'project');
    mkdirSync(project);
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
    // Its dependencies come from the npm cache that installing the kit filled.
    npm(['install', '--prefer-offline', tarball, 'typescript@5.9', '@types/node@20'], project);
    // The tarball carries the kit compiled (dist/), from exactly the sources it carries: that is what the package runs.
    const installed = join(project, 'node_modules', 'tmi-conform');
    const importer = "import { isCompiledUpToDate } from './scripts/compiled.mjs'; console.log(isCompiledUpToDate());";
    expect(spawnSync(process.execPath, ['--input-type=module', '-e', importer], { cwd: installed, encoding: 'utf8' }).stdout.trim()).toBe('true');
    writeFileSync(join(project, 'consumer.ts'), CONSUMER);
    writeFileSync(
      join(project, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, outDir: 'out', types: ['node'] },
        include: ['consumer.ts'],
      }),
    );
    const tsc = spawnSync(process.execPath, [join(project, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', project], { encoding: 'utf8' });
    expect(tsc.status, tsc.stdout + tsc.stderr).toBe(0);
    const run = spawnSync(process.execPath, [join(project, 'out', 'consumer.js')], { cwd: project, encoding: 'utf8' });
    expect(run.status, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout.trim().split('\n').at(-1)!)).toEqual({ passed: false, status: 'fail', api: ['function', 'function', 'function', 'function'] });
  }, 300_000);
});
