// The rate-limit chart's SVG: a pause in traffic is drawn as a gap (no line across it, a shaded
// band saying how long), the traffic's own rhythm is not; and every 429 is visible: marks that
// would cover each other are one mark with their count.
import { describe, expect, it } from 'vitest';
import type { TrafficStats } from '../reports/model.ts';
import { renderRateLimitChart } from '../reports/rate-limit-chart.ts';

type Point = TrafficStats['rateLimitSeries'][number];
const T0 = Date.parse('2027-01-15T08:00:00.000Z');
const at = (ms: number) => new Date(T0 + ms).toISOString();
const reading = (ms: number, remaining: number, status = 200, client = 'orders-service'): Point => ({
  t: at(ms),
  client,
  status,
  limit: 10,
  remaining,
  reset: T0 / 1000 + 60,
});

/** Five readings a second apart, 16 s of nothing, then eight 429s within 0.4 s. */
const PAUSED: Point[] = [
  ...Array.from({ length: 5 }, (_, i) => reading(i * 1000, 9 - i)),
  ...Array.from({ length: 8 }, (_, i) => reading(20_000 + i * 50, 0, 429)),
];

/** The pen moves ("M") of each path of a class: 1 is one unbroken line. */
const penLifts = (svg: string, kind: string) =>
  [...svg.matchAll(new RegExp(`<path class="${kind}"[^>]* d="([^"]+)"`, 'g'))].map((m) => m[1]!.split('M').length - 1);

/** The 429 marks drawn: where, and how many answers each stands for (1 unless a count is drawn with it). */
function marks429(svg: string): Array<{ x: number; y: number; count: number }> {
  const circle = (markup: string) => {
    const m = /<circle class="point-429" cx="([\d.]+)" cy="([\d.]+)"/.exec(markup)!;
    return { x: Number(m[1]), y: Number(m[2]) };
  };
  const grouped = [...svg.matchAll(/<g class="mark-429"[^>]*>(.*?)<\/g>/g)].map((g) => ({
    ...circle(g[1]!),
    count: Number(/>(\d+) × 429<\/text>/.exec(g[1]!)?.[1] ?? 1),
  }));
  const single = [...svg.replace(/<g class="mark-429"[^>]*>.*?<\/g>/g, '').matchAll(/<circle class="point-429"[^>]*>/g)].map((m) => ({
    ...circle(m[0]),
    count: 1,
  }));
  return [...grouped, ...single];
}

/** The labels of the y axes' ticks, in the order drawn. */
const yTicks = (svg: string) => [...svg.matchAll(/<text class="tick" x="[\d.]+" y="[\d.]+" text-anchor="end">([^<]*)<\/text>/g)].map((m) => m[1]!);

describe('the rate-limit chart', () => {
  it('keeps tick labels short when a Reset counts milliseconds or is a date: at most five characters', () => {
    const dated = [reading(0, 9), { ...reading(1000, 8), reset: T0 }];
    const ticks = yTicks(renderRateLimitChart(dated));
    // Reset given in milliseconds: about 1.8 × 10¹² "seconds" until it.
    expect(ticks.slice(5)).toEqual(['0', '500B', '1T', '1.5T', '2T']);
    expect(ticks.every((t) => t.length <= 5)).toBe(true);
    expect(yTicks(renderRateLimitChart(PAUSED))).toContain('2.5');
  });

  it('draws a pause in traffic as a gap: the lines break there, and a band says how long it was', () => {
    const svg = renderRateLimitChart(PAUSED);
    expect(penLifts(svg, 'remaining')).toEqual([2]);
    expect(penLifts(svg, 'limit')).toEqual([2]);
    expect(penLifts(svg, 'reset')).toEqual([2]);
    expect(svg).toContain('no traffic for 16 s');
    expect(svg.match(/<g class="pause">/g)).toHaveLength(2); // in both panels
  });

  it('keeps the traffic’s own rhythm one line: no gap where readings come as often as ever', () => {
    const steady = Array.from({ length: 40 }, (_, i) => reading(i * 1500, 40 - i));
    const svg = renderRateLimitChart(steady);
    expect(penLifts(svg, 'remaining')).toEqual([1]);
    expect(svg).not.toContain('class="pause"');
  });

  it('shows every 429: marks that would cover each other are one, with their count', () => {
    const marks = marks429(renderRateLimitChart(PAUSED));
    expect(marks.reduce((sum, m) => sum + m.count, 0)).toBe(8);
    for (const [i, a] of marks.entries()) for (const b of marks.slice(i + 1)) expect(Math.hypot(a.x - b.x, a.y - b.y)).toBeGreaterThanOrEqual(9);
    expect(marks).toHaveLength(1);
  });

  it('marks 429s apart where they fall apart, and one without X-RateLimit-Remaining too', () => {
    const spread = [reading(0, 3), reading(10_000, 0, 429), reading(20_000, 0, 429), { t: at(30_000), client: 'orders-service', status: 429 }];
    const marks = marks429(renderRateLimitChart(spread));
    expect(marks.map((m) => m.count)).toEqual([1, 1, 1]);
  });
});
