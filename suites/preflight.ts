// Before any test: the target answers, the credentials work, each operation is served, and every
// fixture the configuration names exists. A problem of the setup (an unreachable target, refused
// credentials, a token endpoint nowhere, a base_url off by /api/v2, a stale fixture id) ends the
// run with one line and exit 2 before any verdict; an operation the target does not serve is a
// finding of its own (GEN-OPERATION-SERVED), and the suites leave that operation alone.
//
// Nothing here changes the tenant that a conforming target would change: reads, requests without
// a token or for ids that exist nowhere, and for a fixture session its own original metadata (a
// session given by id only is cleared, which the run does to it anyway with allow_destructive,
// and otherwise not touched). A token exchange profile has no read operation and a delete is not
// undone: a fixture profile gets one request only, without a token, and only when every request
// for an unknown id got 404 or 405 (a target routing the delete by id alone is found so). A
// target that carries it out has deleted the profile: that is a security finding like any other,
// and the profile is handed to the suites as gone.
import { UsageError } from '../core/errors.ts';
import { isSuccess } from '../rules/checks/check.ts';
import {
  answeredOnlyNoRoute,
  isRouterAnswer,
  operationIsServed,
  OPERATION_ROUTES,
  OPTIONAL_QUERIES,
  type ApiOperationId,
  type ServedProbe,
} from '../rules/checks/served.ts';
import type { Judgement } from '../rules/index.ts';
import type { Exchange } from '../rules/types.ts';
import type { TenantTokens } from '../keys/tenant.ts';
import { SuiteApi, type CallOptions } from './api.ts';
import { CLAIM_PROFILES, PROFILES, type SuiteConfig, type TokenProfile } from './config.ts';
import { TargetUnreachable, type Judged } from './http.ts';
import { CredentialsRefused, TokenEndpointNotFound, type CachedToken } from './tokens.ts';

export const API_OPERATION_IDS: ApiOperationId[] = ['deleteTokenExchangeProfile', 'updateSession', 'getResourceServer'];

/** The skip reason of every test and requirement of an operation the target does not serve. */
export const notServedReason = (operation: ApiOperationId): string =>
  `not examined: the operation is not served (${OPERATION_ROUTES[operation]}, see GEN-OPERATION-SERVED)`;

export interface JudgedExchange {
  exchange: Exchange;
  judgement: Judgement;
}

export interface PreflightOutcome {
  /** Operations the target does not serve (their finding is among `exchanges`). */
  notServed: ApiOperationId[];
  /** Fixture profiles the target deleted on the preflight's request without a token: gone for the suites. */
  deletedProfiles: string[];
  /** The preflight's exchanges for the report; those of an operation not served carry only its finding. */
  exchanges: JudgedExchange[];
  /** Where tokens were had: the first of config.tokenUrls that did not answer 404. */
  tokenUrl: string;
  tokens: Partial<Record<TokenProfile, CachedToken>>;
}

/** Where a fixture id comes from in the configuration, to name the key to fix. */
const FIXTURE_KEY: Record<ApiOperationId, string> = {
  deleteTokenExchangeProfile: 'fixtures.token_exchange_profiles',
  updateSession: 'fixtures.sessions',
  getResourceServer: 'fixtures.resource_servers',
};

/** A request of the preflight, before it is sent. */
interface PlannedProbe {
  operation: ApiOperationId;
  id: string;
  /** What is asked, in words (ServedProbe.what). */
  what: string;
  options: CallOptions & { body?: unknown };
  /** The fixture id asked for, if any. */
  fixture?: string;
}

interface Probe extends ServedProbe {
  operation: ApiOperationId;
  /** The fixture id asked for, if any. */
  fixture?: string;
  judged: Judged;
  deliberate: boolean;
}

/** An id no tenant holds: the requests for it change nothing, whatever the target does. */
const unknownId = (operation: ApiOperationId) => `tmi-conform-preflight-${operation}-${process.pid}`;

export async function preflight(config: SuiteConfig, tenant: TenantTokens): Promise<PreflightOutcome> {
  const recorded: Array<{ exchange: Exchange; judged: Judged; deliberate: boolean }> = [];
  const api = new SuiteApi(
    config,
    tenant,
    {},
    {
      exchange: (exchange, judged, deliberate) => recorded.push({ exchange, judged: judged as Judged, deliberate }),
      unplanned429: () => {},
      risked429: () => {},
    },
  );
  let probes: Probe[];
  try {
    // The first token finds where the token endpoint is (tokens.ts tries each candidate URL);
    // the others then go side by side: against a tenant far away the round trips add up.
    // The claim profiles too: credentials the token endpoint refuses are said before any test.
    const [first, ...others] = [...PROFILES, ...CLAIM_PROFILES].filter((profile) => api.has(profile));
    if (first) await api.tokens.token(first);
    await Promise.all(others.map((profile) => api.tokens.token(profile)));
    probes = await sendProbes(api, config);
  } catch (error) {
    if (error instanceof CredentialsRefused) throw new UsageError(`run: ${error.message}`);
    if (error instanceof TokenEndpointNotFound)
      throw new UsageError(`run: ${error.message}: set token_url (TMI_TOKEN_URL, --token-url) to where the tenant serves it`);
    if (error instanceof TargetUnreachable) throw new UsageError(`run: target unreachable: ${error.message}`);
    throw error;
  } finally {
    await api.close();
  }

  const findings = new Map(API_OPERATION_IDS.map((operation) => [operation, operationIsServed(operation, probesOf(probes, operation)) ?? []]));
  const notServed = API_OPERATION_IDS.filter((operation) => findings.get(operation)!.length > 0);
  // 404 or 405 to everything, JSON or not, from all three: not the target's operations at all.
  if (API_OPERATION_IDS.every((operation) => answeredOnlyNoRoute(probesOf(probes, operation))))
    throw new UsageError(`run: ${baseUrlProblem(config.baseUrl, await servedWithoutApiPath(config, tenant, api.tokens.snapshot()))}`);
  const stale = staleFixture(probes.filter((p) => !notServed.includes(p.operation)));
  if (stale) throw new UsageError(`run: ${FIXTURE_KEY[stale.operation]}: "${stale.fixture}" was not found by the target (404): fix the id or remove it`);

  const probeOf = new Map(probes.map((p) => [p.judged.exchange, p]));
  const exchanges = recorded.map(({ exchange, judged, deliberate }): JudgedExchange => {
    const probe = probeOf.get(judged.exchange);
    if (!probe) return { exchange, judgement: ownJudgement(judged, deliberate) };
    const first = probes.find((p) => p.operation === probe.operation) === probe;
    return { exchange, judgement: probeJudgement(probe, findings.get(probe.operation)!, deliberate, first) };
  });
  const deletedProfiles = probes
    .filter((p) => p.operation === 'deleteTokenExchangeProfile' && p.fixture !== undefined && isSuccess(p.judged.status))
    .map((p) => p.fixture!);
  return { notServed, deletedProfiles, exchanges, tokenUrl: api.tokens.tokenUrl, tokens: api.tokens.snapshot() };
}

const probesOf = (probes: Probe[], operation: ApiOperationId) => probes.filter((p) => p.operation === operation);

/**
 * A fixture the target does not hold, of an operation it serves: every request for it with the
 * full token got 404 (with a documented parameter, it may have been found). Requests without a
 * token are not asked what exists.
 */
function staleFixture(probes: Probe[]): Probe | undefined {
  // Only the requests without a token are deliberate.
  const lookups = probes.filter((p) => p.fixture !== undefined && !p.deliberate);
  return lookups.find((p) => lookups.every((other) => other.operation !== p.operation || other.fixture !== p.fixture || other.judged.status === 404));
}

/**
 * The requests of the preflight, side by side (none depends on another's answer; the pacer keeps
 * them within the tenant's rate). An operation answered only 404 or 405 is then tried the way
 * the configuration and the document allow, its requests side by side too: every request again
 * with each documented optional parameter, and a fixture profile without a token (a conforming
 * target refuses it; probing nothing else, a target routing the delete by id would go unseen).
 * A delete still answered only 404 or 405 then gets the same profile with the no_scope token,
 * which a conforming target refuses too (403): a stub that routes the delete by id and by "a
 * bearer token" answers only that one. It goes last and alone, so that one request at most can
 * have deleted the profile. Listed as planned, whatever order they end in: an operation's first
 * is without a token, for an unknown id.
 */
async function sendProbes(api: SuiteApi, config: SuiteConfig): Promise<Probe[]> {
  const planned = plannedProbes(api, config);
  const first = await sendAll(api, planned);
  const second = API_OPERATION_IDS.filter((operation) => answeredOnlyNoRoute(probesOf(first, operation))).flatMap((operation) =>
    secondLooks(config, operation, planned),
  );
  const sent = second.length === 0 ? first : [...first, ...(await sendAll(api, second))];
  const profile = config.fixtures.tokenExchangeProfiles.at(-1);
  const deleteUnrouted = second.some((p) => p.operation === 'deleteTokenExchangeProfile') && answeredOnlyNoRoute(probesOf(sent, 'deleteTokenExchangeProfile'));
  if (!deleteUnrouted || profile === undefined || !api.has('no_scope')) return sent;
  const withNoScope: PlannedProbe = {
    operation: 'deleteTokenExchangeProfile',
    id: profile,
    what: `with the no_scope token, for fixture ${profile}`,
    options: { as: 'no_scope' },
    fixture: profile,
  };
  return [...sent, ...(await sendAll(api, [withNoScope]))];
}

function plannedProbes(api: SuiteApi, config: SuiteConfig): PlannedProbe[] {
  const planned: PlannedProbe[] = [];
  const full = api.has('full');
  for (const operation of API_OPERATION_IDS) {
    const body = operation === 'updateSession' ? { body: { session_metadata: null } } : {};
    planned.push({ operation, id: unknownId(operation), what: 'without a token, for an unknown id', options: { as: 'anonymous', ...body } });
    if (!full) continue;
    planned.push({ operation, id: unknownId(operation), what: 'with the full token, for an unknown id', options: body });
    if (operation === 'getResourceServer') {
      for (const id of config.fixtures.resourceServers)
        planned.push({ operation, id, what: `with the full token, for fixture ${id}`, options: {}, fixture: id });
    }
    if (operation === 'updateSession') {
      // Its own original metadata changes nothing; a session given by id only is known only
      // with allow_destructive, and then it is cleared, as the run leaves it anyway.
      for (const session of config.fixtures.sessions.filter((s) => s.original !== undefined)) {
        planned.push({
          operation,
          id: session.id,
          what: `with the full token, for fixture ${session.id}`,
          options: { body: { session_metadata: session.original!.session_metadata } },
          fixture: session.id,
        });
      }
    }
  }
  return planned;
}

/**
 * The requests for an operation that got only 404 or 405: a fixture profile without a token
 * (the last, as the token attacks aim at: the delete suite takes the first), and every request
 * again with each of the operation's documented optional parameters.
 */
function secondLooks(config: SuiteConfig, operation: ApiOperationId, planned: PlannedProbe[]): PlannedProbe[] {
  const profile = operation === 'deleteTokenExchangeProfile' ? config.fixtures.tokenExchangeProfiles.at(-1) : undefined;
  const refused: PlannedProbe[] =
    profile === undefined ? [] : [{ operation, id: profile, what: `without a token, for fixture ${profile}`, options: { as: 'anonymous' }, fixture: profile }];
  const again = [...planned.filter((p) => p.operation === operation), ...refused];
  const withParameters = OPTIONAL_QUERIES[operation].flatMap((query) =>
    again.map((p) => ({ ...p, what: `${p.what}, with ${query.slice(1)}`, options: { ...p.options, query } })),
  );
  return [...refused, ...withParameters];
}

function sendAll(api: SuiteApi, planned: PlannedProbe[]): Promise<Probe[]> {
  return Promise.all(
    planned.map(async ({ operation, id, what, options, fixture }): Promise<Probe> => {
      const call = { ...options, ...(options.as === 'anonymous' ? { deliberate: true } : {}) };
      const judged =
        operation === 'deleteTokenExchangeProfile'
          ? await api.deleteTokenExchangeProfile(id, call)
          : operation === 'updateSession'
            ? await api.updateSession(id, options.body, call)
            : await api.getResourceServer(id, call);
      return { operation, what, exchange: judged.exchange, judged, deliberate: call.deliberate === true, ...(fixture !== undefined ? { fixture } : {}) };
    }),
  );
}

/** A judgement as the suites record it: a request the kit broke the rules with on purpose leaves out its client findings. */
function ownJudgement(judged: Judged, deliberate: boolean): Judgement {
  const judgement: Judgement = { findings: deliberate ? judged.findings.filter((f) => f.subject !== 'client') : judged.findings, examined: judged.examined };
  if (judged.operation) judgement.operation = judged.operation;
  if (judged.rateLimit !== undefined) judgement.rateLimit = judged.rateLimit;
  return judgement;
}

/**
 * A probe's judgement for the report. Served: as judged, and its answer examined whether the
 * operation is served (unless it is a router's 404 or 405). Not served: the answers are not the
 * operation's, so none of its rules is judged by them; the finding goes with the operation's
 * `first` probe (without a token, for an unknown id), the others are only counted.
 */
function probeJudgement(probe: Probe, notServedFindings: Judgement['findings'], deliberate: boolean, first: boolean): Judgement {
  const judgement = ownJudgement(probe.judged, deliberate);
  if (notServedFindings.length === 0) {
    if (!isRouterAnswer(probe)) judgement.examined = [...judgement.examined, 'GEN-OPERATION-SERVED'];
    return judgement;
  }
  return { ...judgement, findings: first ? notServedFindings : [], examined: first ? ['GEN-OPERATION-SERVED'] : [] };
}

/**
 * What is wrong with a base_url where none of the operations is served: /api/v2 missing or
 * repeated, or the operations served without it (`servedAt`: where they answered instead).
 */
export function baseUrlProblem(baseUrl: string, servedAt?: string): string {
  const url = new URL(baseUrl);
  const path = url.pathname.replace(/\/+$/, '');
  const served = `none of the three operations is served at base_url ${baseUrl} (404 to every request, with and without a token)`;
  const rule = '{base_url} is the tenant address plus /api/v2';
  if (/(\/api\/v2){2,}$/.test(path)) return `${served}: /api/v2 is repeated; ${rule}, probably ${url.origin}${path.replace(/(\/api\/v2)+$/, '/api/v2')}`;
  if (!path.endsWith('/api/v2')) return `${served}: /api/v2 is missing; ${rule}, probably ${url.origin}${path}/api/v2`;
  if (servedAt !== undefined) return `${served}: they answer at ${servedAt}, without /api/v2; probably base_url ${servedAt}`;
  return `${served}: ${rule}; check the tenant address`;
}

/**
 * When base_url ends in one /api/v2 and serves none of the operations: the same address without
 * it, if the operations answer there as the preflight asks them (a target that serves the paths
 * at its root, as a mock of the OpenAPI description's paths does); else undefined.
 */
async function servedWithoutApiPath(
  config: SuiteConfig,
  tenant: TenantTokens,
  tokens: Partial<Record<TokenProfile, CachedToken>>,
): Promise<string | undefined> {
  const url = new URL(config.baseUrl);
  const path = url.pathname.replace(/\/+$/, '');
  if (!path.endsWith('/api/v2') || path.endsWith('/api/v2/api/v2')) return undefined;
  const baseUrl = `${url.origin}${path.slice(0, -'/api/v2'.length)}`;
  const api = new SuiteApi({ ...config, baseUrl }, tenant, tokens, { exchange: () => {}, unplanned429: () => {}, risked429: () => {} });
  try {
    const probes = await sendProbes(api, api.config);
    const served = API_OPERATION_IDS.some(
      (operation) =>
        operationIsServed(
          operation,
          probes.filter((p) => p.operation === operation),
        )?.length === 0,
    );
    return served ? baseUrl : undefined;
  } catch (error) {
    if (error instanceof TargetUnreachable) return undefined;
    throw error;
  } finally {
    await api.close();
  }
}
