// Every fault switch really breaks the requirement it names: the exchange that exposes it
// differs from the conforming reference's answer, and the rule engine finds a violation of
// exactly that requirement in the faulty answer and none in the conforming one. (Whether the
// suites catch each fault is proven with the suites.)
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { judgeExchange, loadRequirements, RateLimitTracker } from '../rules/index.ts';
import { FAULTS, FAULT_NAMES, startReference, type FaultName, type RateLimitOptions, type RunningReference } from '../reference/index.ts';
import type { JWK } from 'jose';
import { fromAnotherIssuer, keyConfusionTokens, makeAttackToken, unsignedToken, withScopeAdded, type MadeAttack } from '../suites/tokens.ts';
import { startKeyUrlServer, type KeyUrlServer } from '../suites/key-url-server.ts';
import { bearer, call, forged, json, metadata, paths, tokenFor, type Answer, type Call } from './helpers/reference.ts';

interface Tokens {
  full: string;
  noScope: string;
  nonGlobal: string;
  forged: string;
  /** The full client's claims signed HS256 with the reference's public key PEM as the secret. */
  keyConfusion: string;
  /** The full client's claims naming another issuer, signed with a key that is not the reference's. */
  otherIssuer: string;
  expired: string;
  /** The full client's token for another API of the tenant, from its token endpoint. */
  otherAudience: string;
  /** The full client's token that is not valid yet, signed by the reference. */
  notYetValid: string;
  /** The tokens of the attack catalogue (suites/tokens.ts), made from the full client's token (hs256-client-secret: the no_scope client's). */
  catalogue: Record<CatalogueAttack, string>;
}

const CATALOGUE = [
  'alg-none-mixed-case',
  'signature-stripped',
  'zero-signature',
  'psychic-es256',
  'embedded-jwk',
  'embedded-x5c',
  'jku',
  'x5u',
  'kid-path-traversal',
  'kid-sql-injection',
  'hs256-empty-secret',
  'hs256-weak-secret',
  'hs256-client-secret',
] as const satisfies readonly MadeAttack[];
type CatalogueAttack = (typeof CATALOGUE)[number];

// The jku and x5u tokens name a key server on loopback, as the suites do.
let keyServer: KeyUrlServer;
beforeAll(async () => {
  keyServer = await startKeyUrlServer();
});
afterAll(() => keyServer?.close());

/** A delete of a fixture profile with a token of the catalogue. */
const delWith = (attack: CatalogueAttack) => (r: RunningReference, t: Tokens) => [del(tep(r), t.catalogue[attack], { signatureValid: false })];

interface FaultCase {
  rateLimit?: RateLimitOptions;
  /** Requests sent in order; the last one's answer exposes the fault. */
  requests: (ref: RunningReference, t: Tokens) => Call[];
  /**
   * For a fault a single exchange cannot show (the rule engine judges one exchange at a time),
   * how the answers differ; the suites see it by comparing two lookups.
   */
  differs?: (conforming: Answer, faulty: Answer, ref: RunningReference) => void;
}

const rs = (ref: RunningReference, i: number) => ref.fixtures.resource_servers[i]!;
const tep = (ref: RunningReference) => ref.fixtures.token_exchange_profiles[1]!;
const sid = (ref: RunningReference) => ref.fixtures.sessions[0]!;
const del = (id: string, token: string, tokenFacts?: Call['tokenFacts']): Call => ({
  method: 'DELETE',
  path: paths.tokenExchangeProfile(id),
  headers: bearer(token),
  ...(tokenFacts ? { tokenFacts } : {}),
});
const get = (id: string, token?: string, extra: Partial<Call> = {}): Call => ({
  method: 'GET',
  path: paths.resourceServer(id),
  headers: token === undefined ? {} : bearer(token),
  ...extra,
});
const patch = (ref: RunningReference, token: string, value: unknown): Call => ({
  method: 'PATCH',
  path: paths.session(sid(ref)),
  headers: json(token),
  body: JSON.stringify({ session_metadata: value }),
});

/**
 * An operation not served: no single answer shows it (a 404 may be the operation's own), the
 * run's preflight judges several (rules/checks/served.ts). Here: a fixture the conforming
 * reference serves is answered with a router's 404 in plain text.
 */
function notRouted(conforming: Answer, faulty: Answer): void {
  expect(conforming.status).toBeLessThan(300);
  expect(faulty.status).toBe(404);
  expect(faulty.headers.get('content-type')).toMatch(/^text\/plain/);
}

const CASES: Record<FaultName, FaultCase> = {
  'delete-returns-200': { requests: (r, t) => [del(tep(r), t.full)] },
  'delete-with-body': { requests: (r, t) => [del(tep(r), t.full)] },
  'delete-unknown-404': { requests: (_, t) => [del('tep_never_existed', t.full)] },
  'delete-without-scope': { requests: (r, t) => [del(tep(r), t.noScope)] },
  'delete-403-without-scope-name': { requests: (r, t) => [del(tep(r), t.noScope)] },
  'delete-non-global-accepted': { requests: (r, t) => [del(tep(r), t.nonGlobal, { clientGlobal: false })] },
  'delete-invalid-signature-accepted': { requests: (r, t) => [del(tep(r), t.forged, { signatureValid: false })] },
  'delete-invalid-signature-403': { requests: (r, t) => [del(tep(r), t.forged, { signatureValid: false })] },
  'missing-token-404': { requests: () => [{ method: 'DELETE', path: paths.tokenExchangeProfile('tep_never_existed') }] },
  'delete-token-exchange-profile-not-served': { requests: (r, t) => [del(tep(r), t.full)], differs: notRouted },
  'update-session-not-served': { requests: (r, t) => [patch(r, t.full, { a: '1' })], differs: notRouted },
  'get-resource-server-not-served': { requests: (r, t) => [get(rs(r, 1), t.full)], differs: notRouted },
  'missing-token-accepted': { requests: (r) => [{ method: 'DELETE', path: paths.tokenExchangeProfile(tep(r)) }] },
  'non-jwt-bearer-accepted': { requests: (r) => [del(tep(r), 'not-a-jwt')] },
  'alg-none-accepted': { requests: (r, t) => [del(tep(r), unsignedToken(t.full), { signatureValid: false })] },
  // The genuine token first (refused for its scope), then its payload with the scope added.
  'tampered-payload-accepted': {
    requests: (r, t) => [del(tep(r), t.noScope), del(tep(r), withScopeAdded(t.noScope, 'delete:token_exchange_profiles'), { signatureValid: false })],
  },
  'key-confusion-accepted': { requests: (r, t) => [del(tep(r), t.keyConfusion, { signatureValid: false })] },
  'other-issuer-accepted': { requests: (r, t) => [del(tep(r), t.otherIssuer, { signatureValid: false })] },
  'alg-none-any-case-accepted': { requests: delWith('alg-none-mixed-case') },
  'signature-missing-accepted': { requests: delWith('signature-stripped') },
  'zero-signature-accepted': { requests: delWith('zero-signature') },
  'psychic-signature-accepted': { requests: delWith('psychic-es256') },
  'embedded-jwk-accepted': { requests: delWith('embedded-jwk') },
  'embedded-x5c-accepted': { requests: delWith('embedded-x5c') },
  'jku-followed': { requests: delWith('jku') },
  'x5u-followed': { requests: delWith('x5u') },
  'kid-path-traversal-accepted': { requests: delWith('kid-path-traversal') },
  'kid-sql-injection-accepted': { requests: delWith('kid-sql-injection') },
  'hs256-empty-secret-accepted': { requests: delWith('hs256-empty-secret') },
  'hs256-weak-secret-accepted': { requests: delWith('hs256-weak-secret') },
  'hs256-client-secret-accepted': { requests: delWith('hs256-client-secret') },
  'expired-token-accepted': { requests: (r, t) => [del(tep(r), t.expired)] },
  'wrong-audience-accepted': { requests: (r, t) => [del(tep(r), t.otherAudience, { signatureValid: true })] },
  'not-yet-valid-accepted': { requests: (r, t) => [del(tep(r), t.notYetValid, { signatureValid: true })] },
  'read-invalid-signature-accepted': { requests: (r, t) => [get(rs(r, 1), t.forged, { tokenFacts: { signatureValid: false } })] },
  'update-session-without-scope': { requests: (r, t) => [patch(r, t.noScope, { a: '1' })] },
  'read-resource-server-without-scope': { requests: (r, t) => [get(rs(r, 1), t.noScope)] },
  'json-content-type-wrong': { requests: (r, t) => [get(rs(r, 1), t.full)] },
  'error-body-not-object': { requests: (_, t) => [get('rs_unknown', t.full)] },
  'server-error-on-non-ascii-id': { requests: (_, t) => [get('リソース', t.full)] },
  'rate-limit-429-without-headers': { rateLimit: { limit: 1, windowSeconds: 60 }, requests: (r, t) => [get(rs(r, 1), t.full), get(rs(r, 1), t.full)] },
  'rate-limit-reset-in-milliseconds': { requests: (r, t) => [get(rs(r, 1), t.full)] },
  'throttled-503': { rateLimit: { limit: 1, windowSeconds: 60 }, requests: (r, t) => [get(rs(r, 1), t.full), get(rs(r, 1), t.full)] },
  'session-metadata-26-properties-accepted': { requests: (r, t) => [patch(r, t.full, metadata(26))] },
  'session-metadata-long-value-stored': { requests: (r, t) => [patch(r, t.full, { note: 'n'.repeat(256) })] },
  'session-metadata-extra-property': { requests: (r, t) => [patch(r, t.full, metadata(25))] },
  'session-metadata-null-ignored': { requests: (r, t) => [patch(r, t.full, { a: '1' }), patch(r, t.full, null)] },
  'session-metadata-empty-object-ignored': { requests: (r, t) => [patch(r, t.full, { a: '1' }), patch(r, t.full, {})] },
  'session-metadata-merged': { requests: (r, t) => [patch(r, t.full, { a: '1' }), patch(r, t.full, { b: '2' })] },
  'session-timestamps-not-iso': { requests: (r, t) => [patch(r, t.full, { a: '1' })] },
  'rs-signing-alg-invalid': { requests: (r, t) => [get(rs(r, 1), t.full)] },
  'rs-token-dialect-invalid': { requests: (r, t) => [get(rs(r, 1), t.full)] },
  'rs-token-encryption-format-wrong': { requests: (r, t) => [get(rs(r, 2), t.full)] },
  'rs-name-with-angle-brackets': { requests: (r, t) => [get(rs(r, 1), t.full)] },
  'rs-signing-secret-short': { requests: (r, t) => [get(rs(r, 1), t.full)] },
  'rs-token-lifetime-for-web-exceeds': { requests: (r, t) => [get(rs(r, 1), t.full)] },
  'rs-is-system-string': { requests: (r, t) => [get(rs(r, 1), t.full)] },
  'rs-lookup-by-audience-wrong-server': { requests: (_, t) => [get('https://orders.example.com/api', t.full)] },
  'rs-lookup-by-audience-404': {
    requests: (_, t) => [get('https://orders.example.com/api', t.full)],
    differs: (conforming, faulty) => {
      expect(conforming.status).toBe(200);
      expect(conforming.json).toMatchObject({ identifier: 'https://orders.example.com/api' });
      expect(faulty.status).toBe(404);
    },
  },
};

async function tokensFor(ref: RunningReference): Promise<Tokens> {
  const full = await tokenFor(ref, 'full');
  const jwks = (await (await fetch(`${ref.origin}/.well-known/jwks.json`)).json()) as { keys: JWK[] };
  const [keyConfusion] = await keyConfusionTokens(full, jwks);
  const noScope = await tokenFor(ref, 'no_scope');
  const catalogue = {} as Record<CatalogueAttack, string>;
  for (const attack of CATALOGUE) {
    const inputs = {
      scope: 'delete:token_exchange_profiles',
      keyUrl: keyServer.url(attack === 'x5u' ? 'x5u' : 'jku', 'reference-faults'),
      secret: attack === 'hs256-client-secret' ? ref.clients.no_scope.client_secret : 'secret',
    };
    const made = await makeAttackToken(attack, attack === 'hs256-client-secret' ? noScope : full, inputs);
    if (typeof made !== 'string') throw new Error(`${attack}: missing ${made.missing}`);
    catalogue[attack] = made;
  }
  return {
    full,
    noScope,
    nonGlobal: await tokenFor(ref, 'non_global'),
    forged: await forged(full),
    keyConfusion: keyConfusion!,
    otherIssuer: await fromAnotherIssuer(full, ref.issuer),
    expired: ref.expiredToken,
    otherAudience: await tokenFor(ref, 'full', { audience: ref.otherAudience }),
    notYetValid: ref.notYetValidToken,
    catalogue,
  };
}

/** Sends the case's requests; judges each in order; returns the last answer and its findings. */
async function expose(ref: RunningReference, tokens: Tokens, fault: FaultCase) {
  const tracker = new RateLimitTracker();
  let last: { answer: Answer; requirements: string[] } | undefined;
  for (const request of fault.requests(ref, tokens)) {
    const answer = await call(ref, request);
    const { findings } = judgeExchange(answer.exchange, tracker);
    last = { answer, requirements: findings.filter((f) => f.subject === 'implementation').map((f) => f.requirement) };
  }
  return last!;
}

/** What a client observes of an answer, without what differs between any two runs (times). */
function observed(a: Answer) {
  let body: unknown = a.text;
  if (a.json !== null && typeof a.json === 'object' && !Array.isArray(a.json)) {
    const { updated_at: _, ...rest } = a.json as Record<string, unknown>;
    body = rest;
  }
  const rateLimitHeaders = ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset'].filter((h) => a.headers.has(h));
  const resetDigits = a.headers.get('x-ratelimit-reset')?.length;
  return { status: a.status, contentType: a.headers.get('content-type'), contentLength: a.headers.get('content-length'), rateLimitHeaders, resetDigits, body };
}

describe('the fault catalog', () => {
  const catalog = new Map(loadRequirements().map((r) => [r.id, r]));

  it('has at least 20 faults, each naming one requirement of the catalog that the implementation can break', () => {
    expect(FAULT_NAMES.length).toBeGreaterThanOrEqual(20);
    for (const [name, fault] of Object.entries(FAULTS)) {
      const requirement = catalog.get(fault.requirement);
      expect(requirement, `${name} names ${fault.requirement}`).toBeDefined();
      expect(requirement!.subject, name).not.toBe('client');
      expect(fault.description.length, name).toBeGreaterThan(10);
    }
  });

  it('breaks mostly `must` requirements, and covers each operation', () => {
    const levels = Object.values(FAULTS).map((f) => catalog.get(f.requirement)!.level);
    expect(levels.filter((l) => l === 'must').length).toBeGreaterThanOrEqual(20);
    const operations = new Set(Object.values(FAULTS).flatMap((f) => catalog.get(f.requirement)!.operations));
    for (const op of ['deleteTokenExchangeProfile', 'updateSession', 'getResourceServer', 'all']) expect(operations).toContain(op);
  });

  it('refuses an unknown fault name at start', async () => {
    await expect(startReference({ faults: ['no-such-fault'] })).rejects.toThrow(/unknown fault "no-such-fault"/);
  });
});

// One conforming reference per rate-limit setting serves every case: the cases do not depend
// on its state (a repeated delete still answers 204, updates send the metadata they compare).
const conformingReferences = new Map<string, Promise<{ ref: RunningReference; tokens: Tokens }>>();
function conformingReference(rateLimit: RateLimitOptions | undefined) {
  const key = JSON.stringify(rateLimit ?? null);
  let entry = conformingReferences.get(key);
  if (!entry) {
    entry = startReference(rateLimit ? { rateLimit } : {}).then(async (ref) => ({ ref, tokens: await tokensFor(ref) }));
    conformingReferences.set(key, entry);
  }
  return entry;
}
afterAll(async () => {
  await Promise.all([...conformingReferences.values()].map(async (entry) => (await entry).ref.close()));
});

describe.each(FAULT_NAMES.map((name) => [name, FAULTS[name]!.requirement] as const))('fault %s (%s)', (name, requirement) => {
  const fault = CASES[name];
  let faulty: RunningReference;

  beforeAll(async () => {
    faulty = await startReference({ ...(fault.rateLimit ? { rateLimit: fault.rateLimit } : {}), faults: [name] });
  });
  afterAll(async () => {
    await faulty?.close();
  });

  it('changes what the client observes, and breaks exactly the requirement it names', async () => {
    const conforming = await conformingReference(fault.rateLimit);
    const good = await expose(conforming.ref, conforming.tokens, fault);
    const bad = await expose(faulty, await tokensFor(faulty), fault);
    expect(observed(bad.answer)).not.toEqual(observed(good.answer));
    expect(good.requirements, 'the conforming answer').not.toContain(requirement);
    if (fault.differs) {
      fault.differs(good.answer, bad.answer, faulty);
    } else {
      expect(bad.requirements, `the faulty answer: ${bad.answer.status} ${bad.answer.text.slice(0, 200)}`).toContain(requirement);
    }
  });
});
