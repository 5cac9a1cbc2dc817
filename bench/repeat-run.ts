// Repeatability of `tmi-conform run`: N full runs in a row against one reference started apart
// (`tmi-conform serve` on a free loopback port, rate limit on, the rate-limit probe switched on
// by the config it writes), counting exit codes and listing every requirement that failed or
// warned in any run. A verdict that changes between identical runs is a flake of the kit.
//
//   npm run bench:repeat [-- --runs 30] [--cli PATH] [--embedded] [--run-timeout 120] [--max-minutes 30]
//
// --cli runs another checkout's command (e.g. an earlier version's bin/tmi-conform.js) for both
// the reference and the runs. --embedded runs `tmi-conform run` with no target instead: each
// run starts its own fresh reference (what `npx tmi-conform run` does). Bounded: at most 200
// runs, each killed after --run-timeout seconds, and no new run starts once --max-minutes have
// passed.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { BIN, OUT } from './lib/files.ts';
import { launch, stop } from './lib/processes.ts';
import type { Report } from '../reports/model.ts';

const argv = process.argv.slice(2);
const usage = (message: string): never => {
  console.error(`bench:repeat: ${message}`);
  process.exit(2);
};
const WITH_VALUE = new Set(['--runs', '--cli', '--run-timeout', '--max-minutes']);
const SWITCHES = new Set(['--embedded']);
for (let i = 0; i < argv.length; i += WITH_VALUE.has(argv[i]!) ? 2 : 1) {
  if (!WITH_VALUE.has(argv[i]!) && !SWITCHES.has(argv[i]!)) usage(`unknown option "${argv[i]}" (${[...WITH_VALUE, ...SWITCHES].join(', ')})`);
}
const flagValue = (name: string): string | undefined => {
  const i = argv.indexOf(name);
  if (i === -1) return undefined;
  return argv[i + 1] ?? usage(`${name} wants a value`);
};
const count = (name: string, fallback: number, max: number): number => {
  const text = flagValue(name);
  if (text === undefined) return fallback;
  const value = Number(text);
  if (!Number.isInteger(value) || value < 1 || value > max) usage(`${name} wants a whole number from 1 to ${max}, got "${text}"`);
  return value;
};

const RUNS = count('--runs', 30, 200);
const RUN_TIMEOUT_S = count('--run-timeout', 120, 600);
const MAX_MINUTES = count('--max-minutes', 30, 240);
const CLI = resolve(flagValue('--cli') ?? BIN);
if (!existsSync(CLI)) usage(`no such command file: ${CLI}`);
const EMBEDDED = argv.includes('--embedded');

const dir = join(OUT, 'repeat-run', EMBEDDED ? 'embedded' : 'serve');
rmSync(dir, { recursive: true, force: true });
mkdirSync(dir, { recursive: true });
const configFile = join(dir, 'config.yaml');

interface Outcome {
  code: number | null;
  seconds: number;
  /** Requirements the run's report calls failed or warned, as "ID (status)". */
  notPassed: string[];
  /** The last line of stderr when the run ended without a report. */
  error?: string;
}

function runOnce(i: number): Outcome {
  const reportDir = join(dir, `run-${i}`);
  const started = performance.now();
  const target = EMBEDDED ? [] : ['--config', configFile];
  const result = spawnSync(process.execPath, [CLI, 'run', ...target, '--report-dir', reportDir], {
    encoding: 'utf8',
    maxBuffer: 1 << 26,
    timeout: RUN_TIMEOUT_S * 1000,
    killSignal: 'SIGKILL',
    env: { ...process.env, GITHUB_STEP_SUMMARY: '' },
  });
  const seconds = (performance.now() - started) / 1000;
  const reportFile = join(reportDir, 'report.json');
  if (!existsSync(reportFile))
    return { code: result.status, seconds, notPassed: [], error: result.error?.message ?? result.stderr.trim().split('\n').at(-1) ?? '' };
  const report = JSON.parse(readFileSync(reportFile, 'utf8')) as Report;
  const notPassed = report.requirements.filter((r) => r.status === 'fail' || r.status === 'warn').map((r) => `${r.id} (${r.status})`);
  return { code: result.status, seconds, notPassed };
}

// The reference, alone, on a free loopback port; its config turns the rate-limit probe on.
// (The embedded reference of `run` listens on loopback and probes on its own.)
const reference = EMBEDDED ? undefined : await launch(process.execPath, [CLI, 'serve', '--listen', '127.0.0.1:0', '--config-out', configFile]);
const outcomes: Outcome[] = [];
try {
  if (reference) {
    if (new URL(reference.origin).hostname !== '127.0.0.1') throw new Error(`the reference listens on ${reference.origin}, not on loopback`);
    if (!/^rate_limit_probe: true$/m.test(readFileSync(configFile, 'utf8'))) throw new Error(`${configFile} does not switch the rate-limit probe on`);
  }
  const against = reference ? `tmi-conform serve at ${reference.origin}` : 'its embedded reference';
  console.log(`tmi-conform run × ${RUNS} against ${against} (${CLI}; ${new Date().toISOString()})\n`);
  console.log('run   exit   seconds   failed or warned');
  const deadline = Date.now() + MAX_MINUTES * 60_000;
  for (let i = 1; i <= RUNS; i++) {
    if (Date.now() >= deadline) {
      console.log(`stopped after ${i - 1} runs: --max-minutes ${MAX_MINUTES} passed`);
      break;
    }
    const outcome = runOnce(i);
    outcomes.push(outcome);
    console.log(
      `${String(i).padStart(3)}   ${String(outcome.code).padStart(4)}   ${outcome.seconds.toFixed(1).padStart(7)}   ${outcome.error ?? (outcome.notPassed.join(', ') || '-')}`,
    );
  }
} finally {
  if (reference) await stop(reference);
}

const byCode = new Map<string, number>();
for (const o of outcomes) byCode.set(String(o.code), (byCode.get(String(o.code)) ?? 0) + 1);
const byRequirement = new Map<string, number>();
for (const o of outcomes) for (const id of o.notPassed) byRequirement.set(id, (byRequirement.get(id) ?? 0) + 1);
console.log(
  `\n${byCode.get('0') ?? 0} of ${outcomes.length} exit 0${[...byCode]
    .filter(([code]) => code !== '0')
    .map(([code, n]) => `; ${n} exit ${code}`)
    .join('')}`,
);
for (const [id, n] of [...byRequirement].sort((a, b) => b[1] - a[1])) console.log(`  ${id}: in ${n} of ${outcomes.length} runs`);
process.exitCode = outcomes.length === RUNS && outcomes.every((o) => o.code === 0) ? 0 : 1;
