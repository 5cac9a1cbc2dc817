// Wall time of `tmi-conform run` against the embedded reference: without a rate limit (goal
// ≤ 15 s), and with the reference limited to 40 requests/s per client, side by side with the
// theoretical minimum. The reference counts each client in fixed windows of L requests per W
// seconds, opened by the client's first request; a client with n requests needs at least
// (⌈n/L⌉ - 1)·W seconds, and the run no less than its busiest client. Also counts the 429s
// the run did not plan.
//
//   npm run bench:suite [-- --runs 3]
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { packageRoot } from '../rules/paths.ts';
import type { Report } from '../reports/model.ts';

const runsArg = process.argv.indexOf('--runs');
const RUNS = runsArg === -1 ? 3 : Number(process.argv[runsArg + 1]);
const outDir = join(packageRoot, 'bench', 'out', 'suite');
mkdirSync(outDir, { recursive: true });

interface Measured {
  ms: number;
  code: number | null;
  unplanned429: number;
  /** Requests that spent a client's quota, per client (from the report's X-RateLimit-* series). */
  perClient: Record<string, number>;
  exchanges: number;
}

function runOnce(name: string, args: string[]): Measured {
  const reportDir = join(outDir, name);
  const started = performance.now();
  const result = spawnSync(process.execPath, [join(packageRoot, 'bin', 'tmi-conform.js'), 'run', '--report-dir', reportDir, ...args], { cwd: packageRoot, encoding: 'utf8', maxBuffer: 1 << 24 });
  const ms = performance.now() - started;
  const report = JSON.parse(readFileSync(join(reportDir, 'report.json'), 'utf8')) as Report;
  const perClient: Record<string, number> = {};
  for (const point of report.traffic?.rateLimitSeries ?? []) perClient[point.client] = (perClient[point.client] ?? 0) + 1;
  const unplanned = Number(/unplanned 429s: (\d+)/.exec(result.stdout)?.[1] ?? NaN);
  return { ms, code: result.status, unplanned429: unplanned, perClient, exchanges: report.traffic?.exchanges ?? 0 };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

const ONLY = process.argv.includes('--limited');
const allScenarios: Array<{ name: string; args: string[]; rate?: number; window?: { limit: number; seconds: number } }> = [
  { name: 'reference, no rate limit', args: ['--rate-limit', 'off'] },
  { name: 'reference, default limit (1000/10 s)', args: [] },
  // 100 runs per property: the run then spends its quota many times over, so pacing, not
  // start-up or one free burst, decides the wall time.
  { name: 'reference, 40/s (40 per 1 s), 100 runs', args: ['--rate-limit', '40/1', '--property-runs', '100'], rate: 40, window: { limit: 40, seconds: 1 } },
  { name: 'reference, 40/s (400 per 10 s), 100 runs', args: ['--rate-limit', '400/10', '--property-runs', '100'], rate: 40, window: { limit: 400, seconds: 10 } },
];

console.log(`tmi-conform run, wall time (median of ${RUNS}; ${new Date().toISOString()}; includes process start)\n`);
console.log('scenario                                     wall s   exchanges   exit   unplanned 429s   theoretical min s   ratio');
const results: Array<{ name: string; m: Measured; minimum?: number }> = [];
const scenarios = ONLY ? allScenarios.filter((s) => s.rate) : allScenarios;
for (const scenario of scenarios) {
  const measured = Array.from({ length: RUNS }, (_, i) => runOnce(`${scenario.name.replace(/\W+/g, '-')}-${i}`, scenario.args));
  const m = { ...measured[0]!, ms: median(measured.map((x) => x.ms)), unplanned429: Math.max(...measured.map((x) => x.unplanned429)) };
  const w = scenario.window;
  const minimum = w ? Math.max(...Object.values(m.perClient).map((n) => (Math.ceil(n / w.limit) - 1) * w.seconds)) : undefined;
  results.push({ name: scenario.name, m, ...(minimum !== undefined ? { minimum } : {}) });
  console.log(
    `${scenario.name.padEnd(43)} ${(m.ms / 1000).toFixed(1).padStart(7)} ${String(m.exchanges).padStart(11)} ${String(m.code).padStart(6)} ${String(m.unplanned429).padStart(16)} ${minimum === undefined ? '-'.padStart(19) : minimum.toFixed(1).padStart(19)} ${minimum === undefined ? '-'.padStart(7) : `${(m.ms / 1000 / minimum).toFixed(2)}×`.padStart(7)}`,
  );
}
const free = results.find((r) => r.minimum === undefined);
if (free) console.log(`\ngoal ≤ 15 s without a limit: ${free.m.ms <= 15_000 ? 'met' : 'NOT met'} (${(free.m.ms / 1000).toFixed(1)} s)`);
for (const r of results.filter((x) => x.minimum !== undefined)) {
  console.log(`goal ≤ 1.3× the minimum at ${r.name}: ${r.m.ms / 1000 / r.minimum! <= 1.3 ? 'met' : 'NOT met'} (${(r.m.ms / 1000 / r.minimum!).toFixed(2)}×); unplanned 429s ${r.m.unplanned429}, exit ${r.m.code}`);
}
