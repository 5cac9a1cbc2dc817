// What the proxy and `validate` hold against hostile and careless input: each case is run
// against `tmi-conform proxy` (a child process, as users start it) in front of the reference
// implementation, or through `tmi-conform validate`, and the table says whether the promise held.
// Bounded (a few seconds per case) and loopback only.
//
//   npm run bench:hostile
//
// Cases:
//   stop-after-reset    five pipelined requests on one connection, a few bytes read, reset; then
//                       SIGTERM: the proxy exits within the upstream timeout + 1 s, HAR and reports written
//   stop-with-command   the same client as `proxy -- CMD`: the proxy ends when CMD ends
//   token-in-header-*   a valid token in X-Authorization, X-Auth-Token, X-Access-Token, Token,
//                       Authorization2, X-Forwarded-Authorization, Referer: not on disk, not in a report
//   token-in-path       a valid token as the resource server id in the path
//   secret-in-body      the client secret just sent to /oauth/token, put into session_metadata
//   deep-body           a request body nested 100,000 deep: the rest of the journal still judged by validate
//   large-entry         a HAR with one 100 MB response body: validate's peak memory (limit 300 MB)
//   empty-journal, garbage-journal, garbage-middle, cut-short-journal: validate's exit code (2, 2, 2, 0/1)
import { spawn } from 'node:child_process';
import { createWriteStream, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import { packageRoot } from '../core/paths.ts';
import { startReference } from '../reference/index.ts';

const BIN = join(packageRoot, 'bin', 'tmi-conform.js');
const dir = mkdtempSync(join(tmpdir(), 'tmi-hostile-'));
process.on('exit', () => rmSync(dir, { recursive: true, force: true }));

interface Outcome {
  name: string;
  held: boolean;
  detail: string;
}
const outcomes: Outcome[] = [];
const report = (name: string, held: boolean, detail: string) => {
  outcomes.push({ name, held, detail });
  process.stdout.write(`${held ? 'held  ' : 'BROKEN'} ${name.padEnd(34)} ${detail}\n`);
};

const cleanEnv = () => Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('TMI_') && k !== 'GITHUB_STEP_SUMMARY'));

interface Proxy {
  url: string;
  harPath: string;
  reportDir: string;
  exited: Promise<{ code: number | null; at: number }>;
  kill(signal: NodeJS.Signals): void;
}

async function startProxy(name: string, target: string, extra: string[] = []): Promise<Proxy> {
  const harPath = join(dir, `${name}.har`);
  const reportDir = join(dir, `${name}-reports`);
  const child = spawn(
    process.execPath,
    [
      BIN,
      'proxy',
      '--target',
      target,
      '--listen',
      '127.0.0.1:0',
      '--record',
      harPath,
      '--report-dir',
      reportDir,
      '--status-interval',
      '0',
      '--upstream-timeout',
      '5',
      ...extra,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'], env: cleanEnv() },
  );
  const exited = new Promise<{ code: number | null; at: number }>((resolve) => child.once('exit', (code) => resolve({ code, at: Date.now() })));
  // Bounded: a proxy that does not stop is killed, and the case says so.
  const guard = setTimeout(() => child.kill('SIGKILL'), 30_000);
  void exited.then(() => clearTimeout(guard));
  let out = '';
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (c) => {
      out += c;
      const match = /listening on (\S+)/.exec(out);
      if (match) resolve(match[1]!);
    });
    void exited.then(({ code }) => reject(new Error(`proxy exited ${code} before it listened`)));
  });
  return { url, harPath, reportDir, exited, kill: (signal) => child.kill(signal) };
}

/** Five pipelined requests on one connection, the first bytes of the answer read, then a reset. */
async function pipelineThenReset(url: string): Promise<void> {
  const { hostname, port } = new URL(url);
  const socket = connect(Number(port), hostname);
  socket.on('error', () => {});
  await once(socket, 'connect');
  let requests = '';
  for (let i = 0; i < 5; i++) requests += `GET /api/v2/resource-servers/rs_${i} HTTP/1.1\r\nHost: x\r\n\r\n`;
  socket.write(requests);
  await once(socket, 'data');
  socket.resetAndDestroy();
}

/** Every file the proxy wrote (journal, HAR, reports), as one text. */
function writtenText(proxy: Proxy): string {
  const files = [
    proxy.harPath,
    `${proxy.harPath}.jsonl`,
    ...(existsSync(proxy.reportDir) ? readdirSync(proxy.reportDir).map((f) => join(proxy.reportDir, f)) : []),
  ];
  return files
    .filter((f) => existsSync(f))
    .map((f) => readFileSync(f, 'utf8'))
    .join('\n');
}

async function stopCases(target: string): Promise<void> {
  const proxy = await startProxy('stop-after-reset', target);
  await pipelineThenReset(proxy.url);
  const sent = Date.now();
  proxy.kill('SIGTERM');
  const { code, at } = await proxy.exited;
  const written = existsSync(proxy.harPath) && existsSync(join(proxy.reportDir, 'report.json'));
  report(
    'stop-after-reset',
    code === 0 && at - sent <= 6_000 && written,
    `exit ${code} after ${at - sent} ms (bound 6000 ms); HAR and reports ${written ? 'written' : 'MISSING'}`,
  );

  const harPath = join(dir, 'command.har');
  const reportDir = join(dir, 'command-reports');
  const client = `const { connect } = require('node:net'); const u = new URL(process.env.TMI_PROXY_URL); const s = connect(Number(u.port), u.hostname, () => { let r = ''; for (let i = 0; i < 5; i++) r += 'GET /api/v2/resource-servers/rs_' + i + ' HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n'; s.write(r); s.once('data', () => { s.resetAndDestroy(); setTimeout(() => process.exit(0), 50); }); });`;
  const started = Date.now();
  const child = spawn(
    process.execPath,
    [
      BIN,
      'proxy',
      '--target',
      target,
      '--listen',
      '127.0.0.1:0',
      '--record',
      harPath,
      '--report-dir',
      reportDir,
      '--status-interval',
      '0',
      '--upstream-timeout',
      '5',
      '--',
      process.execPath,
      '-e',
      client,
    ],
    { stdio: 'ignore', env: cleanEnv() },
  );
  const guard = setTimeout(() => child.kill('SIGKILL'), 30_000);
  const [exit] = (await once(child, 'exit')) as [number | null, NodeJS.Signals | null];
  clearTimeout(guard);
  report(
    'stop-with-command',
    exit !== null && existsSync(harPath),
    `exit ${exit ?? 'killed'} ${Date.now() - started} ms after start; HAR ${existsSync(harPath) ? 'written' : 'MISSING'}`,
  );
}

async function secretCases(ref: Awaited<ReturnType<typeof startReference>>): Promise<void> {
  const proxy = await startProxy('secrets', ref.origin);
  const { client_id, client_secret } = ref.clients.full;
  const tokenResponse = await fetch(`${proxy.url}/oauth/token/`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'client_credentials', client_id, client_secret, audience: `${ref.origin}/api/v2/` }),
  });
  const token = ((await tokenResponse.json()) as { access_token: string }).access_token;
  const signature = token.split('.')[2]!;
  const rs = ref.config().fixtures.resource_servers[0]!;
  const session = ref.config().fixtures.sessions[0]!;
  const headerCases = ['X-Authorization', 'X-Auth-Token', 'X-Access-Token', 'Token', 'Authorization2', 'X-Forwarded-Authorization'];
  for (const name of headerCases)
    await (await fetch(`${proxy.url}/api/v2/resource-servers/${rs}`, { headers: { authorization: `Bearer ${token}`, [name]: `Bearer ${token}` } })).text();
  await (
    await fetch(`${proxy.url}/api/v2/resource-servers/${rs}`, {
      headers: { authorization: `Bearer ${token}`, referer: `https://app.example.com/callback?access_token=${token}` },
    })
  ).text();
  await (await fetch(`${proxy.url}/api/v2/resource-servers/${token}`, { headers: { authorization: `Bearer ${token}` } })).text();
  await (
    await fetch(`${proxy.url}/api/v2/sessions/${session.id}`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ session_metadata: { note: client_secret } }),
    })
  ).text();
  await (
    await fetch(`${proxy.url}/api/v2/sessions/${session.id}`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ session_metadata: session.session_metadata ?? null }),
    })
  ).text();
  proxy.kill('SIGTERM');
  await proxy.exited;
  const text = writtenText(proxy);
  // Each case on its own: where the signature or the secret is found, and how often.
  const leaks = (needle: string) => text.split(needle).length - 1;
  report(
    'token-in-headers',
    leaks(signature) === 0,
    `the token's signature appears ${leaks(signature)} time(s) in the journal, HAR and reports (headers ${headerCases.join(', ')}, Referer, the path)`,
  );
  report('secret-in-body', leaks(client_secret) === 0, `the client secret appears ${leaks(client_secret)} time(s)`);
}

async function deepBodyCase(ref: Awaited<ReturnType<typeof startReference>>): Promise<void> {
  const proxy = await startProxy('deep', ref.origin);
  const rs = ref.config().fixtures.resource_servers[0]!;
  const deep = '['.repeat(100_000) + ']'.repeat(100_000);
  await (await fetch(`${proxy.url}/api/v2/sessions/sess_x`, { method: 'PATCH', headers: { 'content-type': 'application/json' }, body: deep })).text();
  await (await fetch(`${proxy.url}/api/v2/resource-servers/${rs}`)).text();
  proxy.kill('SIGTERM');
  await proxy.exited;
  const result = await validate([`${proxy.harPath}.jsonl`]);
  report(
    'deep-body',
    result.code !== 2 && !/internal error/.test(result.stderr),
    `validate exit ${result.code}${result.stderr ? `: ${result.stderr.trim().split('\n')[0]}` : ''}`,
  );
}

async function largeEntryCase(): Promise<void> {
  const path = join(dir, 'large.har');
  const out = createWriteStream(path);
  const head = (body: string) => ({
    startedDateTime: new Date().toISOString(),
    time: 1,
    request: {
      method: 'GET',
      url: 'https://tenant.example.com/api/v2/resource-servers/rs_1',
      httpVersion: 'HTTP/1.1',
      headers: [],
      queryString: [],
      cookies: [],
      headersSize: -1,
      bodySize: 0,
    },
    response: {
      status: 200,
      statusText: 'OK',
      httpVersion: 'HTTP/1.1',
      headers: [{ name: 'content-type', value: 'application/json' }],
      cookies: [],
      content: { size: body.length, mimeType: 'application/json', text: body },
      redirectURL: '',
      headersSize: -1,
      bodySize: body.length,
    },
    cache: {},
    timings: { send: 0, wait: 1, receive: 0 },
  });
  const prefix = JSON.stringify({ log: { version: '1.2', creator: { name: 'hostile', version: '1' }, entries: [head('BODY')] } });
  const [before, after] = prefix.split('"BODY"') as [string, string];
  out.write(`${before}"{\\"name\\":\\"`);
  const chunk = 'x'.repeat(1 << 20);
  for (let i = 0; i < 100; i++) if (!out.write(chunk)) await once(out, 'drain');
  out.write(`\\"}"${after}`);
  out.end();
  await once(out, 'finish');
  const result = await validate([path], true);
  const mb = Math.round((result.maxRssKb ?? 0) / 1024);
  report(
    'large-entry',
    result.code !== 2 || !/internal error/.test(result.stderr) ? mb > 0 && mb < 300 : false,
    `a ${Math.round(statSync(path).size / 1e6)} MB HAR, one entry: validate exit ${result.code}, peak RSS ${mb} MB (limit 300)${result.stderr ? `; ${result.stderr.trim().split('\n')[0]}` : ''}`,
  );
}

async function journalCases(): Promise<void> {
  const cases: Array<[string, string, (code: number | null) => boolean, string]> = [
    ['empty-journal', '', (c) => c === 2, 'exit 2'],
    ['garbage-journal', 'garbage without a newline', (c) => c === 2, 'exit 2'],
    [
      'garbage-middle',
      `${JSON.stringify({ startedDateTime: new Date().toISOString(), request: { method: 'GET', url: 'https://t.example.com/api/v2/resource-servers/a', headers: [] }, response: { status: 200, headers: [], content: { text: '{}' } } })}\nnot json\n${JSON.stringify({ startedDateTime: new Date().toISOString(), request: { method: 'GET', url: 'https://t.example.com/api/v2/resource-servers/b', headers: [] }, response: { status: 200, headers: [], content: { text: '{}' } } })}\n`,
      (c) => c === 2,
      'exit 2',
    ],
  ];
  for (const [name, text, ok, wanted] of cases) {
    const path = join(dir, `${name}.jsonl`);
    writeFileSync(path, text);
    const result = await validate([path]);
    report(
      name,
      ok(result.code) && !/internal error/.test(result.stderr),
      `validate exit ${result.code} (wanted: ${wanted})${result.stderr ? `: ${result.stderr.trim().split('\n')[0]}` : ''}`,
    );
  }
}

/** Runs `tmi-conform validate`; with `measure`, its peak resident memory too (the kernel's figure for the child). */
async function validate(files: string[], measure = false): Promise<{ code: number | null; stderr: string; maxRssKb?: number }> {
  const reportDir = join(dir, `validate-${outcomes.length}`);
  // process.resourceUsage().maxRSS of the validate process itself, printed as it exits.
  const preload = join(dir, 'max-rss.cjs');
  if (measure) writeFileSync(preload, "process.on('exit', () => process.stderr.write('\\nmax-rss-kb ' + process.resourceUsage().maxRSS + '\\n'));");
  const child = spawn(process.execPath, [...(measure ? ['--require', preload] : []), BIN, 'validate', ...files, '--report-dir', reportDir], {
    stdio: ['ignore', 'ignore', 'pipe'],
    env: cleanEnv(),
  });
  let stderr = '';
  child.stderr.on('data', (c) => (stderr += c));
  const guard = setTimeout(() => child.kill('SIGKILL'), 120_000);
  const [code] = (await once(child, 'exit')) as [number | null];
  clearTimeout(guard);
  const rss = /max-rss-kb (\d+)/.exec(stderr);
  stderr = stderr.replace(/\n?max-rss-kb \d+\n?/, '');
  return { code, stderr, ...(rss ? { maxRssKb: Number(rss[1]) } : {}) };
}

const ref = await startReference({ rateLimit: false });
try {
  await stopCases(ref.origin);
  await secretCases(ref);
  await deepBodyCase(ref);
  await journalCases();
  await largeEntryCase();
} finally {
  await ref.close();
}
const broken = outcomes.filter((o) => !o.held).length;
process.stdout.write(`\n${outcomes.length - broken} held, ${broken} broken\n`);
