// The pacer with several requests of a client in flight: admission never lets a window get more
// requests than Remaining allowed, whatever order the answers come back in (a simulated target
// on a simulated clock), and the suite's client judges overlapping exchanges by the order they
// were really sent and answered in (a real HTTP target that answers out of order).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FixedWindowRateLimiter, type RateLimitDecision } from '../reference/rate-limit.ts';
import { MAX_IN_FLIGHT, RateLimitPacer } from '../suites/pacing.ts';
import { SuiteApi } from '../suites/api.ts';
import { resolveConfig } from '../suites/config.ts';
import { TenantTokens } from '../keys/tenant.ts';
import { claims, jwt } from '../fixtures/exchanges.ts';
import type { Exchange } from '../rules/types.ts';

const EPOCH = 1_700_000_000_000;

const headersOf = (d: { limit: number; remaining: number; reset: number }) => ({
  'x-ratelimit-limit': String(d.limit),
  'x-ratelimit-remaining': String(d.remaining),
  'x-ratelimit-reset': String(d.reset),
});

/** A simulated clock: timers fire in time order, each once every promise it woke has settled. */
class SimulatedClock {
  now: number;
  private timers: Array<{ at: number; seq: number; fire: () => void }> = [];
  private seq = 0;

  constructor(start: number) {
    this.now = start;
  }

  sleep = (ms: number): Promise<void> => new Promise((resolve) => this.timers.push({ at: this.now + Math.max(0, ms), seq: this.seq++, fire: resolve }));

  /** Fires timers until none is left. */
  async run(): Promise<void> {
    await settle();
    while (this.timers.length > 0) {
      this.timers.sort((a, b) => a.at - b.at || a.seq - b.seq);
      const timer = this.timers.shift()!;
      this.now = Math.max(this.now, timer.at);
      timer.fire();
      await settle();
    }
  }
}

const settle = async () => {
  for (let i = 0; i < 4; i++) await new Promise((resolve) => setImmediate(resolve));
};

interface Outcome {
  elapsed: number;
  unplanned: number;
  risked: number;
  /** Most requests of the client in flight at once. */
  mostInFlight: number;
  /** Admissions that left more requests in flight than the Remaining the pacer held. */
  overAdmitted: number;
}

/**
 * `workers` callers sharing one client, `requests` in all, against fixed windows of `limit`
 * per `windowSeconds`: each request reaches the target `up` ms after it is sent and its answer
 * comes back `down` ms later, both drawn per request, so answers overtake each other.
 */
async function simulate(options: {
  limit: number;
  windowSeconds: number;
  requests: number;
  workers: number;
  phase: number;
  latency: () => { up: number; down: number };
}): Promise<Outcome> {
  const clock = new SimulatedClock(EPOCH + options.phase);
  const limiter = new FixedWindowRateLimiter({ limit: options.limit, windowSeconds: options.windowSeconds }, () => clock.now);
  const pacer = new RateLimitPacer(() => clock.now, clock.sleep);
  const outcome: Outcome = { elapsed: 0, unplanned: 0, risked: 0, mostInFlight: 0, overAdmitted: 0 };
  let started = 0;
  let inFlight = 0;
  const worker = async () => {
    while (started < options.requests) {
      started++;
      for (;;) {
        const admission = await pacer.admit('c');
        inFlight++;
        outcome.mostInFlight = Math.max(outcome.mostInFlight, inFlight);
        const remaining = pacer.remainingOf('c');
        if (!admission.early && remaining !== undefined && pacer.inFlightOf('c') > Math.max(remaining, 1)) outcome.overAdmitted++;
        const sentAt = clock.now;
        const { up, down } = options.latency();
        await clock.sleep(up);
        const decision: RateLimitDecision = limiter.take('c');
        await clock.sleep(down);
        inFlight--;
        const paced = pacer.afterResponse('c', decision.allowed ? 200 : 429, headersOf(decision), sentAt, clock.now, admission.early);
        pacer.release('c');
        if (decision.allowed) break;
        if (paced.risked) outcome.risked++;
        else outcome.unplanned++;
        await clock.sleep(paced.retryInMs);
      }
    }
  };
  const done = Promise.all(Array.from({ length: options.workers }, worker));
  await clock.run();
  await done;
  outcome.elapsed = clock.now - (EPOCH + options.phase);
  return outcome;
}

describe('admission with requests in flight', () => {
  it('nothing known of the quota: one request at a time', async () => {
    const pacer = new RateLimitPacer(() => EPOCH);
    expect(pacer.next('c')).toEqual({ go: true, early: false });
    await pacer.admit('c');
    expect(pacer.next('c')).toEqual({ waitForAnswer: true });
    // Another client is not held back.
    expect(pacer.next('other')).toEqual({ go: true, early: false });
  });

  it('as many in flight as Remaining allows and the rate and round trip call for, never more', async () => {
    const now = EPOCH;
    const pacer = new RateLimitPacer(() => now);
    // Limit 15 per second (the window reset a second away), a round trip of 300 ms: 15 × 0.3 → 5.
    pacer.afterResponse('c', 200, headersOf({ limit: 15, remaining: 3, reset: (EPOCH + 1000) / 1000 }), EPOCH - 300, EPOCH);
    expect(pacer.maxInFlight('c')).toBe(5);
    for (let i = 0; i < 3; i++) await pacer.admit('c');
    // Remaining 3, three unanswered: a fourth could be a fourth request in the window.
    expect(pacer.next('c')).toEqual({ waitForAnswer: true });
    pacer.afterResponse('c', 200, headersOf({ limit: 15, remaining: 2, reset: (EPOCH + 1000) / 1000 }), EPOCH, EPOCH);
    pacer.release('c');
    // Remaining 2 with two unanswered: still none.
    expect(pacer.next('c')).toEqual({ waitForAnswer: true });
  });

  it('the in-flight cap follows the rate × round trip, at least 1, at most MAX_IN_FLIGHT', () => {
    const pacer = new RateLimitPacer(() => EPOCH);
    pacer.afterResponse('slow', 200, headersOf({ limit: 2, remaining: 1, reset: (EPOCH + 1000) / 1000 }), EPOCH - 100, EPOCH);
    expect(pacer.maxInFlight('slow')).toBe(1);
    pacer.afterResponse('fast', 200, headersOf({ limit: 1000, remaining: 999, reset: (EPOCH + 1000) / 1000 }), EPOCH - 100, EPOCH);
    expect(pacer.maxInFlight('fast')).toBe(MAX_IN_FLIGHT);
    expect(pacer.widestMaxInFlight()).toBe(MAX_IN_FLIGHT);
  });

  it('a request that must go alone waits for every request of its client in flight', async () => {
    const pacer = new RateLimitPacer(() => EPOCH);
    pacer.afterResponse('c', 200, headersOf({ limit: 100, remaining: 90, reset: (EPOCH + 1000) / 1000 }), EPOCH - 100, EPOCH);
    await pacer.admit('c');
    expect(pacer.next('c')).toEqual({ go: true, early: false });
    expect(pacer.next('c', true)).toEqual({ waitForAnswer: true });
  });

  it('answers out of order: the lowest Remaining of the window holds; an answer from a window already over is ignored', () => {
    const pacer = new RateLimitPacer(() => EPOCH);
    const reset = (EPOCH + 1000) / 1000;
    // Sent second, answered first.
    pacer.afterResponse('c', 200, headersOf({ limit: 10, remaining: 5, reset }), EPOCH + 20, EPOCH + 40);
    // Sent first, answered last: counted earlier, its Remaining is higher.
    pacer.afterResponse('c', 200, headersOf({ limit: 10, remaining: 6, reset }), EPOCH + 10, EPOCH + 50);
    expect(pacer.remainingOf('c')).toBe(5);
    // A new window, then a late answer from the old one saying it was spent.
    pacer.afterResponse('c', 200, headersOf({ limit: 10, remaining: 9, reset: reset + 1 }), EPOCH + 1100, EPOCH + 1120);
    pacer.afterResponse('c', 429, headersOf({ limit: 10, remaining: 0, reset }), EPOCH + 990, EPOCH + 1130);
    expect(pacer.remainingOf('c')).toBe(9);
  });

  it('a 429 is risked only when admit sent the request early', () => {
    const pacer = new RateLimitPacer(() => EPOCH);
    const paced = pacer.afterResponse('c', 429, headersOf({ limit: 10, remaining: 0, reset: (EPOCH + 1000) / 1000 }), EPOCH, EPOCH + 5, false);
    expect(paced.risked).toBe(false);
    expect(pacer.afterResponse('c', 429, headersOf({ limit: 10, remaining: 0, reset: (EPOCH + 1000) / 1000 }), EPOCH, EPOCH + 5, true).risked).toBe(true);
  });

  it('15/s with a 100 ms round trip and six callers: several in flight, no unplanned 429, never over Remaining, paced to the rate', async () => {
    const outcome = await simulate({ limit: 15, windowSeconds: 1, requests: 150, workers: 6, phase: 400, latency: () => ({ up: 50, down: 50 }) });
    expect(outcome.unplanned).toBe(0);
    expect(outcome.overAdmitted).toBe(0);
    expect(outcome.mostInFlight).toBeGreaterThan(1);
    // 150 requests are 10 windows of 15: the last opens 9 s after the first.
    expect(outcome.elapsed).toBeLessThan(1.15 * 10_000);
  });

  it('any phase, limit, window and latencies, answers overtaking each other: no unplanned 429, never more in flight than Remaining allowed', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          limit: fc.integer({ min: 1, max: 40 }),
          windowSeconds: fc.constantFrom(1, 2, 5),
          workers: fc.integer({ min: 1, max: 10 }),
          phase: fc.integer({ min: 0, max: 999 }),
          seed: fc.integer(),
          slowest: fc.integer({ min: 2, max: 400 }),
        }),
        async ({ limit, windowSeconds, workers, phase, seed, slowest }) => {
          let state = seed;
          // A small deterministic generator: latencies differ per request, so answers overtake each other.
          const random = () => ((state = (Math.imul(state, 1_103_515_245) + 12_345) | 0) >>> 0) / 2 ** 32;
          const outcome = await simulate({
            limit,
            windowSeconds,
            requests: 3 * limit + 5,
            workers,
            phase,
            latency: () => ({ up: 1 + random() * slowest, down: 1 + random() * slowest }),
          });
          expect(outcome.unplanned).toBe(0);
          expect(outcome.overAdmitted).toBe(0);
          expect(outcome.risked).toBeLessThanOrEqual(2);
        },
      ),
      { numRuns: 60 },
    );
  });
});

describe('requests of one client in flight together, answered out of order', () => {
  // A target that counts the requests in the order it got them and holds the answer to "hold"
  // until "overtaking", sent beside it, has been answered: the answer with the higher Remaining
  // arrives last. Remaining by id, as the target counted them; "rising" breaks the sequence.
  const REMAINING: Record<string, number> = { first: 99_999, hold: 99_998, overtaking: 99_997, after: 99_996, rising: 99_999 };
  let server: Server;
  let base: string;
  let api: SuiteApi | undefined;
  let overtakingAnswered: () => void = () => {};
  const overtakingDone = new Promise<void>((resolve) => (overtakingAnswered = resolve));

  beforeAll(async () => {
    // A minute away: the window outlasts the test, however slow the machine.
    const reset = Math.ceil(Date.now() / 1000) + 60;
    server = createServer((req, res) => {
      const id = decodeURIComponent(req.url!.split('/').pop()!);
      const answer = () =>
        setTimeout(() => {
          res
            .writeHead(404, { 'content-type': 'application/json', ...headersOf({ limit: 100_000, remaining: REMAINING[id] ?? 0, reset }) })
            .end('{"statusCode":404,"error":"Not Found","message":"no such resource server"}');
          if (id === 'overtaking') res.once('finish', overtakingAnswered);
        }, 30);
      if (id === 'hold') void overtakingDone.then(answer);
      else answer();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    await api?.close();
    await new Promise((resolve) => server.close(resolve));
  });

  it('judged in the order they were sent and answered: no RL-SEQUENCE for the overlap, one for a rise after it; the pacer keeps the lowest Remaining', async () => {
    const client = 'client-overlap';
    const config = resolveConfig({ base_url: `${base}/api/v2`, credentials: { full: { token: jwt(claims(undefined, client)) } } });
    api = new SuiteApi(config, new TenantTokens({}), {}, { exchange: () => {}, unplanned429: () => {}, risked429: () => {} });
    const sequenceFindings = (e: { findings: Array<{ requirement: string }> }) => e.findings.filter((f) => f.requirement === 'RL-SEQUENCE');
    expect(sequenceFindings(await api.getResourceServer('first'))).toEqual([]);
    // Rate (100,000 per the minute left) × round trip (30 ms and more): several may go at once.
    expect(api.pacer.maxInFlight(client)).toBeGreaterThan(1);
    const [held, overtaking] = await Promise.all([api.getResourceServer('hold'), api.getResourceServer('overtaking')]);
    const order = (e: Exchange) => e.order!;
    // They overlapped, and the later answer carries the higher Remaining.
    expect(order(held.exchange).sent).toBeLessThan(order(overtaking.exchange).received);
    expect(order(overtaking.exchange).sent).toBeLessThan(order(held.exchange).received);
    expect(order(overtaking.exchange).received).toBeLessThan(order(held.exchange).received);
    expect(sequenceFindings(held)).toEqual([]);
    expect(sequenceFindings(overtaking)).toEqual([]);
    expect(api.pacer.remainingOf(client)).toBe(99_997);
    expect(sequenceFindings(await api.getResourceServer('after'))).toEqual([]);
    // Sent after every answer of the window: a Remaining above theirs is the target's mistake.
    expect(sequenceFindings(await api.getResourceServer('rising')).length).toBe(1);
  });
});

describe('an interrupt of the run', () => {
  // "spend" answers with the quota spent for a minute; "hang" never answers.
  let server: Server;
  let base: string;
  let api: SuiteApi | undefined;

  beforeAll(async () => {
    const reset = Math.ceil(Date.now() / 1000) + 60;
    server = createServer((req, res) => {
      if (req.url!.endsWith('/hang')) return;
      res
        .writeHead(404, { 'content-type': 'application/json', ...headersOf({ limit: 5, remaining: 0, reset }) })
        .end('{"statusCode":404,"error":"Not Found","message":"no such resource server"}');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    await api?.close();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('ends a wait for the window and a request in flight at once, with RunInterrupted and no exchange, and refuses every later call', async () => {
    const config = resolveConfig({ base_url: `${base}/api/v2`, credentials: { full: { token: jwt(claims(undefined, 'client-interrupted')) } } });
    const exchanges: Exchange[] = [];
    api = new SuiteApi(config, new TenantTokens({}), {}, { exchange: (e) => exchanges.push(e), unplanned429: () => {}, risked429: () => {} });
    await api.getResourceServer('spend');
    expect(api.pacer.delayFor('client-interrupted')).toBeGreaterThan(50_000);
    const waiting = api.getResourceServer('next');
    const inFlight = api.getResourceServer('hang', { as: 'anonymous' });
    await new Promise((r) => setTimeout(r, 100));
    const interruptedAt = Date.now();
    api.interrupt();
    const outcomes = await Promise.allSettled([waiting, inFlight]);
    expect(Date.now() - interruptedAt).toBeLessThan(1_000);
    for (const outcome of outcomes)
      expect(outcome).toMatchObject({ status: 'rejected', reason: { name: 'RunInterrupted', message: 'not run: the run was interrupted' } });
    await expect(api.getResourceServer('later', { as: 'anonymous' })).rejects.toMatchObject({ name: 'RunInterrupted' });
    expect(exchanges.map((e) => e.request.url.split('/').pop())).toEqual(['spend']);
  });
});
