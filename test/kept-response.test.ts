// Each entry of a recording is judged for what it kept of its response: headers a recorder
// dropped, or a body it kept only the size of, are not judged (and the judgement says so); what
// the entry did keep is judged in full. The kit's own entries keep everything.
import { describe, expect, it } from 'vitest';
import { claims, deleteExchange, errorExchange, getExchange, jwt } from '../fixtures/exchanges.ts';
import { exchangeFromHarEntry, type HarEntry } from '../recordings/har-entry.ts';
import { judgeExchange } from '../rules/index.ts';
import type { Exchange } from '../rules/types.ts';

type Content = NonNullable<NonNullable<HarEntry['response']>['content']>;

/** The HAR entry of a recorder that kept only the response headers named in `headers`, and `content`. */
function entryOf(e: Exchange, headers: Record<string, string>, content: Content, extra: Partial<HarEntry> = {}): HarEntry {
  const list = (h: Record<string, string>) => Object.entries(h).map(([name, value]) => ({ name, value }));
  return {
    startedDateTime: e.startedAt,
    request: { method: e.request.method, url: e.request.url, headers: list(e.request.headers) },
    response: { status: e.response!.status, headers: list(headers), content },
    ...extra,
  };
}

const DATE = { date: 'Fri, 15 Jan 2027 08:00:00 GMT' };
const JSON_TYPE = { 'content-type': 'application/json' };
const textOf = (e: Exchange): Content => ({ size: e.response!.body!.text.length, text: e.response!.body!.text });
const read = (entry: HarEntry) => exchangeFromHarEntry(entry, '0');
const throttled = () =>
  errorExchange(getExchange(undefined, 'rs_1', { requestHeaders: { authorization: `Bearer ${jwt(claims())}` } }), 429, {
    statusCode: 429,
    message: 'Too Many Requests',
  });

describe('what an entry kept of its response headers', () => {
  it('none, or only Content-Type and Content-Length: not recorded; any other header (Date, X-RateLimit-*): recorded', () => {
    const e = getExchange();
    expect(read(entryOf(e, {}, textOf(e))).response!.headersRecorded).toBe(false);
    expect(read(entryOf(e, { ...JSON_TYPE, 'content-length': '512' }, textOf(e))).response!.headersRecorded).toBe(false);
    expect(read(entryOf(e, { ...JSON_TYPE, ...DATE }, textOf(e))).response!.headersRecorded).toBeUndefined();
    expect(read(entryOf(e, { 'x-ratelimit-limit': '10' }, textOf(e))).response!.headersRecorded).toBeUndefined();
  });

  it("the kit's own entries (with _conformance) keep every header as it came, however few", () => {
    const e = getExchange();
    expect(read(entryOf(e, {}, textOf(e), { _conformance: { operation: 'getResourceServer', findings: [] } })).response!.headersRecorded).toBeUndefined();
  });

  it('a header-less 429 is not charged RL-429-HEADERS: not examined, and the judgement names it as not judged', () => {
    const judgement = judgeExchange(read(entryOf(throttled(), {}, textOf(throttled()))));
    expect(judgement.findings.map((f) => f.requirement)).not.toContain('RL-429-HEADERS');
    expect(judgement.examined).not.toContain('RL-429-HEADERS');
    expect(judgement.responseHeadersNotRecorded).toEqual(['RL-429-HEADERS']);
    const typeOnly = judgeExchange(read(entryOf(throttled(), JSON_TYPE, textOf(throttled()))));
    expect(typeOnly.responseHeadersNotRecorded).toEqual(['RL-429-HEADERS']);
    expect(typeOnly.findings).toEqual([]);
  });

  it('a 429 that kept its other headers but no X-RateLimit-* still fails RL-429-HEADERS', () => {
    const judgement = judgeExchange(read(entryOf(throttled(), { ...JSON_TYPE, ...DATE }, textOf(throttled()))));
    expect(judgement.findings.map((f) => [f.requirement, f.received])).toEqual([
      ['RL-429-HEADERS', 'a 429 without X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset'],
    ]);
    expect(judgement.responseHeadersNotRecorded).toBeUndefined();
  });

  it('no Content-Type recorded: a body that parses as JSON is JSON; one that does not still fails GEN-JSON-RESPONSE, on the body alone', () => {
    const e = getExchange();
    const json = judgeExchange(read(entryOf(e, {}, textOf(e))));
    expect(json.findings).toEqual([]);
    expect(json.examined).toContain('GEN-JSON-RESPONSE');
    const html = judgeExchange(read(entryOf(e, {}, { size: 14, text: '<html></html>' })));
    expect(html.findings.filter((f) => f.requirement === 'GEN-JSON-RESPONSE').map((f) => f.expected)).toEqual(['a body that parses as JSON']);
  });

  it('a Content-Type that was recorded is judged as it is, and so is its absence where the headers were recorded', () => {
    const e = getExchange();
    const html = judgeExchange(read(entryOf(e, { 'content-type': 'text/html' }, textOf(e))));
    expect(html.findings.map((f) => [f.requirement, f.received])).toEqual([['GEN-JSON-RESPONSE', '"text/html"']]);
    const untyped = judgeExchange(read(entryOf(e, DATE, textOf(e))));
    expect(untyped.findings.map((f) => [f.requirement, f.received])).toEqual([['GEN-JSON-RESPONSE', 'no Content-Type']]);
  });

  it('a media type "x-unknown" (what browsers record for none) is no Content-Type', () => {
    const e = getExchange();
    const exchange = read(entryOf(e, {}, { ...textOf(e), mimeType: 'x-unknown' }));
    expect(exchange.response!.headers['content-type']).toBeUndefined();
    expect(judgeExchange(exchange).findings).toEqual([]);
    expect(read(entryOf(e, {}, { ...textOf(e), mimeType: 'application/json' })).response!.headers['content-type']).toBe('application/json');
  });
});

describe('what an entry kept of its response body', () => {
  const complete = { ...JSON_TYPE, ...DATE };
  const notKept = (e: Exchange, headers: Record<string, string>, content: Content) => read(entryOf(e, headers, content)).response!.body;

  it('a size (above 0, or -1: not known) or a Content-Length above 0 without content: a body not recorded', () => {
    const e = getExchange();
    for (const [headers, content] of [
      [complete, { size: -1, mimeType: 'application/json' }],
      [complete, { size: 946, mimeType: 'application/json' }],
      [
        { ...complete, 'content-length': '946' },
        { size: 0, mimeType: 'application/json' },
      ],
      [
        { ...complete, 'content-length': '946' },
        { size: 0, text: '' },
      ],
    ] as Array<[Record<string, string>, Content]>) {
      expect(notKept(e, headers, content), JSON.stringify(content)).toEqual({ text: '', truncated: true, notRecorded: true });
    }
  });

  it('no body where none was declared (size 0, no Content-Length), nor for a HEAD, a 204 or a 304, whatever their size says', () => {
    expect(notKept(getExchange(), complete, { size: 0 })).toBeUndefined();
    expect(notKept(getExchange(), { ...complete, 'content-length': '0' }, { size: 0 })).toBeUndefined();
    const head = { ...getExchange(), request: { ...getExchange().request, method: 'HEAD' } };
    expect(notKept(head, { ...complete, 'content-length': '946' }, { size: -1 })).toBeUndefined();
    expect(notKept(deleteExchange(), complete, { size: -1, mimeType: 'x-unknown' })).toBeUndefined();
    const notModified = { ...getExchange(), response: { ...getExchange().response!, status: 304 } };
    expect(notKept(notModified, { ...complete, 'content-length': '946' }, { size: -1 })).toBeUndefined();
  });

  it('a body not recorded gets no finding ("no body" or any other) and the judgement says so; its headers are judged', () => {
    const e = getExchange();
    const judgement = judgeExchange(read(entryOf(e, complete, { size: -1, mimeType: 'application/json' })));
    expect(judgement.findings).toEqual([]);
    expect(judgement.examined).not.toContain('RS-RESPONSE-SCHEMA');
    expect(judgement.responseBodyNotRecorded).toBe(true);
    const html = judgeExchange(read(entryOf(e, { ...DATE, 'content-type': 'text/html', 'content-length': '946' }, { size: 0 })));
    expect(html.findings.map((f) => [f.requirement, f.received])).toEqual([['GEN-JSON-RESPONSE', '"text/html"']]);
  });

  it('a body not recorded with no Content-Type recorded either: GEN-JSON-RESPONSE has nothing to examine', () => {
    const judgement = judgeExchange(read(entryOf(getExchange(), {}, { size: -1 })));
    expect(judgement.findings).toEqual([]);
    expect(judgement.examined).not.toContain('GEN-JSON-RESPONSE');
  });

  it("a complete entry's missing body is still judged: a 200 with no body and size 0 fails RS-RESPONSE-SCHEMA", () => {
    const judgement = judgeExchange(read(entryOf(getExchange(), complete, { size: 0 })));
    expect(judgement.findings.map((f) => [f.requirement, f.received])).toEqual([['RS-RESPONSE-SCHEMA', 'no body']]);
    expect(judgement.responseBodyNotRecorded).toBeUndefined();
  });
});
