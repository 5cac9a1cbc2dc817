// Throughput of `tmi-conform validate` on a generated JSONL journal, with a bare baseline
// (read + JSON.parse of each line, no judging) run side by side, and peak RSS at two sizes
// to show that memory stays flat.
//
//   npm run bench:validate [-- --count 1000000]
import { spawnSync } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, statSync } from 'node:fs';
import { once } from 'node:events';
import { join } from 'node:path';
import { packageRoot } from '../core/paths.ts';
import { claims, deleteExchange, errorExchange, getExchange, jwt, resourceServer, session, updateExchange } from '../fixtures/exchanges.ts';
import type { Exchange } from '../rules/types.ts';

const countArg = process.argv.indexOf('--count');
const COUNT = countArg === -1 ? 1_000_000 : Number(process.argv[countArg + 1]);
const outDir = join(packageRoot, 'bench', 'out');
mkdirSync(outDir, { recursive: true });

function harLine(e: Exchange, i: number, startedAt: string): string {
  const headers = (h: Record<string, string>) => Object.entries(h).map(([name, value]) => ({ name, value }));
  return JSON.stringify({
    startedDateTime: startedAt,
    time: e.durationMs ?? 0,
    request: {
      method: e.request.method,
      url: e.request.url.replace(/(sessions|token-exchange-profiles)\/[^/?]+/, `$1/id_${i}`),
      httpVersion: 'HTTP/1.1',
      headers: headers(e.request.headers),
      ...(e.request.body ? { postData: { mimeType: 'application/json', text: e.request.body.text } } : {}),
    },
    response: {
      status: e.response!.status,
      httpVersion: 'HTTP/1.1',
      headers: headers(e.response!.headers),
      content: { size: e.response!.body?.text.length ?? 0, mimeType: 'application/json', ...(e.response!.body ? { text: e.response!.body.text } : {}) },
    },
  });
}

async function generate(count: number): Promise<string> {
  const path = join(outDir, `journal-${count}.jsonl`);
  if (existsSync(path)) return path;
  const noScope = { Authorization: `Bearer ${jwt(claims('read:users'))}` };
  const templates: Exchange[] = [
    deleteExchange(),
    updateExchange({ session_metadata: { plan: 'gold', region: 'eu' } }, session({ plan: 'gold', region: 'eu' })),
    getExchange(resourceServer()),
    getExchange(resourceServer(), 'rs_1?fields=id,name,identifier&include_fields=false'),
    errorExchange(deleteExchange({ requestHeaders: noScope }), 403, {
      statusCode: 403,
      error: 'Forbidden',
      message: 'Insufficient scope, expected any of: delete:token_exchange_profiles',
    }),
    errorExchange(
      updateExchange(),
      429,
      { statusCode: 429, error: 'Too Many Requests', message: 'Global limit has been reached' },
      { 'x-ratelimit-remaining': '0' },
    ),
    errorExchange(getExchange(), 404, { statusCode: 404, error: 'Not Found', message: 'The resource server does not exist' }),
    { ...getExchange(), request: { ...getExchange().request, url: 'https://tenant.example.com/api/v2/users/u1' } },
  ];
  const out = createWriteStream(path);
  const t0 = Date.parse('2027-01-15T08:00:00.000Z');
  for (let i = 0; i < count; i++) {
    const line = harLine(templates[i % templates.length]!, i, new Date(t0 + i * 5).toISOString()) + '\n';
    if (!out.write(line)) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
  return path;
}

interface Measured {
  ms: number;
  maxRssMiB: number;
  /** Heap in use after a full collection once the command is done: what the run kept. */
  retainedHeapMiB?: number;
  code: number;
}

function measure(args: string[]): Measured {
  const result = spawnSync(process.execPath, ['--expose-gc', '--import', 'tsx', join(packageRoot, 'bench', 'measure.ts'), ...args], {
    cwd: packageRoot,
    encoding: 'utf8',
    maxBuffer: 1 << 26,
  });
  const line = result.stderr.split('\n').find((l) => l.startsWith('@measure '));
  if (!line) throw new Error(`no measurement: ${result.stderr.slice(-400)}`);
  return JSON.parse(line.slice('@measure '.length)) as Measured;
}

function baseline(path: string): Measured {
  // The floor: stream the file, split it into lines and parse every line, nothing else.
  const script = `
    import { createReadStream } from 'node:fs';
    const t = performance.now(); let n = 0; let partial = [];
    const parse = (line) => { if (line.trim() !== '') { JSON.parse(line); n++; } };
    for await (const chunk of createReadStream(${JSON.stringify(path)}, { highWaterMark: 1 << 20 })) {
      let start = 0;
      for (let nl = chunk.indexOf(10); nl !== -1; nl = chunk.indexOf(10, start)) {
        if (partial.length > 0) { partial.push(chunk.subarray(0, nl)); parse(Buffer.concat(partial).toString('utf8')); partial = []; }
        else parse(chunk.toString('utf8', start, nl));
        start = nl + 1;
      }
      if (start < chunk.length) partial.push(chunk.subarray(start));
    }
    if (partial.length > 0) parse(Buffer.concat(partial).toString('utf8'));
    process.stderr.write('@measure ' + JSON.stringify({ code: 0, ms: performance.now() - t, maxRssMiB: process.resourceUsage().maxRSS / 1024 }) + '\\n');`;
  const result = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
  const line = result.stderr.split('\n').find((l) => l.startsWith('@measure '));
  if (!line) throw new Error(`baseline failed: ${result.stderr.slice(-400)}`);
  return JSON.parse(line.slice('@measure '.length)) as Measured;
}

const small = Math.max(1, Math.floor(COUNT / 10));
const rows: Array<{ name: string; count: number; m: Measured }> = [];
for (const count of [small, COUNT]) {
  const path = await generate(count);
  process.stderr.write(`generated ${path} (${(statSync(path).size / 2 ** 20).toFixed(0)} MiB)\n`);
  rows.push({ name: 'baseline: read + JSON.parse', count, m: baseline(path) });
  rows.push({ name: 'tmi-conform validate', count, m: measure(['validate', path, '--report-dir', join(outDir, 'report')]) });
}

const rate = (r: (typeof rows)[number]) => r.count / (r.m.ms / 1000);
console.log(`\nvalidate throughput (one process, one core; ${new Date().toISOString()})\n`);
console.log('run                              exchanges     wall s   exchanges/s   peak RSS MiB   vs baseline');
for (const r of rows) {
  const base = rows.find((b) => b.count === r.count && b.name.startsWith('baseline'))!;
  console.log(
    `${r.name.padEnd(32)} ${String(r.count).padStart(9)} ${(r.m.ms / 1000).toFixed(2).padStart(10)} ${Math.round(rate(r)).toLocaleString('en-US').padStart(13)} ${r.m.maxRssMiB.toFixed(0).padStart(14)}   ${(rate(r) / rate(base)).toFixed(2)}×`,
  );
}
const [smallRun, bigRun] = rows.filter((r) => r.name === 'tmi-conform validate');
console.log(
  `\npeak RSS ${bigRun!.count.toLocaleString('en-US')} vs ${smallRun!.count.toLocaleString('en-US')} exchanges: ${(bigRun!.m.maxRssMiB / smallRun!.m.maxRssMiB).toFixed(2)}× (flat memory ≈ 1.0×; the rest is when V8 chooses to collect)`,
);
console.log(
  `heap kept after a full collection: ${smallRun!.m.retainedHeapMiB?.toFixed(1)} MiB after ${smallRun!.count.toLocaleString('en-US')}, ${bigRun!.m.retainedHeapMiB?.toFixed(1)} MiB after ${bigRun!.count.toLocaleString('en-US')} exchanges`,
);
console.log(
  `goal ≥ 50,000 exchanges/s: ${rate(bigRun!) >= 50_000 ? 'met' : 'NOT met'} (${Math.round(rate(bigRun!)).toLocaleString('en-US')}/s); exit code ${bigRun!.m.code} (0 expected: the mix breaks only "should" requirements)`,
);
