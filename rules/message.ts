// A finding in words, made where it is shown (reports, journal, console), from its data.
import type { Finding } from './types.ts';

/** "<ID>: expected <expected>; received <received>". */
export function findingMessage(f: Pick<Finding, 'requirement' | 'expected' | 'received'>): string {
  return `${f.requirement}: expected ${f.expected}; received ${f.received}`;
}
