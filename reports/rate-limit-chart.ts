// The X-RateLimit-* headers over time as inline SVG, for report.html: Limit (dashed) and
// Remaining (solid) per client in one panel, seconds until Reset in a second panel, 429
// answers marked. Drawn here rather than in the browser: the file needs no script to show it.
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
const TICK_STEPS_MS = [0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400, 172800, 604800].map((s) => s * 1000);

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
  out.push(`<text class="axis-label" x="12" y="${MARGIN.top + (bottom - MARGIN.top) / 2}" transform="rotate(-90 12 ${MARGIN.top + (bottom - MARGIN.top) / 2})" text-anchor="middle">${esc(yLabel)}</text>`);
  return out.join('');
}

const formatNumber = (value: number) => (Number.isInteger(value) ? String(value) : value.toFixed(1));

function describe(p: Point): string {
  const parts = [p.t, p.client, `HTTP ${p.status}`];
  if (p.remaining !== undefined) parts.push(`remaining ${p.remaining}${p.limit !== undefined ? ` of ${p.limit}` : ''}`);
  if (p.reset !== undefined) parts.push(`reset in ${secondsUntilReset(p)} s`);
  return parts.join(' · ');
}

const secondsUntilReset = (p: Point) => (p.reset === undefined ? 0 : Math.round(p.reset - Date.parse(p.t) / 1000));

const path = (coordinates: Array<[number, number]>) => coordinates.map(([x, y], i) => `${i === 0 ? 'M' : 'L'}${x.toFixed(1)},${y.toFixed(1)}`).join('');

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
  for (const [i, [client, list]] of charted.entries()) {
    const color = COLORS[i % COLORS.length]!;
    const x = (p: Point) => scale.x(Date.parse(p.t));
    const limited = list.filter((p) => p.limit !== undefined);
    const remaining = list.filter((p) => p.remaining !== undefined);
    const resets = list.filter((p) => p.reset !== undefined);
    const line = (kind: string, coordinates: Array<[number, number]>) => (coordinates.length > 0 ? `<path class="${kind}" stroke="${color}" d="${path(coordinates)}"/>` : '');
    main.push(line('limit', limited.map((p) => [x(p), yMain(p.limit!)])));
    main.push(line('remaining', remaining.map((p) => [x(p), yMain(p.remaining!)])));
    reset.push(line('reset', resets.map((p) => [x(p), yReset(secondsUntilReset(p))])));
    for (const p of remaining) {
      const limited429 = p.status === 429;
      main.push(`<circle class="${limited429 ? 'point-429' : 'point'}" cx="${x(p).toFixed(1)}" cy="${yMain(p.remaining!).toFixed(1)}" r="${limited429 ? 4.5 : 2.5}" fill="${limited429 ? '#dc2626' : color}"><title>${esc(describe(p))}</title></circle>`);
    }
    legend.push(`<li><span class="swatch" data-color="${i % COLORS.length}"></span>${esc(client)} <span class="muted">(${list.length} points, ${list.filter((p) => p.status === 429).length} × 429)</span></li>`);
  }
  const others = clients.length - charted.length;
  const svg = (height: number, label: string, body: string[]) =>
    `<svg class="chart" viewBox="0 0 ${WIDTH} ${height}" role="img" aria-label="${esc(label)}" xmlns="http://www.w3.org/2000/svg">${body.join('')}</svg>`;
  return [
    '<figure class="rate-limits">',
    `<figcaption>X-RateLimit-Limit (dashed) and X-RateLimit-Remaining (solid) per client; <span class="dot-429"></span> a 429 answer. Times in UTC.</figcaption>`,
    svg(MAIN_HEIGHT, 'X-RateLimit-Limit and X-RateLimit-Remaining over time', main),
    '<p class="chart-title">X-RateLimit-Reset: seconds until the window resets</p>',
    svg(RESET_HEIGHT, 'Seconds until X-RateLimit-Reset over time', reset),
    `<ul class="legend">${legend.join('')}</ul>`,
    others > 0 ? `<p class="muted">${others} more client(s) not drawn; report.json has every point.</p>` : '',
    '</figure>',
  ].join('\n');
}
