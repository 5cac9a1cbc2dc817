// The pacer against simulated targets on a simulated clock: the reference's fixed windows at
// every phase, windows that are not whole seconds, targets that do not count in windows opened
// by a request, and headers that say nothing usable.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FixedWindowRateLimiter, type RateLimitDecision } from '../reference/rate-limit.ts';
import type { Headers } from '../rules/types.ts';
import { RateLimitPacer } from '../suites/pacing.ts';

const EPOCH = 1_700_000_000_000;

const headersOf = (d: RateLimitDecision) => ({
  'x-ratelimit-limit': String(d.limit),
  'x-ratelimit-remaining': String(d.remaining),
  'x-ratelimit-reset': String(d.reset),
});

interface Target {
  take(): RateLimitDecision;
}

interface Simulation {
  now: number;
  /** 429s on requests the pacer sent early on purpose. */
  risked: number;
  /** 429s it did not expect, with when each refused request was sent. */
  unplanned: number[];
  /** When each window the target opened for us started (target time). */
  windowStarts: number[];
  /** Each wait the pacer asked for, with the Reset it had last seen. */
  waits: Array<{ at: number; until: number; reset: number }>;
}

/**
 * A client sending back to back as the pacer lets it: each request reaches the target half a
 * round trip after it is sent, and the next goes out 2 ms after the answer.
 */
function simulate(options: { start: number; roundTrip?: number; until: (s: Simulation) => boolean; target: (now: () => number) => Target }): Simulation {
  const roundTrip = options.roundTrip ?? 3;
  const s: Simulation = { now: options.start, risked: 0, unplanned: [], windowStarts: [], waits: [] };
  const target = options.target(() => s.now);
  const pacer = new RateLimitPacer(() => s.now);
  let lastReset = 0;
  for (let i = 0; i < 100_000 && !options.until(s); i++) {
    const delay = pacer.delayFor('c');
    if (delay > 0) s.waits.push({ at: s.now, until: s.now + delay, reset: lastReset });
    s.now += delay;
    const sentAt = s.now;
    s.now += roundTrip / 2;
    const decision = target.take();
    if (decision.allowed && decision.remaining === decision.limit - 1) s.windowStarts.push(s.now);
    lastReset = decision.reset;
    s.now = sentAt + roundTrip;
    const paced = pacer.afterResponse('c', decision.allowed ? 200 : 429, headersOf(decision), sentAt, s.now);
    if (paced.risked) s.risked++;
    else if (!decision.allowed) s.unplanned.push(sentAt);
    s.now += 2;
  }
  return s;
}

/** How late each window opened after the previous one ended, in ms. */
const lateness = (s: Simulation, windowMs: number) => s.windowStarts.slice(1).map((start, i) => start - (s.windowStarts[i]! + windowMs));

function fixedWindows(limit: number, windowSeconds: number, start: number, windows: number, roundTrip = 3): Simulation {
  return simulate({
    start,
    roundTrip,
    until: (s) => s.windowStarts.length > windows,
    target: (now) => {
      const limiter = new FixedWindowRateLimiter({ limit, windowSeconds }, now);
      return { take: () => limiter.take('c') };
    },
  });
}

describe('pacing from the headers', () => {
  it('waits for the window once Remaining is 0, and not before', () => {
    let now = 1_000_000;
    const pacer = new RateLimitPacer(() => now);
    const headers = (remaining: number) => ({ 'x-ratelimit-limit': '10', 'x-ratelimit-remaining': String(remaining), 'x-ratelimit-reset': '1002' });
    pacer.afterResponse('c', 200, headers(1));
    expect(pacer.delayFor('c')).toBe(0);
    pacer.afterResponse('c', 200, headers(0));
    expect(pacer.delayFor('c')).toBe(2025);
    expect(pacer.delayFor('other')).toBe(0);
    now = 1_002_100;
    expect(pacer.delayFor('c')).toBe(0);
  });

  it('a 429 says how long to wait: until Reset, or a second without one', () => {
    const pacer = new RateLimitPacer(() => 5_000);
    expect(pacer.afterResponse('c', 429, { 'x-ratelimit-limit': '10', 'x-ratelimit-remaining': '3', 'x-ratelimit-reset': '7' })).toEqual({
      retryInMs: 2025,
      risked: false,
    });
    expect(new RateLimitPacer(() => 5_000).afterResponse('c', 429, {}).retryInMs).toBe(1025);
    expect(pacer.afterResponse('d', 200, {}).retryInMs).toBe(0);
  });

  it('garbage X-RateLimit-* values count as absent: no pacing until a 429, then the one-second fallback', () => {
    let now = EPOCH;
    const pacer = new RateLimitPacer(() => now);
    const garbage: Headers[] = [
      { 'x-ratelimit-remaining': '-1', 'x-ratelimit-reset': 'soon' },
      { 'x-ratelimit-limit': 'ten', 'x-ratelimit-remaining': '0.5', 'x-ratelimit-reset': '1.7e9' },
      { 'x-ratelimit-remaining': '0' },
    ];
    for (const headers of garbage) {
      expect(pacer.afterResponse('c', 200, headers).retryInMs).toBe(0);
      expect(pacer.delayFor('c')).toBe(0);
    }
    expect(pacer.afterResponse('c', 429, { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': 'later' }).retryInMs).toBe(1025);
    now += 500;
    expect(pacer.delayFor('c')).toBe(525);
  });

  it('a Reset that is not epoch seconds (seconds to go) teaches nothing and never holds the run', () => {
    const now = EPOCH;
    const pacer = new RateLimitPacer(() => now);
    pacer.afterResponse('c', 200, { 'x-ratelimit-limit': '10', 'x-ratelimit-remaining': '9', 'x-ratelimit-reset': '1' }, now - 3, now);
    pacer.afterResponse('c', 200, { 'x-ratelimit-limit': '10', 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '1' });
    expect(pacer.delayFor('c')).toBe(0);
    // A 429 is then waited out for the slack only, and retried, as before.
    expect(pacer.afterResponse('c', 429, { 'x-ratelimit-limit': '10', 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '1' })).toEqual({
      retryInMs: 25,
      risked: false,
    });
  });
});

describe('pacing against fixed windows (the reference limiter, simulated clock)', () => {
  const phases = [0, 1, 137, 500, 880, 940, 960, 975, 990, 999];

  it.each([
    [40, 1],
    [400, 10],
    [7, 3],
  ])("%i per %i s: no 429 of any kind, and every window opens within 10 ms of the last one's end, at any phase", (limit, seconds) => {
    for (const phase of phases) {
      const s = fixedWindows(limit, seconds, EPOCH + phase, 12);
      expect([s.risked, s.unplanned.length], `phase ${phase}`).toEqual([0, 0]);
      for (const ms of lateness(s, seconds * 1000)) {
        expect(ms, `phase ${phase}`).toBeGreaterThanOrEqual(0);
        expect(ms, `phase ${phase}`).toBeLessThanOrEqual(10);
      }
    }
  });

  it('any phase and round trip: never an unplanned 429, at most one risked, and from the third window within the round trip + 15 ms', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 999 }), fc.integer({ min: 1, max: 30 }), fc.constantFrom(1, 2, 10, 60), (phase, roundTrip, seconds) => {
        const s = fixedWindows(10, seconds, EPOCH + phase, 8, roundTrip);
        expect(s.unplanned).toEqual([]);
        // A 1-second window is the only whole second the first window allows: never a risk.
        expect(s.risked).toBeLessThanOrEqual(seconds === 1 ? 0 : 1);
        for (const ms of lateness(s, seconds * 1000).slice(2)) expect(ms).toBeLessThanOrEqual(roundTrip + 15);
      }),
      { numRuns: 300 },
    );
  });

  it.each([
    [10, 1.5],
    [10, 0.7],
    [10, 2.25],
    [10, 0.25],
  ])('%i per %f s (not whole seconds): no unplanned 429, at most two risked, and no slower than whole-second windows', (limit, seconds) => {
    const roundedUp = Math.ceil(seconds) * 1000 - seconds * 1000;
    for (const phase of phases) {
      const s = fixedWindows(limit, seconds, EPOCH + phase, 16);
      expect(s.unplanned, `phase ${phase}`).toEqual([]);
      expect(s.risked, `phase ${phase}`).toBeLessThanOrEqual(2);
      const late = lateness(s, seconds * 1000);
      for (const ms of late.slice(4)) expect(ms, `phase ${phase}: ${late.join(' ')}`).toBeLessThanOrEqual(roundedUp + 10);
    }
  });

  it('the old bound still holds: whole-second Reset costs at most a second per window', () => {
    for (const [limit, seconds] of [
      [40, 1],
      [400, 10],
      [7, 3],
    ] as const) {
      const s = fixedWindows(limit, seconds, EPOCH + 123, 11);
      expect(s.unplanned).toEqual([]);
      expect(s.windowStarts.at(-1)! - s.windowStarts[0]!).toBeLessThanOrEqual(11 * (seconds * 1000 + 1000));
    }
  });
});

/** Fixed windows on the clock's grid ([k·W, (k+1)·W)), as many limiters count: not opened by a request. */
class GridWindows implements Target {
  private window = -1;
  private count = 0;

  constructor(
    private readonly limit: number,
    private readonly windowMs: number,
    private readonly now: () => number,
  ) {}

  take(): RateLimitDecision {
    const window = Math.floor(this.now() / this.windowMs);
    if (window !== this.window) [this.window, this.count] = [window, 0];
    this.count++;
    return {
      allowed: this.count <= this.limit,
      limit: this.limit,
      remaining: Math.max(0, this.limit - this.count),
      reset: Math.ceil(((window + 1) * this.windowMs) / 1000),
    };
  }
}

/** A leaky bucket: the quota drains back continuously; Reset is when it is empty again. */
class LeakyBucket implements Target {
  private level = 0;
  private at = 0;

  constructor(
    private readonly limit: number,
    private readonly windowMs: number,
    private readonly now: () => number,
  ) {}

  take(): RateLimitDecision {
    const now = this.now();
    this.level = Math.max(0, this.level - ((now - this.at) * this.limit) / this.windowMs);
    this.at = now;
    const allowed = this.level + 1 <= this.limit;
    if (allowed) this.level += 1;
    return {
      allowed,
      limit: this.limit,
      remaining: Math.floor(this.limit - this.level),
      reset: Math.ceil((now + (this.level * this.windowMs) / this.limit) / 1000),
    };
  }
}

describe('pacing a target that does not count in windows opened by a request', () => {
  it.each([
    [1000, 300],
    [1000, 990],
    [2000, 5],
    [10_000, 300],
  ])("windows on the clock's grid (%i ms, phase %i): a few 429s at most, then it waits for Reset", (windowMs, phase) => {
    const s = simulate({ start: EPOCH + phase, until: (x) => x.now > EPOCH + 60 * windowMs, target: (now) => new GridWindows(10, windowMs, now) });
    expect(s.risked).toBeLessThanOrEqual(2);
    expect(s.unplanned.length).toBeLessThanOrEqual(1);
    const lastRefused = Math.max(...s.unplanned, EPOCH);
    const settled = s.waits.filter((w) => w.at > lastRefused + 2 * windowMs);
    expect(settled.length).toBeGreaterThan(30);
    for (const wait of settled) expect(wait.until).toBe(wait.reset * 1000 + 25);
  });

  it('a leaky bucket is never sent a request it refuses', () => {
    for (const phase of [0, 300, 990]) {
      const s = simulate({ start: EPOCH + phase, until: (x) => x.now > EPOCH + 30_000, target: (now) => new LeakyBucket(10, 1000, now) });
      expect([s.risked, s.unplanned.length]).toEqual([0, 0]);
      expect(s.waits.length).toBeGreaterThan(10);
    }
  });

  it('a 429 after the learned end turns the estimate off: from then on it waits for Reset', () => {
    let now = EPOCH + 400;
    const pacer = new RateLimitPacer(() => now);
    const headers = (remaining: number, reset: number) => ({
      'x-ratelimit-limit': '10',
      'x-ratelimit-remaining': String(remaining),
      'x-ratelimit-reset': String(reset),
    });
    // A window opened at +400 that ends by +1000: W ≤ 600.
    pacer.afterResponse('c', 200, headers(9, EPOCH / 1000 + 1), now, now + 2);
    // Another opened at +2100, Reset +3000: by W ≤ 600 it ends by +2702.
    now = EPOCH + 2100;
    pacer.afterResponse('c', 200, headers(9, EPOCH / 1000 + 3), now, now + 2);
    pacer.afterResponse('c', 200, headers(0, EPOCH / 1000 + 3));
    expect(now + pacer.delayFor('c')).toBeLessThanOrEqual(EPOCH + 2702 + 25);
    // Refused after that end, in the same window: the target does not count that way.
    now = EPOCH + 2730;
    expect(pacer.afterResponse('c', 429, headers(0, EPOCH / 1000 + 3), now, now + 2)).toEqual({ retryInMs: 3000 + 25 - 2730, risked: false });
    now = EPOCH + 3100;
    pacer.afterResponse('c', 200, headers(9, EPOCH / 1000 + 4), now, now + 2);
    pacer.afterResponse('c', 200, headers(0, EPOCH / 1000 + 4));
    expect(pacer.delayFor('c')).toBe(4000 + 25 - 3100);
  });

  it('bounds that contradict each other turn the estimate off too', () => {
    let now = EPOCH + 500;
    const pacer = new RateLimitPacer(() => now);
    const headers = (remaining: number, reset: number) => ({
      'x-ratelimit-limit': '10',
      'x-ratelimit-remaining': String(remaining),
      'x-ratelimit-reset': String(reset),
    });
    // A window that opened at +500 and ends by +1000: W ≤ 500.
    pacer.afterResponse('c', 200, headers(9, (EPOCH + 1000) / 1000), now, now + 2);
    now += 2_000;
    // Another that opened at +2500 and ends after +4000: W > 1500.
    pacer.afterResponse('c', 200, headers(9, (EPOCH + 5000) / 1000), now, now + 2);
    pacer.afterResponse('c', 200, headers(0, (EPOCH + 5000) / 1000));
    expect(pacer.delayFor('c')).toBe(EPOCH + 5000 + 25 - now);
  });

  it("another window's Reset means the opener is unknown: it waits for Reset", () => {
    let now = EPOCH + 10;
    const pacer = new RateLimitPacer(() => now);
    const headers = (remaining: number, reset: number) => ({
      'x-ratelimit-limit': '10',
      'x-ratelimit-remaining': String(remaining),
      'x-ratelimit-reset': String(reset),
    });
    // A window that opened at +10 and ends by +1000: the next request may go before Reset.
    pacer.afterResponse('c', 200, headers(9, EPOCH / 1000 + 1), now, now + 2);
    pacer.afterResponse('c', 200, headers(0, EPOCH / 1000 + 1));
    expect(pacer.delayFor('c')).toBeLessThan(1000 + 25 - 10);
    // Later, a window the pacer did not see open (another process used the client).
    now = EPOCH + 5_400;
    pacer.afterResponse('c', 200, headers(0, EPOCH / 1000 + 6));
    expect(pacer.delayFor('c')).toBe(6000 + 25 - 5_400);
  });
});

describe("the pacer's state, for the run's progress line", () => {
  it('the rate last heard, the window once learned, and the wait under way', async () => {
    let now = 10_000_000;
    const waits: number[] = [];
    const pacer = new RateLimitPacer(
      () => now,
      async (ms) => void waits.push(ms),
    );
    expect(pacer.state()).toEqual({ waitMs: 0 });
    // Reset 1 s ahead; Remaining 4 of 5: the window opened with this request.
    pacer.afterResponse('c', 200, { 'x-ratelimit-limit': '5', 'x-ratelimit-remaining': '4', 'x-ratelimit-reset': String(now / 1000 + 1) }, now - 10, now);
    expect(pacer.state()).toMatchObject({ limit: 5, windowMs: 1010, waitMs: 0 });
    const waiting = pacer.waitFor(800);
    expect(pacer.state().waitMs).toBe(800);
    await waiting;
    now += 300;
    expect(pacer.state().waitMs).toBe(500);
    expect(pacer.waitedMs).toBe(800);
  });
});
