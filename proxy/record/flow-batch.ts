// Finished flows packed for the trip from the forwarding thread to the recorder thread, and
// unpacked there (messages.ts says what else passes between the two).
import type { IncomingHttpHeaders } from 'node:http';
import { BodyCapture, type BodySnapshot } from '../forward/capture.ts';
import type { Flow } from '../flow.ts';

/**
 * Flows on their way to the recorder thread, packed: the batch's strings in one array, its
 * numbers in another, its kept body bytes in one buffer that is transferred, not copied.
 * Copying a few flat arrays between threads costs far less than copying many small objects
 * (a few microseconds per flow against ten or more). Each string arrives as a string of its
 * own: none of them (a token kept in a cache, a header kept as evidence) holds on to the batch.
 */
export interface FlowBatch {
  count: number;
  strings: string[];
  numbers: number[];
  bodies: ArrayBuffer;
}

// Body flags in the numbers.
const OVERFLOWED = 1;
const COMPLETE = 2;
const DROPPED = 4;
const HASHED = 8;

// Absent optional numbers (marks, proxy status) travel as NaN; an optional string or response
// is preceded by PRESENT or ABSENT.
const ABSENT = 0;
const PRESENT = 1;

/** Packs flows one by one as they finish; take() hands the batch over and starts a new one. */
export class FlowBatchWriter {
  private strings: string[] = [];
  private numbers: number[] = [];
  private bodies: Uint8Array[] = [];
  private bodyBytes = 0;
  /** Flows in the batch. */
  count = 0;

  /** `dropReason`: let the captured bytes go (the recorder is too far behind), saying why. */
  add(flow: Flow, dropReason?: string): void {
    const { marks, request, response } = flow;
    this.numbers.push(flow.id, flow.startedAt, marks.start, marks.requestEnd ?? NaN, marks.responseStart ?? NaN, marks.end ?? NaN, flow.proxyStatus ?? NaN);
    this.string(flow.clientAddress);
    this.string(flow.httpVersion);
    this.optionalString(flow.error);
    this.string(request.method);
    this.string(request.path);
    this.headers(request.headers);
    this.body(request.body, dropReason);
    if (response) {
      this.numbers.push(PRESENT, response.status);
      this.string(response.statusText);
      this.string(response.httpVersion);
      this.headers(response.headers);
      this.body(response.body, dropReason);
    } else {
      this.numbers.push(ABSENT);
    }
    this.count++;
  }

  /** The batch packed so far, with what to transfer; the writer starts afresh. */
  take(): { batch: FlowBatch; transfer: ArrayBuffer[] } {
    // Not zero-filled (every byte is written below), and not from Buffer's shared pool, so that it can be transferred.
    const bodies = Buffer.allocUnsafeSlow(this.bodyBytes);
    let offset = 0;
    for (const body of this.bodies) {
      bodies.set(body, offset);
      offset += body.length;
    }
    const batch: FlowBatch = { count: this.count, strings: this.strings, numbers: this.numbers, bodies: bodies.buffer as ArrayBuffer };
    this.strings = [];
    this.numbers = [];
    this.bodies = [];
    this.bodyBytes = 0;
    this.count = 0;
    return { batch, transfer: [batch.bodies] };
  }

  private string(value: string): void {
    this.strings.push(value);
  }

  private optionalString(value: string | undefined): void {
    if (value === undefined) {
      this.numbers.push(ABSENT);
      return;
    }
    this.numbers.push(PRESENT);
    this.strings.push(value);
  }

  /** Repeated headers (arrays) travel joined with ", ", as the rule engine joins them anyway. */
  private headers(headers: IncomingHttpHeaders): void {
    const countAt = this.numbers.length;
    this.numbers.push(0);
    let count = 0;
    for (const name in headers) {
      const value = headers[name];
      if (value === undefined) continue;
      this.string(name);
      this.string(Array.isArray(value) ? value.join(', ') : String(value));
      count++;
    }
    this.numbers[countAt] = count;
  }

  private body(capture: BodyCapture, dropReason: string | undefined): void {
    const snapshot = capture.snapshot(dropReason);
    const flags =
      (snapshot.overflowed ? OVERFLOWED : 0) |
      (snapshot.complete ? COMPLETE : 0) |
      (snapshot.dropped !== undefined ? DROPPED : 0) |
      (snapshot.sha256 !== undefined ? HASHED : 0);
    this.numbers.push(snapshot.bytes, flags, snapshot.data ? snapshot.data.length : 0);
    if (snapshot.dropped !== undefined) this.string(snapshot.dropped);
    if (snapshot.sha256 !== undefined) this.string(snapshot.sha256);
    if (snapshot.data) {
      this.bodies.push(snapshot.data);
      this.bodyBytes += snapshot.data.length;
    }
  }
}

/** Unpacks a FlowBatch on the recorder thread; bodies stay views of the transferred buffer. */
class FlowBatchReader {
  private numberAt = 0;
  private stringAt = 0;
  private bodyAt = 0;

  constructor(
    private readonly batch: FlowBatch,
    private readonly maxBodyBytes: number,
  ) {}

  flow(): Flow {
    const id = this.number();
    const startedAt = this.number();
    const marks: Flow['marks'] = { start: this.number() };
    const requestEnd = this.number();
    const responseStart = this.number();
    const end = this.number();
    const proxyStatus = this.number();
    if (!Number.isNaN(requestEnd)) marks.requestEnd = requestEnd;
    if (!Number.isNaN(responseStart)) marks.responseStart = responseStart;
    if (!Number.isNaN(end)) marks.end = end;
    const clientAddress = this.string();
    const httpVersion = this.string();
    const error = this.optionalString();
    const method = this.string();
    const path = this.string();
    const headers = this.headers();
    const flow: Flow = { id, startedAt, marks, clientAddress, httpVersion, request: { method, path, headers, body: this.body() } };
    if (this.number() === PRESENT) {
      const status = this.number();
      const statusText = this.string();
      const responseVersion = this.string();
      const responseHeaders = this.headers();
      flow.response = { status, statusText, httpVersion: responseVersion, headers: responseHeaders, body: this.body() };
    }
    if (error !== undefined) flow.error = error;
    if (!Number.isNaN(proxyStatus)) flow.proxyStatus = proxyStatus;
    return flow;
  }

  private number(): number {
    return this.batch.numbers[this.numberAt++]!;
  }

  private string(): string {
    return this.batch.strings[this.stringAt++]!;
  }

  private optionalString(): string | undefined {
    return this.number() === PRESENT ? this.string() : undefined;
  }

  private headers(): IncomingHttpHeaders {
    const headers: IncomingHttpHeaders = {};
    for (let count = this.number(); count > 0; count--) {
      const name = this.string();
      headers[name] = this.string();
    }
    return headers;
  }

  private body(): BodyCapture {
    const bytes = this.number();
    const flags = this.number();
    const kept = this.number();
    const snapshot: BodySnapshot = { bytes, overflowed: (flags & OVERFLOWED) !== 0, complete: (flags & COMPLETE) !== 0 };
    if ((flags & DROPPED) !== 0) snapshot.dropped = this.string();
    if ((flags & HASHED) !== 0) snapshot.sha256 = this.string();
    if (kept > 0) {
      snapshot.data = new Uint8Array(this.batch.bodies, this.bodyAt, kept);
      this.bodyAt += kept;
    }
    return BodyCapture.restore(this.maxBodyBytes, snapshot);
  }
}

export function flowsFromBatch(batch: FlowBatch, maxBodyBytes: number): Flow[] {
  const reader = new FlowBatchReader(batch, maxBodyBytes);
  const flows: Flow[] = new Array(batch.count);
  for (let i = 0; i < batch.count; i++) flows[i] = reader.flow();
  return flows;
}

/** Bytes a flow's message carries in bodies (what the recorder's queue holds). */
export const flowBodyBytes = (flow: Flow): number => flow.request.body.keptBytes + (flow.response?.body.keptBytes ?? 0);
