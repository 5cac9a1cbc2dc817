// What the preflight learned, handed to the suites' worker after the worker started. Starting
// it (a process, vitest, the kit's modules: 1.5 to 2 s, more on a loaded machine) overlaps the
// preflight's round trips to the target, and its first test waits for this. vitest's provide
// is fixed once the worker starts, so the handover goes over loopback: one answer, to the holder
// of a random key the worker was given through provide. It carries the tokens the preflight
// got, which never go through a file. The same listener later tells the worker, once, that the
// run was interrupted (vitest's cancel stops starting tests; this ends the waits and requests
// of those still running, and of hooks, at once), and the same key lets the worker post where it
// stands (progress.ts) as often as it likes.
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import type { TenantTokensData } from '../keys/tenant.ts';
import type { ApiOperationId } from '../rules/checks/served.ts';
import type { TokenProfile } from './config.ts';
import type { CachedToken } from './tokens.ts';
import { WORKER_REPORT_EVERY_MS, type WorkerReport } from './progress.ts';

/** What the worker needs from the preflight. */
export interface Handover {
  tokens: Partial<Record<TokenProfile, CachedToken>>;
  /** What the run learned of the tenant's tokens (keys/tenant.ts); null: nothing. */
  tenant: TenantTokensData | null;
  /** Operations the target does not serve: their tests are skipped. */
  notServed: ApiOperationId[];
  /** Fixture profiles the target deleted on the preflight's request without a token: the suites leave them out. */
  deletedProfiles: string[];
  /** Where tokens are asked for: where the preflight had them. */
  tokenUrls: string[];
}

/** Where the worker asks for the handover, and the key it shows. */
export interface HandoverAddress {
  url: string;
  key: string;
}

export interface HandoverOffer {
  address: HandoverAddress;
  /** The preflight is done: the worker gets this. */
  give(handover: Handover): void;
  /** The run ends before the suites (a setup error): the worker is told so, and runs nothing. */
  withdraw(reason: string): void;
  /** The run was interrupted: the worker is told so (whenInterrupted). */
  interrupt(): void;
  close(): Promise<void>;
}

const HANDOVER_PATH = '/handover';
const INTERRUPT_PATH = '/interrupt';
const PROGRESS_PATH = '/progress';

/** How the run ended, as the worker hears it: interrupted, or not (it ended on its own). */
interface Ending {
  interrupted: boolean;
}

/** A worker's report is a few numbers: anything longer is not one. */
const MAX_REPORT_BYTES = 4096;

/** Reads a worker's report and hands it on; a body that is not one is dropped. */
function takeReport(req: IncomingMessage, onReport: (report: WorkerReport) => void): void {
  let body = '';
  req.setEncoding('utf8');
  req.on('data', (chunk: string) => {
    body += chunk;
    if (body.length > MAX_REPORT_BYTES) req.destroy();
  });
  req.on('end', () => {
    try {
      const report = JSON.parse(body) as WorkerReport;
      if (typeof report?.requests === 'number' && typeof report.pacer?.waitMs === 'number') onReport(report);
    } catch {
      // Not a report: progress is never worth failing a run for.
    }
  });
}

/**
 * Listens on a free loopback port; answers the key's holder once, when the handover is given or
 * withdrawn, and takes the worker's reports (POST /progress) as often as they come.
 */
export async function offerHandover(onReport: (report: WorkerReport) => void = () => {}): Promise<HandoverOffer> {
  const key = randomBytes(32).toString('base64url');
  const expected = Buffer.from(`Bearer ${key}`);
  let settle!: (outcome: { handover: Handover } | { withdrawn: string }) => void;
  const outcome = new Promise<{ handover: Handover } | { withdrawn: string }>((resolve) => (settle = resolve));
  let end!: (how: Ending) => void;
  const ending = new Promise<Ending>((resolve) => (end = resolve));
  const asked = new Set<string>();
  const server: Server = createServer((req, res) => {
    const shown = Buffer.from(req.headers.authorization ?? '');
    const keyShown = shown.length === expected.length && timingSafeEqual(shown, expected);
    if (keyShown && req.method === 'POST' && req.url === PROGRESS_PATH) {
      takeReport(req, onReport);
      res.writeHead(204).end();
      return;
    }
    const path = req.url ?? '';
    if (!keyShown || asked.has(path) || (path !== HANDOVER_PATH && path !== INTERRUPT_PATH)) {
      res.writeHead(403).end();
      return;
    }
    asked.add(path);
    const answer = (status: number, value: unknown) => {
      const body = JSON.stringify(value);
      res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body);
    };
    if (path === INTERRUPT_PATH) void ending.then((how) => answer(200, how));
    else void outcome.then((settled) => answer('handover' in settled ? 200 : 409, settled));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    address: { url: `http://127.0.0.1:${port}${HANDOVER_PATH}`, key },
    give: (handover) => settle({ handover }),
    withdraw: (reason) => settle({ withdrawn: reason }),
    interrupt: () => end({ interrupted: true }),
    close: async () => {
      // A worker still waiting is told before the connection goes (the answer is written on the next turn).
      settle({ withdrawn: 'the run ended' });
      end({ interrupted: false });
      await new Promise((resolve) => setImmediate(resolve));
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}

/** In the worker: waits for the handover (as long as the preflight takes); throws when it was withdrawn. */
export async function receiveHandover(address: HandoverAddress): Promise<Handover> {
  const answer = await request(address.url, { headers: { authorization: `Bearer ${address.key}` }, headersTimeout: 0, bodyTimeout: 0 });
  const settled = (await answer.body.json()) as { handover: Handover } | { withdrawn: string };
  if (!('handover' in settled)) throw new Error(`the suites did not run: ${settled.withdrawn}`);
  return settled.handover;
}

/**
 * In the worker: settles once the run is interrupted; never when the run ends on its own or the
 * listener goes (the worker is stopped then anyway).
 */
export async function whenInterrupted(address: HandoverAddress): Promise<void> {
  const url = new URL(INTERRUPT_PATH, address.url);
  const ending = await request(url, { headers: { authorization: `Bearer ${address.key}` }, headersTimeout: 0, bodyTimeout: 0 })
    .then((answer) => answer.body.json() as Promise<Ending>)
    .catch(() => ({ interrupted: false }));
  if (!ending.interrupted) await new Promise<never>(() => {});
}

/**
 * In the worker: posts `read()` to the main process every WORKER_REPORT_EVERY_MS, for as long
 * as the worker lives (the timer does not keep it alive). A post that fails is not retried.
 */
export function reportProgress(address: HandoverAddress, read: () => WorkerReport): void {
  const url = new URL(PROGRESS_PATH, address.url).href;
  const post = () =>
    request(url, { method: 'POST', headers: { authorization: `Bearer ${address.key}`, 'content-type': 'application/json' }, body: JSON.stringify(read()) })
      .then((answer) => answer.body.dump())
      .catch(() => {});
  setInterval(() => void post(), WORKER_REPORT_EVERY_MS).unref();
}
