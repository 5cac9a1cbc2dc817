// Throughput and latency of `tmi-conform proxy` beside its baselines, under autocannon with 32
// connections sending the three operations in turn:
//   (a) the upstream directly
//   (b) a bare http-proxy (same keep-alive pool, no judging, no recording)
//   (c) tmi-conform proxy (judging, journal, report)
//   (d) Stoplight Prism's validating proxy on schemas/openapi.yaml, installed into bench/out/
//       at bench time (never into package.json); skipped with the reason when it cannot run
// first with the reference implementation as upstream (rate limit off), then with a stub
// upstream that answers without verifying tokens: the reference verifies an RS256 signature on
// every request and can set the pace itself, which hides what the proxies cost.
// Every server runs in its own process; autocannon runs in this one.
//
//   npm run bench:proxy [-- --duration SECONDS] [--rounds N] [--no-prism] [--no-stub]
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
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
  latency: { p50: number; p99: number };
  errors: number;
  timeouts: number;
  non2xx: number;
}
const autocannon = createRequire(import.meta.url)('autocannon') as (options: { url: string; connections: number; duration: number; requests: AutocannonRequest[]; overallRate?: number }) => Promise<AutocannonResult>;

const SELF = fileURLToPath(import.meta.url);
const BIN = join(packageRoot, 'bin', 'tmi-conform.js');
const OUT = join(packageRoot, 'bench', 'out');
const PRISM_DIR = join(OUT, 'prism');
const PRISM_BIN = join(PRISM_DIR, 'node_modules', '.bin', 'prism');
const CONNECTIONS = 32;

const argv = process.argv.slice(2);
const flag = (name: string) => argv.includes(name);
const option = (name: string, fallback: number) => {
  const i = argv.indexOf(name);
  return i === -1 ? fallback : Number(argv[i + 1]);
};

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
  const server = createServer((req, res) => proxy.web(req, res));
  server.listen(0, '127.0.0.1', () => process.stdout.write(`listening on http://127.0.0.1:${(server.address() as AddressInfo).port}\n`));
} else {
  await main();
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
  p50?: number;
  p99?: number;
  errors?: number;
  /** Responses received, warm-up included. */
  completed?: number;
  note?: string;
}

async function main(): Promise<void> {
  mkdirSync(OUT, { recursive: true });
  const duration = option('--duration', 8);
  const rounds = option('--rounds', 3);
  const started: ChildProcess[] = [];
  const stopAll = () => started.forEach((c) => c.exitCode === null && c.kill('SIGKILL'));
  process.on('exit', stopAll);

  const launch = async (command: string, args: string[], ready: RegExp = /listening on (http:\/\/\S+)/): Promise<Running> => {
    const child = spawn(command, args, { cwd: packageRoot, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, GITHUB_STEP_SUMMARY: '' } });
    started.push(child);
    return { child, origin: await waitForLine(child, ready) };
  };
  const stop = async (running: Running) => {
    if (running.child.exitCode !== null) return;
    const exited = new Promise((resolve) => running.child.once('exit', resolve));
    running.child.kill('SIGTERM');
    await exited;
  };

  // The reference, rate limit off (its default would answer the bench with 429s).
  const configPath = join(OUT, 'proxy-bench-reference.yaml');
  const reference = await launch(process.execPath, [BIN, 'serve', '--listen', '127.0.0.1:0', '--rate-limit', 'off', '--config-out', configPath]);
  const config = parseYaml(readFileSync(configPath, 'utf8')) as { audience: string; auth_url: string; credentials: { full: { client_id: string; client_secret: string } }; fixtures: { resource_servers: string[]; sessions: Array<{ id: string } | string>; token_exchange_profiles: string[] } };
  const token = await fetchToken(config);
  const sessionId = (s: { id: string } | string) => (typeof s === 'string' ? s : s.id);
  const requests = mix(token, config.fixtures.resource_servers, config.fixtures.sessions.map(sessionId), config.fixtures.token_exchange_profiles);

  const prism = flag('--no-prism') ? { ok: false as const, why: 'skipped (--no-prism)' } : ensurePrism();
  console.log(`autocannon: ${CONNECTIONS} connections, ${duration} s per run after a 2 s warm-up, ${rounds} rounds (medians shown); mix: GET resource server, PATCH session, DELETE token exchange profile`);
  console.log(`prism: ${prism.ok ? `installed in ${PRISM_DIR}` : prism.why}`);

  const tables: Array<{ title: string; rows: Result[] }> = [];
  const upstreams: Array<{ title: string; origin: string }> = [{ title: 'upstream: the reference implementation (rate limit off)', origin: reference.origin }];
  let stub: Running | undefined;
  if (!flag('--no-stub')) {
    stub = await launch(process.execPath, ['--import', 'tsx', SELF, '--serve-stub']);
    upstreams.push({ title: 'upstream: a stub that answers without verifying tokens (shows what the proxies cost)', origin: stub.origin });
  }

  // Each run is repeated `rounds` times, the variants taking turns, and the median is kept:
  // on a shared machine a burst of someone else's work then skews one sample, not a variant.
  for (const upstream of upstreams) {
    console.log(upstream.title);
    const samples = new Map<string, Result[]>();
    const notes = new Map<string, string>();
    const add = (result: Result) => samples.set(result.name, [...(samples.get(result.name) ?? []), result]);
    for (let round = 1; round <= rounds; round++) {
      console.log(` round ${round} of ${rounds}`);
      add(await measure('(a) upstream directly', upstream.origin, requests, duration));

      const bare = await launch(process.execPath, ['--import', 'tsx', SELF, '--serve-bare', upstream.origin]);
      add(await measure('(b) bare http-proxy', bare.origin, requests, duration));
      await stop(bare);

      const journal = join(OUT, 'proxy-bench.jsonl');
      const ours = await launch(process.execPath, [BIN, 'proxy', '--target', upstream.origin, '--listen', '127.0.0.1:0', '--journal', journal, '--report-dir', join(OUT, 'proxy-bench-reports'), '--status-interval', '0']);
      const oursResult = await measure('(c) tmi-conform proxy', ours.origin, requests, duration);
      const rss = peakRssMiB(ours.child.pid!);
      await stop(ours);
      const recorded = readFileSync(journal, 'utf8').split('\n').filter((l) => l !== '').length;
      notes.set('(c) tmi-conform proxy', `last round: ${oursResult.completed} responses, ${recorded} journal entries; peak RSS ${rss} MiB`);
      add(oursResult);

      if (prism.ok) {
        try {
          const port = await freePort();
          const running = await launch(PRISM_BIN, ['proxy', join(packageRoot, 'schemas', 'openapi.yaml'), upstream.origin, '--port', String(port), '--host', '127.0.0.1', '--errors', 'false', '-v', 'error'], /(?:)/);
          await waitForPort(port);
          add(await measure('(d) Prism proxy', `http://127.0.0.1:${port}`, requests, duration));
          await stop(running);
        } catch (error) {
          notes.set('(d) Prism proxy', `could not run: ${(error as Error).message}`);
        }
      } else {
        notes.set('(d) Prism proxy', prism.why);
      }
    }
    const rows = ['(a) upstream directly', '(b) bare http-proxy', '(c) tmi-conform proxy', '(d) Prism proxy'].map((name) => {
      const runs = samples.get(name) ?? [];
      const row: Result = runs.length === 0 ? { name } : { name, rps: median(runs.map((r) => r.rps!)), p50: median(runs.map((r) => r.p50!)), p99: median(runs.map((r) => r.p99!)), errors: runs.reduce((n, r) => n + (r.errors ?? 0), 0) };
      const note = notes.get(name);
      if (note !== undefined) row.note = note;
      return row;
    });
    tables.push({ title: upstream.title, rows });
  }

  if (stub) await stop(stub);
  await stop(reference);
  for (const table of tables) print(table.title, table.rows);
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

async function measure(name: string, url: string, requests: AutocannonRequest[], duration: number): Promise<Result> {
  const warm = await autocannon({ url, connections: CONNECTIONS, duration: 2, requests });
  const r = await autocannon({ url, connections: CONNECTIONS, duration, requests });
  const errors = r.errors + r.timeouts + r.non2xx;
  console.log(`  ${name.padEnd(24)} ${Math.round(r.requests.average)} req/s, p50 ${r.latency.p50} ms, p99 ${r.latency.p99} ms${errors ? `, ${errors} errors/non-2xx` : ''}`);
  return { name, rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, errors, completed: warm.requests.total + r.requests.total };
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

function print(title: string, rows: Result[]): void {
  const bare = rows.find((r) => r.name.startsWith('(b)'));
  const dash = '—';
  const line = (values: string[]) => values[0]!.padEnd(26) + values.slice(1).map((v, i) => v.padStart([8, 6, 6, 9, 12][i]!)).join('');
  console.log(`\n${title}`);
  console.log('  ' + line(['run', 'req/s', 'p50', 'p99', 'vs (b)', 'p99 vs (b)']) + '  notes');
  for (const r of rows) {
    const cells =
      r.rps === undefined
        ? [dash, dash, dash, dash, dash]
        : [
            String(Math.round(r.rps)),
            String(r.p50),
            String(r.p99),
            bare?.rps ? `${(r.rps / bare.rps).toFixed(2)}×` : dash,
            bare?.p99 !== undefined ? `${r.p99! - bare.p99 >= 0 ? '+' : ''}${r.p99! - bare.p99} ms` : dash,
          ];
    const notes = [r.errors ? `${r.errors} errors/non-2xx` : '', r.note ?? ''].filter((s) => s !== '').join('; ');
    console.log('  ' + line([r.name, ...cells]) + (notes ? `  ${notes}` : ''));
  }
  console.log('  (medians of the rounds; 32 connections as fast as they go; latencies in whole milliseconds, as autocannon measures them)');
}
