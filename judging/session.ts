// One judging session: what every route needs to judge one run's traffic, owned once. The
// suites, the proxy (live and a resumed journal's earlier traffic), the dispatcher, `validate`
// and the library's `judgeRecording` capture exchanges and hand them here; how a token is
// settled, a non-global client marked, the one rate-limit history kept and an internal error
// counted is written here alone, so the same traffic gets the same verdict by every route.
import { randomUUID } from 'node:crypto';
import { KnownSecrets } from '../core/redact.ts';
import type { TenantTokens } from '../keys/tenant.ts';
import type { ReadOptions } from '../recordings/read-options.ts';
import { type ReadProgress, readRecordingBatches } from '../recordings/read.ts';
import { type BuilderOptions, ReportBuilder } from '../reports/builder.ts';
import { INTERNAL_ERROR } from '../reports/traffic.ts';
import { ApiLayout } from '../rules/api-layout.ts';
import { judgeExchange, type Judgement, RateLimitTracker } from '../rules/index.ts';
import { bearerCredentialOf } from '../rules/token.ts';
import type { Exchange } from '../rules/types.ts';
import { countedOf, Tally } from './tally.ts';

export interface JudgingSessionOptions {
  /** What is known of the tenant's tokens: the issuer and the keys (keys/tenant.ts). */
  tenant: TenantTokens;
  /** The API base path and the user's description (--openapi); default: the document's alone. */
  layout?: ApiLayout;
  /** Client ids the operator declared not global (no token claim says so), for the rule on deleting. */
  nonGlobalClients?: Iterable<string>;
  /** The report this session feeds; none when another process builds it (the suites' worker). */
  report?: BuilderOptions;
  /** Names the clock of the exchanges this session times, so that they are ordered finer than their timestamps. */
  clock?: string;
}

/** How a recording is replayed: how its files are read, and what the caller hears on the way. */
export interface ReplayOptions extends ReadOptions {
  /** Told when a journal's last line was cut short and skipped, each file its own. */
  progressOf?: (path: string) => ReadProgress;
  /** A file of several that cannot be read: without this, the error ends the replay; with it, the next file is read. */
  onFileError?: (path: string, error: unknown) => void;
  /** Told before each file is read (the batches that follow come from it). */
  onFile?: (path: string) => void;
}

/** A compact JWS whose signature a recording kept as it was (base64url), so that checking it means something. */
const COMPACT_JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*\.[A-Za-z0-9_-]+$/;

/** The token of a recorded exchange, when the recording kept it whole (a masked one cannot be checked). */
export function recordedCredential(exchange: Exchange): string | undefined {
  const credential = bearerCredentialOf(exchange.request.headers);
  return credential !== undefined && COMPACT_JWS.test(credential) ? credential : undefined;
}

export class JudgingSession {
  /** The session's rate-limit history: live traffic goes on from a replayed journal's. */
  tracker = new RateLimitTracker();
  readonly tenant: TenantTokens;
  readonly layout: ApiLayout;
  /** The report every judged exchange feeds (undefined when another process builds it). */
  readonly builder: ReportBuilder | undefined;
  readonly clock: string;
  /**
   * Secrets learned from the traffic (a client secret sent to the token endpoint): masked wherever
   * they turn up later, by the report (maskLearnedSecrets) or by a driver that masks before it
   * writes anything (the proxy's recording step).
   */
  readonly secrets = new KnownSecrets();
  /** What the console, the status line, the metrics and the live page read: every recorded exchange counted once. */
  readonly tally = new Tally();
  /** The latest internal error's message, for the console (the tally counts them, when recorded). */
  lastInternalError: string | undefined;
  private readonly nonGlobalClients: ReadonlySet<string>;

  constructor(options: JudgingSessionOptions) {
    this.tenant = options.tenant;
    this.layout = options.layout ?? new ApiLayout({});
    this.nonGlobalClients = new Set(options.nonGlobalClients ?? []);
    this.builder = options.report ? new ReportBuilder({ ...options.report, knownSecrets: this.secrets }) : undefined;
    this.clock = options.clock ?? `judging session ${randomUUID()}`;
  }

  /** Verifies the signatures of the tokens not verified yet; undefined when there is nothing to wait for. */
  prepare(credentials: Iterable<string | undefined>): Promise<unknown> | undefined {
    return this.tenant.prepare(credentials);
  }

  /**
   * Judges one exchange whose token was prepared: settles the token against what is known of
   * the tenant, marks a client declared not global, and judges it with the session's rate-limit
   * history. Undefined when the kit failed on it: counted as not judged (internalError).
   */
  judgePrepared(exchange: Exchange, credential: string | undefined): Judgement | undefined {
    try {
      this.tenant.settle(exchange.token, credential);
      this.markNonGlobalClient(exchange);
      return judgeExchange(exchange, this.tracker, this.layout);
    } catch (error) {
      this.internalError(exchange, error);
      return undefined;
    }
  }

  /** prepare and judgePrepared for one exchange (drivers that judge as answers end). */
  async judge(exchange: Exchange, credential: string | undefined): Promise<Judgement | undefined> {
    try {
      await this.prepare([credential]);
    } catch (error) {
      this.internalError(exchange, error);
      return undefined;
    }
    return this.judgePrepared(exchange, credential);
  }

  /**
   * Records a judged exchange in the report and the tally (judgement undefined: the kit failed on
   * it, listed among those not judged). `internalError`: some other step failed on it (the proxy's
   * recording), counted with the internal errors though it was judged.
   */
  record(exchange: Exchange, judgement: Judgement | undefined, internalError = false): void {
    this.tally.count(countedOf(exchange, internalError || judgement === undefined), judgement);
    if (!this.builder) return;
    if (judgement) this.builder.addExchange(exchange, judgement);
    else this.builder.addNotJudged(INTERNAL_ERROR, 1, [exchange.id ?? '(no id)']);
  }

  /** An exchange the kit failed on before it could be recorded (`exchange`: what was made of it, if anything): counted, listed as not judged. */
  notJudged(id: string, exchange?: Exchange): void {
    this.tally.count(countedOf(exchange, true), undefined);
    this.builder?.addNotJudged(INTERNAL_ERROR, 1, [id]);
  }

  /**
   * Judges a recording (a file, or the segments of one journal in order: one recording) through
   * this session and hands each exchange on, in order (without a judgement when the kit failed on
   * it); returns how many. Each token is settled as the recording kept it. The rate-limit history
   * is the session's: no pause lies between two segments of one recording, and live traffic after
   * a replayed journal goes on from it. Throws RecordingError when a file cannot be read and
   * `onFileError` is not given (recordings/read.ts).
   */
  async replay(
    path: string | readonly string[],
    options: ReplayOptions,
    judged: (exchange: Exchange, judgement: Judgement | undefined) => void,
  ): Promise<number> {
    const { progressOf, onFileError, onFile, ...readOptions } = options;
    let count = 0;
    for (const file of typeof path === 'string' ? [path] : path) {
      onFile?.(file);
      try {
        for await (const batch of readRecordingBatches(file, progressOf?.(file), readOptions)) {
          // A verdict the recorder kept stays; a token kept whole is checked against the keys known.
          await this.prepare(
            batch.map((exchange) => (exchange.token.signatureValid === undefined && exchange.token.claims ? recordedCredential(exchange) : undefined)),
          );
          for (const exchange of batch) {
            judged(exchange, this.judgePrepared(exchange, recordedCredential(exchange)));
            count++;
          }
        }
      } catch (error) {
        if (!onFileError) throw error;
        onFileError(file, error);
      }
    }
    return count;
  }

  /**
   * Another recording begins, made at another time: a pause lies between it and what came before,
   * so no rate-limit sequence goes on across them (validate of several recordings).
   */
  beginRecording(): void {
    this.tracker = new RateLimitTracker();
  }

  private markNonGlobalClient(exchange: Exchange): void {
    const azp = exchange.token.claims?.['azp'];
    if (typeof azp === 'string' && this.nonGlobalClients.has(azp)) exchange.token.clientGlobal = false;
  }

  private internalError(exchange: Exchange, error: unknown): void {
    this.lastInternalError = `exchange ${exchange.id ?? '(no id)'}: ${(error as Error).message}`;
  }
}
