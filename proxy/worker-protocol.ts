// What passes between the proxy's main thread (forwarding) and its recorder thread (judging,
// journal, reports): flows as plain data, and the recorder's progress and results.
import type { FailOn } from '../reports/fail-on.ts';
import type { Report } from '../reports/model.ts';
import { BodyCapture, type BodySnapshot } from './capture.ts';
import type { Flow } from './flow.ts';
import type { HarWritten } from './har-writer.ts';
import type { StatusCounts } from './status.ts';

export interface RecorderSettings {
  /** The target's origin: recorded URLs start with it. */
  targetOrigin: string;
  /** The target as the report names it (origin and base path). */
  reportTarget: string;
  journalPath: string;
  harPath?: string;
  reportDir: string;
  failOn: FailOn;
  nonGlobalClients: string[];
  maxBodyBytes: number;
}

export interface FlowMessage extends Pick<Flow, 'id' | 'startedAt' | 'marks' | 'clientAddress' | 'httpVersion' | 'error' | 'proxyStatus'> {
  request: Omit<Flow['request'], 'body'> & { body: BodySnapshot };
  response?: Omit<NonNullable<Flow['response']>, 'body'> & { body: BodySnapshot };
}

export interface RecorderSummary {
  counts: StatusCounts;
  journal: { path: string; written: number; lost: number };
  har?: { path: string } & HarWritten;
  reportFiles: string[];
  report: Report;
}

export type ToRecorder = { type: 'flows'; flows: FlowMessage[] } | { type: 'stop' };

export type FromRecorder =
  | { type: 'ready' }
  | { type: 'failed'; message: string }
  | { type: 'progress'; processed: number; counts: StatusCounts }
  | { type: 'warn'; message: string }
  | { type: 'stopped'; summary: RecorderSummary }
  | { type: 'stop-failed'; message: string };

/** `dropReason`: let the captured bytes go (the recorder is too far behind), saying why. */
export function flowToMessage(flow: Flow, dropReason?: string): FlowMessage {
  const message: FlowMessage = {
    id: flow.id,
    startedAt: flow.startedAt,
    marks: flow.marks,
    clientAddress: flow.clientAddress,
    httpVersion: flow.httpVersion,
    request: { method: flow.request.method, path: flow.request.path, headers: flow.request.headers, body: flow.request.body.snapshot(dropReason) },
  };
  if (flow.response) message.response = { ...flow.response, body: flow.response.body.snapshot(dropReason) };
  if (flow.error !== undefined) message.error = flow.error;
  if (flow.proxyStatus !== undefined) message.proxyStatus = flow.proxyStatus;
  return message;
}

export function flowFromMessage(message: FlowMessage, maxBodyBytes: number): Flow {
  const flow: Flow = {
    id: message.id,
    startedAt: message.startedAt,
    marks: message.marks,
    clientAddress: message.clientAddress,
    httpVersion: message.httpVersion,
    request: { ...message.request, body: BodyCapture.restore(maxBodyBytes, message.request.body) },
  };
  if (message.response) flow.response = { ...message.response, body: BodyCapture.restore(maxBodyBytes, message.response.body) };
  if (message.error !== undefined) flow.error = message.error;
  if (message.proxyStatus !== undefined) flow.proxyStatus = message.proxyStatus;
  return flow;
}

/** Bytes a flow's message carries in bodies (what the recorder's queue holds). */
export const flowBodyBytes = (flow: Flow): number => flow.request.body.keptBytes + (flow.response?.body.keptBytes ?? 0);
