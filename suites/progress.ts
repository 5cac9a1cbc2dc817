// Where a run stands while a suite file runs: in the main process, the tests finished of those
// planned (from the reporter), and what only the worker knows, the requests sent and the pacer's
// state, which it posts every few seconds over the handover's loopback channel (handover.ts).
// A paced file can run for minutes between two test results; the worker's reports come anyway.
import type { Status, TestOutcome } from '../reports/model.ts';
import type { PacerState } from './pacing.ts';
import { suiteNameOf } from './suite-files.ts';

/** What the worker says of itself. */
export interface WorkerReport {
  /** Requests the suites sent so far (retries included). */
  requests: number;
  pacer: PacerState;
}

/** Where a running suite file stands. */
export interface SuiteProgress {
  /** The file's name without .suite.ts. */
  suite: string;
  finished: number;
  /** Tests in the file (those --requirement leaves out included: they end skipped); undefined until collected. */
  planned: number | undefined;
  requests: number;
  pacer: PacerState | undefined;
}

/** What a run tells as it goes, besides its lines. */
export interface RunEvents {
  /** A test finished, with its status as the report counts it. */
  test?(test: { suite: string; name: string; status: Status; requirements: string[]; durationMs?: number; message?: string }): void;
  /** Where the running suite file stands: after each test, and each time the worker reports. */
  progress?(progress: SuiteProgress): void;
}

/** How often the worker reports (ms). */
export const WORKER_REPORT_EVERY_MS = 2_000;

/** In the main process: the reporter's events and the worker's reports, put together. */
export class ProgressTally {
  private running: string | undefined;
  private readonly files = new Map<string, { finished: number; planned: number | undefined }>();
  private worker: WorkerReport | undefined;

  constructor(private readonly events: RunEvents) {}

  private file(moduleId: string): { finished: number; planned: number | undefined } {
    let file = this.files.get(moduleId);
    if (!file) this.files.set(moduleId, (file = { finished: 0, planned: undefined }));
    return file;
  }

  collected(moduleId: string, planned: number): void {
    this.file(moduleId).planned = planned;
  }

  started(moduleId: string): void {
    this.running = moduleId;
  }

  ended(moduleId: string): void {
    if (this.running === moduleId) this.running = undefined;
  }

  testFinished(moduleId: string, outcome: TestOutcome, status: Status): void {
    this.file(moduleId).finished++;
    const { name, requirements, durationMs, message } = outcome;
    this.events.test?.({
      suite: suiteNameOf(moduleId),
      name,
      status,
      requirements,
      ...(durationMs !== undefined ? { durationMs } : {}),
      ...(message !== undefined ? { message } : {}),
    });
    this.tell();
  }

  workerReported(report: WorkerReport): void {
    this.worker = report;
    this.tell();
  }

  /** Said only while a file runs: between files the run's own lines speak. */
  private tell(): void {
    if (this.running === undefined || !this.events.progress) return;
    const { finished, planned } = this.file(this.running);
    this.events.progress({ suite: suiteNameOf(this.running), finished, planned, requests: this.worker?.requests ?? 0, pacer: this.worker?.pacer });
  }
}
