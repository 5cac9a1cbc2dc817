// Soak: 20,000 requests at full speed over a few keep-alive connections through a proxy child
// process. Every one is recorded, memory stays bounded, and a proxy killed with SIGKILL in the
// middle of the traffic leaves a journal whose lines all parse (but perhaps a cut last one),
// that holds all but the last few finished exchanges, and that validate accepts.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Pool } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Report } from '../reports/model.ts';
import { claims, jwt } from '../fixtures/exchanges.ts';
import { startStubTarget } from '../fixtures/stub-target.ts';

const BIN = fileURLToPath(new URL('../bin/tmi-conform.js', import.meta.url));
const REQUESTS = 20_000;
const CONNECTIONS = 4;
const MiB = 1024 * 1024;

interface ProxyChild {
  child: ChildProcess;
  origin: string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>;
}

async function startProxyChild(args: string[]): Promise<ProxyChild> {
  const child = spawn(process.execPath, [BIN, 'proxy', '--listen', '127.0.0.1:0', '--status-interval', '0', ...args], {
    env: { ...process.env, GITHUB_STEP_SUMMARY: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>((resolve) =>
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr })),
  );
  const origin = await new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      const line = /^listening on (http:\/\/\S+)$/m.exec(stdout);
      if (line) resolve(line[1]!);
    });
    void exited.then(({ stderr }) => reject(new Error(`proxy exited before listening: ${stderr}`)));
  });
  return { child, origin, exited };
}

/** Resident set size of a process (current and peak), from /proc. */
function memoryOf(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)![1]) * 1024;
  return { rss: kib('VmRSS'), peak: kib('VmHWM') };
}

const TOKEN = jwt(claims());

/** The mix the soak sends, request number `i`. */
function requestFor(i: number) {
  const headers = { authorization: `Bearer ${TOKEN}` };
  switch (i % 4) {
    case 0:
      return {
        method: 'PATCH' as const,
        path: `/api/v2/sessions/sess_${i % 3}`,
        headers: { ...headers, 'content-type': 'application/json' },
        body: JSON.stringify({ session_metadata: { n: String(i) } }),
      };
    case 1:
      return { method: 'DELETE' as const, path: `/api/v2/token-exchange-profiles/tep_soak_${i}`, headers };
    default:
      return { method: 'GET' as const, path: `/api/v2/resource-servers/rs_${i % 3}`, headers };
  }
}

/**
 * Sends `total` requests over CONNECTIONS keep-alive connections, one in flight per connection.
 * `onProgress(done)` after each completed response; stops early when it returns false.
 */
async function load(
  origin: string,
  total: number,
  onProgress: (done: number) => boolean = () => true,
): Promise<{ sent: number; done: number; failed: number }> {
  const pool = new Pool(origin, { connections: CONNECTIONS, pipelining: 1 });
  const counts = { sent: 0, done: 0, failed: 0 };
  let next = 0;
  let stop = false;
  const worker = async () => {
    while (!stop && next < total) {
      const i = next++;
      counts.sent++;
      try {
        const { statusCode, body } = await pool.request(requestFor(i));
        await body.dump();
        if (statusCode >= 300) throw new Error(`status ${statusCode}`);
        counts.done++;
        if (!onProgress(counts.done)) stop = true;
      } catch {
        counts.failed++;
        stop = true;
      }
    }
  };
  await Promise.all(Array.from({ length: CONNECTIONS }, worker));
  await pool.destroy();
  return counts;
}

describe('soak', () => {
  // A fast conforming target: the reference verifies an RS256 signature per request and would
  // set the pace instead of the proxy.
  let target: Awaited<ReturnType<typeof startStubTarget>>;
  const dir = mkdtempSync(join(tmpdir(), 'tmi-proxy-soak-'));

  beforeAll(async () => {
    target = await startStubTarget();
  });
  afterAll(async () => {
    await target?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it(`${REQUESTS} requests over ${CONNECTIONS} connections: every one recorded, memory bounded`, async () => {
    const journal = join(dir, 'soak.jsonl');
    const reportDir = join(dir, 'soak-reports');
    const proxy = await startProxyChild(['--target', target.origin, '--journal', journal, '--report-dir', reportDir]);
    let warm: { rss: number; peak: number } | undefined;
    const counts = await load(proxy.origin, REQUESTS, (done) => {
      if (done === 2_000) warm = memoryOf(proxy.child.pid!);
      return true;
    });
    const end = memoryOf(proxy.child.pid!);
    proxy.child.kill('SIGTERM');
    const { code, stdout } = await proxy.exited;

    expect(counts).toEqual({ sent: REQUESTS, done: REQUESTS, failed: 0 });
    expect(code).toBe(0);
    expect(stdout).toContain(`journal: ${journal} (${REQUESTS} entries)`);
    const lines = readFileSync(journal, 'utf8').trimEnd().split('\n');
    expect(lines).toHaveLength(REQUESTS);
    const report = JSON.parse(readFileSync(join(reportDir, 'report.json'), 'utf8')) as Report;
    expect(report.traffic?.exchanges).toBe(REQUESTS);
    expect(report.passed).toBe(true);
    // Nothing grows with the traffic: 18,000 more exchanges add far less than a leak of even a
    // few kilobytes each would (18,000 × 4 KiB = 70 MiB).
    expect(warm).toBeDefined();
    expect(end.rss - warm!.rss).toBeLessThan(48 * MiB);
    expect(end.peak).toBeLessThan(400 * MiB);
  });

  it('SIGKILL in the middle of the traffic: every finished exchange is on disk, every line parses, validate accepts the journal', async () => {
    const journal = join(dir, 'killed.jsonl');
    const proxy = await startProxyChild(['--target', target.origin, '--journal', journal, '--report-dir', join(dir, 'killed-reports')]);
    let doneBeforeKill = 0;
    const counts = await load(proxy.origin, REQUESTS, (done) => {
      if (done < 3_000) return true;
      doneBeforeKill = done;
      proxy.child.kill('SIGKILL');
      return false;
    });
    const { signal } = await proxy.exited;
    expect(signal).toBe('SIGKILL');

    const lines = readFileSync(journal, 'utf8').split('\n');
    if (lines.at(-1) === '') lines.pop();
    const whole = lines.filter((line, i) => {
      try {
        JSON.parse(line);
        return true;
      } catch {
        expect(i, 'only the last line may be cut').toBe(lines.length - 1);
        return false;
      }
    });
    // Finished exchanges reach the disk within a turn or two of the recorder thread: what a
    // crash loses is that short backlog, not a buffer. 16 round trips per connection is far
    // more than the recorder ever trails by when it is not starved of CPU.
    expect(whole.length).toBeGreaterThanOrEqual(doneBeforeKill - 16 * CONNECTIONS);
    expect(whole.length).toBeLessThanOrEqual(counts.sent);

    const validated = spawnSync(process.execPath, [BIN, 'validate', journal, '--report-dir', join(dir, 'killed-validated')], {
      encoding: 'utf8',
      env: { ...process.env, GITHUB_STEP_SUMMARY: '' },
    });
    expect(validated.status).toBe(0);
    expect(validated.stdout).toContain(`${whole.length} exchanges in 1 file(s)`);
  });
});
