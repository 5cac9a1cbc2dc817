// Attacks on the credential, each against the three operations. A correct server refuses every
// one with 401 before it looks anything up; one that carries a request out is a security finding
// (the rule engine's AUTH-CREDENTIAL-* checks), and on the delete it fails the verdict.
//
// What is attacked: the delete aims at an id that exists nowhere and, with allow_destructive, at
// the last disposable profile of the config (a correct server refuses and the profile stays for
// the delete suite; a 2xx proves the hole on an object the user declared disposable). The update
// sends a fixture session the metadata the run restores it to, so even a hole changes nothing
// the run does not put back. The read asks for the first fixture resource server.
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, type TestContext } from 'vitest';
import { audienceNamesApi, CLOCK_SKEW_SECONDS } from '../rules/credential.ts';
import type { CallOptions } from './api.ts';
import type { ClaimProfile, TokenProfile } from './config.ts';
import { malformedAuthorizationExamples, malformedAuthorizations, type MalformedAuthorization } from './arbitraries.ts';
import {
  api,
  concurrentIt,
  checkIndependentCases,
  config,
  covers,
  expectExamined,
  expectNoFindings,
  needs,
  needsProfile,
  needsServed,
  restorableSessions,
  served,
  unknownId,
} from './context.ts';
import type { Judged } from './http.ts';
import { keyUrlServerOptions, startKeyUrlServer, UNREACHABLE_KEY_URL, type KeyUrlServer } from './key-url-server.ts';
import { WEAK_SECRETS } from '../rules/forgery.ts';
import { NONE_SPELLINGS } from './tokens.ts';

/**
 * What the engine judges each kind of attack under: on the delete (all `must`), and on the other
 * two operations the stated ones (`must`) apart from the inferred ones (`should`), since a test
 * names requirements of one level. The first id of each list is the one every answer must have
 * been examined for.
 */
const REQUIREMENTS = {
  // absent, malformed, not a JWT: 2xx → AUTH-CREDENTIAL-REQUIRED(-OTHER) and AUTH-MISSING-TOKEN-401(-OTHER); another refusal than 401 → AUTH-MISSING-TOKEN-401(-OTHER)
  missing: {
    delete: ['AUTH-CREDENTIAL-REQUIRED', 'AUTH-MISSING-TOKEN-401'],
    other: ['AUTH-CREDENTIAL-REQUIRED-OTHER'],
    otherInferred: ['AUTH-MISSING-TOKEN-401-OTHER'],
  },
  // unsigned, or a signature that does not verify: 2xx → AUTH-CREDENTIAL-REQUIRED(-OTHER) and AUTH-INVALID-SIGNATURE-401(-OTHER); another refusal than 401 → AUTH-INVALID-SIGNATURE-401(-OTHER)
  forged: {
    delete: ['AUTH-CREDENTIAL-REQUIRED', 'AUTH-INVALID-SIGNATURE-401'],
    other: ['AUTH-CREDENTIAL-REQUIRED-OTHER'],
    otherInferred: ['AUTH-INVALID-SIGNATURE-401-OTHER'],
  },
  // signed by the tenant, but expired: 2xx → AUTH-CREDENTIAL-REQUIRED on the delete, AUTH-TOKEN-VALIDITY-OTHER elsewhere
  expired: { delete: ['AUTH-CREDENTIAL-REQUIRED'], other: [], otherInferred: ['AUTH-TOKEN-VALIDITY-OTHER'] },
} as const;

interface TokenAttack {
  /** What is sent, as the test names say it. */
  what: string;
  kind: keyof typeof REQUIREMENTS;
  options: CallOptions;
  /** Several tokens of one attack, each sent where the attack is (the weak secrets): their call options. Default: `options` alone. */
  variants?: () => CallOptions[];
  /** Skips the test, with the reason, when the run cannot make this attack. */
  possible?: (context: TestContext) => Promise<void>;
  /** Sent first, once per test (a replay attack needs the genuine token seen). */
  before?: () => Promise<unknown>;
}

type Forged = Exclude<NonNullable<CallOptions['as']>, TokenProfile | 'anonymous' | 'expired'>;

/** The run can make the attack's token: its source profile is configured and its token is a JWT (and the JWKS has a key, for key confusion). */
function canForge(caller: Forged, unmade: string, attackWith?: CallOptions['attackWith']) {
  return async (context: TestContext) => {
    const profile = caller === 'tampered-scope' || caller === 'hs256-client-secret' ? 'no_scope' : 'full';
    needsProfile(context, profile);
    needs(context, (await api.attackToken(caller, 'getResourceServer', attackWith)) !== undefined, unmade.replace('{profile}', profile));
  };
}

/** The no_scope client authenticates with a client_secret (not a static token): the secret an HS256 verifier might key with. */
async function hasClientSecret(context: TestContext): Promise<void> {
  const credential = config.credentials.no_scope;
  needs(
    context,
    credential !== undefined && 'client_secret' in credential && credential.client_secret !== '',
    'the no_scope client is given by a static token: there is no client_secret to sign with (credentials.no_scope.client_id and client_secret)',
  );
  await canForge('hs256-client-secret', NOT_A_JWT)(context);
}

// The key URLs of the jku and x5u attacks: served by the kit at callback_url, or on loopback when
// the target runs on this machine (suites/key-url-server.ts); a name that resolves nowhere otherwise.
// module-state: this file's own listener, started and closed by its hooks (vitest evaluates a suite file once per run).
const keyUrls: { server?: KeyUrlServer; unseen: string } = {
  unseen:
    'the target is not on this machine and no callback_url is configured: it cannot reach a key URL the kit serves, so whether it fetches one is not seen (set callback_url, TMI_CALLBACK_URL or --callback-url, to a URL at which the target reaches the kit, and callback_listen to where that URL arrives)',
};
beforeAll(async () => {
  const options = keyUrlServerOptions(config.baseUrl, config.callback);
  if (options === undefined) return;
  try {
    keyUrls.server = await startKeyUrlServer(options);
  } catch (error) {
    keyUrls.unseen = `the kit could not listen for key URL requests at ${options.host}:${options.port} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}; callback_listen)`;
  }
});
afterAll(() => keyUrls.server?.close());
const keyUrl = (kind: 'jku' | 'x5u', name: string): string => keyUrls.server?.url(kind, name) ?? UNREACHABLE_KEY_URL(kind, name);

const NOT_A_JWT = 'the {profile} token is not a JWT: there are no claims to forge a token from';

/** The expired token is configured and has expired (beyond the engine's clock skew). */
async function hasExpiredToken(context: TestContext): Promise<void> {
  const token = config.expiredToken;
  needs(
    context,
    token !== undefined,
    'no expired token in the configuration (credentials.expired, TMI_EXPIRED_TOKEN): keep a token of the tenant until it has expired',
  );
  let exp: number | undefined;
  try {
    exp = decodeJwt(token!).exp;
  } catch {
    exp = undefined;
  }
  needs(
    context,
    exp !== undefined && exp + CLOCK_SKEW_SECONDS < Date.now() / 1000,
    `credentials.expired is not a JWT that has expired (exp ${exp ?? 'missing'})`,
  );
}

const ATTACKS: TokenAttack[] = [
  { what: 'no Authorization header', kind: 'missing', options: { as: 'anonymous' } },
  { what: '"Bearer" with nothing after it', kind: 'missing', options: { authorization: 'Bearer' } },
  { what: 'another scheme (Basic)', kind: 'missing', options: { authorization: `Basic ${Buffer.from('tmi-conform:not-a-secret').toString('base64')}` } },
  // "bearer <valid token>" is the same credential as "Bearer <valid token>" (RFC 7235 §2.1: the
  // scheme is case-insensitive), so serving it is right and nothing is judged there. What a
  // lowercase scheme may slip past is the verification: a forged token behind it must be refused.
  {
    what: 'lowercase "bearer" with a token signed by a key that is not the tenant\'s',
    kind: 'forged',
    options: { as: 'foreign-key', scheme: 'bearer' },
    possible: canForge('foreign-key', NOT_A_JWT),
  },
  {
    what: 'alg "none": the full client\'s claims with an empty signature',
    kind: 'forged',
    options: { as: 'unsigned' },
    possible: canForge('unsigned', NOT_A_JWT),
  },
  {
    what: "a tampered payload: the no_scope client's token with the operation's scope added, its signature kept",
    kind: 'forged',
    options: { as: 'tampered-scope' },
    possible: canForge('tampered-scope', NOT_A_JWT),
    // The genuine token first (refused for its scope), as an attacker replays a token it saw.
    before: async () =>
      served('deleteTokenExchangeProfile')
        ? api.deleteTokenExchangeProfile(unknownId('profile'), { as: 'no_scope' })
        : api.getResourceServer(resourceServer(), { as: 'no_scope' }),
  },
  {
    what: "key confusion: HS256 signed with the tenant's public key (from its JWKS) as the secret",
    kind: 'forged',
    options: { as: 'key-confusion' },
    possible: canForge('key-confusion', "no RSA or EC signing key could be read from the tenant's JWKS (jwks_url), or the {profile} token is not a JWT"),
  },
  { what: "a token signed by a key that is not the tenant's", kind: 'forged', options: { as: 'foreign-key' }, possible: canForge('foreign-key', NOT_A_JWT) },
  {
    what: "a token from another issuer: the full client's claims naming an issuer that is not the tenant's, signed by a key that is not the tenant's",
    kind: 'forged',
    options: { as: 'other-issuer' },
    possible: canForge(
      'other-issuer',
      "the tenant's issuer is not known (issuer in the config, the discovery document, or a token of the tenant whose signature verifies), or the {profile} token is not a JWT: there is no other issuer to tell it from",
    ),
  },
  { what: 'an expired token of the tenant', kind: 'expired', options: { as: 'expired' }, possible: hasExpiredToken },
  // The catalogue of suites/tokens.ts: each the full client's claims, none signed by the tenant.
  ...(['alg-none-capitalized', 'alg-none-uppercase', 'alg-none-mixed-case'] as const).map(
    (as): TokenAttack => ({
      what: `alg ${JSON.stringify(NONE_SPELLINGS[as])} (another spelling of "none") with an empty signature`,
      kind: 'forged',
      options: { as },
      possible: canForge(as, NOT_A_JWT),
    }),
  ),
  // Two segments: not a JWS at all, judged as a bearer credential that is not a JWT.
  {
    what: 'a token of the tenant with its signature part removed (header.payload)',
    kind: 'missing',
    options: { as: 'signature-stripped' },
    possible: canForge('signature-stripped', NOT_A_JWT),
  },
  {
    what: 'a token of the tenant with its signature removed (header.payload., its alg kept)',
    kind: 'forged',
    options: { as: 'signature-empty' },
    possible: canForge('signature-empty', NOT_A_JWT),
  },
  {
    what: 'a token of the tenant whose signature is as many zero bytes',
    kind: 'forged',
    options: { as: 'zero-signature' },
    possible: canForge('zero-signature', NOT_A_JWT),
  },
  {
    what: 'the psychic ECDSA signature r = s = 0 under an ES256 header (CVE-2022-21449)',
    kind: 'forged',
    options: { as: 'psychic-es256' },
    possible: canForge('psychic-es256', NOT_A_JWT),
  },
  {
    what: 'the psychic ECDSA signature r = s = 0 under an ES384 header (CVE-2022-21449)',
    kind: 'forged',
    options: { as: 'psychic-es384' },
    possible: canForge('psychic-es384', NOT_A_JWT),
  },
  {
    what: 'a token signed by the key its own jwk header carries (CVE-2018-0114)',
    kind: 'forged',
    options: { as: 'embedded-jwk' },
    possible: canForge('embedded-jwk', NOT_A_JWT),
  },
  {
    what: 'a token signed by the key of the self-signed certificate its x5c header carries',
    kind: 'forged',
    options: { as: 'embedded-x5c' },
    possible: canForge('embedded-x5c', NOT_A_JWT),
  },
  ...(['jku', 'x5u'] as const).map(
    (as): TokenAttack => ({
      what: `a token signed by the attacker's key, its ${as} header naming where that key is (${as === 'jku' ? 'a key set' : 'a certificate'})`,
      kind: 'forged',
      options: { as },
      // The key URL is known once the key server runs (beforeAll).
      variants: () => [{ as, attackWith: { keyUrl: keyUrl(as, 'attack') } }],
      possible: (context) => canForge(as, NOT_A_JWT, { keyUrl: keyUrl(as, 'attack') })(context),
    }),
  ),
  {
    what: 'a kid walking to /dev/null, the token signed HS256 with an empty key',
    kind: 'forged',
    options: { as: 'kid-path-traversal' },
    possible: canForge('kid-path-traversal', NOT_A_JWT),
  },
  {
    what: 'a kid shaped like an SQL injection, the token signed HS256 with the value it injects',
    kind: 'forged',
    options: { as: 'kid-sql-injection' },
    possible: canForge('kid-sql-injection', NOT_A_JWT),
  },
  {
    what: 'a token signed HS256 with an empty secret',
    kind: 'forged',
    options: { as: 'hs256-empty-secret' },
    possible: canForge('hs256-empty-secret', NOT_A_JWT),
  },
  {
    what: `tokens signed HS256 with the commonest weak secrets (${WEAK_SECRETS.join(', ')})`,
    kind: 'forged',
    options: { as: 'hs256-weak-secret' },
    variants: () => WEAK_SECRETS.map((secret) => ({ as: 'hs256-weak-secret', attackWith: { secret } })),
    possible: canForge('hs256-weak-secret', NOT_A_JWT, { secret: WEAK_SECRETS[0]! }),
  },
  {
    what: "the no_scope client's token with the operation's scope added, signed HS256 with its own client_secret",
    kind: 'forged',
    options: { as: 'hs256-client-secret' },
    possible: hasClientSecret,
  },
];

/** Ids a delete attack aims at: one that exists nowhere, and with allow_destructive the last disposable profile. */
function deleteTargets(): string[] {
  const disposable = config.allowDestructive ? config.fixtures.tokenExchangeProfiles.at(-1) : undefined;
  return disposable === undefined ? [unknownId('profile')] : [unknownId('profile'), disposable];
}

/** The update an attack sends: a fixture session and the metadata the run leaves it with, or an unknown session. */
function sessionUpdate(): { id: string; body: { session_metadata: Record<string, string> | null } } {
  const session = restorableSessions()[0];
  return session
    ? { id: session.id, body: { session_metadata: session.original!.session_metadata } }
    : { id: unknownId('session'), body: { session_metadata: null } };
}

const resourceServer = () => config.fixtures.resourceServers[0] ?? unknownId('resource-server');

/** The engine judged the answer as one to an invalid credential (`examinedAs`) and found nothing against `ids`. */
function expectRefused(answer: Judged, ids: readonly string[], what: string, examinedAs = ids[0]!): void {
  expectExamined(answer, examinedAs, `its answer to ${what} could not be judged`);
  expectNoFindings(answer, ...ids);
}

async function attackDelete(options: CallOptions, ids: readonly string[], what: string): Promise<void> {
  for (const id of deleteTargets()) expectRefused(await api.deleteTokenExchangeProfile(id, { ...options, deliberate: true }), ids, what);
}

/** Each token of the attack in turn (the weak secrets), or its one token. */
async function eachVariant(attack: TokenAttack, send: (options: CallOptions) => Promise<void>): Promise<void> {
  for (const options of attack.variants?.() ?? [attack.options]) await send(options);
}

/**
 * The claim profiles: tokens the tenant signed that every operation must still refuse. The kit
 * cannot sign them; the configuration gives them (a client it asks the token endpoint with, or
 * the token), and without one what it examines is not examined.
 */
const CLAIM_ATTACKS: Array<{ profile: ClaimProfile; what: string; requirement: string; unusable: (claims: Record<string, unknown>) => string | undefined }> = [
  {
    profile: 'other_audience',
    what: 'a token the tenant issued for another audience',
    requirement: 'AUTH-AUDIENCE-401',
    unusable: ({ aud }) =>
      aud === undefined || (Array.isArray(aud) ? aud.some(audienceNamesApi) : audienceNamesApi(aud))
        ? `the credentials.other_audience token names this API's audience (aud ${JSON.stringify(aud ?? null)}): it is no token for another audience`
        : undefined,
  },
  {
    profile: 'not_yet_valid',
    what: 'a token of the tenant not yet valid (nbf in the future)',
    requirement: 'AUTH-NOT-BEFORE-401',
    unusable: ({ nbf }) =>
      typeof nbf === 'number' && nbf - CLOCK_SKEW_SECONDS > Date.now() / 1000
        ? undefined
        : `the credentials.not_yet_valid token is not valid later than ${CLOCK_SKEW_SECONDS} s from now (nbf ${JSON.stringify(nbf ?? null)})`,
  },
];

const CLAIM_CONFIG: Record<ClaimProfile, string> = {
  other_audience:
    'credentials.other_audience (a client and the audience of another API of the tenant, or a token; TMI_OTHER_AUDIENCE_CLIENT_ID, _CLIENT_SECRET and _AUDIENCE, or TMI_OTHER_AUDIENCE_TOKEN)',
  not_yet_valid:
    'credentials.not_yet_valid (a client whose tokens are not valid yet, or such a token; TMI_NOT_YET_VALID_CLIENT_ID and _CLIENT_SECRET, or TMI_NOT_YET_VALID_TOKEN)',
};

/** The claim profile is configured, and its token is a JWT whose claims make it the attack. */
async function hasClaimToken(context: TestContext, attack: (typeof CLAIM_ATTACKS)[number]): Promise<void> {
  needs(context, api.has(attack.profile), `no ${attack.profile.replace(/_/g, ' ')} token in the configuration: set ${CLAIM_CONFIG[attack.profile]}`);
  let claims: Record<string, unknown> | undefined;
  try {
    claims = decodeJwt(await api.tokens.token(attack.profile));
  } catch {
    claims = undefined;
  }
  needs(context, claims !== undefined, `the credentials.${attack.profile} token is not a JWT`);
  const unusable = attack.unusable(claims!);
  needs(context, unusable === undefined, unusable!);
}

/**
 * Update session and get resource server, those of the two the target serves, both at once: the
 * update sends the metadata the session already has, so neither answer depends on the other.
 * The answers are judged in that order.
 */
async function attackOthers(options: CallOptions, ids: readonly string[], what: string, examinedAs = ids[0]!): Promise<void> {
  const { id, body } = sessionUpdate();
  const [update, read] = await Promise.all([
    served('updateSession') ? api.updateSession(id, body, { ...options, deliberate: true }) : undefined,
    served('getResourceServer') ? api.getResourceServer(resourceServer(), { ...options, deliberate: true }) : undefined,
  ]);
  if (update) expectRefused(update, ids, what, examinedAs);
  if (read) expectRefused(read, ids, what, examinedAs);
}

/** The call options that send `header` (none at all when it has no value). */
const sending = ({ value }: MalformedAuthorization): CallOptions => (value === undefined ? { as: 'anonymous' } : { authorization: value });

// long: the attack catalogue's tests, one short `it` each, read as one list.
describe('token attacks', () => {
  for (const attack of ATTACKS) {
    const ids = REQUIREMENTS[attack.kind];
    concurrentIt(...covers(`delete refuses ${attack.what} (401), for an unknown profile and a disposable one`, ...ids.delete), async (context) => {
      needsServed(context, 'deleteTokenExchangeProfile');
      await attack.possible?.(context);
      await attack.before?.();
      await eachVariant(attack, (options) => attackDelete(options, ids.delete, attack.what));
    });

    if (ids.other.length > 0) {
      concurrentIt(...covers(`update session and get resource server do not carry out a request with ${attack.what}`, ...ids.other), async (context) => {
        needsServed(context, 'updateSession', 'getResourceServer');
        await attack.possible?.(context);
        await attack.before?.();
        await eachVariant(attack, (options) => attackOthers(options, ids.other, attack.what));
      });
    }

    concurrentIt(...covers(`update session and get resource server refuse ${attack.what} with 401`, ...ids.otherInferred), async (context) => {
      needsServed(context, 'updateSession', 'getResourceServer');
      await attack.possible?.(context);
      await attack.before?.();
      // Judged as an invalid credential by the stated rule, answered as the inferred one says.
      await eachVariant(attack, (options) => attackOthers(options, ids.otherInferred, attack.what, ids.other[0] ?? ids.otherInferred[0]));
    });
  }

  for (const attack of CLAIM_ATTACKS) {
    concurrentIt(
      ...covers(`every operation refuses ${attack.what} (401), the delete for an unknown profile and a disposable one`, attack.requirement),
      async (context) => {
        needsServed(context, 'deleteTokenExchangeProfile', 'updateSession', 'getResourceServer');
        await hasClaimToken(context, attack);
        const options: CallOptions = { as: attack.profile };
        if (served('deleteTokenExchangeProfile')) await attackDelete(options, [attack.requirement], attack.what);
        await attackOthers(options, [attack.requirement], attack.what);
      },
    );
  }

  // Its own key URLs, so that what other tests' tokens make the target fetch is not counted here.
  concurrentIt(...covers('no operation fetches the key URL a token names (jku, x5u)', 'AUTH-KEY-URL-NOT-FETCHED'), async (context) => {
    needsServed(context, 'deleteTokenExchangeProfile', 'getResourceServer');
    needs(context, keyUrls.server !== undefined, keyUrls.unseen);
    await canForge('jku', NOT_A_JWT, { keyUrl: keyUrl('jku', 'fetch') })(context);
    for (const kind of ['jku', 'x5u'] as const) {
      const name = `fetch-${kind}`;
      const options: CallOptions = {
        as: kind,
        attackWith: { keyUrl: keyUrl(kind, name) },
        keyUrlFetched: () => keyUrls.server!.fetched(name).length > 0,
        deliberate: true,
      };
      const answer = served('getResourceServer')
        ? await api.getResourceServer(resourceServer(), options)
        : await api.deleteTokenExchangeProfile(unknownId('profile'), options);
      expectRefused(answer, ['AUTH-KEY-URL-NOT-FETCHED'], `a token whose ${kind} header names a key URL`);
    }
  });

  concurrentIt(...covers('delete refuses any Authorization header that carries no bearer JWT (401)', ...REQUIREMENTS.missing.delete), async (context) => {
    needsServed(context, 'deleteTokenExchangeProfile');
    await checkIndependentCases(malformedAuthorizations(), malformedAuthorizationExamples(), async (header) => {
      await attackDelete(sending(header), REQUIREMENTS.missing.delete, `Authorization: ${header.name}`);
    });
  });

  concurrentIt(
    ...covers('update session and get resource server carry out no request whose Authorization header carries no bearer JWT', ...REQUIREMENTS.missing.other),
    async (context) => {
      needsServed(context, 'updateSession', 'getResourceServer');
      await checkIndependentCases(malformedAuthorizations(), malformedAuthorizationExamples(), async (header) => {
        await attackOthers(sending(header), REQUIREMENTS.missing.other, `Authorization: ${header.name}`);
      });
    },
  );
});
