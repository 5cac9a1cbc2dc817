// The variants compared, by name, and how each is started in front of an upstream:
//   (a) the upstream directly
//   (b) a bare http-proxy (same keep-alive pool, no judging, no recording): the baseline
//   (c) tmi-conform proxy (judging, journal, report)
//   (d) Stoplight Prism's validating proxy on schemas/openapi.yaml, installed into bench/out/
//       at bench time (never into package.json); skipped with the reason when it cannot run
//   (e) tmi-conform's forwarding alone (proxy/forward/server.ts, bodies captured, flows dropped): what
//       (c) costs without judging and recording, so that (c) against (e) shows what those cost
//   (f) a bare http-proxy behind an HTTPS listener: the baseline of (g); skipped with --no-tls
//   (g) tmi-conform proxy --tls, presenting the same certificate as (f), compared with (f)
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { packageRoot } from '../../core/paths.ts';
import { localCertificates, LEAF_FILE, LEAF_KEY_FILE } from '../../proxy/tls/local-ca.ts';
import { BIN, CHILD_SERVER, JOURNAL, JOURNAL_TLS, OUT, PRISM_BIN, PRISM_DIR, TLS_DIR } from './files.ts';
import { freePort, launch, waitForPort, type Running } from './processes.ts';
import { flag } from './options.ts';

export const UPSTREAM = '(a) upstream directly';
/** The baseline every other variant is compared with, round by round. */
export const BARE = '(b) bare http-proxy';
export const OURS = '(c) tmi-conform proxy';
export const PRISM = '(d) Prism proxy';
export const FORWARDING = '(e) forwarding alone';
/** The baseline of the TLS variant: both terminate TLS with the same certificate. */
export const BARE_TLS = '(f) bare http-proxy, TLS';
export const OURS_TLS = '(g) tmi-conform, TLS';
export const VARIANTS = [UPSTREAM, BARE, OURS, PRISM, FORWARDING, BARE_TLS, OURS_TLS];
/** The variant each one is compared with in its round: the bare proxy that terminates TLS, or not, as it does. */
export const BASELINE: Record<string, string> = { [BARE_TLS]: BARE_TLS, [OURS_TLS]: BARE_TLS };
export const baselineOf = (name: string): string => BASELINE[name] ?? BARE;

/** Node arguments of (c), `tmi-conform proxy` as the bench runs it (each start replaces the journal of the one before). */
export function oursArgs(target: string): string[] {
  // --admin: with its admin listener on (metrics and the live feed kept on the recorder thread).
  const admin = flag('--admin') ? ['--admin', '127.0.0.1:0'] : [];
  return [
    BIN,
    'proxy',
    '--target',
    target,
    '--listen',
    '127.0.0.1:0',
    '--journal',
    JOURNAL,
    '--overwrite',
    '--report-dir',
    join(OUT, 'proxy-bench-reports'),
    '--status-interval',
    '0',
    ...admin,
  ];
}

/** Node arguments of (g): (c) with an HTTPS listener presenting `tls`, with a journal of its own. */
function oursTlsArgs(target: string, tls: TlsPair): string[] {
  return [
    BIN,
    'proxy',
    '--target',
    target,
    '--listen',
    '127.0.0.1:0',
    '--tls-cert',
    tls.cert,
    '--tls-key',
    tls.key,
    '--journal',
    JOURNAL_TLS,
    '--overwrite',
    '--report-dir',
    join(OUT, 'proxy-bench-tls-reports'),
    '--status-interval',
    '0',
  ];
}

/** PEM files of the one certificate both TLS variants present. */
export interface TlsPair {
  cert: string;
  key: string;
}

/** The certificate of the TLS variants, for 127.0.0.1: made once by the proxy's own local CA in bench/out/tls, reused after. */
export async function benchCertificate(): Promise<TlsPair> {
  await localCertificates(TLS_DIR, '127.0.0.1');
  return { cert: join(TLS_DIR, LEAF_FILE), key: join(TLS_DIR, LEAF_KEY_FILE) };
}

/** Node arguments of (b), the bare http-proxy (a child server of the benchmark). */
export function bareArgs(target: string): string[] {
  return ['--import', 'tsx', CHILD_SERVER, 'bare', target];
}

/** Node arguments of (e), tmi-conform's forwarding alone (a child server of the benchmark). */
function forwardingArgs(target: string): string[] {
  return ['--import', 'tsx', CHILD_SERVER, 'forwarding', target];
}

/** (b) and (c) in front of `target`, each started when called: the pair the fixed-rate modes compare. */
export function bareAndOurs(target: string): Array<[string, () => Promise<Running>]> {
  return [
    [BARE, () => launch(process.execPath, bareArgs(target))],
    [OURS, () => launch(process.execPath, oursArgs(target))],
  ];
}

/** A variant under test: the upstream itself (no process of its own) or a proxy in front of it. */
export interface Contender {
  name: string;
  origin: string;
  running?: Running;
  /** Where it writes its journal: (c) only. A run of it ends once the journal stops growing. */
  journal?: string;
  /** Responses the benchmark received from it, warm-ups included. */
  served: number;
}

/** Starts every proxy in front of `upstream` (Prism when it is installed, the TLS pair when `tls` is given), side by side. */
export async function startContenders(upstream: string, prism: { ok: boolean; why?: string }, notes: Map<string, string>, tls?: TlsPair): Promise<Contender[]> {
  const contenders: Contender[] = [{ name: UPSTREAM, origin: upstream, served: 0 }];
  const add = async (name: string, start: () => Promise<Running>, journal?: string) => {
    const running = await start();
    contenders.push({ name, origin: running.origin, running, served: 0, ...(journal ? { journal } : {}) });
  };
  await add(BARE, () => launch(process.execPath, bareArgs(upstream)));
  await add(OURS, () => launch(process.execPath, oursArgs(upstream)), JOURNAL);
  await add(FORWARDING, () => launch(process.execPath, forwardingArgs(upstream)));
  if (tls) {
    await add(BARE_TLS, () => launch(process.execPath, ['--import', 'tsx', CHILD_SERVER, 'bare-tls', upstream, tls.cert, tls.key]));
    await add(OURS_TLS, () => launch(process.execPath, oursTlsArgs(upstream, tls)), JOURNAL_TLS);
  } else {
    notes.set(BARE_TLS, 'skipped (--no-tls)');
    notes.set(OURS_TLS, 'skipped (--no-tls)');
  }
  if (prism.ok) {
    try {
      const port = await freePort();
      await add(PRISM, async () => {
        const running = await launch(
          PRISM_BIN,
          ['proxy', join(packageRoot, 'schemas', 'openapi.yaml'), upstream, '--port', String(port), '--host', '127.0.0.1', '--errors', 'false', '-v', 'error'],
          /(?:)/,
        );
        await waitForPort(port);
        return { ...running, origin: `http://127.0.0.1:${port}` };
      });
    } catch (error) {
      notes.set(PRISM, `could not run: ${(error as Error).message}`);
    }
  } else {
    notes.set(PRISM, prism.why ?? 'not installed');
  }
  return contenders;
}

/** The contenders in round `round`'s order: the list shifted by one more place each round. */
export function inTurn<T>(contenders: T[], round: number): T[] {
  const shift = round % contenders.length;
  return [...contenders.slice(shift), ...contenders.slice(0, shift)];
}

/** Installs Prism into bench/out/prism once; says why when it cannot. */
export function ensurePrism(): { ok: true } | { ok: false; why: string } {
  if (existsSync(PRISM_BIN)) return { ok: true };
  console.log(`installing @stoplight/prism-cli into ${PRISM_DIR} …`);
  mkdirSync(PRISM_DIR, { recursive: true });
  const result = spawnSync('npm', ['install', '--prefix', PRISM_DIR, '--no-audit', '--no-fund', '--loglevel=error', '@stoplight/prism-cli'], {
    encoding: 'utf8',
    timeout: 300_000,
  });
  if (result.status === 0 && existsSync(PRISM_BIN)) return { ok: true };
  rmSync(PRISM_DIR, { recursive: true, force: true });
  const why = (result.error?.message ?? result.stderr ?? '').trim().split('\n').at(-1) ?? 'unknown reason';
  return { ok: false, why: `not installed (npm install failed: ${why})` };
}
