// A finding in words, made where it is shown (reports, journal, console), from its data.
import type { Finding } from './types.ts';

/**
 * "<ID>: expected <expected>; received <received>"; a security finding says first what the target
 * did: "<ID>: security: <what> (expected <expected>, received <received>)".
 */
export function findingMessage(f: Pick<Finding, 'requirement' | 'expected' | 'received' | 'security'>): string {
  if (f.security !== undefined) return `${f.requirement}: security: ${f.security} (expected ${f.expected}, received ${f.received})`;
  return `${f.requirement}: expected ${f.expected}; received ${f.received}`;
}
