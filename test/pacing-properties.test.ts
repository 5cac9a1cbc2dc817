// A property whose cases share no state, checked several cases at a time: the same cases as one
// at a time, no more at once than asked, nothing new started after a failure, and a failure that
// reads as fast-check's own (replayed and shrunk), or the first one seen when it does not recur.
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { assertEdgesThenRandom, assertEdgesThenRandomConcurrently, CASES_PER_ROUND } from '../suites/budget.ts';

const settings = fc.readConfigureGlobal();
const withSeed = (seed: number) => fc.configureGlobal({ ...settings, seed });
afterEach(() => fc.configureGlobal(settings));

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('independent cases, several at a time', () => {
  it('checks the very cases assertEdgesThenRandom checks for the seed, edges first', async () => {
    withSeed(1234);
    const edges = [
      { name: 'edge a', value: -1 },
      { name: 'edge b', value: -2 },
    ];
    const arbitrary = fc.nat().map((value) => ({ name: 'random', value }));
    const oneAtATime: number[] = [];
    await assertEdgesThenRandom(arbitrary, edges, 20, async ({ value }) => void oneAtATime.push(value));
    const together: number[] = [];
    await assertEdgesThenRandomConcurrently(
      arbitrary,
      edges,
      20,
      async ({ value }) => {
        together.push(value);
        await pause(1);
      },
      () => 4,
    );
    expect(together.slice(0, 2)).toEqual([-1, -2]);
    expect([...together].sort((a, b) => a - b)).toEqual([...oneAtATime].sort((a, b) => a - b));
    expect(together).toHaveLength(22);
  });

  it('never more cases at once than parallel() says, and one at a time when it says 1', async () => {
    for (const parallel of [1, 3]) {
      let running = 0;
      let most = 0;
      await assertEdgesThenRandomConcurrently(
        fc.nat(),
        [],
        15,
        async () => {
          most = Math.max(most, ++running);
          await pause(2);
          running--;
        },
        () => parallel,
      );
      expect(most).toBe(parallel);
    }
  });

  it('a failing case ends the property with its round, whatever the timing; fast-check replays and shrinks it, as when one at a time', async () => {
    withSeed(99);
    const seen: string[][] = [];
    for (const parallel of [1, 4]) {
      const calls: string[] = [];
      const error = await assertEdgesThenRandomConcurrently(
        fc.array(fc.integer(), { minLength: 0, maxLength: 50 }),
        [[1]],
        30,
        async (values) => {
          calls.push(JSON.stringify(values));
          await pause(Math.random() * 3);
          if (values.length >= 3) throw new Error(`too long: ${values.length}`);
        },
        () => parallel,
      ).catch((e: Error) => e);
      expect(error).toBeInstanceOf(Error);
      const message = String((error as Error).message);
      expect(message).toMatch(/^Property failed after 1 tests/);
      expect(message).toMatch(/Counterexample: \[\[(-?\d+,){2}-?\d+\]\]/);
      expect(message).toMatch(/Shrunk \d+ time/);
      // The rounds, then the replay, which starts with the failing case again: whole rounds only.
      const rounds = calls.findIndex((value, i) => calls.indexOf(value) < i);
      expect(rounds % CASES_PER_ROUND).toBe(0);
      expect(rounds).toBeLessThan(31);
      seen.push([...calls.slice(0, rounds)].sort());
    }
    // The same cases ran one at a time and four at a time.
    expect(seen[0]).toEqual(seen[1]);
  });

  it('a failure that does not recur when replayed stands as first seen', async () => {
    let calls = 0;
    const error = await assertEdgesThenRandomConcurrently(
      fc.nat(),
      [7],
      3,
      async (value) => {
        calls++;
        if (value === 7 && calls === 1) throw new Error('refused once');
      },
      () => 2,
    ).catch((e: Error) => e);
    expect((error as Error).message).toBe('refused once');
  });
});
