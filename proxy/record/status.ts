// Counts what the proxy has seen, for the status line printed while it runs and the summary
// printed when it stops. Refusals are counted where they happen (the forwarding thread).
import type { Judgement } from '../../rules/index.ts';
import type { Exchange, Finding } from '../../rules/types.ts';
import type { Addon, Flow } from '../flow.ts';

export interface StatusCounts {
  exchanges: number;
  /** Paths the document does not cover: forwarded and recorded, never judged. */
  notCovered: number;
  /** Exchanges without a complete response (target unreachable, too slow, aborts). */
  failed: number;
  /** Requests refused before they became exchanges (malformed, absolute-form, CONNECT). */
  refused: number;
  findings: { must: number; should: number; client: number };
  byOperation: Record<string, number>;
  /** requirement → its level, whose fault, and how many findings */
  byRequirement: Record<string, { level: string; subject: string; count: number }>;
  internalErrors: number;
}

export class StatusAddon implements Addon {
  readonly name = 'status';
  readonly counts: StatusCounts = { exchanges: 0, notCovered: 0, failed: 0, refused: 0, findings: { must: 0, should: 0, client: 0 }, byOperation: {}, byRequirement: {}, internalErrors: 0 };

  done(flow: Flow): void {
    if (flow.internalError !== undefined) this.counts.internalErrors++;
    this.count(flow.error !== undefined, flow.judgement, flow.safeFindings ?? flow.judgement?.findings ?? []);
  }

  /** An exchange of an earlier session, judged again from a resumed journal (no judgement: the judge failed). */
  earlier(exchange: Exchange, judgement: Judgement | undefined): void {
    if (judgement === undefined) this.counts.internalErrors++;
    this.count(exchange.error !== undefined, judgement, judgement?.findings ?? []);
  }

  private count(failed: boolean, judgement: Judgement | undefined, findings: readonly Finding[]): void {
    const c = this.counts;
    c.exchanges++;
    if (failed) c.failed++;
    const operation = judgement?.operation?.operation;
    if (!operation) {
      if (judgement) c.notCovered++;
      return;
    }
    c.byOperation[operation] = (c.byOperation[operation] ?? 0) + 1;
    for (const f of findings) {
      if (f.subject === 'client') c.findings.client++;
      else c.findings[f.level]++;
      const entry = (c.byRequirement[f.requirement] ??= { level: f.level, subject: f.subject, count: 0 });
      entry.count++;
    }
  }

  line(): string {
    return statusLine(this.counts);
  }
}

/** One line on what the proxy has seen: exchanges, findings, operations. */
export function statusLine(c: StatusCounts): string {
  const operations = Object.entries(c.byOperation)
    .map(([name, count]) => `${name === 'otherOperation' ? 'other operations' : name} ${count}`)
    .join(', ');
  return `${countsLine(c)}; operations: ${operations === '' ? 'none yet' : operations}`;
}

/** The status line's exchanges and findings, without the operations (the live page lists those by name). */
export function countsLine(c: StatusCounts): string {
  const extras = [c.notCovered > 0 ? `${c.notCovered} outside the API` : '', c.failed > 0 ? `${c.failed} without response` : '', c.refused > 0 ? `${c.refused} refused` : '']
    .filter((s) => s !== '')
    .join(', ');
  return `${c.exchanges} exchanges${extras ? ` (${extras})` : ''}; findings: ${c.findings.must} must, ${c.findings.should} should, ${c.findings.client} client`;
}
