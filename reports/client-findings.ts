// Findings whose subject is the client, counted per requirement and check with the first one
// as example, most frequent first. Reported beside the verdict, never in it; the builder and
// `report merge` count them the same way.
import type { Finding } from '../rules/types.ts';
import type { Report } from './model.ts';

type ClientFinding = Report['clientFindings'][number];

/** Distinct findings kept per requirement and check; further ones are counted with the first. */
export const KINDS_PER_RULE = 20;

type Kind = Pick<Finding, 'requirement' | 'check' | 'received'>;
const ruleOf = (f: Kind) => `${f.requirement} ${f.check}`;
const kindOf = (f: Kind) => `${ruleOf(f)} ${f.received}`;

/**
 * Client findings, one per distinct thing the client did wrong (a scope outside the catalog is
 * named once, however many exchanges carried it): counted per requirement, check and what was
 * received, at most KINDS_PER_RULE per requirement and check.
 */
export class ClientFindingTally {
  private readonly byKind = new Map<string, ClientFinding>();
  private readonly firstOfRule = new Map<string, ClientFinding>();
  private readonly kindsOfRule = new Map<string, number>();

  /** Adds `count` to the finding's kind; false when the kind is new (then `start` it). */
  counted(f: Kind, count: number): boolean {
    const existing = this.byKind.get(kindOf(f)) ?? ((this.kindsOfRule.get(ruleOf(f)) ?? 0) >= KINDS_PER_RULE ? this.firstOfRule.get(ruleOf(f)) : undefined);
    if (!existing) return false;
    existing.count += count;
    return true;
  }

  start(first: ClientFinding): void {
    this.byKind.set(kindOf(first), first);
    const rule = ruleOf(first);
    this.kindsOfRule.set(rule, (this.kindsOfRule.get(rule) ?? 0) + 1);
    if (!this.firstOfRule.has(rule)) this.firstOfRule.set(rule, first);
  }

  list(): ClientFinding[] {
    return [...this.byKind.values()].sort((a, b) => b.count - a.count);
  }
}
