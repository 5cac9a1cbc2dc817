// The proxy and serve started the way CI scripts start them: through `sh -c` and `npm exec`
// (the package's own bin), stopped by a SIGTERM that reaches the launcher only. npm and sh die
// at once and never pass the signal on; the orphaned proxy must notice its launcher is gone and
// stop exactly as on SIGTERM: the exchange in flight finishes, then the HAR and the reports are
// written. A SIGTERM to the proxy itself still works as before.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Report } from '../reports/model.ts';
import { readJournal } from './helpers/proxy.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const BIN = join(ROOT, 'bin', 'tmi-conform.js');
const dir = mkdtempSync(join(tmpdir(), 'tmi-proxy-launch-'));
/** GITHUB_STEP_SUMMARY empty: the reports must not reach a CI job's summary from here. */
const ENV = { ...process.env, GITHUB_STEP_SUMMARY: '' };
/** How long a process may take to notice its launcher went away and to finish (250 ms polling, a worker to stop). */
const STOP_TIMEOUT_MS = 15_000;

/**
 * A target that answers every request with a small JSON body, `/slow` after SLOW_MS; paths
 * the document does not cover, so the verdict is about the lifecycle, not the rules.
 */
const SLOW_MS = 1_000;
let target: Server;
let targetOrigin: string;
let slowReached: () => void = () => {};

beforeAll(async () => {
  target = createServer((req, res) => {
    const answer = () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ path: req.url }));
    };
    if (req.url === '/slow') {
      slowReached();
      setTimeout(answer, SLOW_MS);
    } else answer();
  });
  await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve));
  targetOrigin = `http://127.0.0.1:${(target.address() as AddressInfo).port}`;
});

afterAll(async () => {
  target.closeAllConnections();
  await new Promise((resolve) => target.close(resolve));
  rmSync(dir, { recursive: true, force: true });
});

interface Launched {
  launcher: ChildProcess;
  /** The URL from the "listening on" line. */
  origin: Promise<string>;
  /** Resolves once every process writing to the launcher's stdout and stderr has closed them (the proxy has exited). */
  outputClosed: Promise<{ stdout: string; stderr: string }>;
}

/** Spawns `command args`, whose stdout and stderr the proxy (or serve) inherits. */
function launch(command: string, args: string[]): Launched {
  const launcher = spawn(command, args, { cwd: ROOT, env: ENV, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  let resolveOrigin!: (origin: string) => void;
  let rejectOrigin!: (error: Error) => void;
  const origin = new Promise<string>((resolve, reject) => {
    resolveOrigin = resolve;
    rejectOrigin = reject;
  });
  launcher.stdout!.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
    const match = /listening on (\S+)/.exec(stdout);
    if (match) resolveOrigin(match[1]!);
  });
  launcher.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const closed = (stream: NodeJS.ReadableStream) => new Promise<void>((resolve) => stream.once('close', resolve));
  const outputClosed = Promise.all([closed(launcher.stdout!), closed(launcher.stderr!)]).then(() => {
    rejectOrigin(new Error(`no "listening on" line; stderr: ${stderr}`));
    return { stdout, stderr };
  });
  return { launcher, origin, outputClosed };
}

/** Pids of processes whose command line holds `marker` (Linux /proc; elsewhere none). */
function pidsWith(marker: string): number[] {
  if (!existsSync('/proc/self/cmdline')) return [];
  const pids: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${name}/cmdline`, 'utf8').includes(marker)) pids.push(Number(name));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

/** Fails the test if the output is not closed in time, and never leaves a process behind. */
async function closedInTime(launched: Launched, marker: string): Promise<{ stdout: string; stderr: string }> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>(
    (_, reject) => (timer = setTimeout(() => reject(new Error(`still running ${STOP_TIMEOUT_MS} ms after its launcher went away`)), STOP_TIMEOUT_MS)),
  );
  try {
    return await Promise.race([launched.outputClosed, late]);
  } finally {
    clearTimeout(timer);
    for (const pid of pidsWith(marker)) process.kill(pid, 'SIGKILL');
  }
}

/** Sends QUICK requests, leaves one to /slow in flight, then SIGTERMs the launcher only. */
async function trafficThenKillLauncher(launched: Launched): Promise<{ slow: Promise<{ status: number; body: unknown }> }> {
  const origin = await launched.origin;
  for (let i = 0; i < QUICK; i++) {
    const response = await fetch(`${origin}/quick/${i}`);
    expect(response.status).toBe(200);
    await response.text();
  }
  const reached = new Promise<void>((resolve) => (slowReached = resolve));
  const slow = fetch(`${origin}/slow`).then(async (response) => ({ status: response.status, body: await response.json() }));
  await reached;
  launched.launcher.kill('SIGTERM');
  return { slow };
}

const QUICK = 4;

/** Everything the proxy writes at stop, with every exchange sent (QUICK + the slow one). */
function expectCompleteRecording(harPath: string, reportDir: string): void {
  const journal = readJournal(`${harPath}.jsonl`);
  expect(journal.map((e) => new URL(e.request!.url!).pathname)).toEqual([...Array.from({ length: QUICK }, (_, i) => `/quick/${i}`), '/slow']);
  // The exchange in flight when the launcher died finished: its response is recorded, no error.
  const slow = journal[QUICK]!;
  expect(slow.response!.status).toBe(200);
  expect(slow._error).toBeUndefined();
  const har = JSON.parse(readFileSync(harPath, 'utf8')) as { log: { entries: unknown[] } };
  expect(har.log.entries).toHaveLength(QUICK + 1);
  const report = JSON.parse(readFileSync(join(reportDir, 'report.json'), 'utf8')) as Report;
  expect(report).toMatchObject({ kind: 'proxy', traffic: { exchanges: QUICK + 1 } });
}

describe('proxy: its launcher goes away', () => {
  it('through sh -c: SIGTERM to sh only; the proxy finishes the exchange in flight, writes HAR, journal and reports', async () => {
    const harPath = join(dir, 'sh.har');
    const reportDir = join(dir, 'sh-reports');
    // "; :" keeps sh waiting as the proxy's parent (a lone command may be exec'd in its place).
    const script = `"${process.execPath}" "${BIN}" proxy --target ${targetOrigin} --listen 127.0.0.1:0 --record "${harPath}" --report-dir "${reportDir}" --status-interval 0; :`;
    const launched = launch('sh', ['-c', script]);
    const { slow } = await trafficThenKillLauncher(launched);
    const { stdout, stderr } = await closedInTime(launched, harPath);
    expect(await slow).toEqual({ status: 200, body: { path: '/slow' } });
    expect(stderr).toMatch(/its launcher \(pid \d+\) went away: stopping as on SIGTERM/);
    expect(stderr).not.toMatch(/internal error|\n\s+at /);
    // The summary is printed after the HAR and reports are written, right before exit 0.
    expect(stdout).toContain(`${QUICK + 1} exchanges`);
    expect(stdout).toContain('verdict: conforming');
    expectCompleteRecording(harPath, reportDir);
  }, 30_000);

  it('through npm exec of this package: SIGTERM to npm only; same clean stop', async () => {
    const harPath = join(dir, 'npm.har');
    const reportDir = join(dir, 'npm-reports');
    // --offline: the package's own bin, linked from this checkout; nothing is fetched.
    const launched = launch('npm', [
      'exec',
      '--offline',
      '--',
      'tmi-conform',
      'proxy',
      '--target',
      targetOrigin,
      '--listen',
      '127.0.0.1:0',
      '--record',
      harPath,
      '--report-dir',
      reportDir,
      '--status-interval',
      '0',
    ]);
    const { slow } = await trafficThenKillLauncher(launched);
    const { stdout, stderr } = await closedInTime(launched, harPath);
    expect(await slow).toEqual({ status: 200, body: { path: '/slow' } });
    expect(stderr).toMatch(/its launcher \(pid \d+\) went away: stopping as on SIGTERM/);
    expect(stdout).toContain('verdict: conforming');
    expectCompleteRecording(harPath, reportDir);
  }, 60_000);

  it('a SIGTERM to the proxy itself still stops it as before: exchange in flight finished, everything written, exit 0', async () => {
    const harPath = join(dir, 'direct.har');
    const reportDir = join(dir, 'direct-reports');
    const launched = launch(process.execPath, [
      BIN,
      'proxy',
      '--target',
      targetOrigin,
      '--listen',
      '127.0.0.1:0',
      '--record',
      harPath,
      '--report-dir',
      reportDir,
      '--status-interval',
      '0',
    ]);
    const exited = new Promise<number | null>((resolve) => launched.launcher.once('exit', (code) => resolve(code)));
    // Here the "launcher" is the proxy itself.
    const { slow } = await trafficThenKillLauncher(launched);
    const { stderr } = await closedInTime(launched, harPath);
    expect(await exited).toBe(0);
    expect(await slow).toEqual({ status: 200, body: { path: '/slow' } });
    expect(stderr).not.toContain('launcher');
    expectCompleteRecording(harPath, reportDir);
  }, 30_000);
});

describe('serve: its launcher goes away', () => {
  it('through sh -c: SIGTERM to sh only; serve closes its port and exits', async () => {
    const marker = join(dir, 'serve-marker');
    const script = `"${process.execPath}" "${BIN}" serve --listen 127.0.0.1:0 --config-out "${marker}"; :`;
    const launched = launch('sh', ['-c', script]);
    const origin = await launched.origin;
    expect((await fetch(`${origin}/api/v2/resource-servers/x`)).status).toBe(401);
    launched.launcher.kill('SIGTERM');
    const { stdout } = await closedInTime(launched, marker);
    expect(stdout).toMatch(/its launcher \(pid \d+\) went away\nstopping\n/);
    await expect(fetch(`${origin}/api/v2/resource-servers/x`)).rejects.toThrow();
  }, 30_000);
});
