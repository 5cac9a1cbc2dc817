// Free text that reaches a report (test failure messages, fast-check counterexamples, target
// URLs) may quote a credential. Exchanges are redacted field by field (core/redact.ts);
// text gets the same masks by pattern: secret members and parameters, tokens, key material,
// and what follows "Bearer" or a secret's name.
import { mask, REDACTED, scrubSecrets, SECRET_KEYS } from '../core/redact.ts';

// A credential has a digit or punctuation in it: "Bearer credentials" in prose stays readable.
const BEARER = /\b(bearer|basic)(\s+)(?=[A-Za-z0-9._~+/=-]*[0-9._~+/=-])([A-Za-z0-9._~+/=-]{8,})/gi;
const KEYED_SECRET = new RegExp(`\\b(${[...SECRET_KEYS].join('|')})(["']?\\s*[:=]\\s*)("[^"]*"|'[^']*'|[^\\s,;&}\\]]+)`, 'g');

export function redactText(text: string): string {
  return scrubSecrets(text, new Set())
    .replace(BEARER, (match, scheme: string, space: string, credential: string) => (credential.startsWith(REDACTED) ? match : `${scheme}${space}${REDACTED}`))
    .replace(KEYED_SECRET, (match, key: string, separator: string, value: string) => {
      if (value.includes(REDACTED) || /^\*+$/.test(value.replace(/^["']|["']$/g, ''))) return match;
      const quote = value.startsWith('"') || value.startsWith("'") ? value[0]! : '';
      return `${key}${separator}${quote}${mask(quote ? value.slice(1, -1) : value)}${quote}`;
    });
}

/** A target URL without user:password@ and without secrets in its query. */
export function redactTarget(target: string): string {
  return redactText(target.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/@?#]*@/i, `$1${REDACTED}@`));
}
