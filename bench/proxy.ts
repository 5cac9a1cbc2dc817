// Throughput and latency of `tmi-conform proxy` beside its baselines, under autocannon with 32
// connections sending the three operations in turn:
//   (a) the upstream directly
//   (b) a bare http-proxy (same keep-alive pool, no judging, no recording)
//   (c) tmi-conform proxy (judging, journal, report)
//   (d) Stoplight Prism's validating proxy on schemas/openapi.yaml, installed into bench/out/
//       at bench time (never into package.json); skipped with the reason when it cannot run
//   (e) tmi-conform's forwarding alone (proxy/server.ts, bodies captured, flows dropped): what
//       (c) costs without judging and recording, so that (c) against (e) shows what those cost
// first with the reference implementation as upstream (rate limit off), then with a stub
// upstream that answers without verifying tokens: the reference verifies an RS256 signature on
// every request and can set the pace itself, which hides what the proxies cost.
// Every server runs in its own process; autocannon and the steady sender run in this one.
//
//   npm run bench:proxy [-- --duration SECONDS] [--rounds N] [--latency-rate N] [--no-prism] [--no-stub]
//   npm run bench:proxy -- --cpu [--rate N] [--rounds N] [--duration SECONDS] [--stub]
//   npm run bench:proxy -- --profile DIR [--duration SECONDS] [--stub] [--bare] [--interval µs]
//   npm run bench:proxy -- --warm-up-curve [--rate N] [--windows N]
// For each upstream, every proxy is started once and warmed up at full speed (--warm-up
// SECONDS, default 10): the JIT must have compiled their hot paths before anything is measured.
// Then come rounds (--rounds, default 8) of short runs (--duration, default 3 s), every variant
// once per round, in an order that shifts each round. The machine's speed drifts from minute to
// minute (by 10 % and more on this shared 2-core machine): each variant is compared with (b) in
// the same round, seconds apart, and the median of those per-round ratios is kept, with their
// range beside it.
// Each variant is measured twice: as fast as 32 connections go (throughput), then at a steady
// rate well below what any of them sustains (--latency-rate, default 1,000 requests/s): the
// latency each adds. At full speed the 32 connections queue, so there latency is mostly
// connections ÷ throughput and says little that throughput does not. The steady rate is sent
// by undici over 32 keep-alive connections, one request every 1/rate s: autocannon's own rate
// option lets each connection send its quota for the second at once when the second starts,
// and the latency it then measures is that burst's queue.
// A run of (c) lasts until its recorder has caught up (its journal stops growing): judging and
// recording that fall behind at full speed count against its throughput, and do not spill into
// the next variant's run.
// --cpu runs (b) and (c) in turns at a steady rate (default 1000 requests/s), and prints the
// CPU each proxy process spent per response (medians): at a fixed rate the two do the same
// work, where at full speed the CPU per response also depends on how fast each one went.
// --warm-up-curve starts (b) and (c) afresh and prints the CPU each spent per response in
// consecutive 3 s windows at a steady rate (default 1500/s): how long the JIT takes to settle,
// which is what the warm-up must cover.
// --profile runs (c) alone once (or (b) with --bare; reference upstream, or the stub with
// --stub) under `node --cpu-prof`, and prints where each of its threads spent its time during
// the measured run, in µs per exchange. The profiler samples wall-clock time: while a thread
// waits for a core, the time goes to what it was running (a postMessage that wakes the other
// thread looks dearer than it is); the /proc CPU figures are the ones to compare.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { Pool } from 'undici';
import { parse as parseYaml } from 'yaml';
import { packageRoot } from '../rules/paths.ts';

/** The part of autocannon's API used here (it ships no types). */
interface AutocannonRequest {
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: string;
}
interface AutocannonResult {
  requests: { average: number; total: number };
  errors: number;
  timeouts: number;
  non2xx: number;
}
/** A run: awaited for its result; emits 'response' with each response's latency in ms (to the ns, where its own histogram keeps whole ms). */
type AutocannonRun = Promise<AutocannonResult> & { on(event: 'response', listener: (client: unknown, status: number, bytes: number, ms: number) => void): void };
const autocannon = createRequire(import.meta.url)('autocannon') as (options: { url: string; connections: number; duration: number; requests: AutocannonRequest[] }) => AutocannonRun;

const SELF = fileURLToPath(import.meta.url);
const BIN = join(packageRoot, 'bin', 'tmi-conform.js');
const OUT = join(packageRoot, 'bench', 'out');
const PRISM_DIR = join(OUT, 'prism');
/** Where (c) writes its journal. */
const JOURNAL = join(OUT, 'proxy-bench.jsonl');
const PRISM_BIN = join(PRISM_DIR, 'node_modules', '.bin', 'prism');
const CONNECTIONS = 32;
/** The baseline every other variant is compared with, round by round. */
const BARE = '(b) bare http-proxy';
const OURS = '(c) tmi-conform proxy';
const PRISM = '(d) Prism proxy';
const VARIANTS = ['(a) upstream directly', BARE, OURS, PRISM, '(e) forwarding alone'];
/** Seconds at the steady rate before its measured run: the process is warm from the run at full speed, this only lets the pace settle. */
const SETTLE_SECONDS = 2;

const argv = process.argv.slice(2);
const flag = (name: string) => argv.includes(name);
/** A numeric option's value; a value that is not a number above zero (or zero, for --warm-up) ends the run with a one-line error. */
const option = (name: string, fallback: number) => {
  const i = argv.indexOf(name);
  if (i === -1) return fallback;
  const value = Number(argv[i + 1]);
  if (!Number.isFinite(value) || value < 0 || (value === 0 && name !== '--warm-up')) {
    console.error(`bench:proxy: ${name} wants a number above zero, got ${argv[i + 1] === undefined ? 'nothing' : `"${argv[i + 1]}"`}`);
    process.exit(2);
  }
  return value;
};
// Long enough for the JIT to have compiled each variant's hot paths: measured with --warm-up-curve,
// CPU per response settles after about 6 s for (b) and 9–12 s for (c) at 1,500 requests/s.
const WARM_UP_SECONDS = option('--warm-up', 10);

/** Every child started, killed when this process exits. */
const started: ChildProcess[] = [];
process.on('exit', () => started.forEach((c) => c.exitCode === null && c.kill('SIGKILL')));

// ------------------------------------------------------------------ child roles of this script
if (flag('--serve-stub')) {
  const { startStubTarget } = await import('../test/helpers/proxy.ts');
  const stub = await startStubTarget();
  process.stdout.write(`listening on ${stub.origin}\n`);
} else if (flag('--serve-bare')) {
  const target = argv[argv.indexOf('--serve-bare') + 1]!;
  const { default: httpProxy } = await import('http-proxy');
  const { Agent } = await import('node:http');
  const proxy = httpProxy.createProxyServer({ target, agent: new Agent({ keepAlive: true, timeout: 30_000, scheduling: 'lifo' }) });
  proxy.on('error', (_error, _req, res) => {
    if ('writeHead' in res && !res.headersSent) res.writeHead(502).end();
  });
  serveChild(createServer((req, res) => proxy.web(req, res)));
} else if (flag('--serve-forwarding')) {
  const target = argv[argv.indexOf('--serve-forwarding') + 1]!;
  const { ProxyServer } = await import('../proxy/server.ts');
  const { parseTarget } = await import('../proxy/target.ts');
  serveChild(new ProxyServer({ target: parseTarget(target), maxBodyBytes: 1024 * 1024, upstreamTimeoutMs: 30_000, onFlowDone: () => {} }).server);
} else if (flag('--cpu')) {
  await compareCpu();
} else if (flag('--warm-up-curve')) {
  await warmUpCurve();
} else if (flag('--profile')) {
  await profile(argv[argv.indexOf('--profile') + 1]!);
} else {
  await main();
}

/** A child role's server: listens on a free port, says where, and exits normally on SIGTERM (so that `node --cpu-prof` writes its profile). */
function serveChild(server: Server): void {
  server.listen(0, '127.0.0.1', () => process.stdout.write(`listening on http://127.0.0.1:${(server.address() as AddressInfo).port}\n`));
  process.once('SIGTERM', () => process.exit(0));
}

// ------------------------------------------------------------------ the benchmark
interface Running {
  child: ChildProcess;
  origin: string;
}

interface Result {
  name: string;
  /** Undefined when the run could not take place (the note says why). */
  rps?: number;
  /** Latency percentiles in ms, to the µs. */
  p50?: number;
  p99?: number;
  p999?: number;
  errors?: number;
  /** % of the machine's CPU time the hypervisor gave to others during the measured run. */
  stolen?: number;
  /** Responses received, warm-up included. */
  completed?: number;
  /** Responses received in the measured run, and when it ran (monotonic clock, µs, as CPU profiles count time). */
  measured?: { responses: number; fromUs: number; toUs: number };
  /** CPU the proxy process spent per response in the measured run, by thread (when its pid was given). */
  cpu?: ProcessCpu;
  note?: string;
}

/** µs of CPU per response: the main thread, the busiest other thread (our recorder), all the rest. */
interface ProcessCpu {
  main: number;
  busiestOther: number;
  rest: number;
}

async function launch(command: string, args: string[], ready: RegExp = /listening on (http:\/\/\S+)/): Promise<Running> {
  const child = spawn(command, args, { cwd: packageRoot, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, GITHUB_STEP_SUMMARY: '' } });
  started.push(child);
  return { child, origin: await waitForLine(child, ready) };
}

async function stop(running: Running): Promise<void> {
  if (running.child.exitCode !== null) return;
  const exited = new Promise((resolve) => running.child.once('exit', resolve));
  running.child.kill('SIGTERM');
  await exited;
}

/** The reference, rate limit off (its default would answer the bench with 429s), and the request mix with a token of its. */
async function startReferenceUpstream(): Promise<{ reference: Running; requests: AutocannonRequest[] }> {
  const configPath = join(OUT, 'proxy-bench-reference.yaml');
  const reference = await launch(process.execPath, [BIN, 'serve', '--listen', '127.0.0.1:0', '--rate-limit', 'off', '--config-out', configPath]);
  const config = parseYaml(readFileSync(configPath, 'utf8')) as { audience: string; auth_url: string; credentials: { full: { client_id: string; client_secret: string } }; fixtures: { resource_servers: string[]; sessions: Array<{ id: string } | string>; token_exchange_profiles: string[] } };
  const token = await fetchToken(config);
  const sessionId = (s: { id: string } | string) => (typeof s === 'string' ? s : s.id);
  return { reference, requests: mix(token, config.fixtures.resource_servers, config.fixtures.sessions.map(sessionId), config.fixtures.token_exchange_profiles) };
}

/** Node arguments of (c), `tmi-conform proxy` as the bench runs it. */
function oursArgs(target: string): string[] {
  return [BIN, 'proxy', '--target', target, '--listen', '127.0.0.1:0', '--journal', JOURNAL, '--report-dir', join(OUT, 'proxy-bench-reports'), '--status-interval', '0'];
}

/** Node arguments of (b), the bare http-proxy (a child role of this script). */
function bareArgs(target: string): string[] {
  return ['--import', 'tsx', SELF, '--serve-bare', target];
}

/** Node arguments of (e), tmi-conform's forwarding alone (a child role of this script). */
function forwardingArgs(target: string): string[] {
  return ['--import', 'tsx', SELF, '--serve-forwarding', target];
}

/** (b) and (c) in front of `target`, each started when called: the pair the fixed-rate modes compare. */
function bareAndOurs(target: string): Array<[string, () => Promise<Running>]> {
  return [
    [BARE, () => launch(process.execPath, bareArgs(target))],
    [OURS, () => launch(process.execPath, oursArgs(target))],
  ];
}

async function main(): Promise<void> {
  mkdirSync(OUT, { recursive: true });
  const duration = option('--duration', 3);
  const rounds = option('--rounds', 8);
  const latencyRate = option('--latency-rate', 1000);
  const { reference, requests } = await startReferenceUpstream();

  const prism = flag('--no-prism') ? { ok: false as const, why: 'skipped (--no-prism)' } : ensurePrism();
  console.log(`every proxy started once per upstream and warmed up for ${WARM_UP_SECONDS} s at full speed; then ${rounds} rounds of ${duration} s runs, the variants taking turns in an order that shifts each round`);
  console.log(`autocannon: ${CONNECTIONS} connections as fast as they go; mix: GET resource server, PATCH session, DELETE token exchange profile`);
  console.log(`then the same rounds at a steady ${latencyRate} requests/s (each run after ${SETTLE_SECONDS} s at that rate)`);
  console.log(`prism: ${prism.ok ? `installed in ${PRISM_DIR}` : prism.why}`);

  const tables: Array<{ title: string; rows: Row[] }> = [];
  const upstreams: Array<{ title: string; origin: string }> = [{ title: 'upstream: the reference implementation (rate limit off)', origin: reference.origin }];
  let stub: Running | undefined;
  if (!flag('--no-stub')) {
    stub = await launch(process.execPath, ['--import', 'tsx', SELF, '--serve-stub']);
    upstreams.push({ title: 'upstream: a stub that answers without verifying tokens (shows what the proxies cost)', origin: stub.origin });
  }

  for (const upstream of upstreams) {
    console.log(upstream.title);
    const notes = new Map<string, string>();
    const contenders = await startContenders(upstream.origin, prism, notes);
    for (const contender of contenders) {
      if (!contender.running) continue;
      contender.served += await warmUp(contender.origin, requests, WARM_UP_SECONDS);
    }
    // Runs are short and interleaved, and each is compared with the run of (b) in the same
    // round, seconds away: the machine's speed drifts from minute to minute, and runs this close
    // drift alike. The order shifts every round, so that no variant always follows the same one.
    const fullSpeed: Array<Map<string, Result>> = [];
    const atRate: Array<Map<string, Result>> = [];
    for (let round = 0; round < rounds; round++) {
      console.log(` round ${round + 1} of ${rounds}, full speed`);
      const results = new Map<string, Result>();
      fullSpeed.push(results);
      for (const contender of inTurn(contenders, round)) {
        const result = await measure(contender.name, contender.origin, requests, duration, contender.running?.child.pid, 0, contender.journal);
        contender.served += result.completed ?? 0;
        results.set(contender.name, result);
      }
    }
    for (let round = 0; round < rounds; round++) {
      console.log(` round ${round + 1} of ${rounds}, at a steady ${latencyRate}/s`);
      const results = new Map<string, Result>();
      atRate.push(results);
      // Prism at full speed only: its throughput is near the steady rate, where latency would be queueing.
      for (const contender of inTurn(contenders, round).filter((c) => c.name !== PRISM)) {
        const result = await measurePaced(`${contender.name} at ${latencyRate}/s`, contender.origin, requests, duration, latencyRate, contender.running?.child.pid);
        contender.served += result.completed ?? 0;
        results.set(contender.name, result);
      }
    }
    const ours = contenders.find((c) => c.name === OURS)!;
    const rss = peakRssMiB(ours.running!.child.pid!);
    for (const contender of contenders) if (contender.running) await stop(contender.running);
    const entries = readFileSync(JOURNAL, 'utf8').split('\n').filter((l) => l !== '');
    const cutOff = entries.filter((l) => l.includes('"_error":"client closed the connection')).length;
    notes.set(OURS, `journal: ${entries.length} entries, ${cutOff} of them requests the client cut off (a run's end); responses the benchmark counted: ${ours.served}, warm-up included; peak RSS ${rss} MiB`);
    tables.push({ title: `${upstream.title}\n as fast as ${CONNECTIONS} connections go`, rows: VARIANTS.map((name) => summarise(name, fullSpeed, notes.get(name))) });
    tables.push({ title: `${upstream.title}\n at a steady ${latencyRate} requests/s, ${CONNECTIONS} connections`, rows: VARIANTS.filter((name) => name !== PRISM).map((name) => summarise(name, atRate, undefined, true)) });
  }

  if (stub) await stop(stub);
  await stop(reference);
  for (const table of tables) print(table.title, table.rows);
}

/** A variant under test: the upstream itself (no process of its own) or a proxy in front of it. */
interface Contender {
  name: string;
  origin: string;
  running?: Running;
  /** Where it writes its journal: (c) only. A run of it ends once the journal stops growing. */
  journal?: string;
  /** Responses the benchmark received from it, warm-ups included. */
  served: number;
}

/** Starts every proxy in front of `upstream` (Prism when it is installed), side by side. */
async function startContenders(upstream: string, prism: { ok: boolean; why?: string }, notes: Map<string, string>): Promise<Contender[]> {
  const contenders: Contender[] = [{ name: '(a) upstream directly', origin: upstream, served: 0 }];
  const add = async (name: string, start: () => Promise<Running>, journal?: string) => {
    const running = await start();
    contenders.push({ name, origin: running.origin, running, served: 0, ...(journal ? { journal } : {}) });
  };
  await add(BARE, () => launch(process.execPath, bareArgs(upstream)));
  await add(OURS, () => launch(process.execPath, oursArgs(upstream)), JOURNAL);
  await add('(e) forwarding alone', () => launch(process.execPath, forwardingArgs(upstream)));
  if (prism.ok) {
    try {
      const port = await freePort();
      await add(PRISM, async () => {
        const running = await launch(PRISM_BIN, ['proxy', join(packageRoot, 'schemas', 'openapi.yaml'), upstream, '--port', String(port), '--host', '127.0.0.1', '--errors', 'false', '-v', 'error'], /(?:)/);
        await waitForPort(port);
        return { ...running, origin: `http://127.0.0.1:${port}` };
      });
    } catch (error) {
      notes.set(PRISM, `could not run: ${(error as Error).message}`);
    }
  } else {
    notes.set(PRISM, prism.why ?? 'not installed');
  }
  return contenders;
}

/** The contenders in round `round`'s order: the list shifted by one more place each round. */
function inTurn(contenders: Contender[], round: number): Contender[] {
  const shift = round % contenders.length;
  return [...contenders.slice(shift), ...contenders.slice(0, shift)];
}

/** A line of the printed table: medians over the rounds, and against (b) the medians of each round's ratio and differences. */
interface Row {
  name: string;
  rps?: number;
  p50?: number;
  p99?: number;
  p999?: number;
  vsBare?: { rps: number; p50: number; p99: number };
  errors?: number;
  note?: string;
}

/** `steady`: the runs were sent at a fixed rate, so their throughput ratios say nothing and are not spread out. */
function summarise(name: string, rounds: Array<Map<string, Result>>, note?: string, steady = false): Row {
  const runs = rounds.flatMap((round) => round.get(name) ?? []);
  if (runs.length === 0) return note === undefined ? { name } : { name, note };
  const row: Row = { name, rps: median(runs.map((r) => r.rps!)), p50: median(runs.map((r) => r.p50!)), p99: median(runs.map((r) => r.p99!)), p999: median(runs.map((r) => r.p999!)), errors: runs.reduce((n, r) => n + (r.errors ?? 0), 0) };
  const pairs = rounds.flatMap((round) => {
    const run = round.get(name);
    const bare = round.get(BARE);
    return run && bare ? [[run, bare] as const] : [];
  });
  const spread: string[] = [];
  if (pairs.length > 0) {
    const ratios = pairs.map(([r, b]) => r.rps! / b.rps!);
    const p99s = pairs.map(([r, b]) => r.p99! - b.p99!);
    row.vsBare = { rps: median(ratios), p50: median(pairs.map(([r, b]) => r.p50! - b.p50!)), p99: median(p99s) };
    // How far the rounds agree: a median says little without it.
    const ratioRange = steady ? '' : `${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)}×, `;
    if (name !== BARE && pairs.length > 1) spread.push(`rounds vs (b): ${ratioRange}p99 ${signedMs(Math.min(...p99s))} to ${signedMs(Math.max(...p99s))} ms`);
  }
  const cpus = runs.flatMap((r) => (r.cpu ? [r.cpu] : []));
  const cpu = cpus.length === 0 ? undefined : medianCpu(cpus);
  const stolen = Math.max(...runs.map((r) => r.stolen ?? 0));
  const notes = [...spread, cpu ? describeCpu(cpu) : '', stolen >= 1 ? `steal up to ${stolen.toFixed(0)}%` : '', note ?? ''].filter((n) => n !== '').join('; ');
  if (notes !== '') row.note = notes;
  return row;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

function mix(token: string, resourceServers: string[], sessions: string[], profiles: string[]): AutocannonRequest[] {
  const auth = { authorization: `Bearer ${token}` };
  return [
    { method: 'GET', path: `/api/v2/resource-servers/${resourceServers[1]}`, headers: auth },
    { method: 'PATCH', path: `/api/v2/sessions/${sessions[0]}`, headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ session_metadata: { plan: 'gold', locale: 'en-GB' } }) },
    { method: 'GET', path: `/api/v2/resource-servers/${resourceServers[0]}?fields=id,name,identifier&include_fields=true`, headers: auth },
    // Deleting is idempotent on the reference: the same profile answers 204 every time.
    { method: 'DELETE', path: `/api/v2/token-exchange-profiles/${profiles[0]}`, headers: auth },
  ];
}

async function fetchToken(config: { audience: string; auth_url: string; credentials: { full: { client_id: string; client_secret: string } } }): Promise<string> {
  const { client_id, client_secret } = config.credentials.full;
  const response = await fetch(`${config.auth_url}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'client_credentials', client_id, client_secret, audience: config.audience }),
  });
  const body = (await response.json()) as { access_token?: string };
  if (!body.access_token) throw new Error(`no token from the reference (${response.status})`);
  return body.access_token;
}

/** As fast as CONNECTIONS connections go for `seconds` s, nothing measured; resolves with the responses received. */
async function warmUp(url: string, requests: AutocannonRequest[], seconds: number): Promise<number> {
  const run = await autocannon({ url, connections: CONNECTIONS, duration: seconds, requests });
  return run.requests.total;
}

/**
 * As fast as CONNECTIONS connections go for `duration` s, after `warmUpSeconds` s of the same; `pid`:
 * the proxy's process, whose CPU per response is measured too. With `journal` (ours), the run
 * lasts until every response it got is recorded: work the recorder deferred is not left for
 * the next run, and its time counts against the throughput.
 */
async function measure(name: string, url: string, requests: AutocannonRequest[], duration: number, pid?: number, warmUpSeconds = WARM_UP_SECONDS, journal?: string): Promise<Result> {
  const warm = warmUpSeconds > 0 ? await warmUp(url, requests, warmUpSeconds) : 0;
  const finish = startWindow(pid);
  const run = autocannon({ url, connections: CONNECTIONS, duration, requests });
  const latencies: number[] = [];
  run.on('response', (_client, _status, _bytes, ms) => latencies.push(ms));
  const r = await run;
  const endUs = journal === undefined || pid === undefined ? undefined : await untilRecorded(journal, pid);
  return finish(name, { responses: r.requests.total, completed: warm + r.requests.total, latencies, errors: r.errors + r.timeouts + r.non2xx, endUs });
}

/**
 * Waits until the recorder has caught up: the journal has not grown for 50 ms and the process
 * spent less than a fifth of a core meanwhile. Returns when it last grew (monotonic µs).
 */
async function untilRecorded(journal: string, pid: number): Promise<number> {
  const sizeOf = () => {
    try {
      return statSync(journal).size;
    } catch {
      return 0;
    }
  };
  const cpuOf = () => [...threadCpuUs(pid).values()].reduce((sum, us) => sum + us, 0);
  let size = sizeOf();
  let grewAt = monotonicUs();
  let quietSince = grewAt;
  let cpuAtQuiet = cpuOf();
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, 10));
    const now = monotonicUs();
    const next = sizeOf();
    if (next !== size) {
      size = next;
      grewAt = quietSince = now;
      cpuAtQuiet = cpuOf();
      continue;
    }
    if (now - quietSince < 50_000) continue;
    const cpu = cpuOf();
    if (cpu - cpuAtQuiet < 0.2 * (now - quietSince)) return grewAt;
    quietSince = now;
    cpuAtQuiet = cpu;
  }
}

/**
 * `rate` requests per second, evenly spaced, for `duration` s after `settle` s of the same (not
 * counted), over CONNECTIONS keep-alive connections; the latency of each is from the moment it
 * is handed to the connection pool to the end of its response body.
 */
async function measurePaced(name: string, url: string, requests: AutocannonRequest[], duration: number, rate: number, pid?: number, settle = SETTLE_SECONDS): Promise<Result> {
  const pool = new Pool(url, { connections: CONNECTIONS, pipelining: 1 });
  try {
    const settled = settle > 0 ? await sendSteadily(pool, requests, rate, settle) : { latencies: [], errors: 0 };
    const finish = startWindow(pid);
    const { latencies, errors } = await sendSteadily(pool, requests, rate, duration);
    return finish(name, { responses: latencies.length, completed: settled.latencies.length + settled.errors + latencies.length + errors, latencies, errors });
  } finally {
    await pool.close();
  }
}

/**
 * Starts a measured run: reads the proxy's CPU by thread (`pid`), the clock and the machine's
 * CPU times now; the function returned reads them again, prints the run and makes its Result,
 * whose rate is responses over the time elapsed until `endUs` (default: now).
 */
function startWindow(pid?: number): (name: string, outcome: { responses: number; completed: number; latencies: number[]; errors: number; endUs?: number | undefined }) => Result {
  const cpuBefore = pid === undefined ? undefined : threadCpuUs(pid);
  const machineBefore = machineCpuTicks();
  const fromUs = monotonicUs();
  return (name, { responses, completed, latencies, errors, endUs }) => {
    const toUs = endUs ?? monotonicUs();
    const cpu = pid === undefined ? undefined : cpuPerResponse(pid, cpuBefore!, threadCpuUs(pid), responses);
    const stolen = stealPercent(machineBefore, machineCpuTicks());
    const [p50, p99, p999] = percentiles(latencies, [0.5, 0.99, 0.999]);
    const result: Result = { name, rps: responses / ((toUs - fromUs) / 1e6), p50, p99, p999, errors, completed, measured: { responses, fromUs, toUs }, stolen };
    if (cpu) result.cpu = cpu;
    console.log(`  ${name.padEnd(34)} ${Math.round(result.rps!)} req/s, p50 ${ms(p50)}, p99 ${ms(p99)}, p99.9 ${ms(p999)}${errors ? `, ${errors} errors/non-2xx` : ''}${cpu ? `; ${describeCpu(cpu)}` : ''}; steal ${stolen.toFixed(1)}%`);
    return result;
  };
}

/** The machine's CPU time so far, in clock ticks: all of it, and what the hypervisor took for others (steal); from /proc/stat. */
function machineCpuTicks(): { total: number; steal: number } {
  try {
    // "cpu  user nice system idle iowait irq softirq steal guest guest_nice": guest time is counted in user already.
    const fields = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!.trim().split(/\s+/).slice(1, 9).map(Number);
    return { total: fields.reduce((sum, n) => sum + n, 0), steal: fields[7] ?? 0 };
  } catch {
    return { total: 0, steal: 0 };
  }
}

/** Share of the machine's CPU time between two readings that the hypervisor gave to others (0 when unknown). */
function stealPercent(before: { total: number; steal: number }, after: { total: number; steal: number }): number {
  const total = after.total - before.total;
  return total > 0 ? (100 * (after.steal - before.steal)) / total : 0;
}

/** Sends the mix in turn, one request every 1/rate s whatever the responses do (an open loop); resolves once every response is in. */
function sendSteadily(pool: Pool, requests: AutocannonRequest[], rate: number, seconds: number): Promise<{ latencies: number[]; errors: number }> {
  const total = Math.round(rate * seconds);
  const interval = 1000 / rate;
  const latencies: number[] = [];
  let errors = 0;
  let sent = 0;
  let settled = 0;
  return new Promise((resolve) => {
    if (total === 0) return resolve({ latencies, errors });
    const done = () => ++settled === total && resolve({ latencies, errors });
    const send = (request: AutocannonRequest) => {
      const at = performance.now();
      pool.request({ method: request.method, path: request.path, headers: request.headers ?? {}, body: request.body ?? null }).then(
        async (response) => {
          await response.body.dump();
          if (response.statusCode >= 200 && response.statusCode < 300) latencies.push(performance.now() - at);
          else errors++;
          done();
        },
        () => {
          errors++;
          done();
        },
      );
    };
    const start = performance.now();
    // Timers fire late by up to a millisecond or so: each tick sends all that is due by then.
    const tick = () => {
      const now = performance.now();
      while (sent < total && start + sent * interval <= now) send(requests[sent++ % requests.length]!);
      if (sent < total) setTimeout(tick, Math.max(0, start + sent * interval - performance.now()));
    };
    tick();
  });
}

/** Nearest-rank percentiles (`q` in 0–1) of latencies in ms, rounded to the µs; NaN when there are none. */
function percentiles(latencies: number[], qs: number[]): number[] {
  const sorted = Float64Array.from(latencies).sort();
  return qs.map((q) => (sorted.length === 0 ? NaN : Math.round(sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]! * 1000) / 1000));
}

/** A latency for the console: ms with two decimals. */
function ms(value: number | undefined): string {
  return value === undefined || Number.isNaN(value) ? '—' : `${value.toFixed(2)} ms`;
}

function clockTicksPerSecond(): number {
  return Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout?.trim()) || 100;
}

/** CPU time (user + system, µs) of each thread of a process, from /proc; empty when unreadable. */
function threadCpuUs(pid: number): Map<number, number> {
  const threads = new Map<number, number>();
  const ticks = clockTicksPerSecond();
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      // Fields after the parenthesised command name: state is the 3rd field, utime the 14th, stime the 15th.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      threads.set(Number(tid), ((Number(fields[11]) + Number(fields[12])) * 1e6) / ticks);
    }
  } catch {
    // the process is gone, or this is not Linux
  }
  return threads;
}

function cpuPerResponse(pid: number, before: Map<number, number>, after: Map<number, number>, responses: number): ProcessCpu | undefined {
  if (after.size === 0 || responses === 0) return undefined;
  const spent = [...after].map(([tid, us]) => [tid, us - (before.get(tid) ?? 0)] as const);
  const main = spent.find(([tid]) => tid === pid)?.[1] ?? 0;
  const others = spent.filter(([tid]) => tid !== pid).map(([, us]) => us).sort((a, b) => b - a);
  const rest = others.slice(1).reduce((sum, us) => sum + us, 0);
  return { main: main / responses, busiestOther: (others[0] ?? 0) / responses, rest: rest / responses };
}

/** Each part's median over several runs. */
function medianCpu(cpus: ProcessCpu[]): ProcessCpu {
  return { main: median(cpus.map((c) => c.main)), busiestOther: median(cpus.map((c) => c.busiestOther)), rest: median(cpus.map((c) => c.rest)) };
}

function describeCpu(cpu: ProcessCpu): string {
  const total = cpu.main + cpu.busiestOther + cpu.rest;
  return `CPU ${Math.round(total)} µs/response (main thread ${Math.round(cpu.main)}, busiest other ${Math.round(cpu.busiestOther)}, rest ${Math.round(cpu.rest)})`;
}

function monotonicUs(): number {
  return Number(process.hrtime.bigint() / 1000n);
}

/** Installs Prism into bench/out/prism once; says why when it cannot. */
function ensurePrism(): { ok: true } | { ok: false; why: string } {
  if (existsSync(PRISM_BIN)) return { ok: true };
  console.log(`installing @stoplight/prism-cli into ${PRISM_DIR} …`);
  mkdirSync(PRISM_DIR, { recursive: true });
  const result = spawnSync('npm', ['install', '--prefix', PRISM_DIR, '--no-audit', '--no-fund', '--loglevel=error', '@stoplight/prism-cli'], { encoding: 'utf8', timeout: 300_000 });
  if (result.status === 0 && existsSync(PRISM_BIN)) return { ok: true };
  rmSync(PRISM_DIR, { recursive: true, force: true });
  const why = (result.error?.message ?? result.stderr ?? '').trim().split('\n').at(-1) ?? 'unknown reason';
  return { ok: false, why: `not installed (npm install failed: ${why})` };
}

function waitForLine(child: ChildProcess, pattern: RegExp): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = pattern.exec(out);
      if (match) resolve(match[1] ?? '');
    });
    child.stderr!.on('data', (chunk: Buffer) => (err += chunk.toString()));
    child.once('exit', (code) => reject(new Error(`exited (${code}) before it was ready: ${err.trim().split('\n').slice(-3).join(' ')}`)));
  });
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function waitForPort(port: number): Promise<void> {
  for (let attempt = 0; attempt < 300; attempt++) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.once('connect', () => (socket.destroy(), resolve(true)));
      socket.once('error', () => resolve(false));
    });
    if (open) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`nothing listens on port ${port} after 30 s`);
}

function peakRssMiB(pid: number): number {
  try {
    const kib = Number(/^VmHWM:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]);
    return Math.round(kib / 1024);
  } catch {
    return NaN;
  }
}

/** A difference in ms, signed, two decimals. */
function signedMs(value: number): string {
  return `${value >= 0 ? '+' : '−'}${Math.abs(value).toFixed(2)}`;
}

function print(title: string, rows: Row[]): void {
  const dash = '—';
  const widths = [8, 8, 8, 8, 9, 11, 11];
  const line = (values: string[]) => values[0]!.padEnd(24) + values.slice(1).map((v, i) => v.padStart(widths[i]!)).join('');
  console.log(`\n${title}`);
  console.log('  ' + line(['run', 'req/s', 'p50', 'p99', 'p99.9', 'vs (b)', 'p50 vs (b)', 'p99 vs (b)']) + '  notes');
  for (const r of rows) {
    const fixed = (value: number | undefined) => (value === undefined || Number.isNaN(value) ? dash : value.toFixed(2));
    const cells =
      r.rps === undefined
        ? widths.map(() => dash)
        : [
            String(Math.round(r.rps)),
            fixed(r.p50),
            fixed(r.p99),
            fixed(r.p999),
            r.vsBare ? `${r.vsBare.rps.toFixed(2)}×` : dash,
            r.vsBare ? signedMs(r.vsBare.p50) : dash,
            r.vsBare ? signedMs(r.vsBare.p99) : dash,
          ];
    const notes = [r.errors ? `${r.errors} errors/non-2xx` : '', r.note ?? ''].filter((s) => s !== '').join('; ');
    console.log('  ' + line([r.name, ...cells]) + (notes ? `  ${notes}` : ''));
  }
  console.log('  (medians of the rounds; against (b): the median of each round\'s ratio or difference; latencies in ms, measured per response;');
  console.log('   CPU: the proxy process\'s user + system time per response in the measured run (for (c), until its recorder caught up), from /proc;');
  console.log('   steal: the machine\'s CPU time its hypervisor gave to others during a run, the highest of the rounds, when 1% or more)');
}

// ------------------------------------------------------------------ --cpu: CPU per response at a fixed rate
async function compareCpu(): Promise<void> {
  mkdirSync(OUT, { recursive: true });
  const duration = option('--duration', 8);
  const rounds = option('--rounds', 3);
  const rate = option('--rate', 1000);
  const { reference, requests } = await startReferenceUpstream();
  const upstream = flag('--stub') ? await launch(process.execPath, ['--import', 'tsx', SELF, '--serve-stub']) : reference;
  console.log(`${rate} requests/s for ${duration} s after a ${WARM_UP_SECONDS} s warm-up, ${rounds} rounds; upstream: ${upstream === reference ? 'the reference' : 'the stub'}`);
  const cpus = new Map<string, ProcessCpu[]>();
  const variants = bareAndOurs(upstream.origin);
  for (let round = 1; round <= rounds; round++) {
    for (const [name, start] of variants) {
      const running = await start();
      const { cpu } = await measurePaced(name, running.origin, requests, duration, rate, running.child.pid, WARM_UP_SECONDS);
      await stop(running);
      if (cpu) cpus.set(name, [...(cpus.get(name) ?? []), cpu]);
    }
  }
  if (upstream !== reference) await stop(upstream);
  await stop(reference);
  console.log('\nmedians:');
  for (const [name, runs] of cpus) console.log(`  ${name.padEnd(24)} ${describeCpu(medianCpu(runs))}`);
}

// ------------------------------------------------------------------ --warm-up-curve: how long the JIT takes
async function warmUpCurve(): Promise<void> {
  mkdirSync(OUT, { recursive: true });
  const rate = option('--rate', 1500);
  const windows = option('--windows', 6);
  const { reference, requests } = await startReferenceUpstream();
  console.log(`${rate} requests/s in ${windows} consecutive windows of 3 s, each proxy started afresh; upstream: the reference`);
  for (const [name, start] of bareAndOurs(reference.origin)) {
    const running = await start();
    for (let window = 1; window <= windows; window++) await measurePaced(`${name} ${(window - 1) * 3}–${window * 3} s`, running.origin, requests, 3, rate, running.child.pid, 0);
    await stop(running);
  }
  await stop(reference);
}

// ------------------------------------------------------------------ --profile: where the CPU goes
interface CpuProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface CpuProfile {
  nodes: CpuProfileNode[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** Runs (c) once under `node --cpu-prof` and prints each thread's CPU per exchange. */
async function profile(dir: string): Promise<void> {
  mkdirSync(OUT, { recursive: true });
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const duration = option('--duration', 8);
  const { reference, requests } = await startReferenceUpstream();
  const upstream = flag('--stub') ? await launch(process.execPath, ['--import', 'tsx', SELF, '--serve-stub']) : reference;
  const profiling = ['--cpu-prof', '--cpu-prof-dir', dir, '--cpu-prof-interval', String(option('--interval', 500))];
  // --bare: the same for (b), the baseline our main thread is compared with.
  const ours = flag('--bare') ? await launch(process.execPath, [...profiling, ...bareArgs(upstream.origin)]) : await launch(process.execPath, [...profiling, ...oursArgs(upstream.origin)]);
  const { measured } = await measure(flag('--bare') ? BARE : OURS, ours.origin, requests, duration, ours.child.pid);
  await stop(ours);
  if (upstream !== reference) await stop(upstream);
  await stop(reference);
  const window = measured!;
  console.log(`CPU counted over the measured run only (${window.responses} responses in ${((window.toUs - window.fromUs) / 1e6).toFixed(1)} s): start-up, warm-up and stop left out; profiles in ${dir}`);
  // CPU.<date>.<time>.<pid>.<thread>.<seq>.cpuprofile: thread 0 is the main thread; the
  // others are the recorder and the module loaders' threads (idle once everything is loaded).
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.cpuprofile')).sort()) {
    const title = `thread ${file.split('.')[4]}${file.split('.')[4] === '0' ? ' (main: forwarding)' : ''}: ${file}`;
    printProfile(title, JSON.parse(readFileSync(join(dir, file), 'utf8')) as CpuProfile, window);
  }
}

function frameKey(node: CpuProfileNode): string {
  const { functionName, url, lineNumber } = node.callFrame;
  const file = url === '' ? '' : ` ${url.replace(/^file:\/\//, '').replace(`${packageRoot}/`, '').replace(/^.*node_modules\//, '~/')}:${lineNumber + 1}`;
  return `${functionName || '(anonymous)'}${file}`;
}

/** Which part of the code a frame belongs to, for the per-area totals. */
function areaOf(node: CpuProfileNode): string {
  const { functionName, url } = node.callFrame;
  if (url === '') return functionName.startsWith('(') ? functionName : '(native)';
  if (url.startsWith('node:')) return 'node internals';
  const nodeModule = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (nodeModule) return nodeModule[1]!;
  const own = /\/(proxy|rules|recordings|reports|cli)\//.exec(url);
  return own ? `${own[1]}/` : 'other';
}

function printProfile(title: string, profile: CpuProfile, window: { responses: number; fromUs: number; toUs: number }): void {
  const exchanges = window.responses;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfOf = new Map<number, number>();
  // timeDeltas[i + 1] is the time spent in samples[i]; only samples inside the window count.
  let at = profile.startTime;
  for (let i = 0; i < profile.samples.length - 1; i++) {
    at += profile.timeDeltas[i]!;
    if (at < window.fromUs || at > window.toUs) continue;
    selfOf.set(profile.samples[i]!, (selfOf.get(profile.samples[i]!) ?? 0) + profile.timeDeltas[i + 1]!);
  }
  const self = new Map<string, number>();
  const inclusive = new Map<string, number>();
  const areas = new Map<string, number>();
  const add = (map: Map<string, number>, key: string, us: number) => map.set(key, (map.get(key) ?? 0) + us);
  let busy = 0;
  let idle = 0;
  // Depth first with the keys on the stack counted once each, so recursion is not counted twice.
  const onStack = new Map<string, number>();
  const visit = (node: CpuProfileNode): number => {
    const key = frameKey(node);
    onStack.set(key, (onStack.get(key) ?? 0) + 1);
    let total = selfOf.get(node.id) ?? 0;
    if (total > 0) {
      add(self, key, total);
      if (node.callFrame.functionName === '(idle)') idle += total;
      else {
        busy += total;
        add(areas, areaOf(node), total);
      }
    }
    for (const child of node.children ?? []) total += visit(byId.get(child)!);
    if (onStack.get(key) === 1) add(inclusive, key, total);
    onStack.set(key, onStack.get(key)! - 1);
    return total;
  };
  visit(profile.nodes[0]!);
  const perExchange = (us: number) => (us / exchanges).toFixed(1).padStart(8);
  if (busy + idle > 0) console.log(`\n${title}`);
  if (busy + idle === 0) {
    console.log(`\n${title}: no samples in the measured run`);
    return;
  }
  console.log(`  busy ${perExchange(busy)} µs/exchange (idle ${(idle / 1e6).toFixed(1)} s of ${((busy + idle) / 1e6).toFixed(1)} s)`);
  console.log('  by stage (µs/exchange):');
  for (const [stage, us] of [...stageTimes(profile, selfOf)].sort((a, b) => b[1] - a[1])) console.log(`  ${perExchange(us)}  ${stage}`);
  console.log('  self time by area (µs/exchange):');
  for (const [area, us] of [...areas].sort((a, b) => b[1] - a[1]).slice(0, 12)) console.log(`  ${perExchange(us)}  ${area}`);
  console.log('  self time, top functions (µs/exchange):');
  for (const [key, us] of [...self].filter(([k]) => !k.startsWith('(idle)')).sort((a, b) => b[1] - a[1]).slice(0, 30)) console.log(`  ${perExchange(us)}  ${key}`);
  console.log('  inclusive time, top functions of the kit (µs/exchange):');
  const ours = [...inclusive].filter(([k]) => / (proxy|rules|recordings|reports)\//.test(k));
  for (const [key, us] of ours.sort((a, b) => b[1] - a[1]).slice(0, 40)) console.log(`  ${perExchange(us)}  ${key}`);
}

/** The stage a frame of the kit stands for, when it stands for one (matched on "function file"). */
function stageOf(key: string): string | undefined {
  const stages: Array<[string, RegExp]> = [
    ['recorder: unpack the batch', /^(flowsFromBatch|flowFromMessage) proxy\/worker-protocol/],
    ['recorder: build the exchange', /^exchangeOf proxy\/judge/],
    ['recorder: judge (rule engine)', /^judgeExchange rules\//],
    ['recorder: redact, HAR entry', /^recordExchange recordings\/write/],
    ['recorder: JSON of the journal line', /^done proxy\/journal/],
    ['recorder: journal write', /^flush proxy\/journal/],
    ['recorder: report builder', /^done proxy\/report/],
    ['recorder: status counts', /^done proxy\/status/],
    ['main: hand-off to the recorder', /^(record|send|take|add|scheduleSend|flowToMessage) proxy\/(recorder|worker-protocol)/],
    ['main: recorder messages received', /^onMessage proxy\/recorder/],
    ['main: flow bookkeeping', /^(onRequest|onProxyRequest|onProxyResponse|onResponseClosed|onResponseClose|onRequestData|onRequestEnd|onResponseData|onResponseEnd|forwardedHeaders) proxy\/server/],
  ];
  for (const [stage, pattern] of stages) if (pattern.test(key)) return stage;
  return undefined;
}

/**
 * Busy time by stage: each sample goes to the innermost frame of its stack that stands for a
 * stage (forwarding proper, GC and the rest are named as such).
 */
function stageTimes(profile: CpuProfile, selfOf: Map<number, number>): Map<string, number> {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parentOf = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parentOf.set(child, node.id);
  const times = new Map<string, number>();
  for (const [id, us] of selfOf) {
    const leaf = byId.get(id)!;
    if (leaf.callFrame.functionName === '(idle)') continue;
    let stage: string | undefined;
    for (let at: number | undefined = id; at !== undefined && stage === undefined; at = parentOf.get(at)) {
      const key = frameKey(byId.get(at)!);
      // onRequest holds http-proxy's whole forwarding: below forward() it is forwarding proper.
      if (/^forward proxy\/server|~\/http-proxy\//.test(key)) break;
      stage = stageOf(key);
    }
    stage ??= leaf.callFrame.functionName === '(garbage collector)' ? 'garbage collector' : leaf.callFrame.functionName === '(program)' ? 'native, unattributed' : 'Node internals (main thread: the forwarding itself; recorder: messages)';
    times.set(stage, (times.get(stage) ?? 0) + us);
  }
  return times;
}
