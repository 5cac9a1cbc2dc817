// The recorder is a function of its settings and its port (proxy/record/recorder-worker.ts): two
// of them run side by side in one thread, each recording only what its own port is sent.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MessageChannel, type MessagePort } from 'node:worker_threads';
import { afterAll, describe, expect, it } from 'vitest';
import { BodyCapture } from '../proxy/forward/capture.ts';
import type { Flow } from '../proxy/flow.ts';
import { FlowBatchWriter } from '../proxy/record/flow-batch.ts';
import type { FromRecorder, RecorderSettings, RecorderSummary } from '../proxy/record/messages.ts';
import { runRecorder } from '../proxy/record/recorder-worker.ts';

const LIMIT = 1024;

function body(text: string): BodyCapture {
  const capture = new BodyCapture(LIMIT);
  if (text !== '') capture.add(Buffer.from(text));
  capture.complete = true;
  return capture;
}

/** A GET of a resource server, answered 200 with `id`. */
function flow(id: number, path: string): Flow {
  return {
    id,
    startedAt: 1_800_000_000_000 + id,
    marks: { start: 1, requestEnd: 2, responseStart: 3, end: 4 },
    clientAddress: '127.0.0.1',
    httpVersion: 'HTTP/1.1',
    request: { method: 'GET', path, headers: { host: 'tenant.example.com' }, body: body('') },
    response: { status: 200, statusText: 'OK', httpVersion: 'HTTP/1.1', headers: { 'content-type': 'application/json' }, body: body('{"id":"rs_1"}') },
  };
}

/** Starts a recorder on one end of a channel; `next` waits for its next message of a type. */
function startRecorder(settings: RecorderSettings) {
  const { port1, port2 } = new MessageChannel();
  const messages: FromRecorder[] = [];
  const waiting: Array<() => void> = [];
  port2.on('message', (message: FromRecorder) => {
    messages.push(message);
    for (const wake of waiting.splice(0)) wake();
  });
  const running = runRecorder(settings, port1 as MessagePort);
  const next = async <T extends FromRecorder['type']>(type: T): Promise<Extract<FromRecorder, { type: T }>> => {
    for (;;) {
      const found = messages.find((m) => m.type === type || m.type === 'failed');
      if (found) {
        messages.splice(messages.indexOf(found), 1);
        if (found.type === 'failed' && type !== 'failed') throw new Error(found.message);
        return found as Extract<FromRecorder, { type: T }>;
      }
      await new Promise<void>((resolve) => waiting.push(resolve));
    }
  };
  const send = (flows: Flow[]) => {
    const writer = new FlowBatchWriter();
    for (const f of flows) writer.add(f);
    const { batch, transfer } = writer.take();
    port2.postMessage({ type: 'flows', batch }, transfer);
  };
  const stop = async (): Promise<RecorderSummary> => {
    port2.postMessage({ type: 'stop' });
    const { summary } = await next('stopped');
    port1.close();
    port2.close();
    return summary;
  };
  return { running, next, send, stop };
}

describe('the recorder thread', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tmi-recorder-thread-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const settings = (name: string): RecorderSettings => ({
    targetOrigin: 'https://tenant.example.com',
    reportTarget: 'https://tenant.example.com',
    journalPath: join(dir, `${name}.jsonl`),
    reportDir: join(dir, name),
    failOn: 'must',
    nonGlobalClients: [],
    maxBodyBytes: LIMIT,
  });

  it('runs from its settings and port: two recorders in one thread each record only their own flows, into their own journal and reports', async () => {
    const a = startRecorder(settings('a'));
    const b = startRecorder(settings('b'));
    await Promise.all([a.next('ready'), b.next('ready')]);
    a.send([flow(1, '/api/v2/resource-servers/rs_a1'), flow(2, '/api/v2/resource-servers/rs_a2')]);
    b.send([flow(1, '/api/v2/resource-servers/rs_b1')]);
    await Promise.all([a.next('progress'), b.next('progress')]);
    const [summaryA, summaryB] = await Promise.all([a.stop(), b.stop()]);
    await Promise.all([a.running, b.running]);
    expect([summaryA.journal.written, summaryB.journal.written]).toEqual([2, 1]);
    const urls = (name: string) =>
      readFileSync(join(dir, `${name}.jsonl`), 'utf8')
        .trimEnd()
        .split('\n')
        .map((line) => (JSON.parse(line) as { request: { url: string } }).request.url);
    expect(urls('a')).toEqual(['https://tenant.example.com/api/v2/resource-servers/rs_a1', 'https://tenant.example.com/api/v2/resource-servers/rs_a2']);
    expect(urls('b')).toEqual(['https://tenant.example.com/api/v2/resource-servers/rs_b1']);
    expect(summaryA.reportFiles.every((file) => file.startsWith(join(dir, 'a')))).toBe(true);
    expect(summaryB.reportFiles.every((file) => file.startsWith(join(dir, 'b')))).toBe(true);
    expect(summaryA.reportFiles.length).toBeGreaterThan(0);
  });

  it('says why it could not start, on its own port, and records nothing', async () => {
    const failing = startRecorder({ ...settings('c'), openapiPath: join(dir, 'no-such-description.yaml') });
    const { message } = await failing.next('failed');
    await failing.running;
    expect(message).toContain('no-such-description.yaml');
  });
});
