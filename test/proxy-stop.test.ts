// The proxy always stops when told, whatever its clients do, and keeps its promises: the
// journal flushed, the HAR and the reports written, every exchange cut short recorded as such.
// The hostile case: one connection that sends five pipelined requests, reads a few bytes and
// resets. Node never closes the responses queued behind the first, so without care the proxy
// would wait for them forever.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resourceServer } from '../fixtures/exchanges.ts';
import { startStubTarget } from '../fixtures/stub-target.ts';
import { readJournal } from './helpers/proxy.ts';

const BIN = fileURLToPath(new URL('../bin/tmi-conform.js', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'tmi-proxy-stop-'));
let target: Awaited<ReturnType<typeof startStubTarget>>;
/** A target that never answers: an exchange to it stays in flight until the proxy cuts it. */
let silent: Server;
let silentOrigin: string;
/**
 * A target that answers the first resource server at once and the others 300 ms later: the
 * client has reset long before, so the responses queued behind the first are surely cut short
 * (with a fast target, all five may reach the socket before the reset does).
 */
let slow: Server;
let slowOrigin: string;

beforeAll(async () => {
  target = await startStubTarget();
  silent = createServer(() => {});
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  silentOrigin = `http://127.0.0.1:${(silent.address() as AddressInfo).port}`;
  slow = createServer((req, res) => {
    req.resume();
    const id = (req.url ?? '').split('/').at(-1) ?? '';
    const answer = () => {
      const text = JSON.stringify(resourceServer({ id }));
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) }).end(text);
    };
    if (id === 'rs_0') answer();
    else setTimeout(answer, 300);
  });
  await new Promise<void>((resolve) => slow.listen(0, '127.0.0.1', resolve));
  slowOrigin = `http://127.0.0.1:${(slow.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await target.close();
  silent.closeAllConnections();
  await new Promise((resolve) => silent.close(resolve));
  slow.closeAllConnections();
  await new Promise((resolve) => slow.close(resolve));
  rmSync(dir, { recursive: true, force: true });
});

const PIPELINED = 5;

/** Five pipelined requests on one connection; reads the first bytes of the answer, then resets. */
const PIPELINE_THEN_RESET = `
const { connect } = require('node:net');
const { port, hostname } = new URL(process.argv[1]);
const socket = connect(Number(port), hostname, () => {
  let requests = '';
  for (let i = 0; i < ${PIPELINED}; i++) requests += 'GET /api/v2/resource-servers/rs_' + i + ' HTTP/1.1\\r\\nHost: x\\r\\nAuthorization: Bearer not-a-jwt\\r\\n\\r\\n';
  socket.write(requests);
  socket.once('data', () => { socket.resetAndDestroy(); setTimeout(() => process.exit(0), 50); });
});
`;

interface Launched {
  child: ChildProcess;
  url: string;
  harPath: string;
  reportDir: string;
  stderr: () => string;
  exited: Promise<{ code: number | null; at: number }>;
}

async function launch(name: string, proxyTarget: string, extra: string[] = []): Promise<Launched> {
  const harPath = join(dir, `${name}.har`);
  const reportDir = join(dir, `${name}-reports`);
  const child = spawn(
    process.execPath,
    [
      BIN,
      'proxy',
      '--target',
      proxyTarget,
      '--listen',
      '127.0.0.1:0',
      '--record',
      harPath,
      '--report-dir',
      reportDir,
      '--status-interval',
      '0',
      '--upstream-timeout',
      '30',
      ...extra,
    ],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('VITEST') && !k.startsWith('TMI_'))),
    },
  );
  let stdout = '';
  let stderr = '';
  child.stderr!.on('data', (c) => (stderr += c));
  const exited = new Promise<{ code: number | null; at: number }>((resolve) => child.once('exit', (code) => resolve({ code, at: Date.now() })));
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', (c) => {
      stdout += c;
      const match = /listening on (\S+)/.exec(stdout);
      if (match) resolve(match[1]!);
    });
    void exited.then(({ code }) => reject(new Error(`proxy exited ${code}: ${stderr}`)));
  });
  return { child, url, harPath, reportDir, stderr: () => stderr, exited };
}

function pipelineThenReset(url: string): Promise<void> {
  const child = spawn(process.execPath, ['-e', PIPELINE_THEN_RESET, url], { stdio: 'ignore' });
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

/** Kills the proxy if a test left it running: a hung proxy must fail its test, not the whole run. */
function killLater(launched: Launched): void {
  void new Promise((resolve) => setTimeout(resolve, 20_000)).then(() => launched.child.kill('SIGKILL'));
}

describe('the proxy stops whatever its clients did', () => {
  it('a pipelined-then-reset client, then SIGTERM: it exits within the bound, with the HAR, the reports and every exchange recorded', async () => {
    const proxy = await launch('pipelined', slowOrigin);
    killLater(proxy);
    await pipelineThenReset(proxy.url);
    const sent = Date.now();
    proxy.child.kill('SIGTERM');
    const { code, at } = await proxy.exited;
    expect(code, proxy.stderr()).toBe(0);
    // Far inside the promised bound (upstream timeout + 1 s): nothing waits for the reset connection.
    expect(at - sent).toBeLessThan(5_000);
    expect(existsSync(proxy.harPath)).toBe(true);
    expect(existsSync(join(proxy.reportDir, 'report.json'))).toBe(true);
    const entries = readJournal(`${proxy.harPath}.jsonl`);
    expect(entries).toHaveLength(PIPELINED);
    // The responses still queued when the client reset are recorded as cut short: the target
    // answers all but the first long after the reset.
    expect(entries.filter((e) => (e as { _error?: string })._error !== undefined).length).toBeGreaterThanOrEqual(1);
  });

  it('the same under -- CMD: when the command ends, the proxy ends too', async () => {
    const harPath = join(dir, 'command.har');
    const reportDir = join(dir, 'command-reports');
    const script = PIPELINE_THEN_RESET.replace('process.argv[1]', 'process.env.TMI_PROXY_URL');
    const child = spawn(
      process.execPath,
      [
        BIN,
        'proxy',
        '--target',
        target.origin,
        '--listen',
        '127.0.0.1:0',
        '--record',
        harPath,
        '--report-dir',
        reportDir,
        '--status-interval',
        '0',
        '--upstream-timeout',
        '30',
        '--',
        process.execPath,
        '-e',
        script,
      ],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
        env: Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('VITEST') && !k.startsWith('TMI_'))),
      },
    );
    let stderr = '';
    child.stderr.on('data', (c) => (stderr += c));
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    clearTimeout(timer);
    // Not killed: 0 or 1 by the verdict on what the command sent (its tokens are not JWTs: a client finding only).
    expect([0, 1], stderr).toContain(code);
    expect(existsSync(harPath)).toBe(true);
    expect(existsSync(join(reportDir, 'report.json'))).toBe(true);
    expect(readJournal(`${harPath}.jsonl`)).toHaveLength(PIPELINED);
  });

  it('a second SIGTERM cuts an exchange in flight short at once, and it is recorded as cut short', async () => {
    const proxy = await launch('second-signal', silentOrigin);
    killLater(proxy);
    // An exchange the target will never answer (the upstream timeout is 30 s).
    const socket = connect(Number(new URL(proxy.url).port), '127.0.0.1');
    socket.on('error', () => {});
    socket.write('GET /api/v2/resource-servers/rs_1 HTTP/1.1\r\nHost: x\r\n\r\n');
    await new Promise((resolve) => setTimeout(resolve, 300));
    proxy.child.kill('SIGTERM');
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(proxy.child.exitCode).toBeNull(); // the first only stops accepting and lets it finish
    const sent = Date.now();
    proxy.child.kill('SIGTERM');
    const { code, at } = await proxy.exited;
    socket.destroy();
    expect(code, proxy.stderr()).toBe(0);
    expect(at - sent).toBeLessThan(3_000);
    const entries = readJournal(`${proxy.harPath}.jsonl`);
    expect(entries).toHaveLength(1);
    expect((entries[0] as { _error?: string })._error).toMatch(/stopped before the exchange finished/);
    expect(existsSync(proxy.harPath)).toBe(true);
  });
});
