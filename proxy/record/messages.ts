// The messages between the proxy's forwarding thread and its recorder thread (judging, journal,
// reports): the recorder's settings, the batches of flows (flow-batch.ts packs them), and the
// recorder's progress and results.
import type { FailOn } from '../../reports/fail-on.ts';
import type { FlowBatch } from './flow-batch.ts';
import type { Baseline, Report } from '../../reports/model.ts';
import type { HarWritten } from './har-writer.ts';
import type { TenantTokensData } from '../../keys/tenant.ts';
import type { StatusCounts } from './status.ts';
import type { AdminSettings } from '../admin/admin.ts';

export interface RecorderSettings {
  /** The target's origin: recorded URLs start with it. */
  targetOrigin: string;
  /** The target as the report names it (origin and base path). */
  reportTarget: string;
  journalPath: string;
  /** Resume the journal: keep its exchanges, append new ones, and report on both. */
  appendToJournal?: boolean;
  harPath?: string;
  /** Rotate the journal into segments (journalPath names them): by size, by age, gzip the closed ones. */
  rotation?: { maxBytes?: number; intervalMs?: number; compress: boolean };
  /** Rewrite the reports this often while running (from what has been judged so far); absent: at stop only. */
  reportIntervalMs?: number;
  reportDir: string;
  failOn: FailOn;
  nonGlobalClients: string[];
  maxBodyBytes: number;
  /** What was learned of the tenant's tokens at start (issuer, keys); undefined: nothing, neither is judged. */
  tenant?: TenantTokensData;
  /** The --target's path ("" or "/base"): with the description's servers, where the API base path is (rules/api-base.ts apiBaseOfTarget). */
  targetBasePath?: string;
  /** The user's OpenAPI description of the operations the document does not detail (--openapi), read by the recorder thread. */
  openapiPath?: string;
  /** Accepted failures (--baseline): left out of the reports' verdict. */
  baseline?: Baseline;
  /** The admin listener (--admin), served by the recorder thread; undefined: none. */
  admin?: AdminSettings;
}

export interface RecorderSummary {
  counts: StatusCounts;
  /** `earlier`: exchanges the journal already held when resumed (they are in the report and the counts too). */
  /** `segments`: with rotation, this session's segments in order, as named at stop (`.jsonl.gz` once compressed). */
  journal: { path: string; written: number; lost: number; earlier: number; segments?: string[] };
  har?: { path: string } & HarWritten;
  reportFiles: string[];
  report: Report;
}

/** `refused`: the requests the forwarding thread refused so far, for the admin listener. */
export type ToRecorder = { type: 'flows'; batch: FlowBatch } | { type: 'refused'; total: number } | { type: 'stop' };

export type FromRecorder =
  /** `adminPort`: where the admin listener listens, when there is one. */
  | { type: 'ready'; adminPort?: number }
  | { type: 'failed'; message: string }
  /** After every batch; `counts` only now and then (copying them costs more than the rest). */
  | { type: 'progress'; processed: number; counts?: StatusCounts }
  | { type: 'warn'; message: string }
  | { type: 'stopped'; summary: RecorderSummary }
  | { type: 'stop-failed'; message: string };
