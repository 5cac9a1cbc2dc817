// A body over the body limit costs its first bytes, its size and its hash, never the whole of it:
// in a recording read whole or streamed (the same exchange either way), and in validate's peak
// memory for one 100 MB entry. Its content is not judged, and the report says so and where.
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { createWriteStream, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { LimitedText } from '../core/body-limit.ts';
import { readHar, readJsonl, RecordingError } from '../recordings/read.ts';
import { judgeExchange } from '../rules/index.ts';
import type { Exchange } from '../rules/types.ts';
import { runCli } from './helpers/cli.ts';

const dir = mkdtempSync(join(tmpdir(), 'tmi-body-limit-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

async function collect(iterable: AsyncIterable<Exchange>): Promise<Exchange[]> {
  const out: Exchange[] = [];
  for await (const e of iterable) out.push(e);
  return out;
}

function entry(response: Record<string, unknown>, request: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    startedDateTime: '2027-01-15T08:00:00.000Z',
    request: { method: 'GET', url: 'https://tenant.example.com/api/v2/resource-servers/rs_1', headers: [], ...request },
    response: { status: 200, headers: [{ name: 'content-type', value: 'application/json' }], ...response },
  };
}
const har = (entries: unknown[]) => JSON.stringify({ log: { version: '1.2', creator: { name: 'x', version: '1' }, entries } });

describe('LimitedText', () => {
  it('keeps a text under the limit whole, and of one over it the first bytes (no character split), its size and hash', () => {
    const under = new LimitedText(10);
    under.add('abc');
    under.add('def');
    expect([under.text(), under.over()]).toEqual(['abcdef', undefined]);

    const whole = 'é'.repeat(20) + '"quoted"';
    const over = new LimitedText(9);
    for (const piece of ['é'.repeat(3), 'é'.repeat(17), '"quoted"']) over.add(piece);
    expect(over.text()).toBe('éééé'); // 8 bytes: a fifth "é" would not fit in 9
    expect(over.over()).toEqual({ bytes: Buffer.byteLength(whole), limit: 9, sha256: sha256(whole) });
  });
});

describe('a recording with a body over the limit', () => {
  const LIMIT = 64 * 1024;
  const body = JSON.stringify({ id: 'rs_1', name: 'x'.repeat(200_000), note: 'a "quoted" \\ value, and é' });

  it('reads the same exchange whether the entry is held whole or streamed: first bytes, size, hash, not judged', async () => {
    const path = join(dir, 'over.har');
    writeFileSync(
      path,
      har([entry({ content: { size: body.length, mimeType: 'application/json', text: body } }), entry({ content: { size: 2, text: '{}' } })]),
    );
    const held = await collect(readHar(path, { maxBodyBytes: LIMIT }));
    const streamed = await collect(readHar(path, { maxBodyBytes: LIMIT, streamEntryAbove: 1000, chunkSize: 4096 }));
    expect(streamed).toEqual(held);
    const [big, small] = held as [Exchange, Exchange];
    expect(big.response!.body).toEqual({
      text: body.slice(0, LIMIT),
      truncated: true,
      overLimit: { bytes: Buffer.byteLength(body), limit: LIMIT, sha256: sha256(body) },
    });
    expect(small.response!.body).toEqual({ text: '{}' });
    const judgement = judgeExchange(big);
    expect(judgement.bodiesOverLimit).toEqual([{ body: 'response', bytes: Buffer.byteLength(body), limit: LIMIT, sha256: sha256(body) }]);
    // The schema is not judged on a body that is not there in full; a conforming body under the limit is.
    expect(judgement.examined).not.toContain('RS-RESPONSE-SCHEMA');
    expect(judgeExchange(small).bodiesOverLimit).toBeUndefined();
  });

  it('a base64 body is judged by its decoded size; a journal line reads the same as a HAR entry', async () => {
    const base64 = Buffer.from(body).toString('base64');
    const path = join(dir, 'over-base64.jsonl');
    const lines = [entry({ content: { size: body.length, text: base64, encoding: 'base64' } }), entry({ content: { size: body.length, text: body } })];
    writeFileSync(path, lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
    const held = await collect(readJsonl(path, undefined, { maxBodyBytes: LIMIT }));
    const streamed = await collect(readJsonl(path, undefined, { maxBodyBytes: LIMIT, streamEntryAbove: 1000, chunkSize: 4096 }));
    expect(streamed).toEqual(held);
    expect(held[0]!.response!.body!.overLimit!.bytes).toBeGreaterThanOrEqual(Buffer.byteLength(body) - 2);
    expect(held[1]!.response!.body!.overLimit).toEqual({ bytes: Buffer.byteLength(body), limit: LIMIT, sha256: sha256(body) });
  });

  it('a 204 with a body over the limit is still a 204 with a body', async () => {
    const path = join(dir, 'no-content.har');
    const deleted = entry(
      { status: 204, headers: [], content: { size: body.length, text: body } },
      { method: 'DELETE', url: 'https://tenant.example.com/api/v2/token-exchange-profiles/tep_1' },
    );
    writeFileSync(path, har([deleted]));
    for (const streamEntryAbove of [1000, undefined]) {
      const [exchange] = await collect(readHar(path, { maxBodyBytes: LIMIT, ...(streamEntryAbove ? { streamEntryAbove } : {}) }));
      const findings = judgeExchange(exchange!).findings;
      expect(findings.map((f) => [f.requirement, f.received])).toEqual([['TEP-DELETE-NO-BODY', expect.stringMatching(/^a body of 200\.\d kB beginning /)]]);
    }
  });

  it('a header value over the limit makes the entry unreadable, said the same way however it was read', async () => {
    const path = join(dir, 'long-header.har');
    writeFileSync(path, har([entry({ content: { size: 2, text: '{}' } }, { headers: [{ name: 'x-padding', value: 'p'.repeat(100_000) }] })]));
    for (const streamEntryAbove of [1000, undefined]) {
      const reading = collect(readHar(path, { maxBodyBytes: LIMIT, ...(streamEntryAbove ? { streamEntryAbove } : {}) }));
      await expect(reading).rejects.toThrow(RecordingError);
      await expect(collect(readHar(path, { maxBodyBytes: LIMIT, ...(streamEntryAbove ? { streamEntryAbove } : {}) }))).rejects.toThrow(
        'log.entries[0]: a request header (x-padding) is 100.0 kB long, over the body limit',
      );
    }
  });
});

describe('validate of one 100 MB entry', () => {
  /** Prints the process's peak resident memory as it exits (the kernel's figure). */
  const preload = join(dir, 'max-rss.cjs');
  writeFileSync(preload, "process.on('exit', () => process.stderr.write('\\nmax-rss-kb ' + process.resourceUsage().maxRSS + '\\n'));");
  const BODY_MB = 100;

  async function writeLarge(path: string, format: 'har' | 'jsonl'): Promise<void> {
    const out = createWriteStream(path);
    const [before, after] = JSON.stringify(entry({ content: { size: BODY_MB << 20, mimeType: 'application/json', text: 'BODY' } })).split('"BODY"') as [
      string,
      string,
    ];
    out.write(
      format === 'har' ? `{"log":{"version":"1.2","creator":{"name":"x","version":"1"},"entries":[${before}"{\\"name\\":\\"` : `${before}"{\\"name\\":\\"`,
    );
    const chunk = 'x'.repeat(1 << 20);
    for (let i = 0; i < BODY_MB; i++) if (!out.write(chunk)) await once(out, 'drain');
    out.write(`\\"}"${after}${format === 'har' ? ']}}' : '\n'}`);
    out.end();
    await once(out, 'finish');
  }

  // The proof is the heap cap: a 100 MB body held whole anywhere would not fit in 64 MB of old
  // space, and the process would die of it. The resident peak is GC slack on top (Node 24 lets the
  // young generation grow to 100 MB and more before collecting), so its bound is a loose one: the
  // body held whole cost 990 MB.
  it.each(['har', 'jsonl'] as const)(
    '%s: runs in a 64 MB heap, peak memory under 400 MB; the content is said not judged, with its size',
    async (format) => {
      const path = join(dir, `large.${format}`);
      await writeLarge(path, format);
      const reportDir = join(dir, `report-${format}`);
      const result = await runCli(['validate', path, '--report-dir', reportDir], { NODE_OPTIONS: `--require ${preload} --max-old-space-size=64` });
      rmSync(path);
      const maxRssMb = Number(/max-rss-kb (\d+)/.exec(result.stderr)?.[1]) / 1024;
      expect(result.code, result.stderr).toBe(0);
      expect(maxRssMb).toBeGreaterThan(0);
      expect(maxRssMb).toBeLessThan(400);
      expect(result.stdout).toMatch(/content not judged: 1 exchange\(s\), response body over the 1\.0 MB body limit: .* \(104\.9 MB\)/);
      const report = JSON.parse(readFileSync(join(reportDir, 'report.json'), 'utf8'));
      const id = format === 'har' ? '0' : '1';
      // A recording with no Authorization header kept does not show the credential sent: said too.
      expect(report.traffic.notJudged).toEqual([
        { reason: 'response body over the 1.0 MB body limit (its content)', count: 1, exchanges: [id] },
        { reason: 'its credential (authentication): the recording does not show the Authorization header sent', count: 1, exchanges: [id] },
      ]);
    },
    60_000,
  );
});
