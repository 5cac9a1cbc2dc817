// The document's operations as the reports show them, and the requirements grouped per operation.
import type { OperationId } from '../rules/types.ts';
import type { OperationResult, OperationTraffic, RequirementResult, Status, TrafficStats } from './model.ts';
import { summarize, worstStatus } from './status.ts';

export const OPERATIONS: ReadonlyArray<{ id: OperationId; title: string; route: string }> = [
  { id: 'deleteTokenExchangeProfile', title: 'Delete a token exchange profile', route: 'DELETE /api/v2/token-exchange-profiles/{id}' },
  { id: 'updateSession', title: 'Update a session', route: 'PATCH /api/v2/sessions/{id}' },
  { id: 'getResourceServer', title: 'Get a resource server', route: 'GET /api/v2/resource-servers/{id}' },
  { id: 'getToken', title: 'Get an access token', route: 'POST {auth_url}/oauth/token' },
  { id: 'otherOperation', title: 'Other operations of the interface', route: 'any other METHOD /api/v2/…' },
];

/**
 * Requirements per operation: first those of every operation ("all": general rules and rate
 * limits, whichever operation an exchange was), then one group per operation with the
 * requirements that name it.
 */
export function groupByOperation(requirements: RequirementResult[]): OperationResult[] {
  const groups = [{ id: 'all' as const, title: 'Every operation' }, ...OPERATIONS];
  return groups
    .map(({ id, title }) => {
      const members = requirements.filter((r) => r.operations.includes(id)).map((r) => ({ ...r, status: statusOn(r, id) }));
      return { operation: id, title, status: worstStatus(members.map((r) => r.status)), summary: summarize(members), requirements: members.map((r) => r.id) };
    })
    .filter((group) => group.requirements.length > 0);
}

/**
 * A requirement's status on one operation: for one of several operations judged on exchanges, what
 * that operation's own exchanges showed (a failure on /clients is no failure of the session
 * update); otherwise, or when suite tests examined it too, its overall status.
 */
export function statusOn(r: RequirementResult, operation: string): Status {
  if (operation === 'all' || r.operations.length === 1 || r.status === 'skip') return r.status;
  // The suites call the document's operations only: their tests say nothing of the others.
  if (r.counts.tests > 0 && operation !== 'otherOperation') return r.status;
  const counts = r.byOperation?.[operation];
  // No counts at all: a report of an earlier version, whose rows showed the overall status.
  if (counts === undefined) return r.byOperation === undefined && operation !== 'otherOperation' ? r.status : 'skip';
  return counts.findings > 0 ? r.status : 'pass';
}

/** Exchanges per status code of one operation; for "all", of every operation together. */
export function exchangesByStatus(traffic: TrafficStats, operation: string): Array<[string, number]> {
  const counts: Record<string, number> = {};
  for (const [op, statuses] of Object.entries(traffic.byOperation)) {
    if (operation !== 'all' && op !== operation) continue;
    for (const [status, n] of Object.entries(statuses)) counts[status] = (counts[status] ?? 0) + n;
  }
  return Object.entries(counts).sort(([a], [b]) => a.localeCompare(b));
}

/** "200 × 3, 401 × 1": an operation's exchanges by status, lowest status first. */
export function statusCounts(byStatus: OperationTraffic['byStatus']): string {
  return Object.entries(byStatus)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([status, n]) => `${status} × ${n}`)
    .join(', ');
}

/** One operation as the console and the proxy's live page list it: its name, exchanges and status codes. */
export interface OperationRow {
  /** "GET /resource-servers/{id}", "POST /oauth/token", "GET /clients/{id}": the report's name. */
  name: string;
  exchanges: number;
  /** "200 × 3, 401 × 1" */
  statuses: string;
}

/** The first `shown` operations the traffic called (the document's first, then the most called), and how many more there are. */
export function operationRows(traffic: TrafficStats | undefined, shown: number): { rows: OperationRow[]; more: number } {
  const all = traffic?.operations ?? [];
  const rows = all.slice(0, shown).map((r) => ({ name: r.name, exchanges: r.exchanges, statuses: statusCounts(r.byStatus) }));
  return { rows, more: all.length - rows.length };
}

/**
 * "3 of the document's operations and its token endpoint, 4 others": how many operations the
 * traffic called. The token endpoint is counted apart: the document specifies three operations.
 */
export function operationsCalled(rows: readonly OperationTraffic[]): string {
  const others = rows.filter((r) => r.operation === 'otherOperation').length;
  const token = rows.some((r) => r.operation === 'getToken');
  const documented = rows.length - others - (token ? 1 : 0);
  return `${documented} of the document's operations${token ? ' and its token endpoint' : ''}, ${others} other${others === 1 ? '' : 's'}`;
}
