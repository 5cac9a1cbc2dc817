// validate and the library's judgeRecording are one function (judging/recordings.ts): the same
// files give the same requirement statuses, counts and findings by either route. The case that
// told them apart: the segments of a rotated journal, where a 503 in the second segment follows
// an answer of the first that said Remaining 0 (RL-THROTTLED-429 needs the one history).
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { judgeRecording } from '../api/index.ts';
import { BASE, claims, jwt, rateLimitHeaders, STARTED_AT } from '../fixtures/exchanges.ts';
import { harEntry as journalEntry } from '../recordings/write.ts';
import type { Report } from '../reports/model.ts';
import { buildExchange } from '../rules/exchange.ts';
import { judgeExchange, RateLimitTracker } from '../rules/index.ts';
import { runCli } from './helpers/cli.ts';

const dir = mkdtempSync(join(tmpdir(), 'tmi-validate-routes-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const RESET = String(Date.parse(STARTED_AT) / 1000 + 30);

/** A delete of the full client `offsetMs` after STARTED_AT, its token verified when recorded (as the proxy records it). */
function call(offsetMs: number, status: number, headers: Record<string, string>) {
  const exchange = buildExchange({
    startedAt: new Date(Date.parse(STARTED_AT) + offsetMs).toISOString(),
    durationMs: 10,
    method: 'DELETE',
    url: `${BASE}/token-exchange-profiles/tep_${offsetMs}`,
    requestHeaders: { authorization: `Bearer ${jwt(claims())}` },
    status,
    responseHeaders: headers,
    responseBody: status === 204 ? '' : JSON.stringify({ statusCode: status, error: 'Service Unavailable' }),
  });
  exchange.token.signatureValid = true;
  return exchange;
}

/** The journal's segments: a 204 saying Remaining 0, then, in the next segment, a 503 in the same window. */
function writeSegments(): string {
  const folder = join(dir, 'journal');
  mkdirSync(folder, { recursive: true });
  const tracker = new RateLimitTracker();
  const calls = [call(0, 204, rateLimitHeaders(0, 10, RESET)), call(100, 503, rateLimitHeaders(0, 10, RESET))];
  calls.forEach((exchange, i) => {
    const line = JSON.stringify(journalEntry(exchange, judgeExchange(exchange, tracker)));
    writeFileSync(join(folder, `traffic.00000${i + 1}.jsonl`), `${line}\n`);
  });
  return folder;
}

/** What a report says, route-independently: each requirement's status and counts, the findings' requirements, the traffic counts. */
const verdictOf = (report: Report) => ({
  passed: report.passed,
  summary: report.summary,
  requirements: report.requirements.map((r) => ({ id: r.id, status: r.status, counts: r.counts })),
  exchanges: report.traffic?.exchanges,
  notJudged: report.traffic?.notJudged,
});

describe('validate and judgeRecording, one function', () => {
  const folder = writeSegments();
  const segments = [join(folder, 'traffic.000001.jsonl'), join(folder, 'traffic.000002.jsonl')];

  it('the segments of one journal: one rate-limit history by both routes, RL-THROTTLED-429 fails', async () => {
    const reportDir = join(dir, 'cli');
    const cli = await runCli(['validate', ...segments, '--report-dir', reportDir]);
    expect(cli.stderr).toBe('');
    expect(cli.code).toBe(1);
    const fromCli = JSON.parse(readFileSync(join(reportDir, 'report.json'), 'utf8')) as Report;
    expect(fromCli.requirements.find((r) => r.id === 'RL-THROTTLED-429')!.status).toBe('fail');

    const fromLibrary = await judgeRecording(segments);
    expect(fromLibrary.requirements.find((r) => r.id === 'RL-THROTTLED-429')!.status).toBe('fail');
    expect(verdictOf(fromLibrary)).toEqual(verdictOf(fromCli));
  });

  it('a folder is its recordings for the library too', async () => {
    const fromFolder = await judgeRecording(folder);
    const fromFiles = await judgeRecording(segments);
    expect(verdictOf(fromFolder)).toEqual(verdictOf(fromFiles));
    expect(fromFolder.passed).toBe(false);
  });

  it('input that cannot be read is no verdict for the library either: one line naming the file', async () => {
    const broken = join(dir, 'broken.jsonl');
    writeFileSync(broken, 'not a journal line\n');
    await expect(judgeRecording([...segments, broken])).rejects.toThrow(
      new RegExp(`^judgeRecording: cannot read ${broken.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}: `),
    );
  });
});
