// `tmi-conform token --attack NAME`: the token of a failed attack case made again, the way the
// suites made it (suites/tokens.ts), from a valid token of the same client read from TOKEN. The
// reports hold no credential: their curl command of an attack case calls this command instead.
import { decodeJwt, type JSONWebKeySet } from 'jose';
import { readJwks } from '../keys/jwks.ts';
import type { TokenAttack } from '../rules/types.ts';
import { makeAttackToken, type AttackInputs } from '../suites/tokens.ts';
import { EXIT_OK, UsageError } from '../core/errors.ts';
import { parseArgs, stringFlag } from './args.ts';

export const help = `Usage: TOKEN=… tmi-conform token --attack NAME [--scope S] [--jwks URL|FILE]

Prints a token made to be refused, the way "tmi-conform run" makes it for its token attacks,
from a valid bearer token of the client in the environment variable TOKEN (never given on the
command line, where other users and shell history could see it). The curl command a report
gives for a failed attack case calls it:

  curl -i … -H "authorization: Bearer $(npx tmi-conform token --attack unsigned)"

Attacks:
  unsigned             the same claims, header {"alg":"none"} and an empty signature
  corrupted-signature  the same token with its signature bytes altered
  tampered-scope       the scope S added to the token's scope claim, its signature kept (--scope S)
  key-confusion        the same claims signed HS256 with the tenant's public key (PEM) as the
                       secret; the first RSA or EC signing key of the JWKS (--jwks URL|FILE)
  foreign-key          the same header and claims signed RS256 with a new key that is not the
                       tenant's
  other-issuer         the same claims naming an issuer other than the token's own, signed RS256
                       with a new key that is not the tenant's
  expired              cannot be made: an expired token is one the tenant issued; keep a token
                       of the tenant until it has expired

Options:
  --attack NAME     which token to make (above)
  --scope S         tampered-scope: the scope to add (e.g. delete:token_exchange_profiles)
  --jwks URL|FILE   key-confusion: the tenant's JSON Web Key Set

Exit codes: 0 the token is printed on stdout, 2 usage (no TOKEN, TOKEN not a JWT, unknown
attack, a missing or unreadable --scope or --jwks).`;

const MADE: ReadonlySet<string> = new Set<Exclude<TokenAttack, 'expired'>>(['unsigned', 'corrupted-signature', 'tampered-scope', 'key-confusion', 'foreign-key', 'other-issuer']);

export interface TokenIo {
  env?: NodeJS.ProcessEnv;
  out?: (text: string) => void;
}

export async function run(argv: string[], io: TokenIo = {}): Promise<number> {
  const env = io.env ?? process.env;
  const out = io.out ?? ((text: string) => void process.stdout.write(text));
  const args = parseArgs('token', argv, { attack: { value: true }, scope: { value: true }, jwks: { value: true } });
  // Not echoed: the argument may well be the token itself.
  if (args.positionals.length > 0) throw new UsageError('token: unexpected argument (the valid token is read from TOKEN, never from the command line)');
  const attack = stringFlag(args, 'attack');
  if (attack === undefined) throw new UsageError('token: --attack NAME is required (see tmi-conform token --help)');
  if (attack === 'expired') throw new UsageError('token: an expired token cannot be made: it is one the tenant issued (keep a token of the tenant until it has expired)');
  if (!MADE.has(attack)) throw new UsageError(`token: unknown attack "${attack}" (attacks: ${[...MADE].join(', ')})`);
  const scope = stringFlag(args, 'scope');
  const jwksSource = stringFlag(args, 'jwks');
  if (scope !== undefined && attack !== 'tampered-scope') throw new UsageError('token: --scope goes with --attack tampered-scope only');
  if (jwksSource !== undefined && attack !== 'key-confusion') throw new UsageError('token: --jwks goes with --attack key-confusion only');

  const token = validToken(env['TOKEN']);
  out(`${await make(attack as Exclude<TokenAttack, 'expired'>, token, scope, jwksSource)}\n`);
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

async function make(attack: Exclude<TokenAttack, 'expired'>, token: string, scope: string | undefined, jwksSource: string | undefined): Promise<string> {
  if (attack === 'tampered-scope' && (scope === undefined || scope.trim() === '')) throw new UsageError('token: --attack tampered-scope needs --scope S (the scope to add, e.g. delete:token_exchange_profiles)');
  if (attack === 'key-confusion' && jwksSource === undefined) throw new UsageError("token: --attack key-confusion needs --jwks URL|FILE (the tenant's JSON Web Key Set)");
  // TOKEN is the tenant's own: its iss is the issuer another-issuer differs from.
  const iss = decodeJwt(token).iss;
  const inputs: AttackInputs = {};
  if (scope !== undefined) inputs.scope = scope.trim();
  if (jwksSource !== undefined) inputs.jwks = await jwks(jwksSource);
  if (typeof iss === 'string') inputs.issuer = iss;
  const made = await makeAttackToken(attack, token, inputs);
  if (typeof made === 'string') return made;
  if (made.missing === 'signing key') throw new UsageError('token: --jwks holds no RSA or EC signing key to confuse with');
  throw new UsageError('token: --attack other-issuer needs a TOKEN that names its issuer (iss)');
}

async function jwks(source: string): Promise<{ keys: JSONWebKeySet['keys'] }> {
  const reading = await readJwks(source);
  if ('problem' in reading) throw new UsageError(`token: --jwks: ${reading.problem}`);
  return reading.jwks;
}
