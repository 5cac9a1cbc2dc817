// Running for days: the journal rotates into segments (by size, by age), closed segments can be
// gzipped, --append goes on in the last segment, file names say what they hold, and `validate`
// over the segments gives what the proxy's own reports and an unrotated run of the same
// traffic give, a rate-limit sequence that spans a rotation included.
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { proxyCommandRefusal, startProxyCommand } from './helpers/proxy-command.ts';
import { run as validate } from '../cli/validate.ts';
import { claims, jwt, resourceServer } from '../fixtures/exchanges.ts';
import type { Report } from '../reports/model.ts';

const dir = mkdtempSync(join(tmpdir(), 'tmi-proxy-rotation-'));
const TOKEN = jwt(claims());
/** One rate-limit window for the whole file: Reset near the requests' time, as the rules want. */
const RESET = Math.floor(Date.now() / 1000) + 60;

let target: Server;
let targetOrigin: string;

beforeAll(async () => {
  // Answers GET /api/v2/resource-servers/rs_N conformingly, with X-RateLimit-Remaining N: the
  // client decides the sequence, so a test can make it go up (RL-SEQUENCE) where it wants.
  target = createServer((req, res) => {
    const id = (req.url ?? '').split('/').at(-1) ?? '';
    const text = JSON.stringify(resourceServer({ id }));
    res.writeHead(200, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(text),
      'x-ratelimit-limit': '1000',
      'x-ratelimit-remaining': id.replace(/^rs_/, ''),
      'x-ratelimit-reset': String(RESET),
    });
    res.end(text);
  });
  await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve));
  targetOrigin = `http://127.0.0.1:${(target.address() as AddressInfo).port}`;
  // validate prints its summary on stdout: kept out of the test's output.
  vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
});

afterAll(async () => {
  vi.restoreAllMocks();
  await new Promise<void>((resolve) => target.close(() => resolve()));
  rmSync(dir, { recursive: true, force: true });
});

/** Runs the proxy in this process, sends GET rs_N for each N of `remaining` (a pause of `pauseMs` before the i-th where given), stops it. */
async function session(flags: string[], remaining: number[], pauses: Record<number, number> = {}): Promise<{ code: number; out: string; err: string }> {
  const proxy = await startProxyCommand(targetOrigin, flags);
  for (const [i, n] of remaining.entries()) {
    if (pauses[i] !== undefined) await new Promise((resolve) => setTimeout(resolve, pauses[i]));
    const response = await fetch(`${proxy.url}/api/v2/resource-servers/rs_${n}`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(response.status).toBe(200);
    await response.text();
    // Whole milliseconds apart: recorded times order the rate-limit sequence.
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
  return proxy.stop();
}

/** Starts the proxy expecting a refusal: the UsageError's message, exit code 2. */
const refusal = (flags: string[]) => proxyCommandRefusal(targetOrigin, ['--report-dir', join(dir, 'refused'), ...flags]);

const reportOf = (reportDir: string) => JSON.parse(readFileSync(join(reportDir, 'report.json'), 'utf8')) as Report;

/** What must be equal between two judgements of the same traffic: counts, each requirement's tally, the verdict. */
function verdictOf(report: Report) {
  return {
    exchanges: report.traffic?.exchanges,
    byOperation: report.traffic?.byOperation,
    summary: report.summary,
    passed: report.passed,
    requirements: Object.fromEntries(report.requirements.map((r) => [r.id, { status: r.status, exchanges: r.counts.exchanges, findings: r.counts.findings }])),
  };
}

/** Validates `files` into its own report directory; the exit code and the report. */
async function validated(name: string, files: string[]): Promise<{ code: number; report: Report }> {
  const reportDir = join(dir, `${name}-validated`);
  const code = await validate([...files, '--report-dir', reportDir]);
  return { code, report: reportOf(reportDir) };
}

const segmentsIn = (folder: string) => readdirSync(folder).sort();
const linesOf = (text: string) => text.split('\n').filter((line) => line !== '');

/** 60 requests, Remaining counting down: conforming traffic. */
const COUNTDOWN = Array.from({ length: 60 }, (_, i) => 900 - i);

describe('proxy: file names say what they hold', () => {
  it('--record names a HAR and --journal a journal; anything else is a usage error with the fix', async () => {
    expect(await refusal(['--record', join(dir, 'rec.jsonl')])).toBe(
      `proxy: --record writes a HAR file, and "${join(dir, 'rec.jsonl')}" names a journal: use --journal ${join(dir, 'rec.jsonl')} for the journal (and --record NAME.har for a HAR at stop too)`,
    );
    expect(await refusal(['--record', join(dir, 'rec.json')])).toBe(
      `proxy: --record writes a HAR file: name it with .har (e.g. --record ${join(dir, 'rec')}.har)`,
    );
    expect(await refusal(['--journal', join(dir, 'rec.har')])).toMatch(
      /^proxy: --journal writes the JSONL journal, and ".*rec\.har" names a HAR: use --record .*rec\.har for a HAR at stop, and --journal NAME\.jsonl for the journal$/,
    );
    expect(await refusal(['--journal', join(dir, 'rec.jsonl.gz')])).toBe(
      `proxy: the journal is written plain, so that a crash loses nothing: use --journal ${join(dir, 'rec.jsonl')} (with --rotate-* and --compress, closed segments are gzipped)`,
    );
    expect(await refusal(['--journal', join(dir, 'traffic.log')])).toBe(
      `proxy: --journal writes the JSONL journal (one HAR entry per line): name it with .jsonl (e.g. --journal ${join(dir, 'traffic')}.jsonl)`,
    );
  });

  it('the rotation flags: a HAR of the whole run is refused with rotation, --compress needs rotation, sizes and durations are checked', async () => {
    expect(await refusal(['--record', join(dir, 'r.har'), '--rotate-size', '1MB'])).toMatch(
      /^proxy: --record writes one HAR of the whole run at stop, which --rotate-\* is there to avoid: drop --record/,
    );
    expect(await refusal(['--compress'])).toBe(
      'proxy: --compress gzips the closed segments of a rotating journal: add --rotate-size SIZE and/or --rotate-interval DURATION',
    );
    expect(await refusal(['--rotate-size', '10 parsecs'])).toMatch(
      /^proxy: --rotate-size expects a size: bytes, or a number with KB, MB, GB .*; got "10 parsecs"$/,
    );
    expect(await refusal(['--rotate-size', '0'])).toMatch(/^proxy: --rotate-size expects a size/);
    expect(await refusal(['--rotate-interval', '0'])).toMatch(/^proxy: --rotate-interval expects a duration: a number with s, m, h or d .*; got "0"$/);
    expect(await refusal(['--report-interval', 'soon'])).toMatch(/^proxy: --report-interval expects a duration: .* \(0: never\); got "soon"$/);
  });
});

describe('proxy: rotation by size', () => {
  const rotated = join(dir, 'by-size');
  const limit = 8 * 1024;
  let live: Report;

  beforeAll(async () => {
    const { code } = await session(
      ['--journal', join(rotated, 'traffic.jsonl'), '--rotate-size', '8KiB', '--report-dir', join(dir, 'by-size-reports')],
      COUNTDOWN,
    );
    expect(code).toBe(0);
    live = reportOf(join(dir, 'by-size-reports'));
  });

  it('every segment is at most the limit, holds whole entries, and the names sort in the order written', () => {
    const names = segmentsIn(rotated);
    expect(names.length).toBeGreaterThan(3);
    expect(names).toEqual(names.map((_, i) => `traffic.${String(i + 1).padStart(6, '0')}.jsonl`));
    const remaining: string[] = [];
    for (const name of names) {
      const text = readFileSync(join(rotated, name), 'utf8');
      expect(statSync(join(rotated, name)).size).toBeLessThanOrEqual(limit);
      expect(text.endsWith('\n')).toBe(true);
      for (const line of linesOf(text)) remaining.push((JSON.parse(line) as { request: { url: string } }).request.url.split('rs_')[1]!);
    }
    expect(remaining).toEqual(COUNTDOWN.map(String));
  });

  it('validate over the segments (a folder, or named) gives the live report, and the report of the same traffic unrotated', async () => {
    const unrotated = join(dir, 'unrotated.jsonl');
    expect((await session(['--journal', unrotated, '--report-dir', join(dir, 'unrotated-reports')], COUNTDOWN)).code).toBe(0);
    const folder = await validated('by-size-folder', [rotated]);
    const named = await validated(
      'by-size-named',
      segmentsIn(rotated).map((name) => join(rotated, name)),
    );
    const whole = await validated('unrotated', [unrotated]);
    expect(folder.code).toBe(0);
    expect(verdictOf(folder.report)).toEqual(verdictOf(live));
    expect(verdictOf(named.report)).toEqual(verdictOf(live));
    expect(verdictOf(whole.report)).toEqual(verdictOf(live));
    expect(verdictOf(reportOf(join(dir, 'unrotated-reports')))).toEqual(verdictOf(live));
    expect(live.traffic?.exchanges).toBe(COUNTDOWN.length);
  });
});

describe('proxy: rotation by age, a rate-limit sequence across it', () => {
  const rotated = join(dir, 'by-age');
  // Remaining counts down, then goes up (RL-SEQUENCE) in the first exchange after a pause longer than the interval.
  const sequence = [500, 499, 498, 497, 496, 600, 490];
  const pauses = { 5: 1500 };

  it('a segment older than the interval is closed between entries; the finding made across the rotation is found by validate over the segments', async () => {
    const { code } = await session(
      ['--journal', join(rotated, 'traffic.jsonl'), '--rotate-interval', '500ms', '--report-dir', join(dir, 'by-age-reports')],
      sequence,
      pauses,
    );
    expect(code).toBe(0);
    const names = segmentsIn(rotated);
    expect(names.length).toBeGreaterThanOrEqual(2);
    // The pause closed the segment: the exchange that went up opens the next one.
    const firstLines = names.map((name) => (JSON.parse(linesOf(readFileSync(join(rotated, name), 'utf8'))[0]!) as { request: { url: string } }).request.url);
    expect(firstLines.some((url) => url.endsWith('rs_600'))).toBe(true);

    const live = reportOf(join(dir, 'by-age-reports'));
    const sequenceFindings = (report: Report) => report.requirements.find((r) => r.id === 'RL-SEQUENCE')?.counts.findings ?? 0;
    expect(sequenceFindings(live)).toBe(1);
    const together = await validated('by-age', [rotated]);
    expect(sequenceFindings(together.report)).toBe(1);
    expect(verdictOf(together.report)).toEqual(verdictOf(live));

    // The same segments under names that are not a journal's segments: separate recordings, the
    // sequence cut in two, and the finding gone. What makes the segments one recording is that.
    const apart = names.map((name, i) => {
      const copy = join(dir, `apart-${i}.jsonl`);
      copyFileSync(join(rotated, name), copy);
      return copy;
    });
    const separately = await validated('by-age-apart', apart);
    expect(sequenceFindings(separately.report)).toBe(0);
  });
});

describe('proxy: --append and --compress with rotation', () => {
  const rotated = join(dir, 'resumed');
  const journal = join(rotated, 'traffic.jsonl');

  it('a second session is refused without --append; with it, it goes on in the last segment and reports on both', async () => {
    expect((await session(['--journal', journal, '--rotate-size', '1MB', '--report-dir', join(dir, 'resumed-1')], [800, 799, 798])).code).toBe(0);
    expect(segmentsIn(rotated)).toEqual(['traffic.000001.jsonl']);
    expect(await refusal(['--journal', journal, '--rotate-size', '1MB'])).toBe(
      `proxy: the journal's segments (${join(rotated, 'traffic.000001.jsonl')}) already hold recorded exchanges: add --append to resume after the last one (the report then covers them all) or --overwrite to replace them`,
    );
    const { code, out } = await session(['--journal', journal, '--rotate-size', '1MB', '--append', '--report-dir', join(dir, 'resumed-2')], [797, 796]);
    expect(code).toBe(0);
    expect(out).toContain(`journal: ${join(rotated, 'traffic.000001.jsonl')} (3 earlier + 2 new entries)`);
    expect(segmentsIn(rotated)).toEqual(['traffic.000001.jsonl']);
    expect(linesOf(readFileSync(join(rotated, 'traffic.000001.jsonl'), 'utf8'))).toHaveLength(5);
    expect(reportOf(join(dir, 'resumed-2')).traffic?.exchanges).toBe(5);
  });

  it('--compress gzips every closed segment (the last at stop); --append then begins a new one; validate reads them all', async () => {
    const compressed = join(dir, 'compressed');
    const cjournal = join(compressed, 'traffic.jsonl');
    expect(
      (await session(['--journal', cjournal, '--rotate-size', '6KB', '--compress', '--report-dir', join(dir, 'compressed-1')], COUNTDOWN.slice(0, 20))).code,
    ).toBe(0);
    const first = segmentsIn(compressed);
    expect(first.length).toBeGreaterThan(1);
    expect(first.every((name) => /^traffic\.\d{6}\.jsonl\.gz$/.test(name))).toBe(true);
    const lines = first.flatMap((name) => linesOf(gunzipSync(readFileSync(join(compressed, name))).toString('utf8')));
    expect(lines).toHaveLength(20);
    for (const name of first) expect(gunzipSync(readFileSync(join(compressed, name))).length).toBeLessThanOrEqual(6000);

    expect(
      (
        await session(
          ['--journal', cjournal, '--rotate-size', '6KB', '--compress', '--append', '--report-dir', join(dir, 'compressed-2')],
          COUNTDOWN.slice(20, 25),
        )
      ).code,
    ).toBe(0);
    const second = segmentsIn(compressed);
    expect(second.slice(0, first.length)).toEqual(first);
    expect(second[first.length]).toBe(`traffic.${String(first.length + 1).padStart(6, '0')}.jsonl.gz`);
    expect(second.every((name) => name.endsWith('.jsonl.gz'))).toBe(true);
    const live = reportOf(join(dir, 'compressed-2'));
    expect(live.traffic?.exchanges).toBe(25);
    const read = await validated('compressed', [compressed]);
    expect(read.code).toBe(0);
    expect(verdictOf(read.report)).toEqual(verdictOf(live));
  });

  it('--overwrite replaces the segments: none of the earlier run is left beside the new one', async () => {
    const replaced = join(dir, 'replaced');
    const rjournal = join(replaced, 'traffic.jsonl');
    expect((await session(['--journal', rjournal, '--rotate-size', '4KB', '--report-dir', join(dir, 'replaced-1')], COUNTDOWN.slice(0, 12))).code).toBe(0);
    expect(segmentsIn(replaced).length).toBeGreaterThan(2);
    expect((await session(['--journal', rjournal, '--rotate-size', '4KB', '--overwrite', '--report-dir', join(dir, 'replaced-2')], [700])).code).toBe(0);
    expect(segmentsIn(replaced)).toEqual(['traffic.000001.jsonl']);
  });
});
