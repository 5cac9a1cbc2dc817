// A suite test's evidence is kept by an object made once per worker (suites/evidence.ts,
// suites/context.ts), not by the module: what one log records never reaches another's tests.
import type { RunnerTestCase } from 'vitest';
import { describe, expect, it } from 'vitest';
import { deleteExchange, getExchange } from '../fixtures/exchanges.ts';
import type { Judgement } from '../rules/index.ts';
import { TestEvidenceLog } from '../suites/evidence.ts';

const judged: Judgement = { findings: [], examined: ['TEP-DELETE-204'] };
const task = (name: string) => ({ name, meta: {} }) as RunnerTestCase;
const urls = (test: RunnerTestCase) => test.meta.tmi?.exchanges.map((r) => r.exchange.request.url);

describe("a worker's test evidence", () => {
  it('goes to the running test; what a hook sent goes with the next test of the same log, with its 429s', () => {
    const log = new TestEvidenceLog();
    const other = new TestEvidenceLog();
    log.exchange(deleteExchange(), judged, false);
    log.unplanned429();
    other.risked429();
    const first = task('first');
    log.beginTest(first);
    log.exchange(getExchange(), judged, false);
    log.endTest();
    expect(urls(first)).toEqual([deleteExchange().request.url, getExchange().request.url]);
    expect(first.meta.tmi).toMatchObject({ unplanned429: 1, risked429: 0 });
    const second = task('second');
    log.beginTest(second);
    expect(second.meta.tmi).toMatchObject({ exchanges: [], unplanned429: 0, risked429: 0 });
    const elsewhere = task('elsewhere');
    other.beginTest(elsewhere);
    expect(elsewhere.meta.tmi).toMatchObject({ exchanges: [], unplanned429: 0, risked429: 1 });
  });

  it('a failure marks the exchange it concerns and charges the requirements of the test it ran in', () => {
    const log = new TestEvidenceLog();
    const test = task('failing');
    log.beginTest(test);
    const exchange = deleteExchange();
    log.exchange(getExchange(), judged, false);
    log.exchange(exchange, judged, false);
    log.markFailing(exchange, ['TEP-DELETE-204']);
    expect(test.meta.tmi!.exchanges.map((r) => r.failing)).toEqual([undefined, true]);
    expect(test.meta.tmi!.charged).toEqual(['TEP-DELETE-204']);
  });

  it('a test body in its scope keeps its exchanges, whichever test began last', async () => {
    const log = new TestEvidenceLog();
    const a = task('a');
    const b = task('b');
    log.beginTest(a);
    log.beginTest(b);
    let resume!: () => void;
    const paused = new Promise<void>((resolve) => (resume = resolve));
    const running = log.inTestScope(async () => {
      await paused;
      log.exchange(deleteExchange(), judged, false);
    })({ task: a });
    resume();
    await running;
    log.exchange(getExchange(), judged, false);
    expect(urls(a)).toEqual([deleteExchange().request.url]);
    expect(urls(b)).toEqual([getExchange().request.url]);
  });
});
