// The X-RateLimit-* headers over time as inline SVG, for report.html and the proxy's live page:
// Limit (dashed) and Remaining (solid) per client in one panel, seconds until Reset in a second
// panel, 429 answers marked. A pause in a client's traffic breaks its lines (nothing was read
// then), a pause in all of it is shaded; 429s drawn on one spot are one mark with their count.
// Drawn here rather than in the browser: the file needs no script to show it.
import type { TrafficStats } from './model.ts';
import { escapeXml as esc } from './xml.ts';

type Point = TrafficStats['rateLimitSeries'][number];

/** Clients drawn; the others are named as a count under the chart. */
export const MAX_CLIENTS_CHARTED = 6;
const COLORS = ['#2563eb', '#7c3aed', '#0891b2', '#db2777', '#ea580c', '#65a30d'];
const WIDTH = 960;
const MARGIN = { left: 56, right: 36, top: 12, bottom: 28 };
const MAIN_HEIGHT = 260;
const RESET_HEIGHT = 150;
/** A pause longer than this many times a client's usual interval between readings breaks its lines… */
const GAP_FACTOR = 5;
/** …when it is this long at least: shorter ones are the traffic's own rhythm. */
const MIN_GAP_MS = 2000;
/** 429 marks closer than this (px) would cover each other: they are drawn as one, with their count. */
const MARK_SPAN = 9;
const MARK_GROUP_SPAN = 3 * MARK_SPAN;

interface Scale {
  x: (ms: number) => number;
  ticks: number[];
  label: (ms: number) => string;
}

/** A round upper bound for an axis: 1, 2 or 5 times a power of ten. */
function niceMax(value: number): number {
  if (value <= 0) return 1;
  const power = 10 ** Math.floor(Math.log10(value));
  for (const step of [1, 2, 5, 10]) if (step * power >= value) return step * power;
  return 10 * power;
}

/** Tick spacings a reader counts in: seconds, minutes, hours, days. */
const TICK_STEPS_MS = [0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400, 172800, 604800].map(
  (s) => s * 1000,
);

function timeScale(points: Point[]): Scale {
  const times = points.map((p) => Date.parse(p.t));
  let start = Math.min(...times);
  let end = Math.max(...times);
  if (end - start < 1000) {
    start -= 1000;
    end += 1000;
  }
  const inner = WIDTH - MARGIN.left - MARGIN.right;
  const x = (ms: number) => MARGIN.left + ((ms - start) / (end - start)) * inner;
  // The smallest round step giving at most 8 ticks, aligned to multiples of itself (in UTC).
  const step = TICK_STEPS_MS.find((s) => (end - start) / s <= 8) ?? TICK_STEPS_MS[TICK_STEPS_MS.length - 1]!;
  const ticks: number[] = [];
  for (let t = Math.ceil(start / step) * step; t <= end; t += step) ticks.push(t);
  const long = end - start > 24 * 3600 * 1000;
  const label = (ms: number) => {
    const iso = new Date(ms).toISOString();
    if (long) return `${iso.slice(5, 10)} ${iso.slice(11, 16)}`;
    return step >= 60_000 ? iso.slice(11, 16) : step >= 1000 ? iso.slice(11, 19) : iso.slice(11, 23);
  };
  return { x, ticks, label };
}

function axes(scale: Scale, height: number, yMax: number, yLabel: string): string {
  const bottom = height - MARGIN.bottom;
  const y = (v: number) => bottom - (v / yMax) * (bottom - MARGIN.top);
  const out: string[] = [];
  for (let i = 0; i <= 4; i++) {
    const value = (yMax * i) / 4;
    out.push(`<line class="grid" x1="${MARGIN.left}" x2="${WIDTH - MARGIN.right}" y1="${y(value).toFixed(1)}" y2="${y(value).toFixed(1)}"/>`);
    out.push(`<text class="tick" x="${MARGIN.left - 8}" y="${(y(value) + 4).toFixed(1)}" text-anchor="end">${esc(formatNumber(value))}</text>`);
  }
  for (const t of scale.ticks) {
    const x = scale.x(t).toFixed(1);
    out.push(`<line class="grid" x1="${x}" x2="${x}" y1="${bottom}" y2="${bottom + 4}"/>`);
    out.push(`<text class="tick" x="${x}" y="${height - 8}" text-anchor="middle">${esc(scale.label(t))}</text>`);
  }
  out.push(
    `<text class="axis-label" x="12" y="${MARGIN.top + (bottom - MARGIN.top) / 2}" transform="rotate(-90 12 ${MARGIN.top + (bottom - MARGIN.top) / 2})" text-anchor="middle">${esc(yLabel)}</text>`,
  );
  return out.join('');
}

/**
 * A tick's value in at most five characters, so that it fits the margin beside the axis: a Reset
 * sent in milliseconds, or as a date, makes "seconds until reset" run to ten digits (1.8B).
 */
// module-state: a number format keeps nothing between the values it formats.
const COMPACT = new Intl.NumberFormat('en', { notation: 'compact', maximumFractionDigits: 1 });
const formatNumber = (value: number) => (Math.abs(value) >= 10_000 ? COMPACT.format(value) : Number.isInteger(value) ? String(value) : value.toFixed(1));

function describe(p: Point): string {
  const parts = [p.t, p.client, `HTTP ${p.status}`];
  if (p.remaining !== undefined) parts.push(`remaining ${p.remaining}${p.limit !== undefined ? ` of ${p.limit}` : ''}`);
  if (p.reset !== undefined) parts.push(`reset in ${secondsUntilReset(p)} s`);
  return parts.join(' · ');
}

const secondsUntilReset = (p: Point) => (p.reset === undefined ? 0 : Math.round(p.reset - Date.parse(p.t) / 1000));

/** A polyline that lifts its pen at each point that comes after a pause (the third member). */
const path = (coordinates: Array<[number, number, boolean]>) =>
  coordinates.map(([x, y, pause], i) => `${i === 0 || pause ? 'M' : 'L'}${x.toFixed(1)},${y.toFixed(1)}`).join('');

/** The middle interval between consecutive times (sorted), 0 for fewer than two. */
function medianInterval(times: readonly number[]): number {
  const intervals = times
    .slice(1)
    .map((t, i) => t - times[i]!)
    .sort((a, b) => a - b);
  return intervals.length === 0 ? 0 : intervals[Math.floor(intervals.length / 2)]!;
}

/** Whether the time between two readings is a pause in traffic rather than its rhythm. */
const isPause = (interval: number, usual: number) => interval >= MIN_GAP_MS && interval > GAP_FACTOR * usual;

/** The pauses of all the traffic drawn, as [from, to] times: no client read anything then. */
export function trafficPauses(times: readonly number[]): Array<[number, number]> {
  const sorted = [...times].sort((a, b) => a - b);
  const usual = medianInterval(sorted);
  const pauses: Array<[number, number]> = [];
  for (let i = 1; i < sorted.length; i++) if (isPause(sorted[i]! - sorted[i - 1]!, usual)) pauses.push([sorted[i - 1]!, sorted[i]!]);
  return pauses;
}

/**
 * 429 readings whose marks would cover each other, gathered (each one within MARK_SPAN of the one
 * before it, a group at most MARK_GROUP_SPAN wide, so that a long run of them stays a run of
 * marks): each group is one mark with its count, drawn at the middle of the spots it stands for.
 */
function markGroups(points: readonly Point[], at: (p: Point) => [number, number]): Array<{ points: Point[]; x: number; y: number }> {
  const groups: Array<{ points: Point[]; xs: number[]; ys: number[] }> = [];
  for (const p of points) {
    const [x, y] = at(p);
    const last = groups[groups.length - 1];
    const near = last !== undefined && Math.abs(last.xs[last.xs.length - 1]! - x) < MARK_SPAN && Math.abs(last.ys[last.ys.length - 1]! - y) < MARK_SPAN;
    if (near && Math.abs(x - last.xs[0]!) < MARK_GROUP_SPAN) {
      last.points.push(p);
      last.xs.push(x);
      last.ys.push(y);
    } else groups.push({ points: [p], xs: [x], ys: [y] });
  }
  const middle = (values: number[]) => (Math.min(...values) + Math.max(...values)) / 2;
  return groups.map((g) => ({ points: g.points, x: middle(g.xs), y: middle(g.ys) }));
}

const seconds = (ms: number) => (ms >= 10_000 ? String(Math.round(ms / 1000)) : (ms / 1000).toFixed(1));

/** A 429 mark: one answer, or several drawn on one spot with their count beside it. */
function mark429(group: Point[], x: number, y: number, higher: boolean): string {
  const title =
    group.length === 1 ? describe(group[0]!) : `${group.length} × 429, ${group[0]!.t} to ${group[group.length - 1]!.t} · ${describe(group[group.length - 1]!)}`;
  // Beside the mark, on the side with room for it.
  const left = x > WIDTH - MARGIN.right - 60;
  const count =
    group.length === 1
      ? ''
      : `<text class="count-429" x="${(left ? x - 7 : x + 7).toFixed(1)}" y="${(higher ? y - 21 : y - 7).toFixed(1)}" text-anchor="${left ? 'end' : 'start'}">${group.length} × 429</text>`;
  return `<g class="mark-429" data-count="${group.length}"><circle class="point-429" cx="${x.toFixed(1)}" cy="${y.toFixed(1)}" r="4.5" fill="#dc2626"/>${count}<title>${esc(title)}</title></g>`;
}

/** A pause in all the traffic, shaded across a panel; the main panel says how long it was. */
function pauseBand(scale: Scale, from: number, to: number, height: number, labelled: boolean): string {
  const x1 = scale.x(from);
  const width = scale.x(to) - x1;
  const label = `no traffic for ${seconds(to - from)} s`;
  const text =
    labelled && width > 90
      ? `<text class="pause-label" x="${(x1 + width / 2).toFixed(1)}" y="${MARGIN.top + 14}" text-anchor="middle">${esc(label)}</text>`
      : '';
  return `<g class="pause"><rect x="${x1.toFixed(1)}" y="${MARGIN.top}" width="${width.toFixed(1)}" height="${height - MARGIN.bottom - MARGIN.top}"/>${text}<title>${esc(`${label}: ${new Date(from).toISOString()} to ${new Date(to).toISOString()}`)}</title></g>`;
}

/** The Limit/Remaining panel and the Reset panel, or an empty string when there is nothing to draw. */
export function renderRateLimitChart(series: TrafficStats['rateLimitSeries']): string {
  const points = series.filter((p) => Number.isFinite(Date.parse(p.t)));
  if (points.length === 0) return '';
  const byClient = new Map<string, Point[]>();
  for (const p of points) byClient.set(p.client, [...(byClient.get(p.client) ?? []), p]);
  const clients = [...byClient.entries()].sort((a, b) => b[1].length - a[1].length);
  const charted = clients.slice(0, MAX_CLIENTS_CHARTED);
  const drawn = charted.flatMap(([, list]) => list);
  const scale = timeScale(drawn);

  const yMax = niceMax(Math.max(...drawn.map((p) => Math.max(p.limit ?? 0, p.remaining ?? 0))));
  const mainBottom = MAIN_HEIGHT - MARGIN.bottom;
  const yMain = (v: number) => mainBottom - (v / yMax) * (mainBottom - MARGIN.top);
  const resetMax = niceMax(Math.max(...drawn.map((p) => Math.max(0, secondsUntilReset(p)))));
  const resetBottom = RESET_HEIGHT - MARGIN.bottom;
  const yReset = (v: number) => resetBottom - (Math.max(0, v) / resetMax) * (resetBottom - MARGIN.top);

  const main: string[] = [axes(scale, MAIN_HEIGHT, yMax, 'requests')];
  const reset: string[] = [axes(scale, RESET_HEIGHT, resetMax, 'seconds')];
  const legend: string[] = [];
  // Shaded first, under the lines: the pauses of all the traffic drawn.
  for (const [from, to] of trafficPauses(drawn.map((p) => Date.parse(p.t)))) {
    main.push(pauseBand(scale, from, to, MAIN_HEIGHT, true));
    reset.push(pauseBand(scale, from, to, RESET_HEIGHT, false));
  }
  for (const [i, [client, list]] of charted.entries()) {
    const color = COLORS[i % COLORS.length]!;
    const x = (p: Point) => scale.x(Date.parse(p.t));
    const usual = medianInterval(list.map((p) => Date.parse(p.t)));
    // Each line lifts its pen after a pause in this client's own readings of that header.
    const coordinates = (readings: Point[], y: (p: Point) => number): Array<[number, number, boolean]> =>
      readings.map((p, k) => [x(p), y(p), k > 0 && isPause(Date.parse(p.t) - Date.parse(readings[k - 1]!.t), usual)]);
    const limited = list.filter((p) => p.limit !== undefined);
    const remaining = list.filter((p) => p.remaining !== undefined);
    const resets = list.filter((p) => p.reset !== undefined);
    const line = (kind: string, points: Array<[number, number, boolean]>) =>
      points.length > 0 ? `<path class="${kind}" stroke="${color}" d="${path(points)}"/>` : '';
    main.push(
      line(
        'limit',
        coordinates(limited, (p) => yMain(p.limit!)),
      ),
    );
    main.push(
      line(
        'remaining',
        coordinates(remaining, (p) => yMain(p.remaining!)),
      ),
    );
    reset.push(
      line(
        'reset',
        coordinates(resets, (p) => yReset(secondsUntilReset(p))),
      ),
    );
    for (const p of remaining.filter((r) => r.status !== 429))
      main.push(
        `<circle class="point" cx="${x(p).toFixed(1)}" cy="${yMain(p.remaining!).toFixed(1)}" r="2.5" fill="${color}"><title>${esc(describe(p))}</title></circle>`,
      );
    // Every 429 is marked: one without X-RateLimit-Remaining where nothing remains.
    const y429 = (p: Point) => yMain(p.remaining ?? 0);
    // Counts of neighbouring marks alternate between two heights above them, so that they do not run into each other.
    for (const [k, group] of markGroups(
      list.filter((r) => r.status === 429),
      (p) => [x(p), y429(p)],
    ).entries())
      main.push(mark429(group.points, group.x, group.y, k % 2 === 1));
    legend.push(
      `<li><span class="swatch" data-color="${i % COLORS.length}"></span>${esc(client)} <span class="muted">(${list.length} points, ${list.filter((p) => p.status === 429).length} × 429)</span></li>`,
    );
  }
  const others = clients.length - charted.length;
  const svg = (height: number, label: string, body: string[]) =>
    `<svg class="chart" viewBox="0 0 ${WIDTH} ${height}" role="img" aria-label="${esc(label)}" xmlns="http://www.w3.org/2000/svg">${body.join('')}</svg>`;
  return [
    '<figure class="rate-limits">',
    `<figcaption>X-RateLimit-Limit (dashed) and X-RateLimit-Remaining (solid) per client; <span class="dot-429"></span> a 429 answer (with a count where several fall on one spot); a shaded band: no traffic. Times in UTC.</figcaption>`,
    svg(MAIN_HEIGHT, 'X-RateLimit-Limit and X-RateLimit-Remaining over time', main),
    '<p class="chart-title">X-RateLimit-Reset: seconds until the window resets</p>',
    svg(RESET_HEIGHT, 'Seconds until X-RateLimit-Reset over time', reset),
    `<ul class="legend">${legend.join('')}</ul>`,
    others > 0 ? `<p class="muted">${others} more client(s) not drawn; report.json has every point.</p>` : '',
    '</figure>',
  ].join('\n');
}
