// Every check of the rule engine. A check names the requirements it judges (defineCheck); adding
// its area's list here is all it takes for suites, proxy and validate to use it.
import { authenticationChecks } from './authentication.ts';
import type { Check } from './check.ts';
import { generalChecks } from './general.ts';
import { openApiChecks } from './openapi.ts';
import { rateLimitChecks } from './rate-limits.ts';
import { resourceServerChecks } from './resource-servers.ts';
import { schemaChecks } from './schema.ts';
import { scopeChecks } from './scopes.ts';
import { servedChecks, type ProbeCheck } from './served.ts';
import { sessionChecks } from './sessions.ts';
import { successChecks, tokenExchangeProfileChecks } from './token-exchange-profiles.ts';

export const CHECKS: Check[] = [
  ...generalChecks,
  ...successChecks,
  ...authenticationChecks,
  ...scopeChecks,
  ...tokenExchangeProfileChecks,
  ...schemaChecks,
  ...sessionChecks,
  ...resourceServerChecks,
  ...rateLimitChecks,
  ...openApiChecks,
];

/** Checks over several exchanges of one operation, run by the preflight of `tmi-conform run`. */
export const PROBE_CHECKS: ProbeCheck[] = [...servedChecks];

/** The names of the checks that judge a requirement: each check names its requirements, and this is read from there. */
export function checksOf(requirementId: string): string[] {
  return [...CHECKS, ...PROBE_CHECKS].filter((check) => check.requirements.includes(requirementId)).map((check) => check.name);
}
