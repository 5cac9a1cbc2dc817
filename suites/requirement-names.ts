// A suite test's name carries the requirements it covers, in brackets at the end:
// "sending null removes all session metadata [SES-METADATA-CLEARED]". The run's reporter and
// --requirement read them from there, so the name is the one place they are written.
import { requirement } from '../rules/requirements.ts';

/** The test title with its requirement ids; one test covers requirements of one level, so a warning never fails a stated rule. */
export function covers(title: string, ...ids: string[]): string {
  const levels = new Set(ids.map((id) => requirement(id).level));
  if (ids.length === 0 || levels.size !== 1) throw new Error(`test "${title}" must name requirements of one level: ${ids.join(' ')}`);
  return `${title} [${ids.join(' ')}]`;
}

const NAMED_IDS = /\[((?:[A-Z0-9]+-)+[A-Z0-9]+(?: (?:[A-Z0-9]+-)+[A-Z0-9]+)*)\]$/;

/** The requirement ids a test name carries. */
export function requirementsOfTestName(name: string): string[] {
  const named = NAMED_IDS.exec(name)?.[1];
  return named === undefined ? [] : named.split(' ');
}

/** A vitest name pattern that selects the tests covering any of `ids`. */
export function testNamePatternFor(ids: string[]): RegExp {
  const escaped = ids.map((id) => id.replace(/[-]/g, '\\-'));
  return new RegExp(`\\[(?:[A-Z0-9-]+ )*(?:${escaped.join('|')})(?: [A-Z0-9-]+)*\\]$`);
}
