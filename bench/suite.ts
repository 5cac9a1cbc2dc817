// Wall time of `tmi-conform run` against the embedded reference: without a rate limit (goal
// ≤ 15 s), and with the reference limited to 40 requests/s per client, side by side with the
// theoretical minimum. The limit is per client, so the minimum is the busiest client's
// requests ÷ its rate (goal: wall ≤ 1.3× that). The reference counts each client in fixed
// windows of L requests per W seconds, opened by the client's first request, so a client with
// n requests needs at least (⌈n/L⌉ - 1)·W seconds: shown too, for information. Beside the wall
// time, the time from the run's first request to its last, which leaves out process start-up
// and report writing (it still holds the test worker's start, after the preflight request).
// Also counts the 429s the run did not plan. The goal lines name the busiest client: should
// the rate-limit probe's burst straddle a window, its client can be the busiest.
//
//
// With --round-trip MS, a remote tenant instead: `tmi-conform serve --rate-limit R/1` behind a
// forwarder that adds MS of round trip (bench/lib/delay-forwarder.ts), at R = 2, 15 and 50
// requests/s (--rates R,R,…). Printed per rate: the requests the run sent, requests ÷ rate, the
// time from the run's first request to its last and their ratio (goal ≤ 1.15× at 15/s with
// 100 ms), the same less the longest pause between two requests (the test worker starting
// after the preflight: seconds on a loaded machine, whatever the rate), the wall time, the
// busiest client's requests (each client has a limit of its own) and the 429s.
//
//   npm run bench:suite [-- --runs 3]
//   npm run bench:suite -- --round-trip 100 [--rates 2,15,50] [--runs 3]
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { packageRoot } from '../core/paths.ts';
import type { Report } from '../reports/model.ts';
import { startDelayForwarder } from './lib/delay-forwarder.ts';
import { launch, stop } from './lib/processes.ts';

const runsArg = process.argv.indexOf('--runs');
const RUNS = runsArg === -1 ? 3 : Number(process.argv[runsArg + 1]);
const outDir = join(packageRoot, 'bench', 'out', 'suite');
mkdirSync(outDir, { recursive: true });
const BIN = join(packageRoot, 'bin', 'tmi-conform.js');

interface Measured {
  ms: number;
  /** From the run's first request to its last. */
  requestsMs: number;
  /** The longest pause between two requests in a row: the test worker starting, after the preflight. */
  longestPauseMs: number;
  code: number | null;
  unplanned429: number;
  /** 429s on requests the pacer sent early to learn a window's length. */
  risked429: number;
  /** Requests that spent a client's quota, per client (from the report's X-RateLimit-* series). */
  perClient: Record<string, number>;
  exchanges: number;
}

function runOnce(name: string, args: string[]): Measured {
  const reportDir = join(outDir, name);
  const started = performance.now();
  const result = spawnSync(process.execPath, [BIN, 'run', '--report-dir', reportDir, ...args], { cwd: packageRoot, encoding: 'utf8', maxBuffer: 1 << 24 });
  return measuredFrom(reportDir, performance.now() - started, result.status, result.stdout);
}

function measuredFrom(reportDir: string, ms: number, code: number | null, stdout: string): Measured {
  const result = { status: code, stdout };
  const report = JSON.parse(readFileSync(join(reportDir, 'report.json'), 'utf8')) as Report;
  const perClient: Record<string, number> = {};
  for (const point of report.traffic?.rateLimitSeries ?? []) perClient[point.client] = (perClient[point.client] ?? 0) + 1;
  const unplanned = Number(/unplanned 429s: (\d+)/.exec(result.stdout)?.[1] ?? NaN);
  const risked = Number(/429s the pacer risked to learn window lengths: (\d+)/.exec(result.stdout)?.[1] ?? NaN);
  return {
    ms,
    requestsMs: requestsSpan(report),
    longestPauseMs: longestPause(report),
    code: result.status,
    unplanned429: unplanned,
    risked429: risked,
    perClient,
    exchanges: report.traffic?.exchanges ?? 0,
  };
}

/** The longest time between two requests in a row, from the X-RateLimit-* series; 0 without one. */
function longestPause(report: Report): number {
  const times = (report.traffic?.rateLimitSeries ?? []).map((p) => Date.parse(p.t)).sort((a, b) => a - b);
  let longest = 0;
  for (let i = 1; i < times.length; i++) longest = Math.max(longest, times[i]! - times[i - 1]!);
  return longest;
}

/**
 * First to last request: from the X-RateLimit-* series (every request while it holds under
 * 2000 points), else from the exchanges kept as evidence (a sample, so a little short).
 */
function requestsSpan(report: Report): number {
  let times = (report.traffic?.rateLimitSeries ?? []).map((p) => Date.parse(p.t));
  if (times.length === 0) times = report.requirements.flatMap((r) => r.evidence.flatMap((e) => (e.exchange ? [Date.parse(e.exchange.startedAt)] : [])));
  return times.length === 0 ? NaN : Math.max(...times) - Math.min(...times);
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

const roundTripArg = process.argv.indexOf('--round-trip');
if (roundTripArg !== -1) {
  const roundTripMs = Number(process.argv[roundTripArg + 1]);
  const ratesArg = process.argv.indexOf('--rates');
  const rates = (ratesArg === -1 ? '2,15,50' : (process.argv[ratesArg + 1] ?? '')).split(',').map(Number);
  if (!Number.isFinite(roundTripMs) || roundTripMs < 0 || rates.some((r) => !Number.isInteger(r) || r <= 0) || !(RUNS > 0)) {
    console.error('bench:suite: --round-trip wants milliseconds (≥ 0), --rates whole requests/s above zero, --runs a count above zero');
    process.exit(2);
  }
  await remoteTenant(roundTripMs, rates);
  process.exit(0);
}

const ONLY = process.argv.includes('--limited');
const allScenarios: Array<{ name: string; args: string[]; rate?: number; window?: { limit: number; seconds: number } }> = [
  { name: 'reference, no rate limit', args: ['--rate-limit', 'off'] },
  { name: 'reference, default limit (1000/10 s)', args: [] },
  // 100 runs per property: the run then spends its quota many times over, so pacing, not
  // start-up or one free burst, decides the wall time.
  { name: 'reference, 40/s (40 per 1 s), 100 runs', args: ['--rate-limit', '40/1', '--property-runs', '100'], rate: 40, window: { limit: 40, seconds: 1 } },
  {
    name: 'reference, 40/s (400 per 10 s), 100 runs',
    args: ['--rate-limit', '400/10', '--property-runs', '100'],
    rate: 40,
    window: { limit: 400, seconds: 10 },
  },
];

console.log(`tmi-conform run, wall time (median of ${RUNS}; ${new Date().toISOString()}; includes process start)\n`);
console.log(
  'scenario                                     wall s  requests s   exchanges   exit   unplanned 429s   min n/rate s   ratio   requests ratio   fixed-window min s',
);
const results: Array<{ name: string; m: Measured; minimum?: number; busiest?: string }> = [];
const scenarios = ONLY ? allScenarios.filter((s) => s.rate) : allScenarios;
const seconds = (ms: number, width: number) => (Number.isFinite(ms) ? (ms / 1000).toFixed(1) : '-').padStart(width);
const ratio = (ms: number, minimum: number | undefined, width: number) =>
  (minimum === undefined ? '-' : `${(ms / 1000 / minimum).toFixed(2)}×`).padStart(width);
for (const scenario of scenarios) {
  const measured = Array.from({ length: RUNS }, (_, i) => runOnce(`${scenario.name.replace(/\W+/g, '-')}-${i}`, scenario.args));
  const m = {
    ...measured[0]!,
    ms: median(measured.map((x) => x.ms)),
    requestsMs: median(measured.map((x) => x.requestsMs)),
    unplanned429: Math.max(...measured.map((x) => x.unplanned429)),
    risked429: Math.max(...measured.map((x) => x.risked429)),
  };
  const w = scenario.window;
  const [busiestClient, busiest] = Object.entries(m.perClient).reduce((a, b) => (b[1] > a[1] ? b : a), ['-', 0]);
  // requests ÷ rate of the busiest client: the issue's theoretical minimum.
  const minimum = w ? busiest / (w.limit / w.seconds) : undefined;
  const fixedWindow = w ? (Math.ceil(busiest / w.limit) - 1) * w.seconds : undefined;
  results.push({ name: scenario.name, m, ...(minimum !== undefined ? { minimum, busiest: `${busiestClient}, ${busiest} requests` } : {}) });
  console.log(
    `${scenario.name.padEnd(43)} ${seconds(m.ms, 7)} ${seconds(m.requestsMs, 11)} ${String(m.exchanges).padStart(11)} ${String(m.code).padStart(6)} ${String(m.unplanned429).padStart(16)} ${minimum === undefined ? '-'.padStart(14) : minimum.toFixed(1).padStart(14)} ${ratio(m.ms, minimum, 7)} ${ratio(m.requestsMs, minimum, 16)} ${fixedWindow === undefined ? '-'.padStart(20) : fixedWindow.toFixed(1).padStart(20)}`,
  );
}
const free = results.find((r) => r.minimum === undefined);
if (free) console.log(`\ngoal ≤ 15 s without a limit: ${free.m.ms <= 15_000 ? 'met' : 'NOT met'} (${(free.m.ms / 1000).toFixed(1)} s)`);
for (const r of results.filter((x) => x.minimum !== undefined)) {
  const wall = r.m.ms / 1000 / r.minimum!;
  const requests = r.m.requestsMs / 1000 / r.minimum!;
  console.log(
    `goal ≤ 1.3× the minimum at ${r.name}: ${wall <= 1.3 ? 'met' : 'NOT met'} (${wall.toFixed(2)}× wall; ${requests.toFixed(2)}× first to last request, ${((r.m.ms - r.m.requestsMs) / 1000).toFixed(1)} s outside it; busiest client ${r.busiest}); unplanned 429s ${r.m.unplanned429}, risked 429s ${r.m.risked429}, exit ${r.m.code}`,
  );
}

/** `tmi-conform run` as a child that does not block this process (the forwarder runs in it). */
function runAsync(name: string, args: string[]): Promise<Measured> {
  const reportDir = join(outDir, name);
  const started = performance.now();
  const child = spawn(process.execPath, [BIN, 'run', '--report-dir', reportDir, ...args], { cwd: packageRoot, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.resume();
  return new Promise((resolve) => child.once('exit', (code) => resolve(measuredFrom(reportDir, performance.now() - started, code, stdout))));
}

/** One reference limited to `rate` requests/s per client, behind a forwarder adding `roundTripMs`, per rate; fresh for every run. */
async function remoteTenant(roundTripMs: number, rates: number[]): Promise<void> {
  console.log(
    `tmi-conform run against a remote tenant: the reference behind a forwarder adding ${roundTripMs} ms of round trip (median of ${RUNS}; ${new Date().toISOString()})\n`,
  );
  console.log(
    'rate/s   requests   requests ÷ rate s   first to last request s    ratio   less the worker start s    ratio   wall s   wall ratio   busiest client   its ÷ rate s   exit   unplanned 429s   risked 429s',
  );
  const lines: string[] = [];
  for (const rate of rates) {
    const runs: Measured[] = [];
    for (let i = 0; i < RUNS; i++) {
      const configFile = join(outDir, `remote-${rate}.yaml`);
      const reference = await launch(process.execPath, [BIN, 'serve', '--listen', '127.0.0.1:0', '--rate-limit', `${rate}/1`, '--config-out', configFile]);
      const forwarder = await startDelayForwarder(reference.origin, roundTripMs);
      try {
        runs.push(await runAsync(`remote-${rate}-${i}`, ['--config', configFile, '--base-url', `${forwarder.origin}/api/v2`, '--auth-url', forwarder.origin]));
      } finally {
        await forwarder.close();
        await stop(reference);
      }
    }
    // Every request the run sent ÷ the rate, as the issue counts it; the busiest client's alone
    // is the floor a run whose clients all went at once could reach (each client has its own limit).
    const requests = median(runs.map((m) => m.exchanges));
    const busiest = median(runs.map((m) => Math.max(0, ...Object.values(m.perClient))));
    const span = median(runs.map((m) => m.requestsMs)) / 1000;
    const wall = median(runs.map((m) => m.ms)) / 1000;
    // The test worker's start (the longest pause, after the preflight) costs the same at any rate and round trip.
    const suites = median(runs.map((m) => m.requestsMs - m.longestPauseMs)) / 1000;
    const minimum = requests / rate;
    const unplanned = Math.max(...runs.map((m) => m.unplanned429));
    const risked = Math.max(...runs.map((m) => m.risked429));
    const codes = [...new Set(runs.map((m) => m.code))].join(',');
    console.log(
      `${String(rate).padStart(6)} ${String(requests).padStart(10)} ${minimum.toFixed(1).padStart(19)} ${span.toFixed(1).padStart(25)} ${`${(span / minimum).toFixed(2)}×`.padStart(8)} ${suites.toFixed(1).padStart(25)} ${`${(suites / minimum).toFixed(2)}×`.padStart(8)} ${wall.toFixed(1).padStart(8)} ${`${(wall / minimum).toFixed(2)}×`.padStart(12)} ${String(busiest).padStart(16)} ${(busiest / rate).toFixed(1).padStart(14)} ${codes.padStart(6)} ${String(unplanned).padStart(16)} ${String(risked).padStart(13)}`,
    );
    if (rate === 15 && roundTripMs === 100)
      lines.push(
        `goal ≤ 1.15× requests ÷ rate at 15/s with 100 ms: ${span / minimum <= 1.15 ? 'met' : 'NOT met'} (${(span / minimum).toFixed(2)}× first to last request; ${(suites / minimum).toFixed(2)}× less the test worker's start; ${(wall / minimum).toFixed(2)}× wall); unplanned 429s ${unplanned}`,
      );
  }
  if (lines.length > 0) console.log(`\n${lines.join('\n')}`);
}
