// The one tally of a judging session: what the console's status line, the proxy's /status.json,
// its live page and its /metrics counters read. Every exchange is counted here once, when the
// session records it, whichever route it came by (live, a resumed journal, a recording).
import type { Judgement } from '../rules/index.ts';
import type { Exchange, Finding } from '../rules/types.ts';

export interface TallyCounts {
  exchanges: number;
  /** Paths the document does not cover: forwarded and recorded, never judged. */
  notCovered: number;
  /** Exchanges without a complete response (target unreachable, too slow, aborts). */
  failed: number;
  /** Requests refused before they became exchanges (malformed, absolute-form, CONNECT): counted where they happen. */
  refused: number;
  findings: { must: number; should: number; client: number };
  byOperation: Record<string, number>;
  /** requirement → its level, whose fault, how many findings, and how many of them security findings */
  byRequirement: Record<string, { level: string; subject: string; count: number; security?: number }>;
  /** operation (outside_api: not covered; not_judged: the kit failed on it) → status code (none: no response) → exchanges */
  byOperationStatus: Record<string, Record<string, number>>;
  internalErrors: number;
}

/** What the tally takes of an exchange beyond its judgement. */
export interface Counted {
  /** The response's status code; undefined: no response. */
  status: number | undefined;
  /** The exchange did not complete. */
  failed: boolean;
  /** The kit failed on some step of it (judging, recording): counted once. */
  internalError: boolean;
}

/** Nothing counted yet. */
export function emptyCounts(): TallyCounts {
  return {
    exchanges: 0,
    notCovered: 0,
    failed: 0,
    refused: 0,
    findings: { must: 0, should: 0, client: 0 },
    byOperation: {},
    byRequirement: {},
    byOperationStatus: {},
    internalErrors: 0,
  };
}

export class Tally {
  readonly counts: TallyCounts = emptyCounts();

  /** Counts one exchange: `judgement` undefined when the kit failed to judge it; `findings` as they may be shown (scrubbed). */
  count(counted: Counted, judgement: Judgement | undefined, findings: readonly Finding[] = judgement?.findings ?? []): void {
    const c = this.counts;
    c.exchanges++;
    if (counted.failed) c.failed++;
    if (counted.internalError) c.internalErrors++;
    const operation = judgement === undefined ? 'not_judged' : (judgement.operation?.operation ?? 'outside_api');
    const byStatus = (c.byOperationStatus[operation] ??= {});
    const status = counted.status === undefined ? 'none' : String(counted.status);
    byStatus[status] = (byStatus[status] ?? 0) + 1;
    if (!judgement?.operation) {
      if (judgement) c.notCovered++;
      return;
    }
    c.byOperation[operation] = (c.byOperation[operation] ?? 0) + 1;
    for (const f of findings) {
      if (f.subject === 'client') c.findings.client++;
      else c.findings[f.level]++;
      const entry = (c.byRequirement[f.requirement] ??= { level: f.level, subject: f.subject, count: 0 });
      entry.count++;
      if (f.security !== undefined) entry.security = (entry.security ?? 0) + 1;
    }
  }
}

/** What the tally takes of an exchange (undefined: none was made). */
export function countedOf(exchange: Exchange | undefined, internalError: boolean): Counted {
  return { status: exchange?.response?.status, failed: exchange?.error !== undefined, internalError };
}
