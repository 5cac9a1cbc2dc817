// Runs one tmi-conform command in this process and prints its wall time, peak RSS and (when
// started with --expose-gc) the heap still in use after a full collection, as a JSON line on
// stderr, for benchmarks that compare runs side by side.
import { main } from '../cli/main.ts';

const started = performance.now();
const code = await main(process.argv.slice(2));
const ms = performance.now() - started;
const collect = (globalThis as { gc?: () => void }).gc;
collect?.();
const retainedHeapMiB = collect ? process.memoryUsage().heapUsed / 2 ** 20 : undefined;
process.stderr.write(`@measure ${JSON.stringify({ code, ms, maxRssMiB: process.resourceUsage().maxRSS / 1024, retainedHeapMiB })}\n`);
process.exitCode = code;
