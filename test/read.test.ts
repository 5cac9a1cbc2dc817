// Recordings from any recorder are read, streaming, into exchanges.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { rmSync } from 'node:fs';
import { judgeExchange } from '../rules/index.ts';
import { readHar, readJsonl, readJsonlBatches, readRecording, type HarEntry } from '../recordings/read.ts';
import type { Exchange } from '../rules/types.ts';
import { claims, jwt, resourceServer, session } from '../fixtures/exchanges.ts';

const dir = mkdtempSync(join(tmpdir(), 'tmi-read-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function collect(iterable: AsyncIterable<Exchange>): Promise<Exchange[]> {
  const out: Exchange[] = [];
  for await (const e of iterable) out.push(e);
  return out;
}

const token = jwt(claims());

/** An entry the way Chrome DevTools exports an HTTP/2 request. */
function devtoolsEntry(): HarEntry & Record<string, unknown> {
  return {
    startedDateTime: '2027-01-15T08:00:00.000Z',
    time: 42.5,
    request: {
      method: 'GET',
      url: `https://tenant.example.com/api/v2/resource-servers/${encodeURIComponent(encodeURIComponent('https://api.example.com/orders/'))}`,
      headers: [
        { name: ':method', value: 'GET' },
        { name: ':path', value: '/api/v2/resource-servers/x' },
        { name: 'AUTHORIZATION', value: `Bearer ${token}` },
      ],
    },
    response: {
      status: 200,
      headers: [{ name: 'Content-Type', value: 'application/json' }],
      content: { size: 10, mimeType: 'application/json', text: Buffer.from(JSON.stringify(resourceServer())).toString('base64'), encoding: 'base64' },
    },
    _initiator: { type: 'script' },
  };
}

function har(entries: unknown[], extra: Record<string, unknown> = {}): string {
  return JSON.stringify(
    { log: { version: '1.2', creator: { name: 'x', version: '1' }, pages: [{ title: 'a "quoted" } { page' }], entries, ...extra } },
    null,
    2,
  );
}

describe('HAR', () => {
  it('reads DevTools-style entries: header case, HTTP/2 pseudo-headers, base64 bodies, ids encoded twice', async () => {
    const path = join(dir, 'devtools.har');
    writeFileSync(path, har([devtoolsEntry()]));
    const [exchange] = await collect(readRecording(path));
    expect(exchange!.request.headers[':method']).toBeUndefined();
    expect(exchange!.token.claims?.['azp']).toBe('client-full');
    expect(exchange!.response?.body?.text).toContain('"signing_alg":"HS256"');
    expect(exchange!.durationMs).toBe(42.5);
    expect(judgeExchange(exchange!)).toMatchObject({ operation: { operation: 'getResourceServer' }, findings: [] });
  });

  it('reads entries with optional fields missing and form params instead of text', async () => {
    const path = join(dir, 'minimal.har');
    writeFileSync(
      path,
      har([
        {
          request: {
            method: 'POST',
            url: 'https://t.example.com/oauth/token',
            postData: {
              mimeType: 'application/x-www-form-urlencoded',
              params: [
                { name: 'grant_type', value: 'client_credentials' },
                { name: 'audience', value: 'https://t.example.com/api/v2/' },
              ],
            },
          },
          response: { status: 200 },
        },
        {
          request: { method: 'DELETE', url: 'https://t.example.com/api/v2/token-exchange-profiles/tep_1' },
          response: { status: 0 },
          _error: 'net::ERR_CONNECTION_RESET',
        },
      ]),
    );
    const [token, failed] = await collect(readHar(path));
    expect(token!.request.body?.text).toBe('grant_type=client_credentials&audience=https%3A%2F%2Ft.example.com%2Fapi%2Fv2%2F');
    expect(failed!.response).toBeUndefined();
    expect(failed!.error).toBe('net::ERR_CONNECTION_RESET');
  });

  it('finds every entry whatever the chunk boundaries, with quotes, braces and escapes in bodies', async () => {
    const nasty = fc.string({ unit: fc.constantFrom('"', '\\', '{', '}', '[', ']', ',', ':', 'a', 'é', '\n'), maxLength: 40 });
    await fc.assert(
      fc.asyncProperty(fc.array(nasty, { minLength: 1, maxLength: 12 }), fc.integer({ min: 1, max: 64 }), fc.boolean(), async (values, chunkSize, streamed) => {
        const entries = values.map((v, i) => ({
          startedDateTime: '2027-01-15T08:00:00.000Z',
          request: {
            method: 'PATCH',
            url: `https://t/api/v2/sessions/s${i}`,
            headers: [],
            postData: { mimeType: 'application/json', text: JSON.stringify({ session_metadata: { v } }) },
          },
          response: { status: 200, headers: [], content: { size: 1, text: JSON.stringify(session({ v })) } },
        }));
        const path = join(dir, 'nasty.har');
        writeFileSync(path, har(entries));
        // Streamed: every entry goes to the streaming parser after its first 16 characters.
        const read = await collect(readHar(path, { chunkSize, ...(streamed ? { streamEntryAbove: 16 } : {}) }));
        expect(read.map((e) => e.request.url)).toEqual(entries.map((e) => e.request.url));
        expect(read.map((e) => JSON.parse(e.request.body!.text).session_metadata.v)).toEqual(values);
      }),
      { numRuns: 40 },
    );
  });

  it('rejects what is not a HAR, naming the problem', async () => {
    const cases: Array<[string, RegExp]> = [
      ['{"log": {"version": "1.2"}}', /no log.entries/],
      ['{"log": {"entries": [{"request": {"method": "GET", "url": "https://t/x"}}, ', /ends inside log.entries\[1\]/],
      ['{"log": {"entries": [{"request": {"method": "GET"}}]}}', /log.entries\[0\]: entry has no request method and url/],
      ['{"log": {"entries": [7]}}', /log.entries\[0\] is not an object/],
      ['{"log": {"entries": [{"request": }]}}', /log.entries\[0\] is not valid JSON/],
      ['', /^the file is empty$/],
      ['\n  \n', /^the file holds only blank space, no HAR document$/],
      ['\u0000\u0001 binary', /^not a readable HAR file: it begins with binary data, not with "\{"/],
      ['[{"log": {}}]', /^not a readable HAR file: it begins with "\[\{\\"log\\": \{\}\}\]", not with "\{"/],
      ['{"lo\u0001g": {"entries": []}}', /^not a readable HAR file: a string near the start is not valid JSON \(Bad control character/],
    ];
    for (const [text, message] of cases) {
      const path = join(dir, 'bad.har');
      writeFileSync(path, text);
      await expect(collect(readHar(path)), text).rejects.toThrow(message);
    }
  });
});

describe('JSONL journal', () => {
  const line = (i: number) =>
    JSON.stringify({
      startedDateTime: '2027-01-15T08:00:00.000Z',
      request: { method: 'DELETE', url: `http://127.0.0.1/api/v2/token-exchange-profiles/t${i}`, headers: [] },
      response: { status: 401, headers: [], content: { size: 0 } },
    });

  it('reads one entry per line and tolerates a last line cut short', async () => {
    const path = join(dir, 'journal.jsonl');
    writeFileSync(path, `${line(1)}\n${line(2)}\n${line(3).slice(0, 30)}`);
    const progress = { truncatedTail: false };
    const read = await collect(readJsonl(path, progress));
    expect(read).toHaveLength(2);
    expect(progress.truncatedTail).toBe(true);
  });

  it('reads every line whatever the chunk boundaries: multi-byte characters, CRLF, blank lines, no final newline', async () => {
    const value = fc.string({ unit: fc.constantFrom('a', 'é', '€', '😀', '"', '\\', '\n'), maxLength: 30 });
    await fc.assert(
      fc.asyncProperty(
        fc.array(value, { minLength: 1, maxLength: 10 }),
        fc.integer({ min: 1, max: 97 }),
        fc.boolean(),
        fc.boolean(),
        fc.boolean(),
        async (values, chunkSize, crlf, finalNewline, streamed) => {
          const lines = values.map((v, i) =>
            JSON.stringify({
              startedDateTime: '2027-01-15T08:00:00.000Z',
              request: {
                method: 'PATCH',
                url: `http://127.0.0.1/api/v2/sessions/s${i}`,
                headers: [],
                postData: { text: JSON.stringify({ session_metadata: { v } }) },
              },
              response: { status: 200, headers: [] },
            }),
          );
          const eol = crlf ? '\r\n' : '\n';
          const path = join(dir, 'chunks.jsonl');
          writeFileSync(path, `${eol}${lines.join(`${eol}${eol}`)}${finalNewline ? eol : ''}`);
          const progress = { truncatedTail: false };
          const read: Exchange[] = [];
          for await (const batch of readJsonlBatches(path, progress, { chunkSize, ...(streamed ? { streamEntryAbove: 16 } : {}) })) read.push(...batch);
          expect(progress.truncatedTail).toBe(false);
          expect(read.map((e) => JSON.parse(e.request.body!.text).session_metadata.v)).toEqual(values);
          // Ids are line numbers, blank lines counted: a finding points at the right line.
          expect(read.map((e) => e.id)).toEqual(values.map((_, i) => String(2 + 2 * i)));
        },
      ),
      { numRuns: 60 },
    );
  });

  it('rejects a malformed line that is not the last, naming it', async () => {
    const path = join(dir, 'broken.jsonl');
    writeFileSync(path, `${line(1)}\nnot json\n${line(3)}\n`);
    await expect(collect(readJsonl(path))).rejects.toThrow(/line 2 is not a JSON object \(it begins with "not json"\)/);
  });

  /** The exchanges read before the reader gave up, and why it did. */
  async function readUntilError(
    path: string,
    chunkBytes?: number,
  ): Promise<{ read: Exchange[]; error: Error | undefined; progress: { truncatedTail: boolean } }> {
    const read: Exchange[] = [];
    const progress = { truncatedTail: false };
    try {
      for await (const batch of readJsonlBatches(path, progress, { ...(chunkBytes !== undefined ? { chunkSize: chunkBytes } : {}) })) read.push(...batch);
    } catch (error) {
      return { read, error: error as Error, progress };
    }
    return { read, error: undefined, progress };
  }

  it('reads every entry around lines that are not entries, and then names the bad lines (a few, and how many more)', async () => {
    const path = join(dir, 'middle.jsonl');
    writeFileSync(path, [line(1), 'not json', line(3), '[1]', 'x', line(6), '{"request": {}}', 'y', 'z', line(10), ''].join('\n'));
    for (const chunkBytes of [7, 64, 128 * 1024]) {
      const { read, error, progress } = await readUntilError(path, chunkBytes);
      expect(read.map((e) => e.id)).toEqual(['1', '3', '6', '10']);
      expect(error?.name).toBe('RecordingError');
      expect(error?.message).toMatch(/^line 2 is not a JSON object \(.*\); 6 lines are not entries: 2, 4, 5, 7, 8 and 1 more$/);
      expect(progress.truncatedTail).toBe(false);
    }
  });

  it('a file with no complete entry is an error, never an empty recording: empty, blank, garbage, cut short', async () => {
    const cases: Array<[string, string | Buffer, RegExp]> = [
      ['empty', '', /^the file is empty$/],
      ['blank', '\n\r\n  \n', /^the file holds only blank lines, no entry$/],
      [
        'garbage, no newline',
        'garbage',
        /^no complete entry: line 1 is not a JSON object \(it begins with "garbage"\) and the file ends there without a newline/,
      ],
      ['one entry cut short', line(1).slice(0, 40), /^no complete entry: line 1 is not JSON \(/],
      ['binary', Buffer.from([0xff, 0x00, 0x01, 0x02]), /^no complete entry: line 1 is not a JSON object \(it begins with binary data\)/],
    ];
    for (const [name, text, message] of cases) {
      const path = join(dir, 'none.jsonl');
      writeFileSync(path, text);
      for (const chunkBytes of [3, 128 * 1024]) {
        const { read, error } = await readUntilError(path, chunkBytes);
        expect(read, name).toEqual([]);
        expect(error?.message, name).toMatch(message);
      }
    }
  });

  it('a junk line spanning many chunks is not held in memory: it is named by how it begins', async () => {
    const path = join(dir, 'junk.jsonl');
    writeFileSync(path, `${line(1)}\n${'x'.repeat(1 << 20)}\n${line(3)}\n`);
    const { read, error } = await readUntilError(path, 4096);
    expect(read.map((e) => e.id)).toEqual(['1', '3']);
    expect(error?.message).toBe('line 2 is not a JSON object (it begins with "xxxxxxxxxxxxxxxxxxxx")');
  });

  it('a byte order mark before the first line is not part of it', async () => {
    const path = join(dir, 'bom.jsonl');
    writeFileSync(path, Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(`${line(1)}\n`)]));
    expect(await collect(readJsonl(path))).toHaveLength(1);
  });

  it('is recognised by content when the name does not say', async () => {
    const path = join(dir, 'traffic.log');
    writeFileSync(path, `${line(1)}\n${line(2)}\n`);
    expect(await collect(readRecording(path))).toHaveLength(2);
  });
});
