// Runs one tmi-conform command in this process and prints its wall time and peak RSS as a
// JSON line on stderr, for benchmarks that compare runs side by side.
import { main } from '../cli/main.ts';

const started = performance.now();
const code = await main(process.argv.slice(2));
const ms = performance.now() - started;
process.stderr.write(`@measure ${JSON.stringify({ code, ms, maxRssMiB: process.resourceUsage().maxRSS / 1024 })}\n`);
process.exitCode = code;
