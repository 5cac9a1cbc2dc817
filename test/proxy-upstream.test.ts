// What the target does wrong, or badly, never takes the proxy down: compressed bodies are
// judged decoded while the client gets the bytes as sent; huge bodies stream through whole while
// the capture stays bounded; refused, reset, stalled and malformed answers become 502/504 with
// a JSON body (or a cut connection once the response has begun), each recorded with its error.
import { createHash } from 'node:crypto';
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mask } from '../core/redact.ts';
import { exchangeFromHarEntry } from '../recordings/read.ts';
import { judgeExchange } from '../rules/index.ts';
import { jwt, claims, resourceServer } from '../fixtures/exchanges.ts';
import { rawExchange, readJournal, recorded, startTestProxy, statusOf, type ProxyUnderTest, type RecordedEntry } from './helpers/proxy.ts';

const TOKEN = jwt(claims());
/** A conforming resource server whose id is the one asked for. */
const resourceServerText = (id: string) => JSON.stringify(resourceServer({ id }));
const HUGE_BYTES = 24 * 1024 * 1024;
/** Far more than the sockets and stream buffers between target and client can hold. */
const HELD_BACK_BYTES = 64 * 1024 * 1024;
const CAP = 64 * 1024;
/** 64 MiB of spaces, compressed to ~64 KiB: decoding must stop at the capture limit. */
const GZIP_BOMB = gzipSync(Buffer.alloc(64 * 1024 * 1024, 0x20));
/** What the recording keeps of it: the same, its signing secret masked. */
const recordedResourceServerText = (id: string) =>
  resourceServerText(id).replace(/"signing_secret":"([^"]*)"/, (_m, secret: string) => `"signing_secret":"${mask(secret)}"`);
const RATE_HEADERS = { 'x-ratelimit-limit': '100', 'x-ratelimit-remaining': '99', 'x-ratelimit-reset': String(Math.floor(Date.now() / 1000) + 60) };

/** A target that misbehaves on purpose, one way per resource id. */
function scriptedTarget(): Server {
  const sockets = new Set<Socket>();
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const id =
      /\/resource-servers\/([^/?]+)/.exec(req.url ?? '')?.[1] ??
      /\/sessions\/([^/?]+)/.exec(req.url ?? '')?.[1] ??
      /\/token-exchange-profiles\/([^/?]+)/.exec(req.url ?? '')?.[1] ??
      '';
    const json = (body: Buffer | string, headers: Record<string, string> = {}) => {
      res.writeHead(200, { 'content-type': 'application/json', ...RATE_HEADERS, ...headers });
      res.end(body);
    };
    if (id === 'echo-upload') {
      // Hashes the body it receives and answers with the hash (and the count).
      const hash = createHash('sha256');
      let bytes = 0;
      req.on('data', (chunk: Buffer) => {
        hash.update(chunk);
        bytes += chunk.length;
      });
      req.on('end', () => json(JSON.stringify({ bytes, sha256: hash.digest('hex') })));
      return;
    }
    req.resume();
    switch (id) {
      case 'gzip':
        return json(gzipSync(resourceServerText(id)), { 'content-encoding': 'gzip' });
      case 'deflate':
        return json(deflateSync(resourceServerText(id)), { 'content-encoding': 'deflate' });
      case 'br':
        return json(brotliCompressSync(resourceServerText(id)), { 'content-encoding': 'br' });
      case 'gzip-bomb':
        return json(GZIP_BOMB, { 'content-encoding': 'gzip' });
      case 'not-json':
        return json('{"id": "rs_1", "name": ');
      case 'huge':
      case 'held-back': {
        const total = id === 'huge' ? HUGE_BYTES : HELD_BACK_BYTES;
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(total), ...RATE_HEADERS });
        const chunk = Buffer.alloc(64 * 1024, 0x61);
        let left = total;
        const pump = () => {
          while (left > 0) {
            const piece = chunk.subarray(0, Math.min(chunk.length, left));
            left -= piece.length;
            if (!res.write(piece)) return void res.once('drain', pump);
          }
          res.end();
          if (id === 'held-back') heldBackSent = true;
        };
        return pump();
      }
      case 'bad-status':
        // A status line the client side parses, but that no server may send (codes run from 100 to 999).
        req.socket.end('HTTP/1.1 099 Odd\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}');
        return;
      case 'stall':
        return; // never answers
      case 'stall-mid-body':
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000', ...RATE_HEADERS });
        res.write('{"id":');
        return; // and never finishes
      case 'reset':
        return req.socket.destroy();
      case 'head-then-stall':
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000', ...RATE_HEADERS });
        res.flushHeaders();
        return; // and no body
      case 'head-then-reset':
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000', ...RATE_HEADERS });
        res.flushHeaders();
        setTimeout(() => req.socket.destroy(), 20);
        return;
      case 'reset-mid-body':
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000', ...RATE_HEADERS });
        res.write('{"id":', () => setImmediate(() => req.socket.destroy()));
        return;
      case 'no-content-with-body':
        // A 204 may have no body (RFC 9110 §15.3.5); Node's client parser reads these bytes as the start of a next response.
        req.socket.write(
          `HTTP/1.1 204 No Content\r\n${Object.entries(RATE_HEADERS)
            .map(([name, value]) => `${name}: ${value}\r\n`)
            .join('')}content-length: 16\r\n\r\n{"deleted":true}`,
        );
        return;
      case 'no-content-then-body':
        // The same, the body in a later packet: the connection can no longer be trusted for a next request.
        res.writeHead(204, { ...RATE_HEADERS, 'content-length': '16' });
        res.end(() => setTimeout(() => res.socket?.write('{"deleted":true}'), 30)); // Node's server sends no body with a 204: written under it
        return;
      case 'garbage':
        req.socket.end('this is not HTTP at all\r\n\r\n');
        return;
      case 'slow-stream':
        // Headers, then a chunk now and a chunk later: the client leaves in between.
        res.writeHead(200, { 'content-type': 'application/json', ...RATE_HEADERS });
        res.write('{"id":"rs_1",');
        res.on('close', () => slowStreamClosed.resolve(res.writableFinished));
        return;
      default:
        return json(resourceServerText(id));
    }
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.on('close', () => {
    for (const socket of sockets) socket.destroy();
  });
  return server;
}

/** The target has written the whole held-back response. */
let heldBackSent = false;

/** Resolves with whether the slow-stream response finished (false: it was closed unfinished). */
let slowStreamClosed: { promise: Promise<boolean>; resolve: (finished: boolean) => void };

function deferred<T>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

/** A request through the proxy without decompressing: the raw bytes, status and headers. */
function rawRequest(
  origin: string,
  method: string,
  path: string,
): Promise<{ status: number; headers: IncomingMessage['headers']; body: Buffer; error?: string }> {
  return new Promise((resolve) => {
    const req = request(
      origin + path,
      { method, headers: { authorization: `Bearer ${TOKEN}`, 'accept-encoding': 'gzip, deflate, br' }, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
        res.on('error', (error) => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks), error: error.message }));
      },
    );
    req.on('error', (error) => resolve({ status: 0, headers: {}, body: Buffer.alloc(0), error: error.message }));
    req.end();
  });
}

describe('the proxy in front of a misbehaving target', () => {
  let target: Server;
  let targetOrigin: string;
  let under: ProxyUnderTest;
  let exchanges = 0;

  const get = (id: string) => {
    exchanges++;
    return rawRequest(under.proxy.origin, 'GET', `/api/v2/resource-servers/${id}`);
  };
  const entryFor = async (id: string): Promise<RecordedEntry> => {
    await recorded(under.proxy, exchanges);
    await new Promise((resolve) => setImmediate(resolve)); // the batch's journal write
    return readJournal(under.journalPath)
      .filter((e) => /\/(resource-servers|sessions|token-exchange-profiles)\/([^/?]+)/.exec(e.request!.url!)?.[2] === id)
      .at(-1)!;
  };

  beforeAll(async () => {
    target = scriptedTarget();
    await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve));
    targetOrigin = `http://127.0.0.1:${(target.address() as AddressInfo).port}`;
    under = await startTestProxy(targetOrigin, { maxBodyBytes: CAP, upstreamTimeoutMs: 300 });
  });

  afterAll(async () => {
    await under?.dispose();
    await new Promise((resolve) => target?.close(resolve));
  });

  it.each(['gzip', 'deflate', 'br'])('%s: the client gets the bytes as sent; the rules judge the decoded body', async (coding) => {
    const answer = await get(coding);
    expect(answer.status).toBe(200);
    expect(answer.headers['content-encoding']).toBe(coding);
    const text = resourceServerText(coding);
    const sentBytes = coding === 'gzip' ? gzipSync(text) : coding === 'deflate' ? deflateSync(text) : brotliCompressSync(text);
    expect(answer.body.equals(sentBytes)).toBe(true);
    const entry = await entryFor(coding);
    expect(recordedResourceServerText(coding)).not.toBe(text);
    expect(entry.response!.content!.text).toBe(recordedResourceServerText(coding));
    expect(entry.response!.content!._truncated).toBeUndefined();
    expect(entry._conformance).toMatchObject({ operation: 'getResourceServer', findings: [] });
  });

  it('a compressed body that inflates past the capture limit is marked not captured, not judged', async () => {
    const answer = await get('gzip-bomb');
    expect(answer.status).toBe(200);
    const entry = await entryFor('gzip-bomb');
    expect(entry.response!.content!._truncated).toBe(true);
    expect(entry.response!.content!.text).toMatch(/^\[body not captured: gzip-encoded body of \d+ bytes decodes to more than 65536 bytes\]$/);
    expect(entry._conformance.findings).toEqual([]);
  });

  it('malformed JSON from the target is a finding, not a crash', async () => {
    const answer = await get('not-json');
    expect(answer.body.toString()).toBe('{"id": "rs_1", "name": ');
    const entry = await entryFor('not-json');
    expect(entry._conformance.findings.map((f) => f.requirement)).toContain('GEN-JSON-RESPONSE');
  });

  it('a huge response streams to the client whole; the capture keeps the first bytes only', async () => {
    const answer = await get('huge');
    expect(answer.status).toBe(200);
    expect(answer.body.length).toBe(HUGE_BYTES);
    const entry = await entryFor('huge');
    expect(entry.response!.content!._truncated).toBe(true);
    expect((entry.response!.content!.text as string).length).toBe(CAP);
    expect(entry.response!.bodySize).toBe(HUGE_BYTES);
    // Recorded as what it is: its size, its hash and its first bytes.
    expect(entry.response!.content!.size).toBe(HUGE_BYTES);
    expect(entry.response!.content!._overLimit).toEqual({
      bytes: HUGE_BYTES,
      limit: CAP,
      sha256: createHash('sha256').update(Buffer.alloc(HUGE_BYTES, 0x61)).digest('hex'),
    });
    // Not captured in full, so not judged as JSON; the report says its content was not judged, and where.
    expect(entry._conformance.findings).toEqual([]);
    const read = exchangeFromHarEntry(entry, 'huge', CAP);
    expect(read.response!.body).toMatchObject({ truncated: true, overLimit: { bytes: HUGE_BYTES, limit: CAP } });
    expect(judgeExchange(read).bodiesOverLimit).toEqual([{ body: 'response', bytes: HUGE_BYTES, limit: CAP, sha256: expect.stringMatching(/^[0-9a-f]{64}$/) }]);
  });

  it('a huge request body reaches the target whole; the capture keeps the first bytes only', async () => {
    const body = Buffer.alloc(8 * 1024 * 1024, 0x62);
    exchanges++;
    const response = await fetch(`${under.proxy.origin}/api/v2/sessions/echo-upload`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body,
    });
    expect(await response.json()).toEqual({ bytes: body.length, sha256: createHash('sha256').update(body).digest('hex') });
    const entry = await entryFor('echo-upload');
    expect(entry.request!.postData!._truncated).toBe(true);
    expect((entry.request!.postData!.text as string).length).toBe(CAP);
    expect((entry.request as { bodySize?: number }).bodySize).toBe(body.length);
    expect(entry.request!.postData!._overLimit).toEqual({ bytes: body.length, limit: CAP, sha256: createHash('sha256').update(body).digest('hex') });
  });

  it('a target that never answers: 504 with a JSON body, recorded with its error', async () => {
    const answer = await get('stall');
    expect(answer.status).toBe(504);
    expect(answer.headers['x-tmi-conform-proxy-error']).toBe('upstream_timeout');
    expect(JSON.parse(answer.body.toString())).toMatchObject({ statusCode: 504, errorCode: 'upstream_timeout' });
    const entry = await entryFor('stall');
    expect(entry.response!.status).toBe(0);
    expect(entry._error).toBe('upstream did not answer within 300 ms');
    expect(entry.comment).toContain('the proxy answered 504');
    // The proxy's own 504 is not the implementation's answer: nothing to judge against it.
    expect(entry._conformance.findings).toEqual([]);
  });

  it('a target that resets the connection: 502, recorded', async () => {
    const answer = await get('reset');
    expect(answer.status).toBe(502);
    expect(JSON.parse(answer.body.toString())).toMatchObject({ statusCode: 502, errorCode: 'upstream_reset' });
    expect((await entryFor('reset'))._error).toMatch(/upstream closed the connection without answering/);
  });

  it('a target that answers with something that is not HTTP: 502, recorded', async () => {
    const answer = await get('garbage');
    expect(answer.status).toBe(502);
    expect((await entryFor('garbage'))._error).toMatch(/^upstream failed: HPE_/);
  });

  it('a client that reads slowly holds the target back (the proxy buffers nothing), and its slowness is not taken for a silent target', async () => {
    heldBackSent = false;
    exchanges++;
    const received = await new Promise<{ bytes: number; error?: string; sentWhilePaused: boolean }>((resolve) => {
      const req = request(`${under.proxy.origin}/api/v2/resource-servers/held-back`, { headers: { authorization: `Bearer ${TOKEN}` }, agent: false }, (res) => {
        let bytes = 0;
        res.on('data', (chunk: Buffer) => (bytes += chunk.length));
        res.pause();
        // Longer than the proxy's upstream timeout (300 ms): the target is silent because the client is.
        setTimeout(() => {
          const sentWhilePaused = heldBackSent;
          res.on('end', () => resolve({ bytes, sentWhilePaused }));
          res.on('error', (error) => resolve({ bytes, error: error.message, sentWhilePaused }));
          res.resume();
        }, 900);
      });
      req.on('error', (error) => resolve({ bytes: 0, error: error.message, sentWhilePaused: heldBackSent }));
      req.end();
    });
    expect(received.sentWhilePaused).toBe(false);
    expect(received).toEqual({ bytes: HELD_BACK_BYTES, sentWhilePaused: false });
    const entry = await entryFor('held-back');
    expect(entry._error).toBeUndefined();
    expect(entry.response!.bodySize).toBe(HELD_BACK_BYTES);
  });

  it('a target whose status line cannot be relayed (status 099): 502 with a JSON body, recorded', async () => {
    const answer = await get('bad-status');
    expect(answer.status).toBe(502);
    expect(JSON.parse(answer.body.toString())).toMatchObject({ statusCode: 502, errorCode: 'upstream_invalid_response' });
    const entry = await entryFor('bad-status');
    expect(entry._error).toBe("the target's response head cannot be relayed (Invalid status code: 99)");
    expect(entry.comment).toContain('the proxy answered 502');
  });

  it('a target that sends its head and then stalls or resets: 504 or 502 with a JSON body (nothing had reached the client yet), recorded', async () => {
    for (const [id, status, code, error] of [
      ['head-then-stall', 504, 'upstream_timeout', /^upstream did not answer within 300 ms$/],
      [
        'head-then-reset',
        502,
        'upstream_reset',
        /^upstream closed the connection (after the response head, before its body|without answering \(ECONNRESET\))$/,
      ],
    ] as const) {
      const answer = await get(id);
      expect(answer.status, id).toBe(status);
      expect(JSON.parse(answer.body.toString())).toMatchObject({ statusCode: status, errorCode: code });
      const entry = await entryFor(id);
      expect(entry._error).toMatch(error);
      expect(entry.response!.status).toBe(0);
      expect(entry.comment).toContain(`the proxy answered ${status}`);
    }
  });

  it('a target that stalls or resets in the middle of the body: the client connection is cut, the exchange recorded', async () => {
    for (const [id, error] of [
      ['stall-mid-body', 'upstream sent nothing for 300 ms in the middle of the response'],
      ['reset-mid-body', 'upstream closed the connection in the middle of the response'],
    ] as const) {
      const answer = await get(id);
      expect(answer.status).toBe(200);
      expect(answer.error, id).toBeDefined(); // the client sees the truncation, it is not told "complete"
      const entry = await entryFor(id);
      expect(entry._error).toBe(error);
      expect(entry.response!.status).toBe(200);
      expect(entry.response!.content!._truncated).toBe(true);
    }
  });

  it('a client that leaves mid-response: recorded as such, and the target connection is let go', async () => {
    slowStreamClosed = deferred<boolean>();
    exchanges++;
    await new Promise<void>((resolve) => {
      const req = request(
        `${under.proxy.origin}/api/v2/resource-servers/slow-stream`,
        { headers: { authorization: `Bearer ${TOKEN}` }, agent: false },
        (res) => {
          res.once('data', () => {
            req.destroy();
            resolve();
          });
        },
      );
      req.on('error', () => {});
      req.end();
    });
    expect(await slowStreamClosed.promise).toBe(false); // the target saw its response closed unfinished
    const entry = await entryFor('slow-stream');
    expect(entry._error).toBe('client closed the connection before the response was complete');
    expect(entry.response!.content!._truncated).toBe(true);
  });

  it('a 204 that carries a body: the client gets the 204, the exchange is judged as a 204 with a body (not a 502)', async () => {
    exchanges++;
    const answer = await rawRequest(under.proxy.origin, 'DELETE', '/api/v2/token-exchange-profiles/no-content-with-body');
    expect(answer.status).toBe(204);
    const entry = await entryFor('no-content-with-body');
    expect(entry.response!.status).toBe(204);
    expect(entry.response!.content!.text).toBe('{"deleted":true}');
    expect(entry._conformance.findings.map((f) => f.requirement)).toContain('TEP-DELETE-NO-BODY');
  });

  it('a 204 whose body comes in a later packet: judged by its Content-Length, and the next request does not get the stray bytes', async () => {
    exchanges++;
    const answer = await rawRequest(under.proxy.origin, 'DELETE', '/api/v2/token-exchange-profiles/no-content-then-body');
    expect(answer.status).toBe(204);
    await new Promise((resolve) => setTimeout(resolve, 60)); // the stray bytes have arrived
    const next = await get('after-stray-bytes');
    expect(next.status).toBe(200);
    const entry = await entryFor('no-content-then-body');
    expect(entry._conformance.findings.map((f) => f.requirement)).toContain('TEP-DELETE-NO-BODY');
  });

  it('after all that, the proxy still serves', async () => {
    const answer = await get('rs_1');
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body.toString())).toEqual(resourceServer({ id: 'rs_1' }));
    expect((await entryFor('rs_1'))._conformance).toMatchObject({ operation: 'getResourceServer', findings: [] });
  });
});

describe('the proxy in front of a target that is down', () => {
  let under: ProxyUnderTest;
  let closedPort: number;

  beforeAll(async () => {
    // A port that was free a moment ago and nobody listens on now.
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    closedPort = (probe.address() as AddressInfo).port;
    await new Promise((resolve) => probe.close(resolve));
    under = await startTestProxy(`http://127.0.0.1:${closedPort}`);
  });

  afterAll(async () => {
    await under?.dispose();
  });

  it('answers 502 with a JSON body every time, records each attempt, and stays up', async () => {
    for (let i = 0; i < 3; i++) {
      const raw = await rawExchange(under.proxy.origin, `GET /api/v2/resource-servers/rs_${i} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
      expect(statusOf(raw)).toBe(502);
      expect(raw).toContain('"errorCode":"upstream_refused"');
    }
    await recorded(under.proxy, 3);
    await under.proxy.stop();
    const entries = readJournal(under.journalPath);
    expect(entries.map((e) => e._error)).toEqual(Array(3).fill('upstream refused the connection (ECONNREFUSED)'));
    expect(
      entries.every(
        (e) => e.response!.status === 0 && e.request!.url === `http://127.0.0.1:${closedPort}/api/v2/resource-servers/${e.request!.url!.split('/').at(-1)}`,
      ),
    ).toBe(true);
  });
});
