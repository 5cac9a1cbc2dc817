// The forwarding thread's side of the recorder: finished flows are queued, sent to the recorder
// thread together, and judged and written there. Each message costs both threads a fixed price
// (tens of microseconds, more than a small flow costs to copy), so flows travel in batches: one
// batch is out at a time, and batches leave at most every SEND_INTERVAL_MS. A flow reaches the
// recorder within a few milliseconds (or as soon as the recorder is done with the batch
// before, when it is behind: then batches grow instead of messages multiplying). The queue is
// bounded in bytes: should the recorder fall that far behind (a burst of huge bodies), the
// bodies of further flows are let go (recorded as "not captured") instead of growing memory or
// slowing the traffic down.
import { emptyCounts } from '../../judging/tally.ts';
import { Worker } from 'node:worker_threads';
import type { Flow } from '../flow.ts';
import type { StatusCounts } from './status.ts';
import { flowBodyBytes, FlowBatchWriter } from './flow-batch.ts';
import type { FromRecorder, RecorderSettings, RecorderSummary, ToRecorder } from './messages.ts';

/** Body bytes the queue to the recorder may hold before further bodies are let go. */
export const MAX_QUEUED_BODY_BYTES = 64 * 1024 * 1024;

/** Batches sent to the recorder thread and not yet recorded, at most. */
const BATCHES_OUT = 1;

/** Batches leave at most this often. */
export const SEND_INTERVAL_MS = 4;

export class RecorderStartError extends Error {
  override name = 'RecorderStartError';
}

const EMPTY_COUNTS: StatusCounts = emptyCounts();

export class Recorder {
  /** Flows the recorder thread has judged and written. */
  processed = 0;
  /** Its latest counts. */
  counts: StatusCounts = structuredClone(EMPTY_COUNTS);
  /** Flows whose bodies were let go because the recorder was too far behind. */
  shed = 0;
  /** Messages (batches of flows) sent to the recorder thread. */
  batches = 0;
  /** Where the admin listener listens (it runs on the recorder thread); undefined: none. */
  adminPort: number | undefined;
  /** Refusals counted here and not yet told to the recorder thread (for the admin listener). */
  private refusedTold = 0;
  private refusedTimer: NodeJS.Timeout | undefined;
  /** Flows finished and not sent yet. */
  private readonly pending = new FlowBatchWriter();
  /** A send is scheduled. */
  private scheduled = false;
  /** performance.now() of the last send. */
  private sentAt = -Infinity;
  private posted = 0;
  /** Body bytes queued here or in messages the recorder has not finished. */
  private queuedBytes = 0;
  private pendingBytes = 0;
  /** Sent batches not yet recorded: [flows posted up to and including the batch, its body bytes]. */
  private readonly inQueue: Array<[number, number]> = [];
  private failed: string | undefined;
  private stopped: ((summary: RecorderSummary) => void) | undefined;
  private stopFailed: ((error: Error) => void) | undefined;

  private constructor(
    private readonly worker: Worker,
    private readonly log: (line: string) => void,
  ) {}

  static async start(settings: RecorderSettings, log: (line: string) => void): Promise<Recorder> {
    const worker = new Worker(new URL('./recorder-worker.mjs', import.meta.url), { workerData: settings });
    const recorder = new Recorder(worker, log);
    // Listening from the start: warnings come before 'ready' too (a resumed journal's cut tail).
    worker.on('message', (message: FromRecorder) => recorder.onMessage(message));
    await new Promise<void>((resolve, reject) => {
      const onMessage = (message: FromRecorder) => {
        if (message.type === 'ready') {
          recorder.adminPort = message.adminPort;
          resolve();
        } else if (message.type === 'failed') reject(new RecorderStartError(message.message));
      };
      worker.on('message', onMessage);
      worker.once('error', (error) => reject(new RecorderStartError(`the recorder did not start: ${error.message}`)));
    }).catch(async (error) => {
      await worker.terminate();
      throw error;
    });
    worker.on('error', (error) =>
      recorder.onFailure(`the recorder stopped on an internal error (${error.message}); exchanges are still forwarded but no longer recorded`),
    );
    worker.on('exit', () => recorder.onFailure('the recorder stopped; exchanges are still forwarded but no longer recorded'));
    return recorder;
  }

  /** Queues a finished flow; it goes to the recorder thread once the batch before it is recorded. */
  record(flow: Flow): void {
    if (this.failed !== undefined) return;
    let bytes = flowBodyBytes(flow);
    let dropReason: string | undefined;
    if (bytes > 0 && this.queuedBytes + bytes > MAX_QUEUED_BODY_BYTES) {
      dropReason = 'the recorder was behind the traffic (proxy overloaded)';
      bytes = 0;
      this.shed++;
    }
    this.pending.add(flow, dropReason);
    this.pendingBytes += bytes;
    this.queuedBytes += bytes;
    this.scheduleSend();
  }

  private scheduleSend(): void {
    if (this.scheduled || this.inQueue.length >= BATCHES_OUT) return;
    this.scheduled = true;
    const wait = this.sentAt + SEND_INTERVAL_MS - performance.now();
    // Even without a wait, the send waits for the end of this turn of the event loop: flows finishing in the same turn travel together.
    if (wait <= 0) setImmediate(this.sendScheduled);
    else setTimeout(this.sendScheduled, wait);
  }

  private readonly sendScheduled = (): void => {
    this.scheduled = false;
    if (this.inQueue.length < BATCHES_OUT) this.send();
  };

  /** Sends what is queued now. */
  send(): void {
    if (this.pending.count === 0 || this.failed !== undefined) return;
    const { batch, transfer } = this.pending.take();
    this.sentAt = performance.now();
    this.posted += batch.count;
    this.batches++;
    this.inQueue.push([this.posted, this.pendingBytes]);
    this.pendingBytes = 0;
    this.worker.postMessage({ type: 'flows', batch } satisfies ToRecorder, transfer);
  }

  /** The requests refused so far: told to the recorder thread at most every SEND_INTERVAL_MS × 25 (a flood of bad requests costs one message). */
  refusedSoFar(total: number): void {
    this.refusedTold = total;
    if (this.refusedTimer || this.failed !== undefined) return;
    this.refusedTimer = setTimeout(() => {
      this.refusedTimer = undefined;
      if (this.failed === undefined) this.worker.postMessage({ type: 'refused', total: this.refusedTold } satisfies ToRecorder);
    }, SEND_INTERVAL_MS * 25);
    this.refusedTimer.unref();
  }

  /** Flows queued or sent but not yet recorded. */
  get backlog(): number {
    return this.posted + this.pending.count - this.processed;
  }

  /** Sends the rest, lets the recorder finish (journal, HAR, reports) and ends its thread. */
  async stop(): Promise<RecorderSummary> {
    clearTimeout(this.refusedTimer);
    this.send();
    if (this.failed !== undefined) throw new Error(this.failed);
    const summary = new Promise<RecorderSummary>((resolve, reject) => {
      this.stopped = resolve;
      this.stopFailed = reject;
    });
    this.worker.postMessage({ type: 'stop' } satisfies ToRecorder);
    try {
      return await summary;
    } finally {
      this.failed ??= 'stopped';
      await this.worker.terminate();
    }
  }

  private onMessage(message: FromRecorder): void {
    switch (message.type) {
      case 'progress':
        this.processed = message.processed;
        if (message.counts) this.counts = message.counts;
        while (this.inQueue.length > 0 && this.inQueue[0]![0] <= message.processed) this.queuedBytes -= this.inQueue.shift()![1];
        if (this.pending.count > 0) this.scheduleSend();
        return;
      case 'warn':
        this.log(message.message);
        return;
      case 'stopped':
        this.stopped?.(message.summary);
        return;
      case 'stop-failed':
        this.stopFailed?.(new Error(message.message));
        return;
      default:
        return;
    }
  }

  private onFailure(message: string): void {
    if (this.failed !== undefined) return;
    this.failed = message;
    this.log(message);
    this.stopFailed?.(new Error(message));
  }
}
