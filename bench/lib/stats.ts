// The two statistics the benchmark reports: medians over rounds, percentiles over responses.
export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/** Nearest-rank percentiles (`q` in 0–1) of latencies in ms, rounded to the µs; NaN when there are none. */
export function percentiles(latencies: number[], qs: number[]): number[] {
  const sorted = Float64Array.from(latencies).sort();
  return qs.map((q) => (sorted.length === 0 ? NaN : Math.round(sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]! * 1000) / 1000));
}
