// `tmi-conform token --attack NAME`: the token of a failed attack case made again, the way the
// suites made it (suites/tokens.ts), from a valid token of the same client read from TOKEN. The
// reports hold no credential: their curl command of an attack case calls this command instead.
import { decodeJwt, type JSONWebKeySet } from 'jose';
import { readJwks } from '../keys/jwks.ts';
import { WEAK_SECRETS } from '../rules/forgery.ts';
import { attackerCertificatePem, attackerKeySet, makeAttackToken, type AttackInputs, type MadeAttack } from '../suites/tokens.ts';
import { EXIT_OK, UsageError } from '../core/errors.ts';
import { parseArgs, stringFlag } from './args.ts';

export const help = `Usage: TOKEN=… tmi-conform token --attack NAME [--scope S] [--jwks URL|FILE] [--key-url URL] [--secret WORD]
       tmi-conform token --key-set jku|x5u

Prints a token made to be refused, the way "tmi-conform run" makes it for its token attacks,
from a valid bearer token of the client in the environment variable TOKEN (never given on the
command line, where other users and shell history could see it). The curl command a report
gives for a failed attack case calls it:

  curl -i … -H "authorization: Bearer $(npx tmi-conform token --attack unsigned)"

Attacks:
  unsigned             the same claims, header {"alg":"none"} and an empty signature
  alg-none-capitalized, alg-none-uppercase, alg-none-mixed-case
                       the same, with alg "None", "NONE", "nOnE"
  signature-stripped   the same token without its signature part (header.payload)
  signature-empty      the same token with nothing after its last dot (header.payload.)
  zero-signature       the same token, its signature replaced by as many zero bytes
  psychic-es256, psychic-es384
                       the same claims under an ES256 (ES384) header, signature r = s = 0
                       (CVE-2022-21449)
  corrupted-signature  the same token with its signature bytes altered
  tampered-scope       the scope S added to the token's scope claim, its signature kept (--scope S)
  key-confusion        the same claims signed HS256 with the tenant's public key (PEM) as the
                       secret; the first RSA or EC signing key of the JWKS (--jwks URL|FILE)
  foreign-key          the same header and claims signed RS256 with a new key that is not the
                       tenant's
  other-issuer         the same claims naming an issuer other than the token's own, signed RS256
                       with a new key that is not the tenant's
  embedded-jwk         the same claims signed RS256 by the kit's attacker key, carried in the
                       header's jwk (CVE-2018-0114)
  embedded-x5c         the same, the key in a self-signed certificate in the header's x5c
  jku, x5u             the same, the header naming URL (--key-url URL), where the attacker's key
                       set (jku) or certificate (x5u) is served: --key-set prints it
  kid-path-traversal   the same claims, kid ../../../../../../dev/null, signed HS256 with an empty key
  kid-sql-injection    the same claims, a kid injecting an SQL UNION SELECT of a value, signed
                       HS256 with that value
  hs256-empty-secret   the same claims signed HS256 with an empty secret
  hs256-weak-secret    the same claims signed HS256 with the weak secret WORD (--secret WORD; the
                       run tries ${WEAK_SECRETS.join(', ')})
  hs256-client-secret  the scope S added (--scope S), signed HS256 with the client's own
                       client_secret, read from the environment variable CLIENT_SECRET
  expired              cannot be made: an expired token is one the tenant issued; keep a token
                       of the tenant until it has expired

Options:
  --attack NAME     which token to make (above)
  --scope S         tampered-scope, hs256-client-secret: the scope to add (e.g. delete:token_exchange_profiles)
  --jwks URL|FILE   key-confusion: the tenant's JSON Web Key Set
  --key-url URL     jku, x5u: where the attacker's key set or certificate is served
  --secret WORD     hs256-weak-secret: the weak secret to sign with
  --key-set KIND    prints what a jku URL serves (the attacker's JSON Web Key Set) or an x5u
                    URL serves (the attacker's certificate, PEM), instead of a token

Exit codes: 0 the token is printed on stdout, 2 usage (no TOKEN, TOKEN not a JWT, unknown
attack, a missing or unreadable option the attack needs, or one it does not take).`;

const MADE_ATTACKS: readonly MadeAttack[] = [
  'unsigned',
  'alg-none-capitalized',
  'alg-none-uppercase',
  'alg-none-mixed-case',
  'signature-stripped',
  'signature-empty',
  'zero-signature',
  'psychic-es256',
  'psychic-es384',
  'corrupted-signature',
  'tampered-scope',
  'key-confusion',
  'foreign-key',
  'other-issuer',
  'embedded-jwk',
  'embedded-x5c',
  'jku',
  'x5u',
  'kid-path-traversal',
  'kid-sql-injection',
  'hs256-empty-secret',
  'hs256-weak-secret',
  'hs256-client-secret',
];
const MADE: ReadonlySet<string> = new Set(MADE_ATTACKS);

/** The option each attack needs beside TOKEN, and so the only attacks that take it. */
const TAKEN_BY: Record<'scope' | 'jwks' | 'key-url' | 'secret', readonly string[]> = {
  scope: ['tampered-scope', 'hs256-client-secret'],
  jwks: ['key-confusion'],
  'key-url': ['jku', 'x5u'],
  secret: ['hs256-weak-secret'],
};

export interface TokenIo {
  env?: NodeJS.ProcessEnv;
  out?: (text: string) => void;
}

export async function run(argv: string[], io: TokenIo = {}): Promise<number> {
  const env = io.env ?? process.env;
  const out = io.out ?? ((text: string) => void process.stdout.write(text));
  const args = parseArgs('token', argv, {
    attack: { value: true },
    scope: { value: true },
    jwks: { value: true },
    'key-url': { value: true },
    secret: { value: true },
    'key-set': { value: true },
  });
  // Not echoed: the argument may well be the token itself.
  if (args.positionals.length > 0) throw new UsageError('token: unexpected argument (the valid token is read from TOKEN, never from the command line)');
  const keySet = stringFlag(args, 'key-set');
  const attack = stringFlag(args, 'attack');
  if (keySet !== undefined) {
    if (attack !== undefined) throw new UsageError('token: --key-set prints a key set or certificate, not a token: give it without --attack');
    if (keySet !== 'jku' && keySet !== 'x5u') throw new UsageError(`token: --key-set takes jku or x5u, not "${keySet}"`);
    out(keySet === 'jku' ? `${JSON.stringify(attackerKeySet())}\n` : await attackerCertificatePem());
    return EXIT_OK;
  }
  if (attack === undefined) throw new UsageError('token: --attack NAME is required (see tmi-conform token --help)');
  if (attack === 'expired')
    throw new UsageError('token: an expired token cannot be made: it is one the tenant issued (keep a token of the tenant until it has expired)');
  if (!MADE.has(attack)) throw new UsageError(`token: unknown attack "${attack}" (attacks: ${MADE_ATTACKS.join(', ')})`);
  const given: Partial<Record<keyof typeof TAKEN_BY, string>> = {};
  for (const option of Object.keys(TAKEN_BY) as Array<keyof typeof TAKEN_BY>) {
    const value = stringFlag(args, option);
    if (value === undefined) continue;
    if (!TAKEN_BY[option].includes(attack)) throw new UsageError(`token: --${option} goes with --attack ${TAKEN_BY[option].join(' or ')} only`);
    given[option] = value;
  }

  const token = validToken(env['TOKEN']);
  out(`${await make(attack as MadeAttack, token, given, env)}\n`);
  return EXIT_OK;
}

/** TOKEN as given (a leading "Bearer " is dropped: people copy the header), checked to be a JWT. */
function validToken(value: string | undefined): string {
  const token = value?.trim().replace(/^bearer\s+/i, '');
  if (!token) throw new UsageError('token: set TOKEN to a valid bearer token of the client (it is read from the environment, never from the command line)');
  try {
    decodeJwt(token);
  } catch {
    throw new UsageError('token: TOKEN is not a JWT: the attack tokens are made from its header and claims');
  }
  return token;
}

/** What each missing input means, as the usage error says it. */
const NEEDS: Record<string, string> = {
  scope: 'needs --scope S (the scope to add, e.g. delete:token_exchange_profiles)',
  jwks: "needs --jwks URL|FILE (the tenant's JSON Web Key Set)",
  'signing key': 'needs a --jwks that holds an RSA or EC signing key to confuse with',
  issuer: 'needs a TOKEN that names its issuer (iss)',
  'key URL': "needs --key-url URL (where the attacker's key set or certificate is served: tmi-conform token --key-set jku|x5u prints it)",
  secret: 'needs its secret: --secret WORD (hs256-weak-secret), or CLIENT_SECRET in the environment (hs256-client-secret)',
};

async function make(attack: MadeAttack, token: string, given: Partial<Record<keyof typeof TAKEN_BY, string>>, env: NodeJS.ProcessEnv): Promise<string> {
  // TOKEN is the tenant's own: its iss is the issuer another-issuer differs from.
  const iss = decodeJwt(token).iss;
  const inputs: AttackInputs = {};
  if (given.scope !== undefined && given.scope.trim() !== '') inputs.scope = given.scope.trim();
  if (given.jwks !== undefined) inputs.jwks = await jwks(given.jwks);
  if (given['key-url'] !== undefined) inputs.keyUrl = given['key-url'];
  // The client's own secret is read from the environment, as TOKEN is: never from the command line.
  const secret = attack === 'hs256-client-secret' ? env['CLIENT_SECRET'] : given.secret;
  if (secret !== undefined) inputs.secret = secret;
  if (typeof iss === 'string') inputs.issuer = iss;
  const made = await makeAttackToken(attack, token, inputs);
  if (typeof made === 'string') return made;
  throw new UsageError(`token: --attack ${attack} ${NEEDS[made.missing]}`);
}

async function jwks(source: string): Promise<{ keys: JSONWebKeySet['keys'] }> {
  const reading = await readJwks(source);
  if ('problem' in reading) throw new UsageError(`token: --jwks: ${reading.problem}`);
  return reading.jwks;
}
