// The printed tables: each variant's medians over the rounds and, against its bare baseline ((b),
// or (f) for the TLS variants), the medians of each round's ratio or difference, with how far the
// rounds agree; and how the proxy stands against its performance targets.
import { describeCpu, medianCpu } from './machine.ts';
import type { Result } from './measure.ts';
import { median } from './stats.ts';
import { BARE } from './variants.ts';

/** A line of the printed table: medians over the rounds, and against (b) the medians of each round's ratio and differences. */
export interface Row {
  name: string;
  rps?: number;
  p50?: number;
  p99?: number;
  p999?: number;
  vsBare?: { rps: number; p50: number; p99: number };
  errors?: number;
  note?: string;
}

/**
 * `steady`: the runs were sent at a fixed rate, so their throughput ratios say nothing and are
 * not spread out. `baseline`: the variant each round's run is compared with (default (b)).
 */
export function summarise(name: string, rounds: Array<Map<string, Result>>, note?: string, steady = false, baseline = BARE): Row {
  const runs = rounds.flatMap((round) => round.get(name) ?? []);
  if (runs.length === 0) return note === undefined ? { name } : { name, note };
  const row: Row = {
    name,
    rps: median(runs.map((r) => r.rps!)),
    p50: median(runs.map((r) => r.p50!)),
    p99: median(runs.map((r) => r.p99!)),
    p999: median(runs.map((r) => r.p999!)),
    errors: runs.reduce((n, r) => n + (r.errors ?? 0), 0),
  };
  const pairs = rounds.flatMap((round) => {
    const run = round.get(name);
    const bare = round.get(baseline);
    return run && bare ? [[run, bare] as const] : [];
  });
  const spread: string[] = [];
  if (pairs.length > 0) {
    const ratios = pairs.map(([r, b]) => r.rps! / b.rps!);
    const p99s = pairs.map(([r, b]) => r.p99! - b.p99!);
    row.vsBare = { rps: median(ratios), p50: median(pairs.map(([r, b]) => r.p50! - b.p50!)), p99: median(p99s) };
    // How far the rounds agree: a median says little without it.
    const ratioRange = steady ? '' : `${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)}×, `;
    if (name !== baseline && pairs.length > 1)
      spread.push(`rounds vs ${baseline.slice(0, 3)}: ${ratioRange}p99 ${signedMs(Math.min(...p99s))} to ${signedMs(Math.max(...p99s))} ms`);
  }
  const cpus = runs.flatMap((r) => (r.cpu ? [r.cpu] : []));
  const cpu = cpus.length === 0 ? undefined : medianCpu(cpus);
  const stolen = Math.max(...runs.map((r) => r.stolen ?? 0));
  const notes = [...spread, cpu ? describeCpu(cpu) : '', stolen >= 1 ? `steal up to ${stolen.toFixed(0)}%` : '', note ?? ''].filter((n) => n !== '').join('; ');
  if (notes !== '') row.note = notes;
  return row;
}

/** A difference in ms, signed, two decimals. */
function signedMs(value: number): string {
  return `${value >= 0 ? '+' : '−'}${Math.abs(value).toFixed(2)}`;
}

export function print(title: string, rows: Row[]): void {
  const dash = '—';
  const widths = [8, 8, 8, 8, 9, 12, 12];
  const line = (values: string[]) =>
    values[0]!.padEnd(24) +
    values
      .slice(1)
      .map((v, i) => v.padStart(widths[i]!))
      .join('');
  console.log(`\n${title}`);
  console.log('  ' + line(['run', 'req/s', 'p50', 'p99', 'p99.9', 'vs bare', 'p50 vs bare', 'p99 vs bare']) + '  notes');
  for (const r of rows) {
    const fixed = (value: number | undefined) => (value === undefined || Number.isNaN(value) ? dash : value.toFixed(2));
    const cells =
      r.rps === undefined
        ? widths.map(() => dash)
        : [
            String(Math.round(r.rps)),
            fixed(r.p50),
            fixed(r.p99),
            fixed(r.p999),
            r.vsBare ? `${r.vsBare.rps.toFixed(2)}×` : dash,
            r.vsBare ? signedMs(r.vsBare.p50) : dash,
            r.vsBare ? signedMs(r.vsBare.p99) : dash,
          ];
    const notes = [r.errors ? `${r.errors} errors/non-2xx` : '', r.note ?? ''].filter((s) => s !== '').join('; ');
    console.log('  ' + line([r.name, ...cells]) + (notes ? `  ${notes}` : ''));
  }
  console.log("  (medians of the rounds; against bare: the median of each round's ratio or difference with (b), or with (f) for the TLS rows;");
  console.log('   latencies in ms, measured per response;');
  console.log("   CPU: the proxy process's user + system time per response in the measured run (for (c) and (g), until the recorder caught up), from /proc;");
  console.log("   steal: the machine's CPU time its hypervisor gave to others during a run, the highest of the rounds, when 1% or more)");
}

/**
 * The proxy's targets, reported and not gated: throughput at full speed at least 0.8× the bare
 * proxy's (the median of the rounds' ratios), and at most 1 ms added to p99 at a steady rate
 * below saturation. `pairs`: each variant of ours and the rows of its two tables.
 */
export function printTargets(title: string, pairs: Array<{ name: string; fullSpeed: Row; steady: Row }>): void {
  console.log(`\n${title}\n targets: throughput ≥ 0.80× bare (median), p99 added at a steady rate ≤ 1 ms (median); reported, not gated`);
  for (const { name, fullSpeed, steady } of pairs) {
    if (!fullSpeed.vsBare || !steady.vsBare) {
      console.log(`  ${name.padEnd(24)} not measured${fullSpeed.note ? ` (${fullSpeed.note})` : ''}`);
      continue;
    }
    const throughput = fullSpeed.vsBare.rps;
    const added = steady.vsBare.p99;
    console.log(
      `  ${name.padEnd(24)} throughput ${throughput.toFixed(2)}× (${throughput >= 0.8 ? 'met' : 'NOT met'}), p99 added ${signedMs(added)} ms (${added <= 1 ? 'met' : 'NOT met'})`,
    );
  }
}
