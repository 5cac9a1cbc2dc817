// A property-based test against a live target pays a request for every run and every
// shrinking step. The budget bounds both: past it, candidates count as passing, so fast-check
// stops shrinking and reports the smallest counterexample it has found so far.
import fc from 'fast-check';

/** Shrinking steps a failing property may take after its runs and examples. */
export const MAX_SHRINK_STEPS = 40;

export function boundedPredicate<A extends unknown[]>(budget: number, predicate: (...args: A) => Promise<void>): (...args: A) => Promise<void> {
  let calls = 0;
  return async (...args: A) => {
    if (++calls > budget) return;
    await predicate(...args);
  };
}

/**
 * Checks `predicate` on every edge case, in order, then on `runs` random values of `arbitrary`,
 * within a budget of edges + runs + MAX_SHRINK_STEPS calls. fast-check counts its examples
 * within numRuns (with numRuns below the number of examples, the later examples never run), so
 * numRuns is both.
 */
export async function assertEdgesThenRandom<T>(arbitrary: fc.Arbitrary<T>, edges: readonly T[], runs: number, predicate: (value: T) => Promise<void>): Promise<void> {
  const runsInAll = edges.length + runs;
  await fc.assert(fc.asyncProperty(arbitrary, boundedPredicate(runsInAll + MAX_SHRINK_STEPS, predicate)), { examples: edges.map((edge): [T] => [edge]), numRuns: runsInAll });
}
