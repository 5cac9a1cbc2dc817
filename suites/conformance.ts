// One conformance run against a target, from what the tenant says of its tokens to the fixture
// sessions put back: the preflight (suites/preflight.ts), the suites in vitest (runner.ts), and
// the restore, all feeding one report builder. `tmi-conform run` parses the flags, starts the
// embedded reference when there is no target, calls this, and renders the report.
import { UsageError } from '../core/errors.ts';
import { noJwksLine } from '../keys/tenant-keys.ts';
import { issuerLine, learnTenant, TenantTokens, tenantTokensData, withIssuerFromTokens, type TenantKnowledge } from '../keys/tenant.ts';
import type { ReportBuilder } from '../reports/builder.ts';
import { OPERATION_ROUTES, type ApiOperationId } from '../rules/checks/served.ts';
import { loadRequirements } from '../rules/requirements.ts';
import { SuiteApi } from './api.ts';
import { PROFILES, type SuiteConfig } from './config.ts';
import { notServedReason, preflight, type PreflightOutcome } from './preflight.ts';
import { offerHandover, type Handover, type HandoverOffer } from './handover.ts';
import { runSuites } from './runner.ts';
import { ProgressTally, type RunEvents } from './progress.ts';

export interface ConformanceOptions {
  /** Run only the tests that cover these requirements (empty: all). */
  requirements: string[];
  builder: ReportBuilder;
  /** A line for the user (stdout). */
  print: (line: string) => void;
  /** A note or warning (stderr). */
  warn: (line: string) => void;
  /**
   * Starts listening for the user's interrupt once the suites start (before, an interrupt ends the
   * process as usual): the suites stop at once, the sessions are put back, and the report says
   * the run was interrupted (what it did not reach: not run; no verdict).
   */
  listenForInterrupt: () => { promise: Promise<unknown>; dispose(): void };
  /** Each test as it ends, and where the running suite file stands (suites/progress.ts). */
  events?: RunEvents;
}

export interface ConformanceOutcome {
  interrupted: boolean;
  /** The suites' totals; undefined when interrupted. */
  totals: Awaited<ReturnType<typeof runSuites>>['totals'] | undefined;
  /** Time the pacer spent waiting for rate-limit windows. */
  waitedMs: number;
}

/**
 * Runs the conformance suites against `config`'s target, adding every exchange and test to the
 * builder. Throws UsageError for a setup error (a key set named but unreadable, the target
 * unreachable, credentials refused, a suite that could not run): no verdict then.
 */
export async function runConformance(config: SuiteConfig, options: ConformanceOptions): Promise<ConformanceOutcome> {
  const { builder, print, warn } = options;
  const worker = await startTheSuites(config, options);
  // Fixture sessions given by id only: said before the preflight, accounted for after the restore.
  const cleared = config.fixtures.sessions.filter((s) => s.leftCleared).map((s) => s.id);
  let checked: PreflightOutcome;
  let tenant: TenantKnowledge;
  try {
    ({ checked, tenant } = await beforeTheSuites(config, cleared, print, warn));
  } catch (error) {
    // A setup error: the worker runs nothing, and the run ends without a verdict.
    await worker.abandon('the run ended in a setup error');
    throw error;
  }
  const served = afterPreflight(checked, config, builder, print, warn);
  // The suites ask for tokens where the preflight had them.
  const tokenUrls = [checked.tokenUrl];
  let interrupted = false;
  let waitSaid = false;
  const api = new SuiteApi({ ...config, tokenUrls }, TenantTokens.of(tenant), checked.tokens, {
    exchange: (exchange, judgement) => builder.addExchange(exchange, judgement, 'run: preflight and restore'),
    unplanned429: () => {
      // The suites may have spent the quota: the restore waits for the target's window, and says so.
      if (!interrupted || waitSaid) return;
      waitSaid = true;
      print(
        'restoring fixture sessions: the target answered 429; waiting for its rate-limit window (interrupt again to exit at once: sessions left changed, no report)',
      );
    },
    risked429: () => {},
  });
  try {
    const handover: Handover = {
      tokens: checked.tokens,
      tenant: tenantTokensData(tenant),
      notServed: checked.notServed,
      deletedProfiles: checked.deletedProfiles,
      tokenUrls,
    };
    const outcome = await runTheSuites(worker, handover, options);
    interrupted = outcome.kind === 'interrupted';
    // A session update the target does not serve changed nothing: there is nothing to put back.
    if (served.updateSession) await putBackSessions(api, config, cleared, builder, print);
    if (outcome.kind === 'done' && outcome.errors.length > 0) {
      for (const error of outcome.errors) warn(error);
      throw new UsageError('run: a suite could not run (see above)');
    }
    return { interrupted, totals: outcome.kind === 'done' ? outcome.totals : undefined, waitedMs: api.pacer.waitedMs };
  } finally {
    await api.close();
    await worker.offer.close();
  }
}

/** The suites' worker (runner.ts) and the offer it waits on for the preflight's outcome (suites/handover.ts). */
interface SuitesWorker {
  offer: HandoverOffer;
  suites: ReturnType<typeof runSuites>;
  /** Resolves once vitest is made: runner.ts has then taken vitest's signal handlers away, and the run's own go on. */
  made: Promise<void>;
  /** Gives the worker the preflight's outcome; from then on its lines are printed. */
  handOver(handover: Handover): void;
  /** Stops vitest (once it is made): no further test starts. */
  stop(interrupted: boolean): Promise<void>;
  /** A setup error: the worker runs nothing; resolves once it and the offer are closed. */
  abandon(reason: string): Promise<void>;
}

/**
 * The suites' worker starts now and waits for the preflight's outcome (suites/handover.ts): its
 * start overlaps the preflight's round trips. Until the handover it prints nothing.
 */
async function startTheSuites(config: SuiteConfig, options: ConformanceOptions): Promise<SuitesWorker> {
  const progress = new ProgressTally(options.events ?? {});
  const offer = await offerHandover((report) => progress.workerReported(report));
  let handedOver = false;
  let stopSuites: ((interrupted: boolean) => Promise<void>) | undefined;
  let abandoned = false;
  let vitestMade!: () => void;
  const made = new Promise<void>((resolve) => (vitestMade = resolve));
  const onStart = (stop: (interrupted: boolean) => Promise<void>) => {
    stopSuites = stop;
    vitestMade();
    if (abandoned) void stop(false).catch(() => {});
  };
  const print = (line: string) => handedOver && options.print(line);
  const suites = runSuites({ config, handover: offer.address, requirements: options.requirements, builder: options.builder, print, progress, onStart });
  const stop = async (interrupted: boolean) => {
    await stopSuites?.(interrupted).catch(() => {});
  };
  const handOver = (handover: Handover) => {
    handedOver = true;
    offer.give(handover);
  };
  const abandon = async (reason: string) => {
    offer.withdraw(reason);
    abandoned = true;
    await stop(false);
    await suites.catch(() => {});
    await offer.close();
  };
  return { offer, suites, made, handOver, stop, abandon };
}

type SuitesOutcome = ({ kind: 'done' } & Awaited<ReturnType<typeof runSuites>>) | { kind: 'interrupted' };

/**
 * Hands the preflight's outcome over and waits for the suites, or for the user's interrupt: then
 * the suites stop at once and the report says the run was interrupted.
 */
async function runTheSuites(worker: SuitesWorker, handover: Handover, options: ConformanceOptions): Promise<SuitesOutcome> {
  const { suites } = worker;
  // Listening before the suites run, and once vitest's own handlers are gone (runner.ts
  // removes every handler added while vitest was made: ours too, were they there already).
  await Promise.race([worker.made, suites.catch(() => {})]);
  const interrupt = options.listenForInterrupt();
  worker.handOver(handover);
  const outcome = await Promise.race([suites.then((r) => ({ kind: 'done' as const, ...r })), interrupt.promise.then(() => ({ kind: 'interrupted' as const }))]);
  interrupt.dispose();
  if (outcome.kind === 'interrupted') {
    options.builder.interrupted();
    options.print(
      'interrupted: stopping the suites, restoring fixture sessions, writing the reports of what ran (interrupt again to exit at once: sessions left changed, no report)',
    );
    // vitest starts no further test; the worker's requests and waits end at once (suites/handover.ts).
    const stopping = worker.stop(true);
    worker.offer.interrupt();
    await stopping;
    await suites.catch(() => {});
  }
  return outcome;
}

/** The fixture sessions put back; in the report beside the tests, what the run did to sessions it could not restore. */
async function putBackSessions(api: SuiteApi, config: SuiteConfig, cleared: string[], builder: ReportBuilder, print: (line: string) => void): Promise<void> {
  const restored = await restoreSessions(api, config, print);
  if (cleared.length === 0) return;
  const failed = cleared.filter((id) => !restored.includes(id));
  builder.addTest({
    name: `run: fixture sessions given by id only, left with session_metadata cleared: ${cleared.join(', ')}`,
    requirements: [],
    status: failed.length === 0 ? 'pass' : 'fail',
    ...(failed.length > 0 ? { message: `could not clear: ${failed.join(', ')}` } : {}),
  });
}

/**
 * What the tenant says of its tokens, then the preflight (suites/preflight.ts): throws
 * UsageError for a setup error. What the tenant's tokens say of its issuer is learned here too.
 */
async function beforeTheSuites(
  config: SuiteConfig,
  cleared: string[],
  print: (line: string) => void,
  warn: (line: string) => void,
): Promise<{ checked: PreflightOutcome; tenant: TenantKnowledge }> {
  // What the tenant says of its tokens (keys/tenant.ts): never guessed from the address the run reaches it at.
  let tenant = await learnTenant({
    ...(config.issuer !== undefined ? { issuer: config.issuer } : {}),
    ...(config.jwksUrlGiven ? { jwks: config.jwksUrl } : {}),
    wellKnownAt: config.authUrl,
  });
  const keys = tenant.keys!;
  if ('problem' in keys && config.jwksUrlGiven) throw new UsageError(`run: jwks_url: ${keys.problem}`);
  if (cleared.length > 0)
    print(`allow_destructive: fixture sessions given by id only will be tested and left with session_metadata cleared: ${cleared.join(', ')}`);
  // The run's own requests (preflight, restore) are judged here; the suites' in their worker (suites/context.ts), from the same knowledge.
  const checked = await preflight(config, TenantTokens.of(tenant));
  // Said once the target has answered: an unreachable target is one line of its own.
  if ('problem' in keys) warn(noJwksLine(keys));
  tenant = await withIssuerFromTokens(tenant, tokensFromTheTokenEndpoint(checked.tokens, config));
  print(issuerLine(tenant));
  return { checked, tenant };
}

/** The tokens the token endpoint issued to the run's client credentials profiles (a static token is the user's word, not the endpoint's). */
function tokensFromTheTokenEndpoint(fetched: PreflightOutcome['tokens'], config: SuiteConfig): string[] {
  const fromEndpoint = PROFILES.filter((profile) => {
    const credential = config.credentials[profile];
    return credential !== undefined && !('token' in credential);
  });
  return fromEndpoint.flatMap((profile) => (fetched[profile] ? [fetched[profile]!.token] : []));
}

/**
 * What the preflight (suites/preflight.ts) found, told: its exchanges go to the report, the
 * token endpoint's fallback is noted once, each operation not served is said, its other
 * requirements left "not examined" with the reason, and so is each fixture profile the target
 * deleted without a token. Returns which operations are served.
 */
function afterPreflight(
  checked: PreflightOutcome,
  config: SuiteConfig,
  builder: ReportBuilder,
  print: (line: string) => void,
  warn: (line: string) => void,
): Record<ApiOperationId, boolean> {
  for (const { exchange, judgement } of checked.exchanges) builder.addExchange(exchange, judgement, 'run: preflight and restore');
  if (checked.tokenUrl !== config.tokenUrls[0]) {
    warn(`note: the token endpoint answered 404 at ${config.tokenUrls[0]}; tokens come from ${checked.tokenUrl} (set token_url to say so)`);
  }
  const served = { deleteTokenExchangeProfile: true, updateSession: true, getResourceServer: true };
  for (const operation of checked.notServed) {
    served[operation] = false;
    print(
      `not served: ${OPERATION_ROUTES[operation]} (no route at the target: 404 to every request, with and without a token): GEN-OPERATION-SERVED fails; its other requirements and tests are skipped`,
    );
    const own = loadRequirements().filter((r) => r.operations.includes(operation) && r.id !== 'GEN-OPERATION-SERVED');
    builder.skip(
      own.map((r) => r.id),
      notServedReason(operation),
    );
  }
  for (const id of checked.deletedProfiles) {
    print(
      `carried out although a conforming target refuses it: the preflight's DELETE of fixture profile ${id} (a security finding in the report); the profile is gone, and the suites leave it out`,
    );
  }
  return served;
}

/**
 * Puts every fixture session whose original metadata is known back as it was (those given by id
 * only under allow_destructive: cleared). Returns the ids put back.
 */
async function restoreSessions(api: SuiteApi, config: SuiteConfig, print: (line: string) => void): Promise<string[]> {
  const untouched = config.fixtures.sessions.filter((s) => !s.original).map((s) => s.id);
  if (untouched.length > 0) print(`left untouched (original session_metadata unknown): ${untouched.join(', ')}`);
  const restorable = config.fixtures.sessions.filter((s) => s.original);
  if (restorable.length === 0 || !api.has('full')) return [];
  const failed: string[] = [];
  const done: string[] = [];
  for (const session of restorable) {
    try {
      const answer = await api.updateSession(session.id, { session_metadata: session.original!.session_metadata });
      if (answer.status >= 300) failed.push(`${session.id} (${answer.status})`);
      else done.push(session.id);
    } catch (error) {
      failed.push(`${session.id} (${(error as Error).message})`);
    }
  }
  const cleared = restorable.filter((s) => s.leftCleared && done.includes(s.id)).map((s) => s.id);
  print(
    failed.length === 0
      ? `restored session_metadata of ${restorable.length} fixture session(s)${cleared.length > 0 ? ` (${cleared.length} given by id only: cleared)` : ''}`
      : `could NOT restore: ${failed.join(', ')}`,
  );
  return done;
}
