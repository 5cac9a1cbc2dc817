// Throughput and latency of `tmi-conform proxy` beside its baselines, under autocannon with 32
// connections sending the three operations in turn:
//   (a) the upstream directly
//   (b) a bare http-proxy (same keep-alive pool, no judging, no recording)
//   (c) tmi-conform proxy (judging, journal, report)
//   (d) Stoplight Prism's validating proxy on schemas/openapi.yaml, installed into bench/out/
//       at bench time (never into package.json); skipped with the reason when it cannot run
//   (e) tmi-conform's forwarding alone (proxy/forward/server.ts, bodies captured, flows dropped): what
//       (c) costs without judging and recording, so that (c) against (e) shows what those cost
//   (f) a bare http-proxy behind an HTTPS listener, and (g) tmi-conform proxy --tls presenting the
//       same certificate: (g) is compared with (f) as (c) is with (b); --no-tls leaves them out
// first with the reference implementation as upstream (rate limit off), then with a stub
// upstream that answers without verifying tokens: the reference verifies an RS256 signature on
// every request and can set the pace itself, which hides what the proxies cost.
// Every server runs in its own process; autocannon and the steady sender run in this one.
// This file reads the mode and starts it; each concern is a module of bench/lib/: the variants
// and how each starts (variants.ts, child-server.ts), the upstreams (upstream.ts), the load
// (load.ts), one measured run (measure.ts, machine.ts for /proc), the tables (table.ts), and
// the modes (rounds.ts, fixed-rate.ts, profile.ts).
//
//   npm run bench:proxy [-- --duration SECONDS] [--rounds N] [--latency-rate N] [--no-prism] [--no-stub] [--no-tls] [--admin]
//   npm run bench:proxy -- --cpu [--rate N] [--rounds N] [--duration SECONDS] [--stub]
//   npm run bench:proxy -- --profile DIR [--duration SECONDS] [--stub] [--bare] [--interval µs]
//   npm run bench:proxy -- --warm-up-curve [--rate N] [--windows N]
// For each upstream, every proxy is started once and warmed up at full speed (--warm-up
// SECONDS, default 10): the JIT must have compiled their hot paths before anything is measured.
// Then come rounds (--rounds, default 8) of short runs (--duration, default 3 s), every variant
// once per round, in an order that shifts each round. The machine's speed drifts from minute to
// minute (by 10 % and more on this shared 2-core machine): each variant is compared with (b) in
// the same round, seconds apart, and the median of those per-round ratios is kept, with their
// range beside it.
// Each variant is measured twice: as fast as 32 connections go (throughput), then at a steady
// rate well below what any of them sustains (--latency-rate, default 1,000 requests/s): the
// latency each adds. At full speed the 32 connections queue, so there latency is mostly
// connections ÷ throughput and says little that throughput does not. The steady rate is sent
// by undici over 32 keep-alive connections, one request every 1/rate s: autocannon's own rate
// option lets each connection send its quota for the second at once when the second starts,
// and the latency it then measures is that burst's queue.
// A run of (c) lasts until its recorder has caught up (its journal stops growing): judging and
// recording that fall behind at full speed count against its throughput, and do not spill into
// the next variant's run.
// --cpu runs (b) and (c) in turns at a steady rate (default 1000 requests/s), and prints the
// CPU each proxy process spent per response (medians): at a fixed rate the two do the same
// work, where at full speed the CPU per response also depends on how fast each one went.
// --warm-up-curve starts (b) and (c) afresh and prints the CPU each spent per response in
// consecutive 3 s windows at a steady rate (default 1500/s): how long the JIT takes to settle,
// which is what the warm-up must cover.
// --profile runs (c) alone once (or (b) with --bare; reference upstream, or the stub with
// --stub) under `node --cpu-prof`, and prints where each of its threads spent its time during
// the measured run, in µs per exchange. The profiler samples wall-clock time: while a thread
// waits for a core, the time goes to what it was running (a postMessage that wakes the other
// thread looks dearer than it is); the /proc CPU figures are the ones to compare.
import { flag, argv } from './lib/options.ts';

if (flag('--cpu')) {
  const { compareCpu } = await import('./lib/fixed-rate.ts');
  await compareCpu();
} else if (flag('--warm-up-curve')) {
  const { warmUpCurve } = await import('./lib/fixed-rate.ts');
  await warmUpCurve();
} else if (flag('--profile')) {
  const { profile } = await import('./lib/profile.ts');
  await profile(argv[argv.indexOf('--profile') + 1]!);
} else {
  const { compareInRounds } = await import('./lib/rounds.ts');
  await compareInRounds();
}
