// Loading a large OpenAPI description (rules/openapi/) as `--openapi FILE` will: the time and memory to
// load it, to judge an operation's first response (its schema compiled) and the next (compiled already),
// and after judging one response of each of 50 operations; beside a bare read + JSON.parse of the same
// file (YAML parse for a YAML file), run in a process of its own.
//
//   npm run bench:openapi -- FILE
//
// A large public description, without adding a dependency (the GitHub REST API, JSON, about 13 MB):
//   cd /tmp && npm pack @octokit/openapi && tar xzf octokit-openapi-*.tgz
//   npm run bench:openapi -- /tmp/package/generated/api.github.com.json
import { spawnSync } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { parse as parseYaml } from 'yaml';

/** One response to judge: an operation's first JSON response, its body the description's own example. */
interface Sample {
  method: string;
  url: string;
  status: number;
  contentType: string;
  body: unknown;
}

interface Memory {
  rssMiB: number;
  heapMiB: number;
}

interface Baseline extends Memory {
  ms: number;
  /** JSON.parse for a file that starts with "{", as the loader decides; else the yaml package's parse. */
  parser: 'JSON.parse' | 'YAML parse';
  samples: Sample[];
}

const OPERATIONS = 50;
const RUNS = 3;

// Memory is read after a full collection, so that it says what is kept rather than when V8 collects.
setFlagsFromString('--expose-gc');
const collect = runInNewContext('gc') as () => void;

function memory(): Memory {
  collect();
  const { rss, heapUsed } = process.memoryUsage();
  return { rssMiB: rss / 2 ** 20, heapMiB: heapUsed / 2 ** 20 };
}

const [mode, file] = process.argv[2] === '--baseline' ? ['baseline', process.argv[3]] : ['load', process.argv[2]];
if (file === undefined || file.startsWith('-')) {
  process.stderr.write('usage: npm run bench:openapi -- FILE   (a large OpenAPI 3.0 or 3.1 description, JSON or YAML)\n');
  process.exit(2);
}

if (mode === 'baseline') {
  memory();
  const started = performance.now();
  const { document, parser } = parseFile(file);
  const ms = performance.now() - started;
  const kept = memory();
  process.stdout.write(JSON.stringify({ ms, ...kept, parser, samples: samplesOf(document) } satisfies Baseline));
} else {
  await measureLoad(file);
}

async function measureLoad(path: string): Promise<void> {
  // The machine may be busy: the baseline is the median of three processes (memory: that process's).
  const baselines: Baseline[] = [];
  for (let run = 0; run < RUNS; run++) {
    const child = spawnSync(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url), '--baseline', path], {
      encoding: 'utf8',
      maxBuffer: 1 << 28,
    });
    if (child.status !== 0) throw new Error(`baseline failed: ${child.stderr.slice(-400)}`);
    baselines.push(JSON.parse(child.stdout) as Baseline);
  }
  const baseline = baselines.sort((a, b) => a.ms - b.ms)[1]!;
  const parser = baseline.parser;
  const samples = baseline.samples;

  const atStart = memory();
  let started = performance.now();
  const { loadOpenApiFile } = await import('../rules/openapi/load.ts');
  const importMs = performance.now() - started;
  started = performance.now();
  const description = await loadOpenApiFile(path);
  const firstLoadMs = performance.now() - started;
  const afterLoad = memory();
  // Again, warm: what a later load in the same process costs (each timed in a function of its own, so
  // that no frame keeps the extra descriptions alive when memory is measured).
  const timeLoad = async () => {
    const loadStarted = performance.now();
    await loadOpenApiFile(path);
    return performance.now() - loadStarted;
  };
  const warmLoadMs = Math.min(await timeLoad(), await timeLoad());

  const judge = (sample: Sample) => description.match(sample.method, sample.url)?.responseBodyProblems(sample.status, sample.contentType, sample.body);
  const first = samples[0]!;
  started = performance.now();
  judge(first);
  const firstMs = performance.now() - started;
  started = performance.now();
  judge(first);
  const nextMs = performance.now() - started;

  const outcomes = { conforming: 0, problems: 0, notJudged: 0 };
  let slowest = { ms: 0, sample: first };
  started = performance.now();
  for (const sample of samples) {
    const sampleStarted = performance.now();
    const problems = judge(sample);
    const sampleMs = performance.now() - sampleStarted;
    if (sampleMs > slowest.ms) slowest = { ms: sampleMs, sample };
    if (problems === undefined || !Array.isArray(problems)) outcomes.notJudged++;
    else if (problems.length === 0) outcomes.conforming++;
    else outcomes.problems++;
  }
  const allMs = performance.now() - started;
  started = performance.now();
  for (const sample of samples) judge(sample);
  const allAgainMs = performance.now() - started;
  const afterJudging = memory();
  // The baseline again, in this process, after all memory was measured: warm against warm.
  const timeParse = () => {
    const parseStarted = performance.now();
    parseFile(path);
    return performance.now() - parseStarted;
  };
  const warmBaselineMs = Math.min(timeParse(), timeParse());
  // And `from` alone, on a description already parsed: what indexing the paths costs.
  const { OpenApiDescription } = await import('../rules/openapi/description.ts');
  const timeFrom = () => {
    const { document } = parseFile(path);
    const fromStarted = performance.now();
    OpenApiDescription.from(document, path);
    return performance.now() - fromStarted;
  };
  const fromMs = Math.min(timeFrom(), timeFrom());

  const mib = (value: number) => `${value.toFixed(1)} MiB`;
  const ms = (value: number) => `${value.toFixed(value < 10 ? 2 : 0)} ms`;
  const ratio = (value: number, base: number) => `${(value / base).toFixed(2)}×`;
  console.log(`OpenAPI description load (Node ${process.version}; ${new Date().toISOString()})`);
  console.log(`file: ${path}, ${(statSync(path).size / 2 ** 20).toFixed(1)} MiB, OpenAPI ${description.version}, ${description.operationCount} operations\n`);
  console.log('                                        time        RSS       heap   (RSS and heap after a full collection)');
  console.log(`process at start (tsx loaded)                 ${mib(atStart.rssMiB).padStart(10)} ${mib(atStart.heapMiB).padStart(10)}`);
  console.log(
    `baseline: read + ${parser}   ${ms(baseline.ms).padStart(14)} ${mib(baseline.rssMiB).padStart(10)} ${mib(baseline.heapMiB).padStart(10)}   (a process of its own, median of ${RUNS})`,
  );
  console.log(`import of the module (ajv, yaml)  ${ms(importMs).padStart(10)}`);
  console.log(
    `load: read + parse + from     ${ms(firstLoadMs).padStart(14)} ${mib(afterLoad.rssMiB).padStart(10)} ${mib(afterLoad.heapMiB).padStart(10)}   (again, warm: ${ms(warmLoadMs)})`,
  );
  console.log(`first response of ${first.method} ${first.url.replace(/^https?:\/\/[^/]+/, '')}: ${ms(firstMs)} (schema compiled), next: ${ms(nextMs)}`);
  console.log(
    `one response of each of ${samples.length} operations ${ms(allMs).padStart(8)} ${mib(afterJudging.rssMiB).padStart(10)} ${mib(afterJudging.heapMiB).padStart(10)}   (${outcomes.conforming} conforming, ${outcomes.problems} with problems, ${outcomes.notJudged} not judged)`,
  );
  console.log(`the same ${samples.length} again (compiled)  ${ms(allAgainMs).padStart(10)}`);
  console.log(`slowest first response among them: ${slowest.sample.method} ${slowest.sample.url.replace(/^https?:\/\/[^/]+/, '')}, ${ms(slowest.ms)}`);
  console.log(`${parser} again, in this process, warm: ${ms(warmBaselineMs)}; OpenApiDescription.from alone: ${ms(fromMs)}`);
  console.log(
    `\nload vs ${parser}: time ${ratio(firstLoadMs, baseline.ms)} (warm: ${ratio(warmLoadMs, warmBaselineMs)}), RSS ${ratio(afterLoad.rssMiB, baseline.rssMiB)}, heap ${ratio(afterLoad.heapMiB, baseline.heapMiB)}`,
  );
  console.log(
    `after ${samples.length} operations vs ${parser}: RSS ${ratio(afterJudging.rssMiB, baseline.rssMiB)}, heap ${ratio(afterJudging.heapMiB, baseline.heapMiB)}`,
  );
  console.log(`goal: load < 1 s: ${firstLoadMs < 1000 ? 'met' : 'NOT met'} (${ms(firstLoadMs)}; with the import ${ms(importMs + firstLoadMs)})`);
  const notes = description.problems();
  if (notes.length > 0) console.log(`\nnot judged (${notes.length}):\n  ${notes.slice(0, 5).join('\n  ')}`);
}

/**
 * In a function of its own, so that the file's text is not kept by the caller's frame when memory is
 * measured (it would count twice the file's size in heap).
 */
function parseFile(path: string): { document: unknown; parser: Baseline['parser'] } {
  const text = readFileSync(path, 'utf8');
  return text.trimStart().startsWith('{')
    ? { document: JSON.parse(text), parser: 'JSON.parse' }
    : { document: parseYaml(text, { maxAliasCount: -1 }), parser: 'YAML parse' };
}

type Json = Record<string, unknown>;

function objectAt(value: unknown, key: string): Json {
  const found = typeof value === 'object' && value !== null ? (value as Json)[key] : undefined;
  return typeof found === 'object' && found !== null ? (found as Json) : {};
}

/**
 * Up to 50 operations spread over the description, each with a JSON response whose media type carries an
 * example: that example is the body, at a URL made from the first server and the path template.
 */
function samplesOf(document: unknown): Sample[] {
  // Local $refs only, followed by hand: the baseline must not load the module it is compared with.
  const resolve = (value: Json): Json => {
    for (let hops = 0; typeof value.$ref === 'string' && value.$ref.startsWith('#/') && hops < 10; hops++) {
      value = value.$ref
        .slice(2)
        .split('/')
        .reduce<Json>((at, key) => objectAt(at, decodeURIComponent(key).replace(/~1/g, '/').replace(/~0/g, '~')), document as Json);
    }
    return value;
  };
  const firstServer = objectAt(objectAt(document, 'servers'), '0').url;
  const server = typeof firstServer === 'string' && /^https?:\/\//.test(firstServer) ? firstServer.replace(/\/$/, '') : 'http://localhost';
  const candidates: Sample[] = [];
  for (const [template, item] of Object.entries(objectAt(document, 'paths'))) {
    for (const method of ['get', 'put', 'post', 'delete', 'patch']) {
      const responses = objectAt(objectAt(item, method), 'responses');
      const status = Object.keys(responses).find((key) => /^2\d\d$/.test(key));
      if (status === undefined) continue;
      const content = objectAt(resolve(objectAt(responses, status)), 'content');
      const contentType = Object.keys(content).find((key) => /json/.test(key));
      if (contentType === undefined) continue;
      const media = objectAt(content, contentType);
      const firstExample = Object.values(objectAt(media, 'examples'))[0];
      const example = media.example ?? (typeof firstExample === 'object' && firstExample !== null ? resolve(firstExample as Json).value : undefined);
      if (example === undefined) continue;
      const url = server + template.replace(/\{[^}]+\}/g, 'x1');
      candidates.push({ method: method.toUpperCase(), url, status: Number(status), contentType: `${contentType}; charset=utf-8`, body: example });
    }
  }
  const step = Math.max(1, Math.floor(candidates.length / OPERATIONS));
  return candidates.filter((_, i) => i % step === 0).slice(0, OPERATIONS);
}
