// Restarting the proxy with the same --record or --journal: an existing journal (or HAR file)
// is never replaced without a word. By default the start is refused (exit 2, one line naming
// --append and --overwrite); --append resumes: new exchanges follow the earlier ones, the HAR
// written at stop holds both, the report and the summary judge both; --overwrite replaces.
import { spawn } from 'node:child_process';
import { appendFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { proxyCommandRefusal, startProxyCommand } from './helpers/proxy-command.ts';
import type { RunningReference } from '../reference/index.ts';
import type { Report } from '../reports/model.ts';
import { readJournal } from './helpers/proxy.ts';
import { startConformingAndFaulty } from './helpers/reference.ts';

const BIN = fileURLToPath(new URL('../bin/tmi-conform.js', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'tmi-proxy-journal-'));

let ref: RunningReference;
let faulty: RunningReference;
let token: string;
let faultyToken: string;

beforeAll(async () => {
  ({ ref, faulty, token, faultyToken } = await startConformingAndFaulty());
});

afterAll(async () => {
  await Promise.all([ref?.close(), faulty?.close()]);
  rmSync(dir, { recursive: true, force: true });
});

/** Runs the proxy in this process in front of `target`, sends `requests` GETs of a resource server, stops it. */
async function session(target: RunningReference, requests: number, flags: string[]): Promise<{ code: number; out: string; err: string }> {
  const proxy = await startProxyCommand(target.origin, flags);
  const bearer = target === faulty ? faultyToken : token;
  for (let i = 0; i < requests; i++) {
    const response = await fetch(`${proxy.url}/api/v2/resource-servers/${target.fixtures.resource_servers[0]}`, {
      headers: { authorization: `Bearer ${bearer}` },
    });
    expect(response.status).toBe(200);
    await response.text();
  }
  return proxy.stop();
}

/** Starts the proxy expecting a refusal: the UsageError's message, exit code 2. */
const refusal = (flags: string[]) => proxyCommandRefusal(ref.origin, flags);

const entriesOf = (harPath: string) => (JSON.parse(readFileSync(harPath, 'utf8')) as { log: { entries: unknown[] } }).log.entries;
const reportOf = (reportDir: string) => JSON.parse(readFileSync(join(reportDir, 'report.json'), 'utf8')) as Report;

describe('proxy: an existing journal', () => {
  const harPath = join(dir, 'day.har');
  const journalPath = `${harPath}.jsonl`;
  const reportDir = join(dir, 'day-reports');
  const record = ['--record', harPath, '--report-dir', reportDir];
  let firstJournal: string;

  beforeAll(async () => {
    // Yesterday: two exchanges with a non-conforming target (a must finding each).
    const first = await session(faulty, 2, record);
    expect(first.code).toBe(0);
    firstJournal = readFileSync(journalPath, 'utf8');
    expect(reportOf(reportDir).passed).toBe(false);
  });

  it('is refused without --append or --overwrite, and left as it was (the HAR too)', async () => {
    const har = readFileSync(harPath, 'utf8');
    expect(await refusal(record)).toBe(
      `proxy: the journal ${journalPath} already holds recorded exchanges: add --append to resume it (the HAR and the report then cover both sessions) or --overwrite to replace it`,
    );
    expect(readFileSync(journalPath, 'utf8')).toBe(firstJournal);
    expect(readFileSync(harPath, 'utf8')).toBe(har);
  });

  it('the refusal as a user sees it: one line on stderr, exit 2, nothing on stdout', async () => {
    const child = spawn(process.execPath, [BIN, 'proxy', '--target', ref.origin, '--listen', '127.0.0.1:0', ...record], {
      env: { ...process.env, GITHUB_STEP_SUMMARY: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr.split('\n')).toEqual([expect.stringMatching(/^tmi-conform: proxy: the journal .* --append .* --overwrite to replace it$/), '']);
  });

  it('--append resumes it: earlier lines kept as they were, new ones after; the HAR holds both; the report and summary judge both', async () => {
    // A recorder killed mid-write left part of a line: dropped, or it would swallow the next one.
    appendFileSync(journalPath, '{"startedDateTime":"2026-01-01T00:00:0');
    const second = await session(ref, 1, [...record, '--append']);
    expect(second.code).toBe(0);
    expect(second.err).toMatch(/the journal .*day\.har\.jsonl ended in a line cut short .*: its last 38 bytes were dropped/);
    const journal = readFileSync(journalPath, 'utf8');
    expect(journal.startsWith(firstJournal)).toBe(true);
    expect(readJournal(journalPath)).toHaveLength(3);
    expect(entriesOf(harPath)).toHaveLength(3);
    const report = reportOf(reportDir);
    expect(report.traffic?.exchanges).toBe(3);
    // The line dropped held an exchange nobody judged: the reports and the summary say so.
    const dropped = `${journalPath}: its last line was cut short (a recorder stopped mid-write): not read`;
    expect(report.traffic?.notJudged).toEqual([{ reason: dropped, count: 1, exchanges: [] }]);
    expect(second.out).toContain(`not judged: 1 exchange(s), ${dropped}\n`);
    // The earlier session's findings are still there: its target did not conform.
    expect(report.passed).toBe(false);
    expect(report.requirements.find((r) => r.id === 'RS-RESPONSE-SCHEMA')).toMatchObject({ status: 'fail', counts: { findings: 2 } });
    expect(second.out).toContain('3 exchanges: 3 judged');
    expect(second.out).toContain('(2 earlier + 1 new entries)');
    expect(second.out).toContain('har: ' + harPath + ' (3 entries)');
  });

  it('--overwrite replaces it (and the HAR)', async () => {
    const third = await session(ref, 1, [...record, '--overwrite']);
    expect(third.code).toBe(0);
    expect(readJournal(journalPath)).toHaveLength(1);
    expect(entriesOf(harPath)).toHaveLength(1);
    expect(reportOf(reportDir)).toMatchObject({ passed: true, traffic: { exchanges: 1 } });
  });

  it('--append through the command line, around a command: the journal grows by what the command sent', async () => {
    const before = readJournal(journalPath).length;
    const script =
      "fetch(process.env.TMI_PROXY_URL + '/resource-servers/' + process.env.RS, { headers: { authorization: 'Bearer ' + process.env.TOKEN } }).then((r) => process.exit(r.status === 200 ? 0 : 9))";
    const child = spawn(
      process.execPath,
      [BIN, 'proxy', '--target', ref.origin, '--listen', '127.0.0.1:0', '--status-interval', '0', ...record, '--append', '--', process.execPath, '-e', script],
      {
        env: { ...process.env, GITHUB_STEP_SUMMARY: '', TOKEN: token, RS: ref.fixtures.resource_servers[0]! },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(code).toBe(0);
    expect(stdout).toContain(`(${before} earlier + 1 new entries)`);
    expect(readJournal(journalPath)).toHaveLength(before + 1);
    expect(entriesOf(harPath)).toHaveLength(before + 1);
    expect(reportOf(reportDir).traffic?.exchanges).toBe(before + 1);
  });

  it('--append and --overwrite together are refused', async () => {
    expect(await refusal([...record, '--append', '--overwrite'])).toBe(
      'proxy: --append and --overwrite exclude each other (resume the journal, or replace it)',
    );
  });
});

describe('proxy: an existing --record file, a journal that is none', () => {
  it('a HAR without its journal: refused by default and with --append (its exchanges would be lost); --overwrite replaces it', async () => {
    const harPath = join(dir, 'lonely.har');
    const har = JSON.stringify({ log: { version: '1.2', creator: { name: 'x', version: '1' }, entries: [] } });
    writeFileSync(harPath, har);
    const flags = ['--record', harPath, '--report-dir', join(dir, 'lonely-reports')];
    expect(await refusal(flags)).toBe(`proxy: ${harPath} already exists: add --append to resume its recording or --overwrite to replace it`);
    expect(await refusal([...flags, '--append'])).toMatch(
      /^proxy: cannot --append: .*lonely\.har exists but its journal .*lonely\.har\.jsonl is missing or empty, so the HAR's exchanges would be lost at stop; move .* away or add --overwrite$/,
    );
    expect(readFileSync(harPath, 'utf8')).toBe(har);
    const replaced = await session(ref, 1, [...flags, '--overwrite']);
    expect(replaced.code).toBe(0);
    expect(entriesOf(harPath)).toHaveLength(1);
  });

  it('--append to a file that is not a journal (a HAR under a .jsonl name) is refused and the file left alone', async () => {
    const journalPath = join(dir, 'mistake.jsonl');
    const har = JSON.stringify({ log: { version: '1.2', entries: [] } }, null, 2);
    writeFileSync(journalPath, har);
    expect(await refusal(['--journal', journalPath, '--report-dir', join(dir, 'mistake-reports'), '--append'])).toMatch(
      /^proxy: cannot --append to .*mistake\.jsonl: its first line is not JSON, not a proxy journal \(one HAR entry per line\)/,
    );
    expect(readFileSync(journalPath, 'utf8')).toBe(har);
  });

  it('--append without a journal yet starts one; an empty journal is no recording and is not refused', async () => {
    const fresh = join(dir, 'fresh.jsonl');
    expect((await session(ref, 1, ['--journal', fresh, '--report-dir', join(dir, 'fresh-reports'), '--append'])).code).toBe(0);
    expect(readJournal(fresh)).toHaveLength(1);
    const empty = join(dir, 'empty.jsonl');
    writeFileSync(empty, '');
    expect((await session(ref, 1, ['--journal', empty, '--report-dir', join(dir, 'empty-reports')])).code).toBe(0);
    expect(readJournal(empty)).toHaveLength(1);
    expect(existsSync(join(dir, 'empty-reports', 'report.json'))).toBe(true);
  });
});
