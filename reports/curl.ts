// A ready curl command that sends a failing exchange again: its method, URL, headers and body,
// from the redacted evidence. A credential the report masked becomes a shell variable the user
// sets (the bearer token: $TOKEN), so no secret is in the command and the command still works.
import type { Evidence, ExchangeEvidence, RequirementResult } from './model.ts';
import { REDACTED } from '../core/redact.ts';

/** Headers curl sets itself, or that concern the connection rather than the request. */
const LEFT_OUT = new Set(['host', 'content-length', 'connection', 'keep-alive', 'transfer-encoding', 'accept-encoding', 'user-agent', 'te', 'upgrade', 'expect']);

/** The evidence bodies are cut at this mark (reports/exchange-evidence.ts): such a body cannot be sent again as it was. */
const CUT_BODY = /… \(\d+ characters\)$/;

/** Text in single quotes, as a POSIX shell reads it. */
const quoted = (text: string): string => `'${text.replace(/'/g, `'\\''`)}'`;

/** "$TOKEN" for the bearer credential; "$X_API_KEY", "$COOKIE", … for other masked headers. */
function maskedHeader(name: string, value: string): string {
  const scheme = /^(Bearer|Basic)\s/i.exec(value)?.[1];
  if (name === 'authorization' && scheme) return `"${name}: ${scheme} ${scheme.toLowerCase() === 'bearer' ? '$TOKEN' : '$BASIC_CREDENTIALS'}"`;
  return `"${name}: $${name.toUpperCase().replace(/[^A-Z0-9]/g, '_')}"`;
}

/** The shell variables a command made by curlCommand expects the user to set. */
export function curlVariables(command: string): string[] {
  return [...new Set([...command.matchAll(/\$([A-Z][A-Z0-9_]*)/g)].map((m) => m[1]!))];
}

/**
 * `curl -i …` sending `exchange` again. `target` (the report's base URL) completes a URL
 * recorded without its origin.
 */
export function curlCommand(exchange: ExchangeEvidence, target?: string): string {
  const { method, url, headers = {}, body } = exchange.request;
  const parts = ['curl', '-i'];
  if (method !== 'GET' || body !== undefined) parts.push('-X', quoted(method));
  if (/[[\]{}]/.test(url)) parts.push('--globoff');
  parts.push(url.startsWith('/') ? (target ? quoted(new URL(target).origin + url) : `"$TARGET_ORIGIN"${quoted(url)}`) : quoted(url));
  for (const [name, value] of Object.entries(headers)) {
    if (LEFT_OUT.has(name)) continue;
    parts.push('-H', value.includes(REDACTED) ? maskedHeader(name, value) : quoted(`${name}: ${value}`));
  }
  if (body !== undefined) parts.push('--data-raw', quoted(body));
  const command = parts.join(' ');
  return body !== undefined && CUT_BODY.test(body) ? `${command}  # the body was cut in the report: send the full body from the recording` : command;
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
