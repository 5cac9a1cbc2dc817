// `tmi-conform validate`: judges recordings offline, prints a summary, writes the reports,
// and answers with the contract's exit codes.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { judgeRecording } from '../api/index.ts';
import { startReference, type RunningReference } from '../reference/index.ts';
import { startTestProxy, type ProxyUnderTest } from './helpers/proxy.ts';
import { tokenFor } from './helpers/reference.ts';
import { judgeExchange } from '../rules/index.ts';
import type { Exchange } from '../rules/types.ts';
import { harEntry as journalEntry } from '../recordings/write.ts';
import type { Report } from '../reports/model.ts';
import { deleteExchange, errorExchange, getExchange, resourceServer, updateExchange } from '../fixtures/exchanges.ts';

const BIN = fileURLToPath(new URL('../bin/tmi-conform.js', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'tmi-validate-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function harEntry(e: Exchange): Record<string, unknown> {
  const headers = (h: Record<string, string>) => Object.entries(h).map(([name, value]) => ({ name, value }));
  return {
    startedDateTime: e.startedAt,
    time: e.durationMs ?? 0,
    request: {
      method: e.request.method,
      url: e.request.url,
      httpVersion: 'HTTP/1.1',
      headers: headers(e.request.headers),
      ...(e.request.body ? { postData: { mimeType: 'application/json', text: e.request.body.text } } : {}),
    },
    response: {
      status: e.response!.status,
      httpVersion: 'HTTP/1.1',
      headers: headers(e.response!.headers),
      content: { size: e.response!.body?.text.length ?? 0, mimeType: 'application/json', ...(e.response!.body ? { text: e.response!.body.text } : {}) },
    },
  };
}

function writeHar(name: string, exchanges: Exchange[]): string {
  const path = join(dir, name);
  writeFileSync(path, JSON.stringify({ log: { version: '1.2', creator: { name: 'test', version: '1' }, entries: exchanges.map(harEntry) } }));
  return path;
}

function validate(...args: string[]) {
  const result = spawnSync(process.execPath, [BIN, 'validate', ...args], { encoding: 'utf8', env: { ...process.env, GITHUB_STEP_SUMMARY: '' } });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

const readReport = (reportDir: string) => JSON.parse(readFileSync(join(reportDir, 'report.json'), 'utf8')) as Report;
const uncovered = { ...getExchange(), request: { ...getExchange().request, url: 'https://tenant.example.com/userinfo' } };

describe('tmi-conform validate', () => {
  it('conforming traffic: exit 0, summary, reports with passes and the uncovered exchange counted', () => {
    const file = writeHar('good.har', [deleteExchange(), updateExchange(), getExchange(), uncovered]);
    const reportDir = join(dir, 'good');
    const { code, stdout, stderr } = validate(file, '--report-dir', reportDir);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout).toContain('4 exchanges in 1 file(s): 3 judged, 1 not operation calls');
    expect(stdout).toContain('verdict: conforming');
    const report = readReport(reportDir);
    expect(report.passed).toBe(true);
    expect(report.summary.fail).toBe(0);
    expect(report.traffic).toMatchObject({
      exchanges: 4,
      notCovered: 1,
      byOperation: { deleteTokenExchangeProfile: { '204': 1 }, updateSession: { '200': 1 }, getResourceServer: { '200': 1 } },
    });
    const byId = new Map(report.requirements.map((r) => [r.id, r]));
    expect(byId.get('TEP-DELETE-204')!.status).toBe('pass');
    expect(byId.get('SES-RESPONSE-SCHEMA')!.status).toBe('pass');
    // Nothing in this traffic was a 429: the 429 rule was not examined, so it is not "pass".
    expect(byId.get('RL-429-HEADERS')!.status).toBe('skip');
    expect(byId.get('RL-429-HEADERS')!.reason).toMatch(/no test or exchange examined it/);
    expect(readFileSync(join(reportDir, 'junit.xml'), 'utf8')).toContain('<testsuites');
  });

  it('a must violation: exit 1, the requirement failed with its evidence, secrets redacted', () => {
    const file = writeHar('bad.har', [
      getExchange(resourceServer({ signing_alg: 'HS512' })),
      errorExchange(deleteExchange(), 429, { message: 'slow down' }, { 'x-ratelimit-reset': '' }),
    ]);
    const reportDir = join(dir, 'bad');
    const { code, stdout } = validate(file, '--report-dir', reportDir);
    expect(code).toBe(1);
    expect(stdout).toContain('verdict: NOT conforming');
    expect(stdout).toMatch(/RS-SIGNING-ALG\s+must\s+implementation\s+1/);
    const report = readReport(reportDir);
    const alg = report.requirements.find((r) => r.id === 'RS-SIGNING-ALG')!;
    expect(alg.status).toBe('fail');
    expect(alg.evidence[0]!.message).toContain('expected signing_alg to be one of "HS256", "RS256", "RS512", "PS256"; received "HS512"');
    expect(report.requirements.find((r) => r.id === 'RL-429-HEADERS')!.status).toBe('fail');
    const text = readFileSync(join(reportDir, 'report.json'), 'utf8');
    expect(text).not.toContain('a-secret-of-32-characters-length'); // signing_secret
    expect(text).not.toMatch(/Bearer eyJ/);
  });

  it('a HAR whose recorder kept no response content (size -1; Content-Length 946 without text) is judged without body findings, and says so once', () => {
    const DEVTOOLS_HEADERS = { date: 'Fri, 15 Jan 2027 08:00:00 GMT' };
    /** The entry with every response header kept (and `headers` added) and `content` for its content. */
    const withContent = (e: Exchange, content: Record<string, unknown>, headers: Record<string, string> = {}) => {
      const entry = harEntry({ ...e, response: { ...e.response!, headers: { ...e.response!.headers, ...DEVTOOLS_HEADERS, ...headers } } });
      return { ...entry, response: { ...(entry['response'] as Record<string, unknown>), content } };
    };
    const entries = [
      withContent(getExchange(), { size: -1, mimeType: 'application/json' }),
      withContent(updateExchange(), { size: 0, mimeType: 'application/json' }, { 'content-length': '946' }),
      withContent(deleteExchange(), { size: -1, mimeType: 'x-unknown' }),
      harEntry(getExchange(resourceServer({ id: 'rs_2' }), 'rs_2')),
    ];
    const file = join(dir, 'no-content.har');
    writeFileSync(file, JSON.stringify({ log: { version: '1.2', creator: { name: 'playwright', version: '1.49' }, entries } }));
    const reportDir = join(dir, 'no-content');
    const { code, stdout, stderr } = validate(file, '--report-dir', reportDir);
    expect(stderr).toBe('');
    expect(code, stdout).toBe(0);
    const reason = 'its response body: the recording kept its size, not its content';
    expect(stdout).toContain(`not judged: 2 exchange(s), ${reason}: ${file} log.entries [0], ${file} log.entries [1]`);
    const report = readReport(reportDir);
    expect(report.traffic!.notJudged).toEqual([{ reason, count: 2, exchanges: ['0', '1'] }]);
    const byId = new Map(report.requirements.map((r) => [r.id, r]));
    expect(byId.get('RS-RESPONSE-SCHEMA')).toMatchObject({ status: 'pass', counts: { exchanges: 1, findings: 0 } });
    expect(byId.get('SES-RESPONSE-SCHEMA')!.status).toBe('skip');
    expect(byId.get('TEP-DELETE-NO-BODY')!.status).toBe('pass');
    expect(readFileSync(join(reportDir, 'report.md'), 'utf8')).toContain(`Not judged: 2 × ${reason} (exchanges 0, 1).`);
    expect(readFileSync(join(reportDir, 'report.html'), 'utf8')).toContain(`not judged: 2 × ${reason} (exchanges 0, 1)`);
  });

  it('--fail-on should turns warnings into a failing exit code', () => {
    const file = writeHar('warn.har', [errorExchange(deleteExchange(), 418, { message: 'teapot' })]);
    expect(validate(file, '--report-dir', join(dir, 'warn')).code).toBe(0);
    expect(readReport(join(dir, 'warn')).summary.warn).toBeGreaterThan(0);
    expect(validate(file, '--report-dir', join(dir, 'warn2'), '--fail-on', 'should').code).toBe(1);
  });

  it('unreadable input: exit 2 and one line naming the file, no stack trace', () => {
    const broken = join(dir, 'broken.har');
    writeFileSync(broken, '{"log": {"entries": [{"request": }]}}');
    for (const args of [[broken], [join(dir, 'missing.har')], [], ['--fail-on', 'sometimes', broken]]) {
      const { code, stderr } = validate(...args, '--report-dir', join(dir, 'x'));
      expect(code, args.join(' ')).toBe(2);
      expect(stderr.trim().split('\n'), stderr).toHaveLength(1);
      expect(stderr).not.toMatch(/\n\s+at /);
    }
    expect(validate(broken).stderr).toContain('broken.har');
  });
});

describe('tmi-conform validate: input that cannot be read is never a verdict', () => {
  /** A line of the proxy's journal: the exchange redacted and judged, as the proxy writes it. */
  const journalLine = (e: Exchange) => JSON.stringify(journalEntry(e, judgeExchange(e)));
  const writeText = (name: string, text: string | Buffer) => {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  };

  /** Exit 2, one stderr line naming the file and the problem, no verdict, no report. */
  function expectUnreadable(file: string, problem: RegExp): void {
    const reportDir = join(dir, `unreadable-${file.split('/').at(-1)}`);
    const { code, stdout, stderr } = validate(file, '--report-dir', reportDir);
    expect(code, stderr).toBe(2);
    expect(stderr.trim().split('\n'), stderr).toHaveLength(1);
    expect(stderr).toContain(`cannot read ${file}: `);
    expect(stderr).toMatch(problem);
    expect(stderr).not.toMatch(/internal error|\n\s+at /);
    expect(stdout).not.toMatch(/conforming/);
    expect(existsSync(join(reportDir, 'report.json'))).toBe(false);
  }

  it('garbage without a newline, or one long junk line, is unreadable, not a recording with its last line cut short', () => {
    expectUnreadable(writeText('garbage.jsonl', 'garbage'), /no complete entry: line 1 is not a JSON object \(it begins with "garbage"\)/);
    // Longer than the reader's chunk: its bytes are not kept, only how it begins.
    expectUnreadable(writeText('junk.jsonl', 'x'.repeat(3 * 1024 * 1024)), /no complete entry: line 1 is not a JSON object \(it begins with "x{20}"\)/);
  });

  it('an empty journal, an empty HAR, a journal of blank lines: unreadable, each said so', () => {
    expectUnreadable(writeText('empty.jsonl', ''), /: the file is empty$/m);
    expectUnreadable(writeText('empty.har', ''), /: the file is empty$/m);
    expectUnreadable(writeText('blank.jsonl', '\n \n\n'), /only blank lines, no entry/);
  });

  it('a journal whose only line was cut short holds no entry: unreadable', () => {
    expectUnreadable(
      writeText('only-cut.jsonl', journalLine(getExchange()).slice(0, 100)),
      /no complete entry: line 1 is not JSON \(.*\) and the file ends there without a newline/,
    );
  });

  it('binary data is named as such, with its file, whatever its name', () => {
    expectUnreadable(
      writeText('binary', Buffer.from([0x00, 0x01, 0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0x01, 0x22, 0x7d])),
      /not a readable HAR file: it begins with binary data/,
    );
    expectUnreadable(writeText('control.har', '{"lo\u0001g": {"entries": []}}'), /not a readable HAR file: a string near the start is not valid JSON/);
  });

  it('a last line cut short after complete entries: the entries are judged, the line said skipped', () => {
    const file = writeText('cut.jsonl', `${journalLine(getExchange())}\n${journalLine(deleteExchange())}\n${journalLine(getExchange()).slice(0, 100)}`);
    const { code, stdout, stderr } = validate(file, '--report-dir', join(dir, 'cut'));
    expect(code, stderr).toBe(0);
    expect(stdout).toContain('2 exchanges in 1 file(s): 2 judged');
    expect(stderr).toBe(`tmi-conform validate: ${file}: the last line was cut short (a recorder stopped mid-write); it was skipped\n`);
    // The reports say it too: the line held an exchange that nobody judged.
    expect(readReport(join(dir, 'cut')).traffic!.notJudged).toEqual([
      { reason: `${file}: its last line was cut short (a recorder stopped mid-write): not read`, count: 1, exchanges: ['3'] },
    ]);
  });

  it('lines in the middle that are not entries: the others are judged, the bad ones named, exit 2 and no report', () => {
    const good = journalLine(getExchange());
    const bad = journalLine(getExchange(resourceServer({ signing_alg: 'HS512' })));
    const lines = [good, 'not json', bad, '7', good, 'x', 'y', '{"request": {}}', 'z', good];
    const file = writeText('middle.jsonl', `${lines.join('\n')}\n`);
    const reportDir = join(dir, 'middle');
    const { code, stdout, stderr } = validate(file, '--report-dir', reportDir);
    expect(code).toBe(2);
    expect(stdout).toContain('4 exchanges in 1 file(s): 4 judged');
    expect(stdout).toMatch(/RS-SIGNING-ALG\s+must\s+implementation\s+1/);
    expect(stdout).toContain('verdict: none: 1 file(s) could not be read in full (below); no report written');
    expect(stdout).not.toMatch(/verdict: (NOT )?conforming/);
    expect(stderr.trim().split('\n'), stderr).toHaveLength(1);
    expect(stderr).toMatch(new RegExp(`cannot read ${file}: line 2 is not a JSON object \\(.*\\); 6 lines are not entries: 2, 4, 6, 7, 8 and 1 more$`, 'm'));
    expect(existsSync(join(reportDir, 'report.json'))).toBe(false);
  });

  it('a failed validate leaves the earlier report in its directory byte for byte', () => {
    const reportDir = join(dir, 'kept');
    expect(validate(writeHar('kept.har', [deleteExchange(), getExchange()]), '--report-dir', reportDir).code).toBe(0);
    const before = Object.fromEntries(['report.json', 'junit.xml', 'report.md', 'report.html'].map((name) => [name, readFileSync(join(reportDir, name))]));
    const middle = writeText('kept-bad.jsonl', `${journalLine(getExchange())}\nnot json\n${journalLine(getExchange())}\n`);
    for (const file of [middle, writeText('kept-empty.jsonl', '')]) {
      expect(validate(file, '--report-dir', reportDir).code).toBe(2);
      for (const [name, bytes] of Object.entries(before)) expect(readFileSync(join(reportDir, name)).equals(bytes), `${name} after ${file}`).toBe(true);
    }
  });

  it('a body nested 100,000 deep is not judged; the rest of the recording is, and decides the exit code', () => {
    const depth = 100_000;
    const deep = getExchange(undefined, 'rs_deep', { responseBody: '['.repeat(depth) + ']'.repeat(depth) });
    const lines = [
      journalLine(getExchange()),
      journalLine(deep),
      journalLine(getExchange(resourceServer({ signing_alg: 'HS512' }))),
      journalLine(deleteExchange()),
    ];
    const file = writeText('deep.jsonl', `${lines.join('\n')}\n`);
    const reportDir = join(dir, 'deep');
    const { code, stdout, stderr } = validate(file, '--report-dir', reportDir);
    expect(stderr).toBe('');
    expect(code).toBe(1); // the HS512 signing_alg of line 3
    expect(stdout).toContain('4 exchanges in 1 file(s): 3 judged, 1 not judged, 0 not operation calls');
    expect(stdout).toContain(`not judged: 1 exchange(s), response body nested deeper than 64 levels: ${file} line 2`);
    expect(stdout).toMatch(/RS-SIGNING-ALG\s+must\s+implementation\s+1/);
    expect(readReport(reportDir).traffic).toMatchObject({ exchanges: 4 });
  });

  it('a --report-dir that is a file: exit 2 before judging, one line naming it', () => {
    const notADir = writeText('a-file', 'x');
    const { code, stdout, stderr } = validate(writeHar('to-file.har', [getExchange()]), '--report-dir', notADir);
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr).toBe(`tmi-conform: cannot write reports to ${notADir}: it is a file, not a directory\n`);
    const under = validate(writeHar('to-file2.har', [getExchange()]), '--report-dir', join(notADir, 'reports'));
    expect(under.code).toBe(2);
    expect(under.stderr).toMatch(/^tmi-conform: cannot write reports to .*a-file\/reports: a file stands where a directory is needed\n$/);
  });
});

describe('validate of a proxy session: its journal and the HAR made from it at stop', () => {
  let ref: RunningReference;
  let session: ProxyUnderTest;
  beforeAll(async () => {
    ref = await startReference({ rateLimit: false });
    session = await startTestProxy(ref.origin);
    const token = await tokenFor(ref, 'full');
    for (const id of [...ref.fixtures.resource_servers, 'rs_missing'])
      await (await fetch(`${session.proxy.url}/api/v2/resource-servers/${id}`, { headers: { authorization: `Bearer ${token}` } })).arrayBuffer();
    await fetch(`${session.proxy.url}/api/v2/resource-servers/x`).then((r) => r.arrayBuffer());
    await session.proxy.stop();
  });
  afterAll(async () => {
    await session?.dispose();
    await ref?.close();
  });

  const sent = () => ref.fixtures.resource_servers.length + 2;
  const expectReadOnce = (args: string[], reportDir: string) => {
    const { code, stdout, stderr } = validate(...args, '--report-dir', reportDir);
    expect(stderr).toBe('');
    expect(code, stdout).toBe(0);
    expect(stdout.split('\n').filter((line) => line.startsWith('skipped '))).toEqual([
      `skipped ${session.harPath}: the HAR the proxy wrote at stop from the journal ${session.journalPath} (${sent()} exchanges): each is judged once, from the journal`,
    ]);
    expect(stdout).toContain(`${sent()} exchanges in 1 file(s): ${sent()} judged`);
    const report = readReport(reportDir);
    expect(report.traffic).toMatchObject({
      exchanges: sent(),
      byOperation: { getResourceServer: { '200': ref.fixtures.resource_servers.length, '404': 1, '401': 1 } },
    });
    expect(report.traffic!.notJudged).toEqual([
      {
        reason: `read once: ${session.harPath} is the HAR the proxy wrote at stop from the journal ${session.journalPath}, whose same exchanges were judged`,
        count: sent(),
        exchanges: expect.arrayContaining(['0', '1']),
      },
    ]);
    const md = readFileSync(join(reportDir, 'report.md'), 'utf8');
    expect(md).toContain(`${sent()} × read once: `);
  };

  it('its folder: each exchange counted once, from the journal; the HAR said skipped, on the console and in the reports', () => {
    expect(
      readdirSync(session.dir)
        .filter((name) => /\.(har|jsonl)$/.test(name))
        .sort(),
    ).toEqual(['traffic.har', 'traffic.har.jsonl']);
    expectReadOnce([session.dir], join(dir, 'pair-folder'));
  });

  it('both files named, in either order: the same', () => {
    expectReadOnce([session.harPath, session.journalPath], join(dir, 'pair-har-first'));
    expectReadOnce([session.journalPath, session.harPath], join(dir, 'pair-journal-first'));
  });

  it('a file named twice (itself and through its folder) is read once, and said so', () => {
    const { stdout } = validate(session.dir, session.journalPath, '--report-dir', join(dir, 'named-twice'));
    expect(stdout).toContain(`skipped ${session.journalPath}: named twice, read once\n`);
    expect(readReport(join(dir, 'named-twice')).traffic).toMatchObject({ exchanges: sent() });
  });

  it("the library's judgeRecording does the same", async () => {
    const report = await judgeRecording([session.harPath, session.journalPath]);
    expect(report.traffic).toMatchObject({
      exchanges: sent(),
      notJudged: [{ reason: expect.stringMatching(/^read once: .*traffic\.har is the HAR the proxy wrote at stop from the journal /), count: sent() }],
    });
  });

  it('the HAR alone, or beside a journal it was not made from, is judged as any HAR', () => {
    const alone = validate(session.harPath, '--report-dir', join(dir, 'har-alone'));
    expect(alone.stdout).not.toContain('skipped');
    expect(readReport(join(dir, 'har-alone')).traffic).toMatchObject({ exchanges: sent() });
    const other = join(dir, 'other.jsonl');
    writeFileSync(other, `${JSON.stringify(journalEntry(getExchange(), judgeExchange(getExchange())))}\n`);
    const beside = validate(session.harPath, other, '--report-dir', join(dir, 'har-beside'));
    expect(beside.stdout).not.toContain('skipped');
    expect(readReport(join(dir, 'har-beside')).traffic).toMatchObject({ exchanges: sent() + 1 });
  });
});
