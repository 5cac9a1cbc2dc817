// A suite test declares the requirements it covers as data: its vitest tags, one per requirement
// id. The run's reporter charges the test's outcome to them and --requirement selects tests by
// them (vitest's tagsFilter). The title shows the same ids to the reader; nothing reads them back.
import type { TestOptions } from 'vitest';
import { UsageError } from '../core/errors.ts';
import { loadRequirements, requirement } from '../rules/requirements.ts';

/**
 * A suite test's title, the ids shown at its end ("sending null removes all session metadata
 * [SES-METADATA-CLEARED]"), and its options, the ids as its tags: `it(...covers(title, ...ids), body)`.
 * One test covers requirements of one level, so a warning never fails a stated rule.
 */
export function covers(title: string, ...ids: string[]): [title: string, options: TestOptions] {
  const levels = new Set(ids.map((id) => requirement(id).level));
  if (ids.length === 0 || levels.size !== 1) throw new Error(`test "${title}" must cover requirements of one level: ${ids.join(' ')}`);
  return [`${title} [${ids.join(' ')}]`, { tags: ids }];
}

/** Every requirement of the catalog as a vitest tag: the only tags a suite test may declare (vitest refuses others). */
export function requirementTags(): Array<{ name: string; description: string }> {
  return loadRequirements().map((r) => ({ name: r.id, description: r.title }));
}

/** vitest's tagsFilter that selects the tests declaring any of `ids`. */
export function tagsFilterFor(ids: string[]): string[] {
  return [ids.join(' || ')];
}

/** A selection (--requirement, runSuites' `requirements`) may name only requirements of the catalog: vitest's tagsFilter refuses any other tag. */
export function refuseUnknownRequirements(ids: string[], who: string): void {
  const known = new Set(loadRequirements().map((r) => r.id));
  const unknownIds = ids.filter((id) => !known.has(id));
  if (unknownIds.length > 0) throw new UsageError(`${who}: unknown requirement ${unknownIds.join(', ')} (see schemas/requirements.yaml)`);
}
