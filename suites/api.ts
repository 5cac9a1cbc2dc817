// The three operations as the suites call them, with a choice of credential. Every exchange
// is judged by the rule engine and recorded as evidence of the running test; the run stays
// inside the target's rate limit and rides out 429s it did not ask for.
import { setMaxListeners } from 'node:events';
import { JudgingSession } from '../judging/session.ts';
import { clientNamedByToken } from '../rules/rate-limit-tracker.ts';
import { readBearerToken } from '../rules/token.ts';
import { CLAIM_PROFILES, PROFILES, type SuiteConfig, type TokenProfile } from './config.ts';
import type { Judgement } from '../rules/index.ts';
import type { Exchange, TokenAttack } from '../rules/types.ts';
import { ApiLayout } from '../rules/api-layout.ts';
import { apiBaseOfUrl } from '../rules/api-base.ts';
import { RunInterrupted } from './failure.ts';
import { sendAndJudge, TargetConnections, type Judged, type OutgoingRequest, type SendContext } from './http.ts';
import type { TenantTokens } from '../keys/tenant.ts';
import { RateLimitPacer } from './pacing.ts';
import { REQUIRED_SCOPES } from '../rules/checks/scopes.ts';
import { makeAttackToken, TokenProvider, type CachedToken } from './tokens.ts';

/**
 * Who calls: a configured profile, or a credential the suite derives itself (token-attacks.suite.ts):
 * - anonymous: no Authorization header
 * - corrupted-signature: the full client's token with its signature bytes altered
 * - unsigned: the full client's claims with {"alg":"none"} and an empty signature
 * - tampered-scope: the no_scope client's token with the operation's scope added, old signature kept
 * - key-confusion: the full client's claims signed HS256 with the tenant's public key (JWKS) as the secret
 * - foreign-key: the full client's token re-signed RS256 with a key that is not the tenant's
 * - other-issuer: the full client's claims naming an issuer other than the tenant's (as learned),
 *   signed RS256 with a key that is not the tenant's (that issuer's, as far as a server can tell)
 * - expired: a token of the tenant that has expired (credentials.expired)
 * - other_audience, not_yet_valid: the claim profiles, tokens of the tenant it must refuse (credentials.*)
 * - the catalogue of suites/tokens.ts (alg-none-capitalized … hs256-client-secret): the full
 *   client's claims (hs256-client-secret: the no_scope client's, the operation's scope added)
 */
export type Caller = TokenProfile | 'anonymous' | TokenAttack;

type ApiOperation = keyof typeof REQUIRED_SCOPES;

export interface CallOptions {
  /** Default "full". */
  as?: Caller;
  /** A raw Authorization header instead of one derived from `as` (malformed-header tests). */
  authorization?: string;
  /** The scheme word before the token of `as`; default "Bearer" (e.g. "bearer": the scheme is case-insensitive). */
  scheme?: string;
  /** Query string, starting with "?". */
  query?: string;
  /** The path segment exactly as sent (already encoded); default: the id encoded once. */
  rawId?: string;
  /** JSON body; `rawBody` sends text as is. */
  body?: unknown;
  rawBody?: string;
  /** Default application/json when there is a body; null sends none. */
  contentType?: string | null;
  /** The request breaks the document's rules on purpose: its client findings are not reported. */
  deliberate?: boolean;
  /** A 429 is what the test is after: it is returned, not waited out. */
  planned429?: boolean;
  /** What an attack of the catalogue takes beside its source token: a weak secret of WEAK_SECRETS (hs256-weak-secret), the key URL (jku, x5u). */
  attackWith?: { secret?: string; keyUrl?: string };
  /** The token names a key URL the suite watches: whether the target requested it (asked once the answer is in). */
  keyUrlFetched?: () => boolean;
}

type AttackCaller = Exclude<Caller, TokenProfile | 'anonymous'>;

const TOKEN_PROFILES: ReadonlySet<Caller> = new Set([...PROFILES, ...CLAIM_PROFILES]);
const isTokenProfile = (caller: Caller): caller is TokenProfile => TOKEN_PROFILES.has(caller);

/** Attacks made from the no_scope client's token, with the operation's scope added. */
const FROM_NO_SCOPE: ReadonlySet<Caller> = new Set(['tampered-scope', 'hs256-client-secret']);

/** Where judged exchanges go: in the suites, the running test's evidence (suites/evidence.ts). */
export interface Recorder {
  exchange(exchange: Exchange, judgement: Judgement, deliberate: boolean): void;
  unplanned429(): void;
  risked429(): void;
}

/**
 * Whose quota a request spends, as the kit schedules its own requests: the client the token's
 * claims name, verified or not, as a gateway that counts before verifying keys it (a corrupted
 * signature spends its client's quota; a malformed header, none's). Pacing is no verdict: the
 * rules attribute an answer only through a trusted credential (rateLimitClient).
 */
const quotaOf = (headers: Record<string, string>) => clientNamedByToken(readBearerToken(headers)) ?? '(no token)';

/** Retries of one request after 429s it did not plan. */
const MAX_RETRIES_AFTER_429 = 5;

/**
 * This process's monotonic clock: the rate-limit rules order two exchanges on it (sub-millisecond)
 * when both were timed by it, and fall back to their timestamps' whole milliseconds otherwise.
 */
const SUITE_CLOCK = `performance.now() of process ${process.pid} from ${performance.timeOrigin}`;

export class SuiteApi {
  /** Judges every exchange this client makes, with one rate-limit history (judging/session.ts). */
  readonly session: JudgingSession;
  readonly pacer = new RateLimitPacer();
  readonly tokens: TokenProvider;
  unplanned429 = 0;
  /** Requests sent (retries included), for the run's progress line. */
  sent = 0;
  /** 429s on requests the pacer sent early to learn a window's length (bounded per client). */
  risked429 = 0;

  /** Forged tokens, made once per source token. */
  private readonly forged = new Map<string, Promise<string | undefined>>();
  private readonly sending: SendContext;
  /** Aborted by interrupt(): every wait and request of this client ends at once. */
  private readonly stopping = new AbortController();

  /** `tenant`: what the run learned of the tenant's tokens (keys/tenant.ts); requests are judged, and attacks forged, from it. */
  constructor(
    readonly config: SuiteConfig,
    private readonly tenant: TenantTokens,
    seed: Partial<Record<TokenProfile, CachedToken>>,
    private readonly recorder: Recorder,
  ) {
    // Every request and wait in flight listens to it: as many as the tests run side by side.
    setMaxListeners(0, this.stopping.signal);
    this.session = new JudgingSession({ tenant, layout: new ApiLayout({ base: apiBaseOfUrl(config.baseUrl) }), clock: SUITE_CLOCK });
    this.sending = { connections: new TargetConnections(config.requestTimeoutMs), session: this.session, signal: this.stopping.signal };
    this.tokens = new TokenProvider(config, (request) => this.send(request, 'token-endpoint', { alone: true }), seed);
  }

  /** Closes the connections to the target. */
  close(): Promise<void> {
    return this.sending.connections.close();
  }

  /**
   * The run was interrupted: requests in flight are given up, the pacer's waits end, and every
   * later call throws RunInterrupted, so that the tests still running end within moments.
   */
  interrupt(): void {
    this.stopping.abort(new RunInterrupted());
  }

  has(profile: TokenProfile): boolean {
    return this.tokens.has(profile);
  }

  deleteTokenExchangeProfile(id: string, options: CallOptions = {}): Promise<Judged> {
    return this.call('DELETE', '/token-exchange-profiles/', id, options, 'deleteTokenExchangeProfile');
  }

  updateSession(id: string, body: unknown, options: CallOptions = {}): Promise<Judged> {
    return this.call('PATCH', '/sessions/', id, { body, ...options }, 'updateSession');
  }

  getResourceServer(id: string, options: CallOptions = {}): Promise<Judged> {
    return this.call('GET', '/resource-servers/', id, options, 'getResourceServer');
  }

  /**
   * The token a derived caller sends, or undefined when the run cannot make it (no JWKS, no
   * known issuer, no expired token, a source token that is not a JWT). Forged once per source token.
   */
  async attackToken(caller: AttackCaller, operation: ApiOperation, attackWith: CallOptions['attackWith'] = {}): Promise<string | undefined> {
    if (caller === 'expired') return this.config.expiredToken;
    const source = await this.tokens.token(FROM_NO_SCOPE.has(caller) ? 'no_scope' : 'full');
    const key = `${caller} ${FROM_NO_SCOPE.has(caller) ? operation : ''} ${attackWith.secret ?? ''} ${attackWith.keyUrl ?? ''} ${source}`;
    let made = this.forged.get(key);
    if (!made) {
      made = this.forge(caller, operation, source, attackWith).catch(() => undefined);
      this.forged.set(key, made);
    }
    return made;
  }

  private async forge(
    caller: Exclude<AttackCaller, 'expired'>,
    operation: ApiOperation,
    source: string,
    attackWith: NonNullable<CallOptions['attackWith']>,
  ): Promise<string | undefined> {
    const { issuer, jwks } = this.tenant;
    // The no_scope client's own secret (hs256-client-secret): used as the HMAC key, never recorded.
    const credential = this.config.credentials.no_scope;
    const secret = caller === 'hs256-client-secret' ? (credential && 'client_secret' in credential ? credential.client_secret : undefined) : attackWith.secret;
    const made = await makeAttackToken(caller, source, {
      scope: REQUIRED_SCOPES[operation].scope,
      ...(issuer !== undefined ? { issuer } : {}),
      ...(jwks ? { jwks } : {}),
      ...(attackWith.keyUrl !== undefined ? { keyUrl: attackWith.keyUrl } : {}),
      ...(secret !== undefined ? { secret } : {}),
    });
    return typeof made === 'string' ? made : undefined;
  }

  private async authorization(
    caller: Caller,
    operation: ApiOperation,
    attackWith: CallOptions['attackWith'],
  ): Promise<{ token?: string; facts?: OutgoingRequest['tokenFacts'] }> {
    if (caller === 'anonymous') return {};
    if (!isTokenProfile(caller)) {
      const token = await this.attackToken(caller, operation, attackWith);
      if (token === undefined) throw new Error(`cannot make the "${caller}" token for this run`);
      // The suite forged it: the signature does not hold, whatever the target's keys say. The
      // attack is named (with its public weak secret), so that the report can say how to make the token again.
      if (caller === 'expired') return { token, facts: { attack: caller } };
      const weak = caller === 'hs256-weak-secret' && attackWith?.secret !== undefined ? { attackSecret: attackWith.secret } : {};
      return { token, facts: { signatureValid: false, attack: caller, ...weak } };
    }
    // A profile's token is the kit's own: whose quota it spends is known.
    const facts: OutgoingRequest['tokenFacts'] = caller === 'non_global' ? { heldByKit: true, clientGlobal: false } : { heldByKit: true };
    return { token: await this.tokens.token(caller), facts };
  }

  async call(method: string, prefix: string, id: string, options: CallOptions, operation: ApiOperation): Promise<Judged> {
    const caller = options.as ?? 'full';
    const { token, facts } = await this.authorization(caller, operation, options.attackWith);
    const header = token === undefined ? undefined : `${options.scheme ?? 'Bearer'} ${token}`;
    const headers: Record<string, string> = { accept: 'application/json' };
    const authorization = options.authorization ?? header;
    if (authorization !== undefined) headers['authorization'] = authorization;
    const body = options.rawBody ?? (options.body !== undefined ? JSON.stringify(options.body) : undefined);
    const contentType = options.contentType === undefined ? (body !== undefined ? 'application/json' : null) : options.contentType;
    if (contentType !== null) headers['content-type'] = contentType;
    const outgoing: OutgoingRequest = {
      method,
      url: `${this.config.baseUrl}${prefix}${options.rawId ?? encodeURIComponent(id)}${options.query ?? ''}`,
      headers,
    };
    if (body !== undefined) outgoing.body = body;
    if (options.keyUrlFetched) outgoing.keyUrlFetched = options.keyUrlFetched;
    // A raw header replaces the profile's token: the kit no longer holds what is sent.
    if (facts) outgoing.tokenFacts = options.authorization === undefined ? facts : { ...facts, heldByKit: undefined };
    return this.send(outgoing, quotaOf(headers), options);
  }

  /**
   * Sends with pacing; a 429 not planned is recorded (apart when the pacer risked it), waited
   * out and retried. Calls may overlap: the pacer admits as many of a client's requests as its
   * quota and the round trip allow, and `alone` ones (token requests) one at a time. A planned
   * 429 (the rate-limit probe) is not paced: it spends the quota on purpose.
   */
  async send(outgoing: OutgoingRequest, client: string, options: Pick<CallOptions, 'deliberate' | 'planned429'> & { alone?: boolean }): Promise<Judged> {
    for (let attempt = 0; ; attempt++) {
      const admission = options.planned429 ? undefined : await this.pacer.admit(client, options.alone ?? false, this.stopping.signal);
      const sentAt = Date.now();
      let judged: Judged;
      let paced: ReturnType<RateLimitPacer['afterResponse']>;
      try {
        this.sent++;
        judged = await sendAndJudge(outgoing, this.sending);
        this.recorder.exchange(judged.exchange, judged, options.deliberate ?? false);
        // When the answer had arrived, before judging: the pacer bounds a window's opening by it.
        const { startedAt, durationMs } = judged.exchange;
        const receivedAt = durationMs === undefined ? Date.now() : Date.parse(startedAt) + durationMs;
        paced = this.pacer.afterResponse(client, judged.status, judged.headers, sentAt, receivedAt, admission?.early);
      } finally {
        // Learned from (or failed): the client's next request may go.
        if (admission) this.pacer.release(client);
      }
      if (judged.status !== 429 || options.planned429 || attempt >= MAX_RETRIES_AFTER_429) return judged;
      if (paced.risked) {
        // The pacer's own early try, to learn the window's length: counted apart.
        this.risked429++;
        this.recorder.risked429();
      } else {
        this.unplanned429++;
        this.recorder.unplanned429();
      }
      await this.pacer.waitFor(paced.retryInMs, this.stopping.signal);
    }
  }
}
