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
export async function assertEdgesThenRandom<T>(
  arbitrary: fc.Arbitrary<T>,
  edges: readonly T[],
  runs: number,
  predicate: (value: T) => Promise<void>,
): Promise<void> {
  const runsInAll = edges.length + runs;
  await fc.assert(fc.asyncProperty(arbitrary, boundedPredicate(runsInAll + MAX_SHRINK_STEPS, predicate)), {
    examples: edges.map((edge): [T] => [edge]),
    numRuns: runsInAll,
  });
}

/** Cases checked together before a failure stops the property: all of them are, whatever happens in between. */
export const CASES_PER_ROUND = 8;

/**
 * The cases of assertEdgesThenRandom (every edge, then the `runs` values fast-check generates
 * from the seed, the same ones), for cases that share no state, in rounds of CASES_PER_ROUND
 * cases, up to `parallel()` of a round at a time (the pacer lets as many requests go as the
 * target's rate and the round trip call for). A round with a failing case is the last: which
 * cases run depends on the answers only, never on timing, so a seed replays the same requests.
 * fast-check then replays the first failing case (by seed and path) and shrinks from it, within
 * the same budget as assertEdgesThenRandom, so the failure reads as it would; should the
 * replay not fail, the failure first seen stands.
 */
export async function assertEdgesThenRandomConcurrently<T>(
  arbitrary: fc.Arbitrary<T>,
  edges: readonly T[],
  runs: number,
  predicate: (value: T) => Promise<void>,
  parallel: () => number,
): Promise<void> {
  const seed = fc.readConfigureGlobal().seed ?? Math.floor(Math.random() * 0x7fffffff);
  const cases = [...edges, ...fc.sample(arbitrary, { seed, numRuns: runs })];
  const failures = new Map<number, unknown>();
  for (let round = 0; round < cases.length && failures.size === 0; round += CASES_PER_ROUND) {
    await checkTogether(cases.slice(round, round + CASES_PER_ROUND), round, predicate, parallel, failures);
  }
  if (failures.size === 0) return;
  const first = Math.min(...failures.keys());
  const examples = edges.map((edge): [T] => [edge]);
  await fc.assert(fc.asyncProperty(arbitrary, boundedPredicate(1 + MAX_SHRINK_STEPS, predicate)), {
    seed,
    path: String(first),
    examples,
    numRuns: cases.length,
  });
  throw failures.get(first);
}

/** Checks every case of a round, up to parallel() at a time; each failure is kept by the case's index (from `offset`). */
async function checkTogether<T>(
  cases: T[],
  offset: number,
  predicate: (value: T) => Promise<void>,
  parallel: () => number,
  failures: Map<number, unknown>,
): Promise<void> {
  let next = 0;
  let running = 0;
  await new Promise<void>((resolve) => {
    const startMore = () => {
      while (next < cases.length && running < Math.max(1, parallel())) {
        const index = next++;
        running++;
        predicate(cases[index]!)
          .catch((error: unknown) => failures.set(offset + index, error))
          .finally(() => {
            running--;
            startMore();
          });
      }
      if (running === 0) resolve();
    };
    startMore();
  });
}
