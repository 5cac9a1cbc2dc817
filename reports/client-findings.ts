// Findings whose subject is the client, counted per requirement and check with the first one
// as example, most frequent first. Reported beside the verdict, never in it; the builder and
// `report merge` count them the same way.
import type { Finding } from '../rules/types.ts';
import type { Report } from './model.ts';

type ClientFinding = Report['clientFindings'][number];

const kindOf = (f: Pick<Finding, 'requirement' | 'check'>) => `${f.requirement} ${f.check}`;

export class ClientFindingTally {
  private readonly byKind = new Map<string, ClientFinding>();

  /** Adds `count` to the finding's kind; false when the kind is new (then `start` it). */
  counted(f: Pick<Finding, 'requirement' | 'check'>, count: number): boolean {
    const existing = this.byKind.get(kindOf(f));
    if (!existing) return false;
    existing.count += count;
    return true;
  }

  start(first: ClientFinding): void {
    this.byKind.set(kindOf(first), first);
  }

  list(): ClientFinding[] {
    return [...this.byKind.values()].sort((a, b) => b.count - a.count);
  }
}
