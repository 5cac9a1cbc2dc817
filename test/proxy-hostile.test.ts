// Hostile and broken requests: each is refused with a clear answer or forwarded correctly, to
// the target and nowhere else, and the proxy keeps serving. Requests go over raw sockets so that
// nothing (a client library) tidies them up first.
import { createHash } from 'node:crypto';
import { createServer, request, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { claims, jwt, session } from '../fixtures/exchanges.ts';
import { rawExchange, readJournal, recorded, startTestProxy, statusOf, type ProxyUnderTest } from './helpers/proxy.ts';

const TOKEN = jwt(claims());

interface Received {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  rawHeaders: string[];
  body: Buffer;
}

describe('hostile requests', () => {
  let target: Server;
  let targetHost: string;
  let under: ProxyUnderTest;
  let received: Received[] = [];
  let exchanges = 0;

  /** Raw request to the proxy; `expectExchange`: it should become a recorded exchange. */
  const raw = (text: string | Buffer, expectExchange: boolean) => {
    if (expectExchange) exchanges++;
    return rawExchange(under.proxy.origin, text);
  };
  const lastEntry = async () => {
    await recorded(under.proxy, exchanges);
    await new Promise((resolve) => setImmediate(resolve));
    return readJournal(under.journalPath).at(-1)!;
  };

  beforeAll(async () => {
    // The target answers every request with a conforming session, and remembers what it got.
    target = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        received.push({ method: req.method!, url: req.url!, headers: req.headers, rawHeaders: req.rawHeaders, body: Buffer.concat(chunks) });
        const id = decodeURIComponent(/\/sessions\/([^/?]+)/.exec(req.url!)?.[1] ?? 'sess_1');
        const body = JSON.stringify(session({ plan: 'gold' }, id));
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
        res.end(body);
      });
    });
    await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve));
    targetHost = `127.0.0.1:${(target.address() as AddressInfo).port}`;
    under = await startTestProxy(`http://${targetHost}`);
  });

  beforeEach(() => {
    received = [];
  });

  afterAll(async () => {
    await under?.dispose();
    await new Promise((resolve) => target?.close(resolve));
  });

  it('absolute-form request targets are refused, whatever host they name, and never forwarded', async () => {
    for (const host of ['evil.example', targetHost, '169.254.169.254']) {
      const answer = await raw(`GET http://${host}/api/v2/sessions/sess_1 HTTP/1.1\r\nHost: ${host}\r\n\r\n`, false);
      expect(statusOf(answer), host).toBe(400);
      expect(answer).toContain('"errorCode":"absolute_form_refused"');
    }
    const asterisk = await raw('OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n', false);
    expect(statusOf(asterisk)).toBe(400);
    expect(received).toEqual([]);
  });

  it('CONNECT is refused and never tunnels anywhere', async () => {
    const answer = await raw('CONNECT evil.example:443 HTTP/1.1\r\nHost: evil.example:443\r\n\r\n', false);
    expect(statusOf(answer)).toBe(405);
    expect(answer).toContain('"errorCode":"connect_refused"');
    expect(received).toEqual([]);
  });

  it('a spoofed Host is replaced by the target host; hop-by-hop and proxy credentials are not forwarded', async () => {
    const answer = await raw(
      'GET /api/v2/sessions/sess_1 HTTP/1.1\r\nHost: evil.example\r\nX-Forwarded-Host: evil.example\r\nConnection: close, X-Hop\r\nX-Hop: secret-for-the-proxy\r\n' +
        `Proxy-Authorization: Basic dXNlcjpwYXNz\r\nAuthorization: Bearer ${TOKEN}\r\n\r\n`,
      true,
    );
    expect(statusOf(answer)).toBe(200);
    expect(received).toHaveLength(1);
    const got = received[0]!.headers;
    expect(got.host).toBe(targetHost);
    expect(got['x-hop']).toBeUndefined();
    expect(got['proxy-authorization']).toBeUndefined();
    expect(got.authorization).toBe(`Bearer ${TOKEN}`); // the client's credential is for the target
    expect(got['x-forwarded-host']).toBe('evil.example'); // passed through untouched, as any header
    const entry = await lastEntry();
    expect(entry.request!.headers!.find((h) => h.name === 'host')?.value).toBe(targetHost);
    expect(entry.request!.url).toBe(`http://${targetHost}/api/v2/sessions/sess_1`);
  });

  it('paths reach the target exactly as sent (no slash folding, no re-encoding)', async () => {
    const answer = await raw(
      `GET //api/v2//sessions/a%2Fb%252F?x=%zz&y=1 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TOKEN}\r\nConnection: close\r\n\r\n`,
      true,
    );
    expect(statusOf(answer)).toBe(200);
    expect(received[0]!.url).toBe('//api/v2//sessions/a%2Fb%252F?x=%zz&y=1');
    expect((await lastEntry()).request!.url).toBe(`http://${targetHost}//api/v2//sessions/a%2Fb%252F?x=%zz&y=1`);
  });

  it('malformed requests get a 400 or 431 and are never forwarded', async () => {
    const cases: Array<[string, string | Buffer, number]> = [
      ['invalid header name', 'GET /api/v2/sessions/s HTTP/1.1\r\nHost: x\r\nBad Header: 1\r\n\r\n', 400],
      ['control character in a header value', 'GET /api/v2/sessions/s HTTP/1.1\r\nHost: x\r\nX-A: a\x01b\r\n\r\n', 400],
      ['not HTTP at all', '\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03 hello\r\n\r\n', 400],
      [
        'Content-Length and Transfer-Encoding (smuggling)',
        'POST /api/v2/sessions/s HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
        400,
      ],
      ['two Content-Length values', 'POST /api/v2/sessions/s HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nContent-Length: 5\r\n\r\nabcd', 400],
      ['space in the request target', 'GET /api/v2/sessions/a b HTTP/1.1\r\nHost: x\r\n\r\n', 400],
      ['headers over 64 KiB', `GET /api/v2/sessions/s HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(70 * 1024)}\r\n\r\n`, 431],
    ];
    for (const [name, text, status] of cases) {
      const answer = await raw(text, false);
      expect(statusOf(answer), name).toBe(status);
      expect(answer, name).toContain('"errorCode"');
    }
    expect(received).toEqual([]);
  });

  it('bytes outside ASCII in the request target are refused (the HTTP parser does), never forwarded', async () => {
    const head = Buffer.concat([Buffer.from('GET /api/v2/sessions/sess_'), Buffer.from([0xe9, 0xff]), Buffer.from(' HTTP/1.1\r\nHost: x\r\n\r\n')]);
    const answer = await raw(head, false);
    expect(statusOf(answer)).toBe(400);
    expect(received).toEqual([]);
  });

  it('bytes outside UTF-8 in a body and a header value are forwarded unchanged; the recording shows them replaced', async () => {
    const body = Buffer.concat([Buffer.from('{"session_metadata":{"k":"'), Buffer.from([0xff, 0xfe, 0xc3]), Buffer.from('"}}')]);
    const head = Buffer.from(
      `PATCH /api/v2/sessions/sess_1 HTTP/1.1\r\nHost: x\r\nConnection: close\r\nX-Note: caf\xe9\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`,
      'latin1',
    );
    const answer = await raw(Buffer.concat([head, body]), true);
    expect(statusOf(answer)).toBe(200);
    expect(received[0]!.body.equals(body)).toBe(true);
    expect(Buffer.from(received[0]!.headers['x-note'] as string, 'latin1').equals(Buffer.from('caf\xe9', 'latin1'))).toBe(true);
    const entry = await lastEntry();
    expect(entry.request!.postData!.text).toBe('{"session_metadata":{"k":"\ufffd\ufffd\ufffd"}}');
    expect(entry._conformance.operation).toBe('updateSession');
  });

  it('a body that is not JSON is forwarded as is and earns the client a finding', async () => {
    const body = '{"session_metadata": {"plan": "gold",,}';
    const answer = await raw(
      `PATCH /api/v2/sessions/sess_1 HTTP/1.1\r\nHost: x\r\nConnection: close\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
      true,
    );
    expect(statusOf(answer)).toBe(200);
    expect(received[0]!.body.toString()).toBe(body);
    const entry = await lastEntry();
    expect(entry._conformance.findings).toContainEqual(expect.objectContaining({ requirement: 'SES-REQUEST-BODY', subject: 'client' }));
    // The target accepted what it should have refused: that one is the implementation's.
    expect(entry._conformance.findings).toContainEqual(expect.objectContaining({ requirement: 'SES-INVALID-UPDATE-REFUSED', subject: 'implementation' }));
  });

  it('a body nested 100,000 deep is forwarded, recorded as not judged, and the proxy judges on', async () => {
    const depth = 100_000;
    const body = `{"session_metadata":${'['.repeat(depth)}${']'.repeat(depth)}}`;
    const answer = await raw(
      `PATCH /api/v2/sessions/sess_1 HTTP/1.1\r\nHost: x\r\nConnection: close\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
      true,
    );
    expect(statusOf(answer)).toBe(200);
    expect(received[0]!.body.toString()).toBe(body);
    const entry = (await lastEntry()) as Awaited<ReturnType<typeof lastEntry>> & { _conformance: { notJudged?: string } };
    expect(entry._conformance.error).toBeUndefined();
    expect(entry._conformance).toMatchObject({ operation: 'updateSession', findings: [], notJudged: 'request body nested deeper than 64 levels' });
    expect(entry.request!.postData!.text).toBe(body);
    // The next exchange is judged as usual.
    const next = '{"session_metadata": {"plan": "gold",,}';
    await raw(
      `PATCH /api/v2/sessions/sess_1 HTTP/1.1\r\nHost: x\r\nConnection: close\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Type: application/json\r\nContent-Length: ${next.length}\r\n\r\n${next}`,
      true,
    );
    expect((await lastEntry())._conformance.findings).toContainEqual(expect.objectContaining({ requirement: 'SES-REQUEST-BODY', subject: 'client' }));
  });

  it('a client that aborts in the middle of its request body: recorded as aborted, nothing answered', async () => {
    exchanges++;
    await new Promise<void>((resolve) => {
      const req = request(`${under.proxy.origin}/api/v2/sessions/sess_1`, {
        method: 'PATCH',
        headers: { 'content-type': 'application/json', 'content-length': '1000', authorization: `Bearer ${TOKEN}` },
        agent: false,
      });
      req.on('error', () => resolve());
      req.on('close', () => resolve());
      req.write('{"session_metadata":', () => setTimeout(() => req.destroy(), 20));
    });
    const entry = await lastEntry();
    expect(entry._error).toMatch(/^client (aborted the request|closed the connection before the response)$/);
    expect(entry.response!.status).toBe(0);
    expect(entry.request!.postData!._truncated).toBe(true);
  });

  it('keeps serving after all of it', async () => {
    const answer = await raw(`GET /api/v2/sessions/sess_1 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TOKEN}\r\nConnection: close\r\n\r\n`, true);
    expect(statusOf(answer)).toBe(200);
    await recorded(under.proxy, exchanges);
    const summary = await under.proxy.stop();
    expect(summary.counts.exchanges).toBe(exchanges);
    expect(summary.counts.refused).toBeGreaterThanOrEqual(12);
    expect(readJournal(under.journalPath)).toHaveLength(exchanges);
    const bodies = readJournal(under.journalPath).map((e) => createHash('sha256').update(JSON.stringify(e)).digest('hex'));
    expect(new Set(bodies).size).toBe(exchanges);
  });
});
