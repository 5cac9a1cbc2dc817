// Running the proxy in a test: in-process sessions in a temporary directory, reading what they
// recorded, and raw HTTP over a socket for requests no well-behaved client would send.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { HarEntry } from '../../recordings/read.ts';
import { startProxy, type ProxySessionOptions, type RunningProxy } from '../../proxy/session.ts';
import { parseTarget } from '../../proxy/forward/target.ts';

export interface ProxyUnderTest {
  proxy: RunningProxy;
  dir: string;
  journalPath: string;
  harPath: string;
  reportDir: string;
  /** Stops the proxy (if not yet) and removes the directory. */
  dispose(): Promise<void>;
}

export async function startTestProxy(target: string, options: Partial<ProxySessionOptions> = {}): Promise<ProxyUnderTest> {
  const dir = mkdtempSync(join(tmpdir(), 'tmi-proxy-'));
  const harPath = join(dir, 'traffic.har');
  const journalPath = `${harPath}.jsonl`;
  const reportDir = join(dir, 'reports');
  const proxy = await startProxy({
    target: parseTarget(target),
    host: '127.0.0.1',
    port: 0,
    journalPath,
    harPath,
    reportDir,
    failOn: 'must',
    statusIntervalMs: 0,
    ...options,
  });
  return {
    proxy,
    dir,
    journalPath,
    harPath,
    reportDir,
    dispose: async () => {
      proxy.hurry();
      await proxy.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Waits until the proxy has judged and recorded `count` exchanges (recording follows the response). */
export async function recorded(proxy: RunningProxy, count: number): Promise<void> {
  while (proxy.recorded < count) await new Promise((resolve) => setTimeout(resolve, 5));
}

export type RecordedEntry = HarEntry & {
  _conformance: {
    operation: string | null;
    findings: Array<{ requirement: string; level: string; subject: string; message: string }>;
    token: Record<string, unknown>;
    error?: string;
  };
  comment?: string;
  response: NonNullable<HarEntry['response']> & { bodySize?: number; content?: { _truncated?: boolean; text?: string; size?: number } };
};

export function readJournal(path: string): RecordedEntry[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as RecordedEntry);
}

/** Sends `request` as is over a new connection and resolves with everything the server sent until it closed. */
export function rawExchange(origin: string, request: string | Buffer, options: { endAfterWrite?: boolean } = {}): Promise<string> {
  const { hostname, port } = new URL(origin);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port) });
    const chunks: Buffer[] = [];
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('error', (error: NodeJS.ErrnoException) => (error.code === 'ECONNRESET' ? resolve(Buffer.concat(chunks).toString('latin1')) : reject(error)));
    socket.on('close', () => resolve(Buffer.concat(chunks).toString('latin1')));
    socket.write(request);
    if (options.endAfterWrite) socket.end();
  });
}

/** The status code of the first response in raw HTTP text, or undefined. */
export const statusOf = (raw: string): number | undefined => {
  const match = /^HTTP\/1\.[01] (\d{3})/.exec(raw);
  return match ? Number(match[1]) : undefined;
};
