// The benchmark proper. For each upstream, every proxy is started once and warmed up at full
// speed; then come rounds of short runs, every variant once per round in an order that shifts
// each round, first as fast as the connections go (throughput), then at a steady rate well
// below what any of them sustains (the latency each adds). Each variant is compared with (b) in
// the same round, seconds apart, and the median of those per-round ratios is kept.
import { mkdirSync, readFileSync } from 'node:fs';
import { JOURNAL, PRISM_DIR, OUT } from './files.ts';
import { CONNECTIONS, warmUp } from './load.ts';
import { peakRssMiB } from './machine.ts';
import { measure, measurePaced, SETTLE_SECONDS, type Result } from './measure.ts';
import { flag, option, WARM_UP_SECONDS } from './options.ts';
import { stop, type Running } from './processes.ts';
import { print, summarise, type Row } from './table.ts';
import { startReferenceUpstream, startStubUpstream } from './upstream.ts';
import { ensurePrism, inTurn, OURS, PRISM, startContenders, VARIANTS } from './variants.ts';

export async function compareInRounds(): Promise<void> {
  mkdirSync(OUT, { recursive: true });
  const duration = option('--duration', 3);
  const rounds = option('--rounds', 8);
  const latencyRate = option('--latency-rate', 1000);
  const { reference, requests } = await startReferenceUpstream();

  const prism = flag('--no-prism') ? { ok: false as const, why: 'skipped (--no-prism)' } : ensurePrism();
  console.log(`every proxy started once per upstream and warmed up for ${WARM_UP_SECONDS} s at full speed; then ${rounds} rounds of ${duration} s runs, the variants taking turns in an order that shifts each round`);
  console.log(`autocannon: ${CONNECTIONS} connections as fast as they go; mix: GET resource server, PATCH session, DELETE token exchange profile`);
  console.log(`then the same rounds at a steady ${latencyRate} requests/s (each run after ${SETTLE_SECONDS} s at that rate)`);
  console.log(`prism: ${prism.ok ? `installed in ${PRISM_DIR}` : prism.why}`);

  const tables: Array<{ title: string; rows: Row[] }> = [];
  const upstreams: Array<{ title: string; origin: string }> = [{ title: 'upstream: the reference implementation (rate limit off)', origin: reference.origin }];
  let stub: Running | undefined;
  if (!flag('--no-stub')) {
    stub = await startStubUpstream();
    upstreams.push({ title: 'upstream: a stub that answers without verifying tokens (shows what the proxies cost)', origin: stub.origin });
  }

  for (const upstream of upstreams) {
    console.log(upstream.title);
    const notes = new Map<string, string>();
    const contenders = await startContenders(upstream.origin, prism, notes);
    for (const contender of contenders) {
      if (!contender.running) continue;
      contender.served += await warmUp(contender.origin, requests, WARM_UP_SECONDS);
    }
    // Runs are short and interleaved, and each is compared with the run of (b) in the same
    // round, seconds away: the machine's speed drifts from minute to minute, and runs this close
    // drift alike. The order shifts every round, so that no variant always follows the same one.
    const fullSpeed: Array<Map<string, Result>> = [];
    const atRate: Array<Map<string, Result>> = [];
    for (let round = 0; round < rounds; round++) {
      console.log(` round ${round + 1} of ${rounds}, full speed`);
      const results = new Map<string, Result>();
      fullSpeed.push(results);
      for (const contender of inTurn(contenders, round)) {
        const result = await measure(contender.name, contender.origin, requests, duration, contender.running?.child.pid, 0, contender.journal);
        contender.served += result.completed ?? 0;
        results.set(contender.name, result);
      }
    }
    for (let round = 0; round < rounds; round++) {
      console.log(` round ${round + 1} of ${rounds}, at a steady ${latencyRate}/s`);
      const results = new Map<string, Result>();
      atRate.push(results);
      // Prism at full speed only: its throughput is near the steady rate, where latency would be queueing.
      for (const contender of inTurn(contenders, round).filter((c) => c.name !== PRISM)) {
        const result = await measurePaced(`${contender.name} at ${latencyRate}/s`, contender.origin, requests, duration, latencyRate, contender.running?.child.pid);
        contender.served += result.completed ?? 0;
        results.set(contender.name, result);
      }
    }
    const ours = contenders.find((c) => c.name === OURS)!;
    const rss = peakRssMiB(ours.running!.child.pid!);
    for (const contender of contenders) if (contender.running) await stop(contender.running);
    const entries = readFileSync(JOURNAL, 'utf8').split('\n').filter((l) => l !== '');
    const cutOff = entries.filter((l) => l.includes('"_error":"client closed the connection')).length;
    notes.set(OURS, `journal: ${entries.length} entries, ${cutOff} of them requests the client cut off (a run's end); responses the benchmark counted: ${ours.served}, warm-up included; peak RSS ${rss} MiB`);
    tables.push({ title: `${upstream.title}\n as fast as ${CONNECTIONS} connections go`, rows: VARIANTS.map((name) => summarise(name, fullSpeed, notes.get(name))) });
    tables.push({ title: `${upstream.title}\n at a steady ${latencyRate} requests/s, ${CONNECTIONS} connections`, rows: VARIANTS.filter((name) => name !== PRISM).map((name) => summarise(name, atRate, undefined, true)) });
  }

  if (stub) await stop(stub);
  await stop(reference);
  for (const table of tables) print(table.title, table.rows);
}
