// The two ways the benchmark sends load: autocannon as fast as CONNECTIONS connections go, and
// an open loop at a steady rate over undici's keep-alive pool (autocannon's own rate option
// sends each connection's quota for the second at once when the second starts, and the latency
// it then measures is that burst's queue).
import { createRequire } from 'node:module';
import { Pool } from 'undici';

export const CONNECTIONS = 32;

/** The part of autocannon's API used here (it ships no types). */
export interface AutocannonRequest {
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: string;
}
interface AutocannonResult {
  requests: { average: number; total: number };
  errors: number;
  timeouts: number;
  non2xx: number;
}
/** A run: awaited for its result; emits 'response' with each response's latency in ms (to the ns, where its own histogram keeps whole ms). */
type AutocannonRun = Promise<AutocannonResult> & {
  on(event: 'response', listener: (client: unknown, status: number, bytes: number, ms: number) => void): void;
};
export const autocannon = createRequire(import.meta.url)('autocannon') as (options: {
  url: string;
  connections: number;
  duration: number;
  requests: AutocannonRequest[];
}) => AutocannonRun;

/** As fast as CONNECTIONS connections go for `seconds` s, nothing measured; resolves with the responses received. */
export async function warmUp(url: string, requests: AutocannonRequest[], seconds: number): Promise<number> {
  const run = await autocannon({ url, connections: CONNECTIONS, duration: seconds, requests });
  return run.requests.total;
}

/**
 * CONNECTIONS keep-alive connections to `url`, one request at a time on each. An https URL is one
 * of the benchmark's own TLS listeners on loopback: its certificate is not verified, as
 * autocannon does not verify it either, so both loads cost the same.
 */
export function steadyPool(url: string): Pool {
  return new Pool(url, { connections: CONNECTIONS, pipelining: 1, ...(url.startsWith('https:') ? { connect: { rejectUnauthorized: false } } : {}) });
}

/** Sends the mix in turn, one request every 1/rate s whatever the responses do (an open loop); resolves once every response is in. */
export function sendSteadily(pool: Pool, requests: AutocannonRequest[], rate: number, seconds: number): Promise<{ latencies: number[]; errors: number }> {
  const total = Math.round(rate * seconds);
  const interval = 1000 / rate;
  const latencies: number[] = [];
  let errors = 0;
  let sent = 0;
  let settled = 0;
  return new Promise((resolve) => {
    if (total === 0) return resolve({ latencies, errors });
    const done = () => ++settled === total && resolve({ latencies, errors });
    const send = (request: AutocannonRequest) => {
      const at = performance.now();
      pool.request({ method: request.method, path: request.path, headers: request.headers ?? {}, body: request.body ?? null }).then(
        async (response) => {
          await response.body.dump();
          if (response.statusCode >= 200 && response.statusCode < 300) latencies.push(performance.now() - at);
          else errors++;
          done();
        },
        () => {
          errors++;
          done();
        },
      );
    };
    const start = performance.now();
    // Timers fire late by up to a millisecond or so: each tick sends all that is due by then.
    const tick = () => {
      const now = performance.now();
      while (sent < total && start + sent * interval <= now) send(requests[sent++ % requests.length]!);
      if (sent < total) setTimeout(tick, Math.max(0, start + sent * interval - performance.now()));
    };
    tick();
  });
}
