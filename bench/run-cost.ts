// What a `tmi-conform run` against its embedded reference costs, this checkout's command side by
// side with another's (--baseline DIR: an earlier checkout, installed): wall time and CPU time of
// the whole process tree (the command, the suites' worker), a full run and a narrowed one
// (`--requirement TEP-DELETE-204`, most of whose cost is starting up), the two commands in turn
// so that both see the same machine. Prints medians and their ratio. CPU time is the children's
// time the kernel counts for this process (/proc/self/stat), so Linux only.
//
//   npm run bench:run-cost -- --baseline ../tmi-conform-before [--runs 8]
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { BIN, OUT } from './lib/files.ts';
import { median } from './lib/stats.ts';

const argv = process.argv.slice(2);
const usage = (message: string): never => {
  console.error(`bench:run-cost: ${message}`);
  process.exit(2);
};
const flagValue = (name: string): string | undefined => {
  const i = argv.indexOf(name);
  return i === -1 ? undefined : (argv[i + 1] ?? usage(`${name} wants a value`));
};
const baselineDir = flagValue('--baseline') ?? usage('--baseline DIR (another checkout of the kit, installed) is required');
const BASELINE_BIN = join(resolve(baselineDir), 'bin', 'tmi-conform.js');
if (!existsSync(BASELINE_BIN)) usage(`no command at ${BASELINE_BIN}`);
const RUNS = Number(flagValue('--runs') ?? 8);
if (!Number.isInteger(RUNS) || RUNS < 1 || RUNS > 100) usage('--runs wants a whole number from 1 to 100');
if (!existsSync('/proc/self/stat')) usage('reads CPU time from /proc: Linux only');

const CLOCK_TICKS_PER_S = 100;
/** CPU seconds of this process's waited-for children so far (cutime + cstime). */
function childrenCpuSeconds(): number {
  const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[13]) + Number(fields[14])) / CLOCK_TICKS_PER_S;
}

const dir = join(OUT, 'run-cost');
rmSync(dir, { recursive: true, force: true });
mkdirSync(dir, { recursive: true });

const KINDS = { full: [], narrowed: ['--requirement', 'TEP-DELETE-204'] } as const;
type Kind = keyof typeof KINDS;
const COMMANDS = { baseline: BASELINE_BIN, this: BIN } as const;
type Side = keyof typeof COMMANDS;

function runOnce(side: Side, kind: Kind): { wall: number; cpu: number } {
  const cpuBefore = childrenCpuSeconds();
  const started = performance.now();
  const result = spawnSync(process.execPath, [COMMANDS[side], 'run', ...KINDS[kind], '--report-dir', join(dir, `${side}-${kind}`)], {
    encoding: 'utf8',
    maxBuffer: 1 << 26,
    env: { ...process.env, GITHUB_STEP_SUMMARY: '' },
  });
  if (result.status !== 0) {
    console.error(`bench:run-cost: the ${side} command's ${kind} run exited ${result.status}: ${result.stderr.trim().split('\n').at(-1)}`);
    process.exit(1);
  }
  return { wall: (performance.now() - started) / 1000, cpu: childrenCpuSeconds() - cpuBefore };
}

console.log(`tmi-conform run against its embedded reference, ${RUNS} runs of each, in turn`);
console.log(`  this:     ${BIN}\n  baseline: ${BASELINE_BIN}\n`);
console.log('run        wall this   baseline  ratio    CPU this   baseline  ratio');
for (const kind of Object.keys(KINDS) as Kind[]) {
  const measured: Record<Side, { wall: number[]; cpu: number[] }> = { baseline: { wall: [], cpu: [] }, this: { wall: [], cpu: [] } };
  for (let i = 0; i < RUNS; i++) {
    for (const side of ['baseline', 'this'] as const) {
      const { wall, cpu } = runOnce(side, kind);
      measured[side].wall.push(wall);
      measured[side].cpu.push(cpu);
    }
  }
  const [wallThis, wallBase, cpuThis, cpuBase] = [measured.this.wall, measured.baseline.wall, measured.this.cpu, measured.baseline.cpu].map(median) as [
    number,
    number,
    number,
    number,
  ];
  const s = (n: number) => `${n.toFixed(2)} s`.padStart(8);
  console.log(
    `${kind.padEnd(9)} ${s(wallThis)}   ${s(wallBase)}  ${(wallThis / wallBase).toFixed(2)}×   ${s(cpuThis)}   ${s(cpuBase)}  ${(cpuThis / cpuBase).toFixed(2)}×`,
  );
}
