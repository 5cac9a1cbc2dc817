// Runs `tmi-conform run` against the embedded reference once per fault switch, in one process
// (the command's own code path, without paying the start-up of a process per switch), and
// prints one JSON line per run: the exit code and the status of every requirement. A switch
// that breaks a `must` requirement runs at the default level (--fail-on must), so its exit code
// proves the verdict fails without being asked to count warnings; one that breaks a `should`
// runs with --fail-on should. Each switch runs with 5 property runs and a new seed, or with
// --property-runs N and once per seed of --seeds (a comma-separated list).
//   node --import tsx test/helpers/run-faults.ts OUT_DIR [--property-runs N --seeds S,S…] [FAULT...]
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Report } from '../../reports/model.ts';
import { kitModule } from '../../scripts/compiled.mjs';

// The kit as the command runs it: compiled when dist/ is up to date (the test run compiles it first).
const { run } = (await import(kitModule('cli/run.ts'))) as typeof import('../../cli/run.ts');
const { FAULTS, FAULT_NAMES } = (await import(kitModule('reference/index.ts'))) as typeof import('../../reference/index.ts');
const { requirement: requirementNamed } = (await import(kitModule('rules/requirements.ts'))) as typeof import('../../rules/requirements.ts');

const [outDir, ...rest] = process.argv.slice(2);
const option = (name: string): string | undefined => {
  const at = rest.indexOf(name);
  return at === -1 ? undefined : rest.splice(at, 2)[1];
};
const propertyRuns = option('--property-runs') ?? '5';
const seeds: Array<string | undefined> = option('--seeds')?.split(',') ?? [undefined];
const write = process.stdout.write.bind(process.stdout);
for (const fault of rest.length > 0 ? rest : FAULT_NAMES) {
  for (const seed of seeds) {
    const reportDir = join(outDir!, seed === undefined ? fault : `${fault}-seed-${seed}`);
    const requirement = FAULTS[fault as keyof typeof FAULTS]!.requirement;
    // The command's own progress lines are not needed here.
    process.stdout.write = (() => true) as typeof process.stdout.write;
    const failOn = requirementNamed(requirement).level === 'must' ? [] : ['--fail-on', 'should'];
    const seeded = seed === undefined ? [] : ['--seed', seed];
    const code = await run([
      '--fault',
      fault,
      '--requirement',
      requirement,
      '--property-runs',
      propertyRuns,
      ...seeded,
      ...failOn,
      '--report-dir',
      reportDir,
    ]).catch((error: Error) => `error: ${error.message}`);
    process.stdout.write = write;
    const report = JSON.parse(readFileSync(join(reportDir, 'report.json'), 'utf8')) as Report;
    const statuses = Object.fromEntries(report.requirements.map((r) => [r.id, r.status]));
    write(`${JSON.stringify({ fault, requirement, ...(seed === undefined ? {} : { seed }), code, statuses })}\n`);
  }
}
// Vitest sets a failing exit code when a suite fails; here failing suites are the point.
process.exitCode = 0;
