// --profile: runs (c) once (or (b) with --bare; reference upstream, or the stub with --stub) under
// `node --cpu-prof`, and prints where each of its threads spent its time during the measured
// run, in µs per exchange: by stage, by area of the code, and the top functions. The profiler
// samples wall-clock time: while a thread waits for a core, the time goes to what it was running
// (a postMessage that wakes the other thread looks dearer than it is); the /proc CPU figures are
// the ones to compare.
import { mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { packageRoot } from '../../core/paths.ts';
import { OUT } from './files.ts';
import { measure } from './measure.ts';
import { flag, option } from './options.ts';
import { launch, stop } from './processes.ts';
import { startReferenceUpstream, startStubUpstream } from './upstream.ts';
import { BARE, bareArgs, OURS, oursArgs } from './variants.ts';

interface CpuProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface CpuProfile {
  nodes: CpuProfileNode[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** Runs (c) once under `node --cpu-prof` and prints each thread's CPU per exchange. */
export async function profile(dir: string): Promise<void> {
  mkdirSync(OUT, { recursive: true });
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const duration = option('--duration', 8);
  const { reference, requests } = await startReferenceUpstream();
  const upstream = flag('--stub') ? await startStubUpstream() : reference;
  const profiling = ['--cpu-prof', '--cpu-prof-dir', dir, '--cpu-prof-interval', String(option('--interval', 500))];
  // --bare: the same for (b), the baseline our main thread is compared with.
  const ours = flag('--bare')
    ? await launch(process.execPath, [...profiling, ...bareArgs(upstream.origin)])
    : await launch(process.execPath, [...profiling, ...oursArgs(upstream.origin)]);
  const { measured } = await measure(flag('--bare') ? BARE : OURS, ours.origin, requests, duration, ours.child.pid);
  await stop(ours);
  if (upstream !== reference) await stop(upstream);
  await stop(reference);
  const window = measured!;
  console.log(
    `CPU counted over the measured run only (${window.responses} responses in ${((window.toUs - window.fromUs) / 1e6).toFixed(1)} s): start-up, warm-up and stop left out; profiles in ${dir}`,
  );
  // CPU.<date>.<time>.<pid>.<thread>.<seq>.cpuprofile: thread 0 is the main thread; the
  // others are the recorder and the module loaders' threads (idle once everything is loaded).
  for (const file of readdirSync(dir)
    .filter((f) => f.endsWith('.cpuprofile'))
    .sort()) {
    const thread = file.split('.')[4] === '0' ? 'main' : 'recorder';
    const title = `thread ${file.split('.')[4]}${thread === 'main' ? ' (main: forwarding)' : ''}: ${file}`;
    printProfile(title, thread, JSON.parse(readFileSync(join(dir, file), 'utf8')) as CpuProfile, window);
  }
}

function frameKey(node: CpuProfileNode): string {
  const { functionName, url, lineNumber } = node.callFrame;
  const file =
    url === ''
      ? ''
      : ` ${url
          .replace(/^file:\/\//, '')
          .replace(`${packageRoot}/`, '')
          .replace(/^.*node_modules\//, '~/')}:${lineNumber + 1}`;
  return `${functionName || '(anonymous)'}${file}`;
}

/** Which part of the code a frame belongs to, for the per-area totals. */
function areaOf(node: CpuProfileNode): string {
  const { functionName, url } = node.callFrame;
  if (url === '') return functionName.startsWith('(') ? functionName : '(native)';
  if (url.startsWith('node:')) return 'node internals';
  const nodeModule = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (nodeModule) return nodeModule[1]!;
  const own = KIT_FOLDERS.exec(url);
  return own ? `${own[1]}/` : 'other';
}

function printProfile(title: string, thread: 'main' | 'recorder', profile: CpuProfile, window: { responses: number; fromUs: number; toUs: number }): void {
  const exchanges = window.responses;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfOf = new Map<number, number>();
  // timeDeltas[i + 1] is the time spent in samples[i]; only samples inside the window count.
  let at = profile.startTime;
  for (let i = 0; i < profile.samples.length - 1; i++) {
    at += profile.timeDeltas[i]!;
    if (at < window.fromUs || at > window.toUs) continue;
    selfOf.set(profile.samples[i]!, (selfOf.get(profile.samples[i]!) ?? 0) + profile.timeDeltas[i + 1]!);
  }
  const self = new Map<string, number>();
  const inclusive = new Map<string, number>();
  const areas = new Map<string, number>();
  const add = (map: Map<string, number>, key: string, us: number) => map.set(key, (map.get(key) ?? 0) + us);
  let busy = 0;
  let idle = 0;
  // Depth first with the keys on the stack counted once each, so recursion is not counted twice.
  const onStack = new Map<string, number>();
  const visit = (node: CpuProfileNode): number => {
    const key = frameKey(node);
    onStack.set(key, (onStack.get(key) ?? 0) + 1);
    let total = selfOf.get(node.id) ?? 0;
    if (total > 0) {
      add(self, key, total);
      if (node.callFrame.functionName === '(idle)') idle += total;
      else {
        busy += total;
        add(areas, areaOf(node), total);
      }
    }
    for (const child of node.children ?? []) total += visit(byId.get(child)!);
    if (onStack.get(key) === 1) add(inclusive, key, total);
    onStack.set(key, onStack.get(key)! - 1);
    return total;
  };
  visit(profile.nodes[0]!);
  const perExchange = (us: number) => (us / exchanges).toFixed(1).padStart(8);
  if (busy + idle > 0) console.log(`\n${title}`);
  if (busy + idle === 0) {
    console.log(`\n${title}: no samples in the measured run`);
    return;
  }
  console.log(`  busy ${perExchange(busy)} µs/exchange (idle ${(idle / 1e6).toFixed(1)} s of ${((busy + idle) / 1e6).toFixed(1)} s)`);
  console.log('  by stage (µs/exchange):');
  for (const [stage, us] of [...stageTimes(profile, selfOf, thread)].sort((a, b) => b[1] - a[1])) console.log(`  ${perExchange(us)}  ${stage}`);
  console.log('  self time by area (µs/exchange):');
  for (const [area, us] of [...areas].sort((a, b) => b[1] - a[1]).slice(0, 12)) console.log(`  ${perExchange(us)}  ${area}`);
  console.log('  self time, top functions (µs/exchange):');
  for (const [key, us] of [...self]
    .filter(([k]) => !k.startsWith('(idle)'))
    .sort((a, b) => b[1] - a[1])
    .slice(0, 30))
    console.log(`  ${perExchange(us)}  ${key}`);
  console.log('  inclusive time, top functions of the kit (µs/exchange):');
  const ours = [...inclusive].filter(([k]) => / (proxy|rules|keys|recordings|reports|core)\//.test(k));
  for (const [key, us] of ours.sort((a, b) => b[1] - a[1]).slice(0, 40)) console.log(`  ${perExchange(us)}  ${key}`);
}

/** The kit's own folders in a script's URL, for the per-area totals. */
const KIT_FOLDERS = /\/(proxy|rules|keys|recordings|reports|core|cli)\//;

/**
 * The stages of each thread, matched on "function file" of a frame: the entry point of each step
 * a flow goes through (proxy/record/recorder-worker.ts runs them on the recorder thread, proxy/forward/server.ts
 * and its helpers on the main thread). A frame below the entry point counts for its stage.
 */
const STAGES: Record<'main' | 'recorder', Array<[string, RegExp]>> = {
  recorder: [
    ['recorder: unpack the batch', /^(flowsFromBatch|flow) proxy\/record\/flow-batch/],
    ['recorder: build the exchange', /^exchangeOf proxy\/judge\/judge/],
    ['recorder: judge (rule engine)', /^judgeExchange rules\//],
    ['recorder: redact, HAR entry', /^recordExchange recordings\/write/],
    ['recorder: JSON of the journal line', /^done proxy\/record\/journal/],
    ['recorder: journal write', /^flush proxy\/record\/journal/],
    ['recorder: report builder', /^done proxy\/record\/report/],
    ['recorder: status counts', /^done proxy\/record\/status/],
  ],
  main: [
    ['main: hand-off to the recorder', /^(record|scheduleSend|sendScheduled|send|add|take) proxy\/record\/(recorder|flow-batch)/],
    ['main: recorder messages received', /^onMessage proxy\/record\/recorder/],
    [
      'main: flow bookkeeping',
      /^(onRequest|onProxyRequest|onProxyResponse|writeResponseHead|onResponseClosed|onResponseClose|onRequestData|onRequestEnd|onResponseData|onClientDrained|onResponseEnd|onResponseBroken) proxy\/forward\/server|^(forwardedHeaders|readyHeadForClient) proxy\/forward\/headers|^(add|delete) proxy\/forward\/in-flight|^sweep proxy\/forward\/timeout-sweep/,
    ],
  ],
};

/** The stage a frame of the kit stands for on `thread`, when it stands for one. */
function stageOf(key: string, thread: 'main' | 'recorder'): string | undefined {
  for (const [stage, pattern] of STAGES[thread]) if (pattern.test(key)) return stage;
  return undefined;
}

/**
 * Busy time by stage: each sample goes to the innermost frame of its stack that stands for a
 * stage (forwarding proper, GC and the rest are named as such).
 */
function stageTimes(profile: CpuProfile, selfOf: Map<number, number>, thread: 'main' | 'recorder'): Map<string, number> {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parentOf = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parentOf.set(child, node.id);
  const times = new Map<string, number>();
  for (const [id, us] of selfOf) {
    const leaf = byId.get(id)!;
    if (leaf.callFrame.functionName === '(idle)') continue;
    let stage: string | undefined;
    for (let at: number | undefined = id; at !== undefined && stage === undefined; at = parentOf.get(at)) {
      const key = frameKey(byId.get(at)!);
      // onRequest holds http-proxy's whole forwarding: below forward() it is forwarding proper.
      if (/^forward proxy\/forward\/server|~\/http-proxy\//.test(key)) break;
      stage = stageOf(key, thread);
    }
    stage ??=
      leaf.callFrame.functionName === '(garbage collector)'
        ? 'garbage collector'
        : leaf.callFrame.functionName === '(program)'
          ? 'native, unattributed'
          : 'Node internals (main thread: the forwarding itself; recorder: messages)';
    times.set(stage, (times.get(stage) ?? 0) + us);
  }
  return times;
}
