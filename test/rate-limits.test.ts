// The rate-limit rules judge in the order the target could have seen: an answer counts as
// earlier only when it had arrived before the other request was sent (a whole millisecond
// apart on recorded timestamps, or on the driver's own clock). And they attribute an exchange
// to a client only through a credential worth trusting.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildExchange, type ExchangeParts } from '../rules/exchange.ts';
import { judgeExchange, RateLimitTracker } from '../rules/index.ts';
import type { Exchange, ExchangeOrder } from '../rules/types.ts';
import { RateLimitSeries } from '../reports/rate-limit-series.ts';
import { startReference, type RunningReference } from '../reference/index.ts';
import { resolveConfig, type RawConfig } from '../suites/config.ts';
import { SuiteApi } from '../suites/api.ts';
import { TenantTokens } from '../keys/tenant.ts';
import { BASE, claims, jwt, rateLimitHeaders, STARTED_AT } from '../fixtures/exchanges.ts';
import { harEntry } from '../recordings/write.ts';
import { exchangeFromHarEntry, type HarEntry } from '../recordings/har-entry.ts';

const RESET = String(Date.parse(STARTED_AT) / 1000 + 30);
const T0 = Date.parse(STARTED_AT);

interface Call {
  /** Milliseconds after STARTED_AT the request was sent (whole milliseconds, as recorded). */
  sent: number;
  /** Milliseconds it took (the answer arrived at sent + took). */
  took: number;
  status: number;
  /** X-RateLimit-Remaining of the answer (Limit 10, same Reset); undefined: no rate-limit headers. */
  remaining?: number;
  azp?: string;
  tokenFacts?: ExchangeParts['tokenFacts'];
  order?: ExchangeOrder;
  /** The path after the API base path; /resource-servers/rs_1 unless said. */
  path?: string;
}

function exchangeOf(c: Call): Exchange {
  return buildExchange({
    startedAt: new Date(T0 + c.sent).toISOString(),
    durationMs: c.took,
    method: 'GET',
    url: `${BASE}${c.path ?? '/resource-servers/rs_1'}`,
    requestHeaders: { authorization: `Bearer ${jwt(claims(undefined, c.azp ?? 'client-a'))}` },
    status: c.status,
    responseHeaders: c.remaining === undefined ? {} : rateLimitHeaders(c.remaining, 10, RESET),
    responseBody: JSON.stringify({ statusCode: c.status }),
    ...(c.tokenFacts ? { tokenFacts: c.tokenFacts } : {}),
    ...(c.order ? { order: c.order } : {}),
  });
}

/** The requirements each exchange was found against, judged in the order given (the order answers were handled). */
function judged(requirement: string, ...calls: Call[]): string[][] {
  const tracker = new RateLimitTracker();
  return calls.map((c) =>
    judgeExchange(exchangeOf(c), tracker)
      .findings.filter((f) => f.requirement === requirement)
      .map((f) => `${f.requirement} ${f.received}`),
  );
}

describe('one window for all operations of a client', () => {
  it('the sequence and the throttling rule see the operations the document does not detail too', () => {
    expect(
      judged(
        'RL-SEQUENCE',
        { sent: 0, took: 1, status: 200, remaining: 5, path: '/users/auth0%7C1' },
        { sent: 10, took: 1, status: 200, remaining: 8, path: '/clients' },
      ),
    ).toEqual([[], ['RL-SEQUENCE 8']]);
    expect(
      judged(
        'RL-THROTTLED-429',
        { sent: 0, took: 1, status: 200, remaining: 0, path: '/logs' },
        { sent: 10, took: 1, status: 403, remaining: 0, path: '/users/auth0%7C1' },
      ),
    ).toEqual([[], ['RL-THROTTLED-429 403']]);
  });
});

describe('RL-THROTTLED-429: over the limit only when sent after a Remaining 0 had arrived', () => {
  it('a burst: siblings sent in the same millisecond are concurrent, whichever answer is handled first', () => {
    // Both sent at 0; the one counted last answered first (Remaining 0, a 429), all within the millisecond.
    expect(judged('RL-THROTTLED-429', { sent: 0, took: 0, status: 429, remaining: 0 }, { sent: 0, took: 1, status: 403, remaining: 1 })).toEqual([[], []]);
    // Even a sibling whose own answer says Remaining 0 (the last one served) is not judged against it.
    expect(judged('RL-THROTTLED-429', { sent: 0, took: 0, status: 200, remaining: 0 }, { sent: 0, took: 0, status: 403, remaining: 0 })).toEqual([[], []]);
    // Overlapping in time: concurrent too.
    expect(judged('RL-THROTTLED-429', { sent: 0, took: 5, status: 200, remaining: 0 }, { sent: 3, took: 5, status: 503, remaining: 0 })).toEqual([[], []]);
  });

  it('a request sent a millisecond or more after a Remaining 0 arrived, refused 403 in the same window: the finding', () => {
    expect(judged('RL-THROTTLED-429', { sent: 0, took: 0, status: 200, remaining: 0 }, { sent: 1, took: 1, status: 403, remaining: 0 })).toEqual([
      [],
      ['RL-THROTTLED-429 403'],
    ]);
    // The 0 counts even when a sibling counted before it (Remaining 2) was answered after it.
    expect(
      judged(
        'RL-THROTTLED-429',
        { sent: 0, took: 4, status: 200, remaining: 0 },
        { sent: 0, took: 6, status: 200, remaining: 2 },
        { sent: 20, took: 1, status: 503, remaining: 0 },
      )[2],
    ).toEqual(['RL-THROTTLED-429 503']);
    // A bare refusal without rate-limit headers is placed in the window last heard of.
    expect(
      judged(
        'RL-THROTTLED-429',
        { sent: 0, took: 4, status: 200, remaining: 0 },
        { sent: 0, took: 6, status: 200, remaining: 2 },
        { sent: 20, took: 1, status: 503 },
      )[2],
    ).toEqual(['RL-THROTTLED-429 503']);
  });

  it('a response reporting a Remaining above the earlier 0 in the same window was counted before it: not over the limit', () => {
    expect(judged('RL-THROTTLED-429', { sent: 0, took: 0, status: 200, remaining: 0 }, { sent: 10, took: 1, status: 403, remaining: 2 })).toEqual([[], []]);
  });

  it("on the driver's own clock, the clock decides, finer than the millisecond", () => {
    const clock = 'test clock';
    // Same millisecond on the timestamps; the clock says the 0 arrived before the next was sent.
    const ordered = judged(
      'RL-THROTTLED-429',
      { sent: 0, took: 0, status: 200, remaining: 0, order: { clock, sent: 0.1, received: 0.4 } },
      { sent: 0, took: 0, status: 403, remaining: 0, order: { clock, sent: 0.6, received: 0.9 } },
    );
    expect(ordered).toEqual([[], ['RL-THROTTLED-429 403']]);
    // A millisecond apart on the timestamps, but the clock says the second was sent first.
    const concurrent = judged(
      'RL-THROTTLED-429',
      { sent: 0, took: 0, status: 200, remaining: 0, order: { clock, sent: 0.1, received: 0.9 } },
      { sent: 1, took: 0, status: 403, remaining: 0, order: { clock, sent: 0.8, received: 1.2 } },
    );
    expect(concurrent).toEqual([[], []]);
    // Different clocks are not compared: the timestamps decide.
    const apart = judged(
      'RL-THROTTLED-429',
      { sent: 0, took: 0, status: 200, remaining: 0, order: { clock, sent: 0.1, received: 0.4 } },
      { sent: 0, took: 0, status: 403, remaining: 0, order: { clock: 'another', sent: 0.6, received: 0.9 } },
    );
    expect(apart).toEqual([[], []]);
  });
});

describe('RL-SEQUENCE: Remaining compared only with answers that arrived before the request was sent', () => {
  it('same millisecond: concurrent, not compared; a millisecond later: compared', () => {
    expect(judged('RL-SEQUENCE', { sent: 0, took: 0, status: 200, remaining: 5 }, { sent: 0, took: 1, status: 200, remaining: 6 })).toEqual([[], []]);
    expect(judged('RL-SEQUENCE', { sent: 0, took: 0, status: 200, remaining: 5 }, { sent: 1, took: 1, status: 200, remaining: 6 })[1]).toHaveLength(1);
    // The lowest Remaining answered before counts, not only the last answer handled.
    expect(
      judged(
        'RL-SEQUENCE',
        { sent: 0, took: 4, status: 200, remaining: 3 },
        { sent: 0, took: 6, status: 200, remaining: 4 },
        { sent: 20, took: 1, status: 200, remaining: 4 },
      )[2],
    ).toEqual(['RL-SEQUENCE 4']);
  });
});

describe('attribution through trusted credentials only', () => {
  /** A tampered token naming client-a: its signature does not hold and the target refused it, counting it in a bucket of its own (Remaining 3). */
  const tampered: Call = { sent: 0, took: 1, status: 401, remaining: 3, tokenFacts: { signatureValid: false } };
  /** client-a's real request afterwards, in its own bucket (Remaining 8). */
  const real: Call = { sent: 10, took: 1, status: 200, remaining: 8 };

  it("a tampered token naming client A, refused 401, makes no RL-SEQUENCE finding against A's real traffic; a trusted one does", () => {
    expect(judged('RL-SEQUENCE', tampered, real)).toEqual([[], []]);
    // Nor is it judged against A's history.
    expect(judged('RL-SEQUENCE', { ...real, sent: 0 }, { ...tampered, sent: 10, remaining: 9 })).toEqual([[], []]);
    // A token naming no client is attributed to nobody either.
    const anonymous = (sent: number, remaining: number): Exchange => buildExchange({ ...partsOf(sent, remaining), requestHeaders: {} });
    const tracker = new RateLimitTracker();
    judgeExchange(anonymous(0, 3), tracker);
    expect(judgeExchange(anonymous(10, 8), tracker).findings.filter((f) => f.requirement === 'RL-SEQUENCE')).toEqual([]);
    // A token whose signature verified, one the kit holds, or one the target accepted is attributed.
    expect(judged('RL-SEQUENCE', { ...tampered, tokenFacts: { signatureValid: true } }, real)[1]).toEqual(['RL-SEQUENCE 8']);
    expect(judged('RL-SEQUENCE', { ...tampered, tokenFacts: { signatureValid: false, heldByKit: true } }, real)[1]).toEqual(['RL-SEQUENCE 8']);
    expect(judged('RL-SEQUENCE', { ...tampered, status: 200, tokenFacts: {} }, real)[1]).toEqual(['RL-SEQUENCE 8']);
  });

  it("the report's rate-limit chart keeps an untrusted token's readings off the client's line", () => {
    const series = new RateLimitSeries();
    for (const c of [tampered, real]) {
      const exchange = exchangeOf(c);
      series.record(exchange, judgeExchange(exchange).rateLimit);
    }
    expect(series.points.map((p) => p.client)).toEqual(['client-a (untrusted token)', 'client-a']);
  });
});

function partsOf(sent: number, remaining: number): ExchangeParts {
  return {
    startedAt: new Date(T0 + sent).toISOString(),
    durationMs: 1,
    method: 'GET',
    url: `${BASE}/resource-servers/rs_1`,
    status: 401,
    responseHeaders: rateLimitHeaders(remaining, 10, RESET),
    responseBody: '{}',
  };
}

describe('the suite marks its exchanges for the rate-limit rules', () => {
  let ref: RunningReference;
  beforeAll(async () => {
    ref = await startReference();
  });
  let api: SuiteApi | undefined;
  afterAll(async () => {
    await api?.close();
    await ref?.close();
  });

  it("a profile's token is the kit's own; every exchange carries the suite's clock, sent before received, in order", async () => {
    const exchanges: Exchange[] = [];
    api = new SuiteApi(
      resolveConfig(ref.config() as RawConfig),
      new TenantTokens({}),
      {},
      { exchange: (e) => exchanges.push(e), unplanned429: () => {}, risked429: () => {} },
    );
    const rs = ref.config().fixtures.resource_servers[0]!;
    await api.getResourceServer(rs);
    await api.getResourceServer(rs, { as: 'corrupted-signature' });
    // A raw header in place of the profile's token is not the kit's own.
    await api.getResourceServer(rs, { authorization: `Bearer ${jwt(claims(undefined, 'ref_full_client'))}` });
    const [own, forged, raw] = exchanges.filter((e) => e.request.url.includes('/resource-servers/'));
    expect(own!.token.heldByKit).toBe(true);
    expect(forged!.token.heldByKit).toBeUndefined();
    expect(raw!.token.heldByKit).toBeUndefined();
    expect(own!.order!.sent).toBeLessThan(own!.order!.received);
    expect(own!.order!.clock).toBe(forged!.order!.clock);
    expect(own!.order!.received).toBeLessThan(forged!.order!.sent);
  });
});

describe("the proxy's order survives its recordings", () => {
  it('_conformance.order is written with the entry and read back by validate; a malformed one is ignored', () => {
    const order = { clock: 'proxy session test', sent: 10.25, received: 11.5 };
    const exchange = exchangeOf({ sent: 0, took: 1, status: 200, remaining: 5, order });
    const entry = harEntry(exchange, judgeExchange(exchange)) as HarEntry;
    expect((entry._conformance as { order?: unknown }).order).toEqual(order);
    expect(exchangeFromHarEntry(entry, '1').order).toEqual(order);
    const malformed = { ...entry, _conformance: { ...(entry._conformance as object), order: { clock: 'x', sent: '1', received: 2 } } };
    expect(exchangeFromHarEntry(malformed, '2').order).toBeUndefined();
  });
});
