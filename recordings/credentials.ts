// What a recording proves about the credential a request carried. The kit's own recordings
// (proxy journal, its HAR, the suite's evidence) keep the facts in `_conformance.token`: whether
// the Authorization header was there, its shape, the JOSE header's alg and the non-secret
// claims. A foreign recorder keeps whatever it kept: VCR-style cassettes and many HAR exporters
// drop the header or replace the token with a placeholder, so there a missing or masked
// credential is not evidence of what was sent, and authentication is not judged.
import { type ForgeryShape, SHAPE_SEEN } from '../rules/forgery.ts';
import { bearerCredential } from '../rules/token.ts';
import type { BearerToken, Exchange } from '../rules/types.ts';

/** Placeholders recorders put in place of a secret: "[REDACTED]", "<TOKEN>", "{{token}}", "***", "xxxx", "FILTERED", … */
const PLACEHOLDER = /redact|filter|mask|hidden|omit|scrub|secret|remov|dummy|fake|placeholder|\*{2,}|x{4,}|^<.*>$|\{\{.*\}\}|\.\.\.|…|^(access_?)?token$/i;

/** A value made of one character repeated ("********", "0000"): a mask, not a credential. */
const oneCharacter = (value: string): boolean => value.length > 0 && [...value].every((c) => c === value[0]);

const looksMasked = (value: string): boolean => PLACEHOLDER.test(value) || oneCharacter(value);

/**
 * Whether a foreign recording shows the credential that was sent: false when the Authorization
 * header is missing, masked, or its bearer token is not a JWT (the document's tokens are JWTs;
 * in a recording, anything else is far more often a recorder's placeholder than what was sent).
 */
export function foreignRecordingShowsCredential(exchange: Exchange): boolean {
  const header = exchange.request.headers['authorization'];
  if (header === undefined) return false;
  const credential = bearerCredential(header);
  if (credential === undefined) return !looksMasked(header.replace(/^\S+\s+/, ''));
  // A token that decodes as a JWT carries its real header and claims (a recorder that masked
  // only the signature leaves claims to judge; validate does not check such a signature).
  return exchange.token.claims !== undefined;
}

/** A foreign recording's exchange: its token marked not recorded when the recording does not show it. */
export function judgeForeignCredential(exchange: Exchange): void {
  if (!foreignRecordingShowsCredential(exchange)) exchange.token.recorded = false;
}

/** The facts the kit's own recordings keep beyond presence and claims (see core/redact.ts tokenFacts), restored. */
export function restoreCredentialFacts(recorded: Record<string, unknown>, facts: BearerToken): void {
  if (typeof recorded['alg'] === 'string') facts.alg = recorded['alg'];
  if (recorded['signatureEmpty'] === true) facts.signatureEmpty = true;
  // The forgery's shape was read from the whole token, which the recording no longer holds.
  if (typeof recorded['shape'] === 'string' && recorded['shape'] in SHAPE_SEEN) facts.shape = recorded['shape'] as ForgeryShape;
  if (typeof recorded['issuerExpected'] === 'string') facts.issuerExpected = recorded['issuerExpected'];
  if (recorded['recorded'] === false) facts.recorded = false;
}
