// How finished flows travel from the forwarding thread to the recorder thread: packed into one
// message per batch (strings, numbers and body bytes apart) and unpacked unchanged; flows that
// finish together travel together; and many exchanges in flight at once all end and are
// recorded when the proxy is stopped short.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BodyCapture } from '../proxy/forward/capture.ts';
import type { Flow } from '../proxy/flow.ts';
import { Recorder } from '../proxy/record/recorder.ts';
import { FlowBatchWriter, flowsFromBatch } from '../proxy/record/flow-batch.ts';
import { claims, jwt, resourceServer } from '../fixtures/exchanges.ts';
import { readJournal, startTestProxy } from './helpers/proxy.ts';

const LIMIT = 64;
const TOKEN = jwt(claims());

function capture(chunks: string[], complete = true, limit = LIMIT): BodyCapture {
  const body = new BodyCapture(limit);
  for (const chunk of chunks) body.add(Buffer.from(chunk));
  body.complete = complete;
  return body;
}

/** A finished GET with a response; `overrides` change what a test is about. */
function flow(id: number, overrides: Partial<Flow> = {}): Flow {
  return {
    id,
    startedAt: 1_800_000_000_000 + id,
    marks: { start: 10.5, requestEnd: 10.75, responseStart: 12.125, end: 13.5 },
    clientAddress: '127.0.0.1',
    httpVersion: 'HTTP/1.1',
    request: {
      method: 'GET',
      path: `/api/v2/resource-servers/rs_${id}`,
      headers: { host: 'tenant.example.com', authorization: `Bearer ${TOKEN}` },
      body: capture([], true),
    },
    response: {
      status: 200,
      statusText: 'OK',
      httpVersion: 'HTTP/1.1',
      headers: { 'content-type': 'application/json', 'set-cookie': ['a=1', 'b=2'] },
      body: capture(['{"id":', `"rs_${id}"}`]),
    },
    ...overrides,
  };
}

/** What the recorder thread needs of a flow, in plain data. */
function plain(f: Flow) {
  const body = (b: BodyCapture) => ({ bytes: b.bytes, overflowed: b.overflowed, complete: b.complete, captured: b.captured(undefined) });
  return {
    id: f.id,
    startedAt: f.startedAt,
    marks: f.marks,
    clientAddress: f.clientAddress,
    httpVersion: f.httpVersion,
    request: { method: f.request.method, path: f.request.path, headers: f.request.headers, body: body(f.request.body) },
    response: f.response && {
      status: f.response.status,
      statusText: f.response.statusText,
      httpVersion: f.response.httpVersion,
      headers: f.response.headers,
      body: body(f.response.body),
    },
    error: f.error,
    proxyStatus: f.proxyStatus,
  };
}

/** Packs `flows` as the forwarding thread does, copies the batch as postMessage would, and unpacks it. */
function roundTrip(flows: Flow[], dropReason?: string): Flow[] {
  const writer = new FlowBatchWriter();
  for (const f of flows) writer.add(f, dropReason);
  const { batch, transfer } = writer.take();
  expect(writer.count).toBe(0);
  return flowsFromBatch(structuredClone(batch, { transfer }), LIMIT);
}

describe('flows packed for the recorder thread', () => {
  it('unpack as they were: marks, headers, bodies (whole, cut, in several chunks), errors, failures without a response', () => {
    const flows: Flow[] = [
      flow(1),
      // A body over the limit, a request still uploading when it failed, a proxy answer, no response at all.
      flow(2, {
        request: {
          method: 'PATCH',
          path: '/api/v2/sessions/s%C3%A9',
          headers: { 'content-type': 'application/json; charset=utf-8' },
          body: capture(['{"session_metadata":', '{"note":"é ✓"}}'], false),
        },
        response: { status: 200, statusText: '', httpVersion: 'HTTP/1.0', headers: {}, body: capture(['x'.repeat(100)]) },
      }),
      flow(3, { marks: { start: 1 }, response: undefined, error: 'upstream refused the connection (ECONNREFUSED)', proxyStatus: 502 }),
      flow(4, { clientAddress: '', request: { method: 'DELETE', path: '/', headers: { 'content-length': '0' }, body: capture([]) } }),
    ];
    const expected = flows.map(plain);
    // Repeated headers arrive joined, as the rule engine would join them.
    expected[0]!.response!.headers = { 'content-type': 'application/json', 'set-cookie': 'a=1, b=2' as unknown as string[] };
    expected[3]!.response!.headers = expected[0]!.response!.headers;
    expect(roundTrip(flows).map(plain)).toEqual(expected);
  });

  it('carry why the bodies were let go when the recorder is behind, and no bytes', () => {
    const [unpacked] = roundTrip([flow(7)], 'the recorder was behind the traffic (proxy overloaded)');
    expect(unpacked!.response!.body.keptBytes).toBe(0);
    expect(unpacked!.response!.body.captured(undefined)).toEqual({
      text: '[body not captured: 13 bytes; the recorder was behind the traffic (proxy overloaded)]',
      truncated: true,
    });
    expect(unpacked!.request.body.captured(undefined)).toBeUndefined();
  });

  it('start afresh after each batch', () => {
    const writer = new FlowBatchWriter();
    writer.add(flow(1));
    writer.take();
    writer.add(flow(2));
    const { batch, transfer } = writer.take();
    expect(flowsFromBatch(structuredClone(batch, { transfer }), LIMIT).map((f) => f.id)).toEqual([2]);
  });
});

describe('the recorder', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tmi-proxy-batch-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('sends flows finishing in the same turn of the event loop as one batch, and records every one', async () => {
    const journalPath = join(dir, 'batch.jsonl');
    const recorder = await Recorder.start(
      {
        targetOrigin: 'https://tenant.example.com',
        reportTarget: 'https://tenant.example.com',
        journalPath,
        reportDir: join(dir, 'reports'),
        failOn: 'must',
        nonGlobalClients: [],
        maxBodyBytes: LIMIT,
      },
      () => {},
    );
    for (let id = 1; id <= 200; id++) recorder.record(flow(id));
    const summary = await recorder.stop();
    expect(recorder.batches).toBe(1);
    expect(summary.journal.written).toBe(200);
    const lines = readFileSync(journalPath, 'utf8').trimEnd().split('\n');
    expect(lines.map((line) => (JSON.parse(line) as { request: { url: string } }).request.url)).toEqual(
      Array.from({ length: 200 }, (_, i) => `https://tenant.example.com/api/v2/resource-servers/rs_${i + 1}`),
    );
  });
});

describe('many exchanges in flight when the proxy is stopped short', () => {
  let target: Server;
  let origin: string;
  const EXCHANGES = 40;

  beforeAll(async () => {
    // Answers every other request at once, and never answers the rest.
    let n = 0;
    target = createServer((req, res) => {
      req.resume();
      if (n++ % 2 === 1) return;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(resourceServer()));
    });
    await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(target.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    target.closeAllConnections();
    await new Promise((resolve) => target.close(resolve));
  });

  it('all end, in any order, and every one is recorded, the cut ones with their error', async () => {
    const under = await startTestProxy(origin);
    try {
      const answers = Array.from({ length: EXCHANGES }, (_, i) =>
        fetch(`${under.proxy.origin}/api/v2/resource-servers/rs_${i}`, { headers: { authorization: `Bearer ${TOKEN}` } }).then(
          async (response) => (await response.text(), response.status),
          () => 'cut',
        ),
      );
      // Wait until half have been answered: the other half are in flight.
      while (under.proxy.recorded < EXCHANGES / 2) await new Promise((resolve) => setTimeout(resolve, 5));
      const stopping = under.proxy.stop();
      under.proxy.hurry();
      const summary = await stopping;
      const outcomes = await Promise.all(answers);
      expect(outcomes.filter((o) => o === 200)).toHaveLength(EXCHANGES / 2);
      expect(outcomes.filter((o) => o === 'cut')).toHaveLength(EXCHANGES / 2);
      expect(summary.journal.written).toBe(EXCHANGES);
      const entries = readJournal(under.journalPath);
      expect(entries.filter((e) => e.response!.status === 200)).toHaveLength(EXCHANGES / 2);
      expect(
        entries.filter((e) => e._conformance.error === undefined && (e as { _error?: string })._error === 'the proxy stopped before the exchange finished'),
      ).toHaveLength(EXCHANGES / 2);
    } finally {
      await under.dispose();
    }
  });
});
