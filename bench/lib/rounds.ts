// The benchmark proper. For each upstream, every proxy is started once and warmed up at full
// speed; then come rounds of short runs, every variant once per round in an order that shifts
// each round, first as fast as the connections go (throughput), then at a steady rate well
// below what any of them sustains (the latency each adds). Each variant is compared with (b) in
// the same round, seconds apart, and the median of those per-round ratios is kept.
import { mkdirSync, readFileSync } from 'node:fs';
import { PRISM_DIR, OUT } from './files.ts';
import { CONNECTIONS, warmUp } from './load.ts';
import { peakRssMiB } from './machine.ts';
import { measure, measurePaced, SETTLE_SECONDS, type Result } from './measure.ts';
import { flag, option, WARM_UP_SECONDS } from './options.ts';
import { stop, type Running } from './processes.ts';
import { print, printTargets, summarise, type Row } from './table.ts';
import { startReferenceUpstream, startStubUpstream } from './upstream.ts';
import { baselineOf, benchCertificate, ensurePrism, inTurn, OURS, OURS_TLS, PRISM, startContenders, VARIANTS } from './variants.ts';

export async function compareInRounds(): Promise<void> {
  mkdirSync(OUT, { recursive: true });
  const duration = option('--duration', 3);
  const rounds = option('--rounds', 8);
  const latencyRate = option('--latency-rate', 1000);
  const { reference, requests } = await startReferenceUpstream();

  const prism = flag('--no-prism') ? { ok: false as const, why: 'skipped (--no-prism)' } : ensurePrism();
  console.log(
    `every proxy started once per upstream and warmed up for ${WARM_UP_SECONDS} s at full speed; then ${rounds} rounds of ${duration} s runs, the variants taking turns in an order that shifts each round`,
  );
  console.log(`autocannon: ${CONNECTIONS} connections as fast as they go; mix: GET resource server, PATCH session, DELETE token exchange profile`);
  console.log(`then the same rounds at a steady ${latencyRate} requests/s (each run after ${SETTLE_SECONDS} s at that rate)`);
  console.log(`prism: ${prism.ok ? `installed in ${PRISM_DIR}` : prism.why}`);
  const tls = flag('--no-tls') ? undefined : await benchCertificate();
  console.log(`tls: ${tls ? `(f) and (g) present the same certificate (${tls.cert}), each compared with (f)` : 'skipped (--no-tls)'}`);

  const tables: Array<{ title: string; rows: Row[] }> = [];
  const targets: Array<{ title: string; pairs: Array<{ name: string; fullSpeed: Row; steady: Row }> }> = [];
  const upstreams: Array<{ title: string; origin: string }> = [{ title: 'upstream: the reference implementation (rate limit off)', origin: reference.origin }];
  let stub: Running | undefined;
  if (!flag('--no-stub')) {
    stub = await startStubUpstream();
    upstreams.push({ title: 'upstream: a stub that answers without verifying tokens (shows what the proxies cost)', origin: stub.origin });
  }

  for (const upstream of upstreams) {
    console.log(upstream.title);
    const notes = new Map<string, string>();
    const contenders = await startContenders(upstream.origin, prism, notes, tls);
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
        const result = await measurePaced(
          `${contender.name} at ${latencyRate}/s`,
          contender.origin,
          requests,
          duration,
          latencyRate,
          contender.running?.child.pid,
        );
        contender.served += result.completed ?? 0;
        results.set(contender.name, result);
      }
    }
    const recording = contenders.filter((c) => c.journal !== undefined);
    const rss = new Map(recording.map((c) => [c.name, peakRssMiB(c.running!.child.pid!)]));
    for (const contender of contenders) if (contender.running) await stop(contender.running);
    for (const ours of recording) {
      const entries = readFileSync(ours.journal!, 'utf8')
        .split('\n')
        .filter((l) => l !== '');
      const cutOff = entries.filter((l) => l.includes('"_error":"client closed the connection')).length;
      notes.set(
        ours.name,
        `journal: ${entries.length} entries, ${cutOff} of them requests the client cut off (a run's end); responses the benchmark counted: ${ours.served}, warm-up included; peak RSS ${rss.get(ours.name)} MiB`,
      );
    }
    const fullSpeedRows = VARIANTS.map((name) => summarise(name, fullSpeed, notes.get(name), false, baselineOf(name)));
    const steadyRows = VARIANTS.filter((name) => name !== PRISM).map((name) => summarise(name, atRate, undefined, true, baselineOf(name)));
    tables.push({ title: `${upstream.title}\n as fast as ${CONNECTIONS} connections go`, rows: fullSpeedRows });
    tables.push({ title: `${upstream.title}\n at a steady ${latencyRate} requests/s, ${CONNECTIONS} connections`, rows: steadyRows });
    const rowOf = (rows: Row[], name: string) => rows.find((r) => r.name === name)!;
    targets.push({
      title: upstream.title,
      pairs: [OURS, OURS_TLS].map((name) => ({ name, fullSpeed: rowOf(fullSpeedRows, name), steady: rowOf(steadyRows, name) })),
    });
  }

  if (stub) await stop(stub);
  await stop(reference);
  for (const table of tables) print(table.title, table.rows);
  for (const { title, pairs } of targets) printTargets(title, pairs);
}
