// A ready curl command that sends a failing exchange again: its method, URL, headers and body,
// from the redacted evidence. A credential the report masked becomes a shell variable the user
// sets (the bearer token: $TOKEN), so no secret is in the command and the command still works.
// The token of an attack case (unsigned, tampered, …) is made again from $TOKEN by
// `tmi-conform token --attack NAME` in the command itself: sending $TOKEN as it is would send a
// valid token, and reproduce nothing.
import { REQUIRED_SCOPES } from '../rules/checks/scopes.ts';
import { matchOperation } from '../rules/operations.ts';
import type { Evidence, ExchangeEvidence, RequirementResult } from './model.ts';
import { REDACTED } from '../core/redact.ts';

/** The command (cli/token.ts) that makes an attack token from a valid one in TOKEN. */
export const ATTACK_TOKEN_COMMAND = 'npx tmi-conform token --attack';

/** Headers curl sets itself, or that concern the connection rather than the request. */
const LEFT_OUT: ReadonlySet<string> = new Set([
  'host',
  'content-length',
  'connection',
  'keep-alive',
  'transfer-encoding',
  'accept-encoding',
  'user-agent',
  'te',
  'upgrade',
  'expect',
]);

/** The evidence bodies are cut at this mark (reports/exchange-evidence.ts): such a body cannot be sent again as it was. */
const CUT_BODY = /… \(\d+ characters\)$/;

/** Text in single quotes, as a POSIX shell reads it. */
const quoted = (text: string): string => `'${text.replace(/'/g, `'\\''`)}'`;

/** `bearer` ("$TOKEN", or the command making an attack token) for the bearer credential; "$X_API_KEY", "$COOKIE", … for other masked headers. */
function maskedHeader(name: string, value: string, bearer: string): string {
  const scheme = /^(Bearer|Basic)\s/i.exec(value)?.[1];
  if (name === 'authorization' && scheme) return `"${name}: ${scheme} ${scheme.toLowerCase() === 'bearer' ? bearer : '$BASIC_CREDENTIALS'}"`;
  return `"${name}: $${name.toUpperCase().replace(/[^A-Z0-9]/g, '_')}"`;
}

/**
 * Tokens the tenant signed that no command can make from another: one that has expired, one for
 * another of its APIs, one not valid yet. The reader sets them as the configuration gives them.
 */
const GIVEN_TOKENS: Readonly<Record<string, string>> = {
  expired: '$EXPIRED_TOKEN',
  'wrong-audience': '$OTHER_AUDIENCE_TOKEN',
  'not-yet-valid': '$NOT_YET_VALID_TOKEN',
};

/**
 * The token an attack case sent, as the shell makes it again: `$(npx tmi-conform token --attack
 * NAME …)` reading a valid token from TOKEN. A token that cannot be made (expired, for another
 * audience, not valid yet) is a variable of its own: $EXPIRED_TOKEN, ….
 */
function attackToken(exchange: ExchangeEvidence): string | undefined {
  const attack = exchange.credential?.attack;
  const state = exchange.credential?.state;
  if (attack === undefined) return state !== undefined ? GIVEN_TOKENS[state] : undefined;
  if (attack === 'expired') return '$EXPIRED_TOKEN';
  const flags: string[] = [attack];
  // The suite adds the operation's own scope (suites/api.ts), and confuses the JWKS's first key.
  const operation = exchange.operation ?? matchOperation(exchange.request.method, exchange.request.url)?.operation;
  if (
    (attack === 'tampered-scope' || attack === 'hs256-client-secret') &&
    operation !== undefined &&
    operation !== 'getToken' &&
    operation !== 'otherOperation'
  )
    flags.push('--scope', REQUIRED_SCOPES[operation].scope);
  if (attack === 'key-confusion') flags.push('--jwks', '"$JWKS"');
  if (attack === 'jku' || attack === 'x5u') flags.push('--key-url', '"$KEY_URL"');
  // A word of the kit's public list of weak secrets, never a configured secret.
  if (attack === 'hs256-weak-secret' && exchange.credential?.attackSecret !== undefined) flags.push('--secret', quoted(exchange.credential.attackSecret));
  return `$(${ATTACK_TOKEN_COMMAND} ${flags.join(' ')})`;
}

/** The shell variables a command made by curlCommand expects the user to set (TOKEN first). */
export function curlVariables(command: string): string[] {
  const named = [...command.matchAll(/\$([A-Z][A-Z0-9_]*)/g)].map((m) => m[1]!);
  // `tmi-conform token` reads TOKEN (and, for hs256-client-secret, CLIENT_SECRET) from the environment: the command does not spell them.
  const read = command.includes(ATTACK_TOKEN_COMMAND) ? ['TOKEN', ...(command.includes('--attack hs256-client-secret') ? ['CLIENT_SECRET'] : [])] : [];
  return [...new Set([...read, ...named])];
}

/** What the variables a reader sets hold, in words, for the line above a command. */
export function curlVariableMeanings(command: string): string | undefined {
  const attack = command.includes(ATTACK_TOKEN_COMMAND);
  const meanings: Record<string, string> = {
    TOKEN: attack ? 'a valid bearer token of the same client, which tmi-conform token turns into the attack token' : 'a bearer token of the same client',
    JWKS: "the tenant's JSON Web Key Set (URL or file)",
    EXPIRED_TOKEN: 'an expired token of the tenant (it cannot be made again)',
    OTHER_AUDIENCE_TOKEN: 'a token the tenant signed for another of its APIs (credentials.other_audience)',
    NOT_YET_VALID_TOKEN: 'a token the tenant signed whose nbf lies ahead (credentials.not_yet_valid)',
    KEY_URL: "a URL serving the kit's attacker key set (jku) or certificate (x5u), as tmi-conform token --key-set jku|x5u prints it",
    CLIENT_SECRET: "the client_secret of the token's client",
  };
  const described = curlVariables(command).filter((v) => meanings[v] !== undefined);
  if (described.length === 0) return undefined;
  return described.length === 1 ? meanings[described[0]!] : described.map((v) => `${v} ${meanings[v]}`).join(', ');
}

/**
 * `curl -i …` sending `exchange` again. `target` (the report's base URL) completes a URL
 * recorded without its origin. An attack case's token is made again from $TOKEN in the command.
 */
export function curlCommand(exchange: ExchangeEvidence, target?: string): string {
  const body = exchange.request.body;
  let command = curlOf(exchange, target, attackToken(exchange) ?? '$TOKEN', ['-i']);
  // A tampered token replays a genuine one, as the suite does: a server that remembers tokens it
  // verified by their signature alone is fooled once it has seen the genuine token. Sent first,
  // silently; without the scope it was tampered with, it is refused.
  if (exchange.credential?.attack === 'tampered-scope') command = `${curlOf(exchange, target, '$TOKEN', ['-s', '-o', '/dev/null'])}; ${command}`;
  return body !== undefined && CUT_BODY.test(body) ? `${command}  # the body was cut in the report: send the full body from the recording` : command;
}

function curlOf(exchange: ExchangeEvidence, target: string | undefined, bearer: string, options: string[]): string {
  const { method, url, headers = {}, body } = exchange.request;
  const parts = ['curl', ...options];
  if (method !== 'GET' || body !== undefined) parts.push('-X', quoted(method));
  if (/[[\]{}]/.test(url)) parts.push('--globoff');
  parts.push(url.startsWith('/') ? (target ? quoted(new URL(target).origin + url) : `"$TARGET_ORIGIN"${quoted(url)}`) : quoted(url));
  for (const [name, value] of Object.entries(headers)) {
    if (LEFT_OUT.has(name)) continue;
    parts.push('-H', value.includes(REDACTED) ? maskedHeader(name, value, bearer) : quoted(`${name}: ${value}`));
  }
  if (body !== undefined) parts.push('--data-raw', quoted(body));
  return parts.join(' ');
}

/**
 * The failing evidence whose exchange a requirement's curl command sends: a failed test's own
 * (for a property, its shrunk counterexample's exchange), else the first failing exchange.
 */
export function reproducible(r: RequirementResult): (Evidence & { exchange: ExchangeEvidence }) | undefined {
  if (r.status !== 'fail' && r.status !== 'warn') return undefined;
  const failing = r.evidence.filter((e): e is Evidence & { exchange: ExchangeEvidence } => e.status === r.status && e.exchange !== undefined);
  return failing.find((e) => e.kind === 'test') ?? failing[0];
}
