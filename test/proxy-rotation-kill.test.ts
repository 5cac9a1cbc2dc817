// A proxy killed with SIGKILL while it runs with --report-interval: the reports on disk are whole
// (each file replaced by a rename) and at most one interval old, and validate over the journal's
// segments completes them: everything the reports counted, and what came after.
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Pool } from 'undici';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { claims, jwt } from '../fixtures/exchanges.ts';
import { startStubTarget } from '../fixtures/stub-target.ts';
import type { Report } from '../reports/model.ts';
import { runCli } from './helpers/cli.ts';

const BIN = fileURLToPath(new URL('../bin/tmi-conform.js', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'tmi-proxy-kill-'));
const INTERVAL_MS = 1000;
/** What a loaded machine may add to the interval before the timer runs and the files are renamed. */
const SCHEDULING_SLACK_MS = 500;

let target: Awaited<ReturnType<typeof startStubTarget>>;

beforeAll(async () => {
  target = await startStubTarget();
});

afterAll(async () => {
  await target?.close();
  rmSync(dir, { recursive: true, force: true });
});

const TOKEN = jwt(claims());

/** Sends requests over 4 keep-alive connections until `until()` says stop; resolves with how many were answered. */
async function sendWhile(origin: string, until: () => boolean): Promise<number> {
  const pool = new Pool(origin, { connections: 4, pipelining: 1 });
  let answered = 0;
  let next = 0;
  const connection = async () => {
    while (!until()) {
      const i = next++;
      try {
        const { body } = await pool.request(
          i % 2 === 0
            ? { method: 'GET', path: `/api/v2/resource-servers/rs_${i % 5}`, headers: { authorization: `Bearer ${TOKEN}` } }
            : {
                method: 'PATCH',
                path: `/api/v2/sessions/sess_${i % 3}`,
                headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
                body: JSON.stringify({ session_metadata: { n: String(i) } }),
              },
        );
        await body.dump();
        answered++;
      } catch {
        return; // the proxy is gone
      }
    }
  };
  await Promise.all([connection(), connection(), connection(), connection()]);
  await pool.destroy();
  return answered;
}

const runValidate = (args: string[]) => runCli(['validate', ...args]);

it('kill -9 with --report-interval 1: the reports parse and are at most one interval old; validate over the segments completes them', {
  timeout: 60_000,
}, async () => {
  const segments = join(dir, 'journal');
  const reportDir = join(dir, 'reports');
  const child = spawn(
    process.execPath,
    [
      BIN,
      'proxy',
      '--target',
      target.origin,
      '--listen',
      '127.0.0.1:0',
      '--status-interval',
      '0',
      '--journal',
      join(segments, 'traffic.jsonl'),
      '--rotate-size',
      '64KB',
      '--report-interval',
      '1',
      '--report-dir',
      reportDir,
    ],
    {
      env: { ...process.env, GITHUB_STEP_SUMMARY: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on('close', (_code, signal) => resolve(signal)));
  const origin = await new Promise<string>((resolve, reject) => {
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      const line = /^listening on (http:\/\/\S+)$/m.exec(stdout);
      if (line) resolve(line[1]!);
    });
    void exited.then(() => reject(new Error(`the proxy ended before listening: ${stderr}`)));
  });

  // Traffic for well over an interval, then the kill in the middle of it.
  const startedAt = Date.now();
  let killedAt = 0;
  const sending = sendWhile(origin, () => killedAt > 0);
  while (Date.now() - startedAt < 2.6 * INTERVAL_MS) await new Promise((resolve) => setTimeout(resolve, 50));
  killedAt = Date.now();
  child.kill('SIGKILL');
  expect(await exited).toBe('SIGKILL');
  expect(await sending).toBeGreaterThan(0);
  expect(stderr).toContain('(rewritten every 1 s)');

  // Each report is whole, and was written at most one interval before the kill.
  const reportPath = join(reportDir, 'report.json');
  expect(killedAt - statSync(reportPath).mtimeMs).toBeLessThanOrEqual(INTERVAL_MS + SCHEDULING_SLACK_MS);
  const live = JSON.parse(readFileSync(reportPath, 'utf8')) as Report;
  expect(live.kind).toBe('proxy');
  expect(live.traffic!.exchanges).toBeGreaterThan(0);
  expect(readFileSync(join(reportDir, 'junit.xml'), 'utf8')).toMatch(/<\/testsuites>\s*$/);
  expect(readFileSync(join(reportDir, 'report.html'), 'utf8')).toMatch(/<\/html>\s*$/);
  expect(readFileSync(join(reportDir, 'report.md'), 'utf8').length).toBeGreaterThan(0);

  // The segments: more than one, every line but perhaps a cut last one whole.
  const names = readdirSync(segments).sort();
  expect(names.length).toBeGreaterThan(1);
  const lines = names.flatMap((name) =>
    readFileSync(join(segments, name), 'utf8')
      .split('\n')
      .filter((line) => line !== ''),
  );
  let whole = 0;
  for (const line of lines) {
    try {
      JSON.parse(line);
      whole++;
    } catch {
      // a line cut short by the kill: only the very last one may be
    }
  }
  expect(lines.length - whole).toBeLessThanOrEqual(1);

  // validate completes the reports: all they counted, and what came after, with the same rules.
  const completed = join(dir, 'validated');
  const validated = await runValidate([segments, '--report-dir', completed]);
  expect(validated.code, validated.stderr).toBe(0);
  const report = JSON.parse(readFileSync(join(completed, 'report.json'), 'utf8')) as Report;
  expect(report.traffic!.exchanges).toBe(whole);
  expect(report.traffic!.exchanges).toBeGreaterThanOrEqual(live.traffic!.exchanges);
  expect(report.passed).toBe(live.passed);
  for (const requirement of live.requirements) {
    const after = report.requirements.find((r) => r.id === requirement.id)!;
    expect(after.counts.exchanges, requirement.id).toBeGreaterThanOrEqual(requirement.counts.exchanges);
  }
});
