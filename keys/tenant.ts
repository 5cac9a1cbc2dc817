// What the kit knows of the tenant's tokens, learned from what the tenant says rather than from
// the address the kit reaches it at (a gateway, a port-forward or a custom domain changes the
// address, not the issuer): the issuer its tokens carry and the keys they are signed with, each
// with where it came from. Every driver (run, proxy, validate) learns it here once and sets each
// exchange's token facts through TenantTokens.settle.
import { decodeJwt, type JSONWebKeySet } from 'jose';
import type { BearerToken } from '../rules/types.ts';
import { DEFAULT_JWKS_FETCH_TIMEOUT_MS } from './jwks.ts';
import { tenantKeys, type TenantKeys } from './tenant-keys.ts';
import { verifierForSource, type SignatureVerdict, type TokenVerifier } from './verifier.ts';

/** Where the issuer came from, in the order it is looked for. */
export type IssuerSource = 'config' | 'discovery' | 'tokens';
/** Where the keys came from, in the order they are looked for. */
export type KeysSource = 'given' | 'discovery' | 'default';

export interface KnownIssuer {
  issuer: string;
  from: IssuerSource;
}

export interface TenantKnowledge {
  /** Undefined: not known, and the issuer is not judged (never guessed from an address). */
  issuer?: KnownIssuer;
  /** Undefined: no source to read keys from (validate without --jwks). */
  keys?: TenantKeys;
  keysFrom?: KeysSource;
}

/** What a discovery document (OpenID Connect Discovery 1.0 §3) says that the kit uses. */
export interface Discovery {
  issuer?: string;
  jwksUri?: string;
}

export const DISCOVERY_PATH = '/.well-known/openid-configuration';
export const DEFAULT_JWKS_PATH = '/.well-known/jwks.json';

const nonEmptyString = (value: unknown): string | undefined => (typeof value === 'string' && value !== '' ? value : undefined);
const isHttpUrl = (value: string): boolean => /^https?:\/\//i.test(value);

/**
 * The discovery document at `{at}/.well-known/openid-configuration`, or undefined when the
 * tenant serves none (no answer, not 200, not a JSON object). Never throws.
 */
export async function readDiscovery(at: string, timeoutMs = DEFAULT_JWKS_FETCH_TIMEOUT_MS): Promise<Discovery | undefined> {
  let document: unknown;
  try {
    const response = await fetch(`${at.replace(/\/+$/, '')}${DISCOVERY_PATH}`, {
      headers: { accept: 'application/json' },
      signal: AbortSignal.timeout(timeoutMs),
    });
    if (!response.ok) {
      await response.body?.cancel().catch(() => undefined);
      return undefined;
    }
    document = JSON.parse(await response.text());
  } catch {
    return undefined;
  }
  if (typeof document !== 'object' || document === null || Array.isArray(document)) return undefined;
  const { issuer, jwks_uri: jwksUri } = document as Record<string, unknown>;
  const discovery: Discovery = {};
  if (nonEmptyString(issuer)) discovery.issuer = issuer as string;
  if (nonEmptyString(jwksUri) && isHttpUrl(jwksUri as string)) discovery.jwksUri = jwksUri as string;
  return discovery;
}

export interface LearnOptions {
  /** The issuer the user configured (issuer:, TMI_ISSUER, --issuer). */
  issuer?: string;
  /** The key set the user named (--jwks, jwks_url): one that cannot be read is the caller's usage error. */
  jwks?: string;
  /** Where the tenant serves its /.well-known/ documents (run: auth_url; proxy: the target's origin); undefined: nowhere to ask (validate). */
  wellKnownAt?: string;
}

/**
 * Learns the issuer (configured, else the discovery document's) and the keys (named, else the
 * discovery document's jwks_uri, else {wellKnownAt}/.well-known/jwks.json). A discovered
 * jwks_uri that cannot be read falls back to the default location: behind a gateway the
 * document names the tenant's public address, which the kit may not reach.
 */
export async function learnTenant(options: LearnOptions): Promise<TenantKnowledge> {
  const knowledge: TenantKnowledge = {};
  const base = options.wellKnownAt?.replace(/\/+$/, '');
  const discovery = base !== undefined && (options.issuer === undefined || options.jwks === undefined) ? await readDiscovery(base) : undefined;
  if (options.issuer !== undefined) knowledge.issuer = { issuer: options.issuer, from: 'config' };
  else if (discovery?.issuer !== undefined) knowledge.issuer = { issuer: discovery.issuer, from: 'discovery' };

  if (options.jwks !== undefined) {
    knowledge.keys = await tenantKeys(options.jwks, true);
    knowledge.keysFrom = 'given';
    return knowledge;
  }
  if (base === undefined) return knowledge;
  const defaultSource = `${base}${DEFAULT_JWKS_PATH}`;
  if (discovery?.jwksUri !== undefined) {
    const discovered = await tenantKeys(discovery.jwksUri, false);
    if ('verifier' in discovered || discovery.jwksUri === defaultSource) {
      knowledge.keys = discovered;
      knowledge.keysFrom = 'discovery';
      return knowledge;
    }
    const fallback = await tenantKeys(defaultSource, false);
    knowledge.keys = 'verifier' in fallback ? fallback : { source: defaultSource, problem: `${discovered.problem}; ${fallback.problem}` };
    knowledge.keysFrom = 'default';
    return knowledge;
  }
  knowledge.keys = await tenantKeys(defaultSource, false);
  knowledge.keysFrom = 'default';
  return knowledge;
}

/**
 * With no issuer known yet: the `iss` the given tokens carry (tokens the kit's own token
 * endpoint request got) when their signatures verify against the tenant's keys and they agree.
 * An unverified token's iss is never learned: anyone can write one.
 */
export async function withIssuerFromTokens(knowledge: TenantKnowledge, tokens: readonly string[]): Promise<TenantKnowledge> {
  if (knowledge.issuer !== undefined || !knowledge.keys || !('verifier' in knowledge.keys)) return knowledge;
  const issuers = new Set<string>();
  for (const token of tokens) {
    if ((await knowledge.keys.verifier.verify(token)) !== true) continue;
    const iss = issuerClaim(token);
    if (iss !== undefined) issuers.add(iss);
  }
  // Verified tokens naming different issuers: which one the tenant is cannot be told.
  if (issuers.size !== 1) return knowledge;
  return { ...knowledge, issuer: { issuer: [...issuers][0]!, from: 'tokens' } };
}

function issuerClaim(token: string): string | undefined {
  try {
    return nonEmptyString(decodeJwt(token).iss);
  } catch {
    return undefined;
  }
}

const ISSUER_FROM: Record<IssuerSource, string> = {
  config: 'from issuer in the config',
  discovery: 'from the discovery document',
  tokens: 'from the tokens the token endpoint issued',
};

/** The one line a driver prints about the issuer: "issuer X (from …)" or "issuer not known: not judged". */
export function issuerLine(knowledge: Pick<TenantKnowledge, 'issuer'>): string {
  return knowledge.issuer ? `issuer ${knowledge.issuer.issuer} (${ISSUER_FROM[knowledge.issuer.from]})` : 'issuer not known: not judged';
}

/** The knowledge as plain data, to hand to another thread or process (the suite worker, the proxy's recorder). */
export interface TenantTokensData {
  issuer?: string;
  jwks?: JSONWebKeySet;
  /** Where the keys came from (a URL is fetched again on an unknown key id). */
  jwksSource?: string;
}

export function tenantTokensData(knowledge: TenantKnowledge): TenantTokensData {
  const data: TenantTokensData = {};
  if (knowledge.issuer) data.issuer = knowledge.issuer.issuer;
  if (knowledge.keys && 'jwks' in knowledge.keys) {
    data.jwks = knowledge.keys.jwks;
    data.jwksSource = knowledge.keys.source;
  }
  return data;
}

/**
 * The one place a driver's exchange gets what the tenant says of its token: whether its
 * signature verifies against the tenant's keys (signatureValid) and which issuer it must name
 * (issuerExpected). Verifying is asynchronous and judging is not, so a driver may verify a batch
 * first (prepare) and then settle each token; `check` does both for one.
 */
export class TenantTokens {
  /** The issuer tokens must name; undefined: not judged. */
  readonly issuer: string | undefined;
  /** The tenant's key set; undefined: signatures are not checked. */
  readonly jwks: JSONWebKeySet | undefined;
  private readonly verifier: TokenVerifier | undefined;

  constructor(knowledge: { issuer?: string; jwks?: JSONWebKeySet; verifier?: TokenVerifier }) {
    this.issuer = knowledge.issuer;
    this.jwks = knowledge.jwks;
    this.verifier = knowledge.verifier;
  }

  static of(knowledge: TenantKnowledge): TenantTokens {
    const keys = knowledge.keys && 'verifier' in knowledge.keys ? knowledge.keys : undefined;
    return new TenantTokens({
      ...(knowledge.issuer ? { issuer: knowledge.issuer.issuer } : {}),
      ...(keys ? { jwks: keys.jwks, verifier: keys.verifier } : {}),
    });
  }

  /** From data handed over by another thread or process; a key set that cannot be used leaves signatures unchecked. */
  static fromData(data: TenantTokensData | null | undefined): TenantTokens {
    if (!data) return new TenantTokens({});
    const made = data.jwks ? verifierForSource(data.jwks, data.jwksSource) : undefined;
    const verifier = made && 'verifier' in made ? made.verifier : undefined;
    return new TenantTokens({ ...(data.issuer !== undefined ? { issuer: data.issuer } : {}), ...(verifier && data.jwks ? { jwks: data.jwks, verifier } : {}) });
  }

  /** Verifies the tokens not verified yet; undefined when there is nothing to wait for. */
  prepare(credentials: Iterable<string | undefined>): Promise<unknown> | undefined {
    if (!this.verifier) return undefined;
    let work: Array<Promise<SignatureVerdict>> | undefined;
    for (const credential of credentials) {
      if (credential === undefined || this.verifier.cached(credential) !== 'unknown') continue;
      (work ??= []).push(this.verifier.verify(credential));
    }
    return work && Promise.all(work);
  }

  /**
   * Sets the token's facts: issuerExpected when the issuer is known; signatureValid from the
   * verdict prepared for `credential`, unless the driver already knows it (a token the suite
   * forged stays forged; a verdict a recording kept stays). `credential`: the token sent, or
   * undefined when there is none to check.
   */
  settle(token: BearerToken, credential: string | undefined): void {
    if (this.issuer !== undefined) token.issuerExpected = this.issuer;
    if (!this.verifier || credential === undefined || token.signatureValid !== undefined || !token.claims) return;
    const verdict = this.verifier.cached(credential);
    if (verdict !== 'unknown' && verdict !== undefined) token.signatureValid = verdict;
  }

  /** prepare and settle for one token. */
  async check(token: BearerToken, credential: string | undefined): Promise<void> {
    await this.prepare([credential]);
    this.settle(token, credential);
  }
}
