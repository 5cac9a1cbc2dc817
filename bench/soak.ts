// Soak of `tmi-conform proxy` with rotation: a long run's worth of exchanges (default 1,000,000)
// through a proxy child process in front of the stub target (fixtures/stub-target.ts), over 32
// keep-alive connections, as fast as they go. It prints
//   - the proxy's resident memory (now and peak, from /proc) at every 100,000 exchanges,
//   - the journal's segments: how many, the largest beside the --rotate-size limit,
//   - the stop time: SIGTERM to exit, reports (and with --compress, the last gzip) included,
//   - `validate` over the segments beside the reports the proxy wrote at stop: the same counts
//     and verdict, or the differences.
// Run it at two lengths to see the stop time and memory not grow with the run:
//   npm run bench:soak [-- --exchanges N] [--rotate-size SIZE] [--compress] [--report-interval DUR]
// Its files go to bench/out/soak/ (ignored by git), replaced at every run.
import { readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Pool } from 'undici';
import { claims, jwt } from '../fixtures/exchanges.ts';
import type { Report } from '../reports/model.ts';
import { BIN, OUT } from './lib/files.ts';
import { CONNECTIONS } from './lib/load.ts';
import { argv, flag, option } from './lib/options.ts';
import { launch, stop } from './lib/processes.ts';
import { startStubUpstream } from './lib/upstream.ts';

const EXCHANGES = option('--exchanges', 1_000_000);
const text = (name: string, fallback: string) => (argv.includes(name) ? argv[argv.indexOf(name) + 1]! : fallback);
const ROTATE_SIZE = text('--rotate-size', '64MiB');
const REPORT_INTERVAL = text('--report-interval', '60s');
const COMPRESS = flag('--compress');
const CHECKPOINT = 100_000;

const dir = join(OUT, 'soak');
const segments = join(dir, 'journal');
const reportDir = join(dir, 'reports');
rmSync(dir, { recursive: true, force: true });

const MiB = 1024 * 1024;
const mib = (bytes: number) => `${(bytes / MiB).toFixed(1)} MiB`;

function memoryOf(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)![1]) * 1024;
  return { rss: kib('VmRSS'), peak: kib('VmHWM') };
}

function journalBytes(): number {
  let bytes = 0;
  for (const name of readdirSync(segments)) bytes += statSync(join(segments, name)).size;
  return bytes;
}

const token = jwt(claims());
const auth = { authorization: `Bearer ${token}` };
/** The mix of the proxy benchmark: the three operations, with bodies of a few hundred bytes. */
function request(i: number) {
  switch (i % 4) {
    case 0:
      return {
        method: 'PATCH' as const,
        path: `/api/v2/sessions/sess_${i % 7}`,
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify({ session_metadata: { plan: 'gold', n: String(i) } }),
      };
    case 1:
      return { method: 'DELETE' as const, path: `/api/v2/token-exchange-profiles/tep_${i % 11}`, headers: auth };
    default:
      return { method: 'GET' as const, path: `/api/v2/resource-servers/rs_${i % 5}`, headers: auth };
  }
}

const stub = await startStubUpstream();
const proxy = await launch(process.execPath, [
  BIN,
  'proxy',
  '--target',
  stub.origin,
  '--listen',
  '127.0.0.1:0',
  '--status-interval',
  '0',
  '--journal',
  join(segments, 'traffic.jsonl'),
  '--rotate-size',
  ROTATE_SIZE,
  '--report-interval',
  REPORT_INTERVAL,
  ...(COMPRESS ? ['--compress'] : []),
  '--report-dir',
  reportDir,
  '--overwrite',
]);
const pid = proxy.child.pid!;
console.log(
  `soak: ${EXCHANGES.toLocaleString('en')} exchanges through tmi-conform proxy (pid ${pid}) --rotate-size ${ROTATE_SIZE} --report-interval ${REPORT_INTERVAL}${COMPRESS ? ' --compress' : ''}, ${CONNECTIONS} connections, stub target`,
);

const pool = new Pool(proxy.origin, { connections: CONNECTIONS, pipelining: 1 });
let next = 0;
let answered = 0;
let failed = 0;
const startedAt = performance.now();
let checkpointAt = startedAt;
const connection = async () => {
  while (next < EXCHANGES) {
    const i = next++;
    try {
      const { statusCode, body } = await pool.request(request(i));
      await body.dump();
      if (statusCode >= 500) failed++;
    } catch {
      failed++;
    }
    answered++;
    if (answered % CHECKPOINT === 0) {
      const now = performance.now();
      const m = memoryOf(pid);
      console.log(
        `  ${answered.toLocaleString('en').padStart(9)} exchanges: RSS ${mib(m.rss)}, peak ${mib(m.peak)}; ${Math.round(CHECKPOINT / ((now - checkpointAt) / 1000))}/s; journal ${mib(journalBytes())}`,
      );
      checkpointAt = now;
    }
  }
};
await Promise.all(Array.from({ length: CONNECTIONS }, connection));
await pool.close();
const loadSeconds = (performance.now() - startedAt) / 1000;
console.log(`load: ${answered.toLocaleString('en')} answered (${failed} failed) in ${loadSeconds.toFixed(0)} s, ${Math.round(answered / loadSeconds)}/s`);

// The recorder may be behind the traffic: the stop is timed once the journal has stopped growing.
for (let last = -1, now = journalBytes(); now !== last; await new Promise((resolve) => setTimeout(resolve, 1000))) [last, now] = [now, journalBytes()];
const beforeStop = memoryOf(pid);
const stopStarted = performance.now();
await stop(proxy);
const stopSeconds = (performance.now() - stopStarted) / 1000;
console.log(`stop: ${stopSeconds.toFixed(2)} s from SIGTERM to exit (RSS before it ${mib(beforeStop.rss)}, peak over the run ${mib(beforeStop.peak)})`);
await stop(stub);

const limit = parseSize(ROTATE_SIZE);
const sizes = readdirSync(segments)
  .sort()
  .map((name) => ({ name, bytes: statSync(join(segments, name)).size }));
const largest = sizes.reduce((a, b) => (b.bytes > a.bytes ? b : a));
const plainOver = sizes.filter((s) => s.name.endsWith('.jsonl') && s.bytes > limit);
console.log(
  `segments: ${sizes.length}, ${sizes[0]!.name} to ${sizes.at(-1)!.name}; largest ${largest.name} ${mib(largest.bytes)} against the limit ${mib(limit)}; ${plainOver.length === 0 ? 'none over it' : `${plainOver.length} OVER IT`}${COMPRESS ? ' (compressed sizes)' : ''}`,
);

const validatedDir = join(dir, 'validated');
const validateStarted = performance.now();
const validated = await launchToEnd(process.execPath, [BIN, 'validate', segments, '--report-dir', validatedDir]);
console.log(`validate over the segments: exit ${validated} in ${((performance.now() - validateStarted) / 1000).toFixed(0)} s`);
const live = JSON.parse(readFileSync(join(reportDir, 'report.json'), 'utf8')) as Report;
const offline = JSON.parse(readFileSync(join(validatedDir, 'report.json'), 'utf8')) as Report;
const facts = (r: Report) => ({
  exchanges: r.traffic?.exchanges,
  byOperation: r.traffic?.byOperation,
  summary: r.summary,
  passed: r.passed,
  requirements: Object.fromEntries(r.requirements.map((q) => [q.id, `${q.status} ${q.counts.exchanges}/${q.counts.findings}`])),
});
const [a, b] = [JSON.stringify(facts(live)), JSON.stringify(facts(offline))];
console.log(
  `live report: ${live.traffic?.exchanges} exchanges, ${live.passed ? 'conforming' : 'NOT conforming'}; validate: ${offline.traffic?.exchanges} exchanges, ${offline.passed ? 'conforming' : 'NOT conforming'}: ${a === b ? 'the same counts and verdict' : 'DIFFERENT'}`,
);
if (a !== b) {
  console.log(`  live:     ${a}`);
  console.log(`  validate: ${b}`);
  process.exitCode = 1;
}
if (plainOver.length > 0) process.exitCode = 1;

function parseSize(value: string): number {
  const units: Record<string, number> = { '': 1, b: 1, kb: 1e3, mb: 1e6, gb: 1e9, kib: 1024, mib: MiB, gib: 1024 * MiB };
  const match = /^(\d+(?:\.\d+)?)\s*([a-z]*)$/i.exec(value)!;
  return Math.floor(Number(match[1]) * units[match[2]!.toLowerCase()]!);
}

async function launchToEnd(command: string, args: string[]): Promise<number | null> {
  const { spawn } = await import('node:child_process');
  const child = spawn(command, args, { stdio: ['ignore', 'ignore', 'inherit'], env: { ...process.env, GITHUB_STEP_SUMMARY: '' } });
  return new Promise((resolve) => child.on('close', resolve));
}
