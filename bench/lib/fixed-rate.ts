// The two fixed-rate modes, (b) against (c) only:
// --cpu runs them in turns at a steady rate and prints the CPU each proxy process spent per
// response (medians): at a fixed rate the two do the same work, where at full speed the CPU per
// response also depends on how fast each one went.
// --warm-up-curve starts each afresh and prints the CPU it spent per response in consecutive
// 3 s windows at a steady rate: how long the JIT takes to settle, which the warm-up must cover.
import { mkdirSync } from 'node:fs';
import { OUT } from './files.ts';
import { describeCpu, medianCpu, type ProcessCpu } from './machine.ts';
import { measurePaced } from './measure.ts';
import { flag, option, WARM_UP_SECONDS } from './options.ts';
import { stop } from './processes.ts';
import { startReferenceUpstream, startStubUpstream } from './upstream.ts';
import { bareAndOurs } from './variants.ts';

export async function compareCpu(): Promise<void> {
  mkdirSync(OUT, { recursive: true });
  const duration = option('--duration', 8);
  const rounds = option('--rounds', 3);
  const rate = option('--rate', 1000);
  const { reference, requests } = await startReferenceUpstream();
  const upstream = flag('--stub') ? await startStubUpstream() : reference;
  console.log(
    `${rate} requests/s for ${duration} s after a ${WARM_UP_SECONDS} s warm-up, ${rounds} rounds; upstream: ${upstream === reference ? 'the reference' : 'the stub'}`,
  );
  const cpus = new Map<string, ProcessCpu[]>();
  const variants = bareAndOurs(upstream.origin);
  for (let round = 1; round <= rounds; round++) {
    for (const [name, start] of variants) {
      const running = await start();
      const { cpu } = await measurePaced(name, running.origin, requests, duration, rate, running.child.pid, WARM_UP_SECONDS);
      await stop(running);
      if (cpu) cpus.set(name, [...(cpus.get(name) ?? []), cpu]);
    }
  }
  if (upstream !== reference) await stop(upstream);
  await stop(reference);
  console.log('\nmedians:');
  for (const [name, runs] of cpus) console.log(`  ${name.padEnd(24)} ${describeCpu(medianCpu(runs))}`);
}

export async function warmUpCurve(): Promise<void> {
  mkdirSync(OUT, { recursive: true });
  const rate = option('--rate', 1500);
  const windows = option('--windows', 6);
  const { reference, requests } = await startReferenceUpstream();
  console.log(`${rate} requests/s in ${windows} consecutive windows of 3 s, each proxy started afresh; upstream: the reference`);
  for (const [name, start] of bareAndOurs(reference.origin)) {
    const running = await start();
    for (let window = 1; window <= windows; window++)
      await measurePaced(`${name} ${(window - 1) * 3}–${window * 3} s`, running.origin, requests, 3, rate, running.child.pid, 0);
    await stop(running);
  }
  await stop(reference);
}
