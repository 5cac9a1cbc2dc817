// The proxy's status line, printed while it runs and when it stops, from the judging session's
// tally (judging/tally.ts). Refusals are counted where they happen (the forwarding thread).
import type { TallyCounts } from '../../judging/tally.ts';

export type StatusCounts = TallyCounts;

/** One line on what the proxy has seen: exchanges, findings, operations. */
export function statusLine(c: StatusCounts): string {
  const operations = Object.entries(c.byOperation)
    .map(([name, count]) => `${name === 'otherOperation' ? 'other operations' : name} ${count}`)
    .join(', ');
  return `${countsLine(c)}; operations: ${operations === '' ? 'none yet' : operations}`;
}

/** The status line's exchanges and findings, without the operations (the live page lists those by name). */
export function countsLine(c: StatusCounts): string {
  const extras = [
    c.notCovered > 0 ? `${c.notCovered} outside the API` : '',
    c.failed > 0 ? `${c.failed} without response` : '',
    c.refused > 0 ? `${c.refused} refused` : '',
  ]
    .filter((s) => s !== '')
    .join(', ');
  return `${c.exchanges} exchanges${extras ? ` (${extras})` : ''}; findings: ${c.findings.must} must, ${c.findings.should} should, ${c.findings.client} client`;
}
