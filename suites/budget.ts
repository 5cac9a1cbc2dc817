// A property-based test against a live target pays a request for every run and every
// shrinking step. The budget bounds both: past it, candidates count as passing, so fast-check
// stops shrinking and reports the smallest counterexample it has found so far.

/** Shrinking steps a failing property may take after its runs and examples. */
export const MAX_SHRINK_STEPS = 40;

export function boundedPredicate<A extends unknown[]>(budget: number, predicate: (...args: A) => Promise<void>): (...args: A) => Promise<void> {
  let calls = 0;
  return async (...args: A) => {
    if (++calls > budget) return;
    await predicate(...args);
  };
}
