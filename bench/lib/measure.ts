// One measured run of one variant: its rate, its latencies to the µs, the CPU its process spent
// per response by thread, and the machine's steal time meanwhile. Printed as it ends.
import { statSync } from 'node:fs';
import { autocannon, CONNECTIONS, sendSteadily, steadyPool, warmUp, type AutocannonRequest } from './load.ts';
import { cpuPerResponse, describeCpu, machineCpuTicks, monotonicUs, stealPercent, threadCpuUs, type ProcessCpu } from './machine.ts';
import { WARM_UP_SECONDS } from './options.ts';
import { percentiles } from './stats.ts';

/** Seconds at the steady rate before its measured run: the process is warm from the run at full speed, this only lets the pace settle. */
export const SETTLE_SECONDS = 2;

export interface Result {
  name: string;
  /** Undefined when the run could not take place (the note says why). */
  rps?: number;
  /** Latency percentiles in ms, to the µs. */
  p50?: number;
  p99?: number;
  p999?: number;
  errors?: number;
  /** % of the machine's CPU time the hypervisor gave to others during the measured run. */
  stolen?: number;
  /** Responses received, warm-up included. */
  completed?: number;
  /** Responses received in the measured run, and when it ran (monotonic clock, µs, as CPU profiles count time). */
  measured?: { responses: number; fromUs: number; toUs: number };
  /** CPU the proxy process spent per response in the measured run, by thread (when its pid was given). */
  cpu?: ProcessCpu;
  note?: string;
}

/**
 * As fast as CONNECTIONS connections go for `duration` s, after `warmUpSeconds` s of the same; `pid`:
 * the proxy's process, whose CPU per response is measured too. With `journal` (ours), the run
 * lasts until every response it got is recorded: work the recorder deferred is not left for
 * the next run, and its time counts against the throughput.
 */
export async function measure(
  name: string,
  url: string,
  requests: AutocannonRequest[],
  duration: number,
  pid?: number,
  warmUpSeconds = WARM_UP_SECONDS,
  journal?: string,
): Promise<Result> {
  const warm = warmUpSeconds > 0 ? await warmUp(url, requests, warmUpSeconds) : 0;
  const finish = startWindow(pid);
  const run = autocannon({ url, connections: CONNECTIONS, duration, requests });
  const latencies: number[] = [];
  run.on('response', (_client, _status, _bytes, ms) => latencies.push(ms));
  const r = await run;
  const endUs = journal === undefined || pid === undefined ? undefined : await untilRecorded(journal, pid);
  return finish(name, { responses: r.requests.total, completed: warm + r.requests.total, latencies, errors: r.errors + r.timeouts + r.non2xx, endUs });
}

/**
 * Waits until the recorder has caught up: the journal has not grown for 50 ms and the process
 * spent less than a fifth of a core meanwhile. Returns when it last grew (monotonic µs).
 */
async function untilRecorded(journal: string, pid: number): Promise<number> {
  const sizeOf = () => {
    try {
      return statSync(journal).size;
    } catch {
      return 0;
    }
  };
  const cpuOf = () => [...threadCpuUs(pid).values()].reduce((sum, us) => sum + us, 0);
  let size = sizeOf();
  let grewAt = monotonicUs();
  let quietSince = grewAt;
  let cpuAtQuiet = cpuOf();
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, 10));
    const now = monotonicUs();
    const next = sizeOf();
    if (next !== size) {
      size = next;
      grewAt = quietSince = now;
      cpuAtQuiet = cpuOf();
      continue;
    }
    if (now - quietSince < 50_000) continue;
    const cpu = cpuOf();
    if (cpu - cpuAtQuiet < 0.2 * (now - quietSince)) return grewAt;
    quietSince = now;
    cpuAtQuiet = cpu;
  }
}

/**
 * `rate` requests per second, evenly spaced, for `duration` s after `settle` s of the same (not
 * counted), over CONNECTIONS keep-alive connections; the latency of each is from the moment it
 * is handed to the connection pool to the end of its response body.
 */
export async function measurePaced(
  name: string,
  url: string,
  requests: AutocannonRequest[],
  duration: number,
  rate: number,
  pid?: number,
  settle = SETTLE_SECONDS,
): Promise<Result> {
  const pool = steadyPool(url);
  try {
    const settled = settle > 0 ? await sendSteadily(pool, requests, rate, settle) : { latencies: [], errors: 0 };
    const finish = startWindow(pid);
    const { latencies, errors } = await sendSteadily(pool, requests, rate, duration);
    return finish(name, { responses: latencies.length, completed: settled.latencies.length + settled.errors + latencies.length + errors, latencies, errors });
  } finally {
    await pool.close();
  }
}

/**
 * Starts a measured run: reads the proxy's CPU by thread (`pid`), the clock and the machine's
 * CPU times now; the function returned reads them again, prints the run and makes its Result,
 * whose rate is responses over the time elapsed until `endUs` (default: now).
 */
function startWindow(
  pid?: number,
): (name: string, outcome: { responses: number; completed: number; latencies: number[]; errors: number; endUs?: number | undefined }) => Result {
  const cpuBefore = pid === undefined ? undefined : threadCpuUs(pid);
  const machineBefore = machineCpuTicks();
  const fromUs = monotonicUs();
  return (name, { responses, completed, latencies, errors, endUs }) => {
    const toUs = endUs ?? monotonicUs();
    const cpu = pid === undefined ? undefined : cpuPerResponse(pid, cpuBefore!, threadCpuUs(pid), responses);
    const stolen = stealPercent(machineBefore, machineCpuTicks());
    const [p50, p99, p999] = percentiles(latencies, [0.5, 0.99, 0.999]);
    const result: Result = { name, rps: responses / ((toUs - fromUs) / 1e6), p50, p99, p999, errors, completed, measured: { responses, fromUs, toUs }, stolen };
    if (cpu) result.cpu = cpu;
    console.log(
      `  ${name.padEnd(34)} ${Math.round(result.rps!)} req/s, p50 ${ms(p50)}, p99 ${ms(p99)}, p99.9 ${ms(p999)}${errors ? `, ${errors} errors/non-2xx` : ''}${cpu ? `; ${describeCpu(cpu)}` : ''}; steal ${stolen.toFixed(1)}%`,
    );
    return result;
  };
}

/** A latency for the console: ms with two decimals. */
function ms(value: number | undefined): string {
  return value === undefined || Number.isNaN(value) ? '—' : `${value.toFixed(2)} ms`;
}
