// One exchange as a report keeps it: redacted, bodies cut, and the request's credential
// described by its state and non-secret claims (the token itself never).
import { credentialState } from '../rules/credential.ts';
import type { Exchange } from '../rules/types.ts';
import { redactExchange, type SecretSink, type KnownSecrets } from '../core/redact.ts';
import type { CredentialEvidence, ExchangeEvidence } from './model.ts';

/** Bodies kept in evidence are cut to this many characters: enough to read a JSON error, not a whole listing. */
const EVIDENCE_BODY_CHARS = 2000;

/** A body cut to EVIDENCE_BODY_CHARS, saying how long it was (reports/curl.ts recognises the mark). */
const cut = (text: string | undefined) =>
  text === undefined ? undefined : text.length > EVIDENCE_BODY_CHARS ? `${text.slice(0, EVIDENCE_BODY_CHARS)}… (${text.length} characters)` : text;

/** Compact, redacted evidence of one exchange; `sink` collects the secret values it masked. */
export function exchangeEvidence(exchange: Exchange, operation?: string, sink?: SecretSink, known?: KnownSecrets): ExchangeEvidence {
  const safe = redactExchange(exchange, sink, known);
  const evidence: ExchangeEvidence = {
    startedAt: safe.startedAt,
    request: { method: safe.request.method, url: safe.request.url, headers: safe.request.headers },
  };
  if (safe.id !== undefined) evidence.id = safe.id;
  if (operation) evidence.operation = operation as ExchangeEvidence['operation'];
  const requestBody = cut(safe.request.body?.text);
  if (requestBody !== undefined) evidence.request.body = requestBody;
  if (safe.response) {
    evidence.response = { status: safe.response.status, headers: safe.response.headers };
    const responseBody = cut(safe.response.body?.text);
    if (responseBody !== undefined) evidence.response.body = responseBody;
  }
  if (safe.error !== undefined) evidence.error = safe.error;
  // A test's exchange comes without its operation; an attack token is described all the same,
  // so that its curl command makes the token again (reports/curl.ts).
  if ((operation && operation !== 'getToken') || safe.token.attack !== undefined) evidence.credential = credentialEvidence(safe);
  return evidence;
}

/** The credential of a redacted exchange: its state and what the recording may keep of the token. */
function credentialEvidence(safe: Exchange): CredentialEvidence {
  const credential: CredentialEvidence = { state: credentialState(safe) };
  if (safe.token.alg !== undefined) credential.alg = safe.token.alg;
  if (safe.token.claims) credential.claims = safe.token.claims;
  if (safe.token.signatureValid !== undefined) credential.signatureValid = safe.token.signatureValid;
  if (safe.token.attack !== undefined) credential.attack = safe.token.attack;
  if (safe.token.attackSecret !== undefined) credential.attackSecret = safe.token.attackSecret;
  return credential;
}
