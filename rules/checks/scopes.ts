// Scope rules: the form of the token's scopes, and that each operation's scope is enforced.
import { isCatalogScope } from '../scopes.ts';
import { perFrozenObject } from '../../core/memo.ts';
import { scopesOf } from '../token.ts';
import { defineCheck, documentOperation, EVERY_OPERATION, finding, isSuccess, securityFinding, show, type CheckInput, type CheckResult } from './check.ts';
import type { DocumentOperationId, Finding } from '../types.ts';

/** Scope each operation needs, and the requirement that says so (must: stated; should: inferred). */
export const REQUIRED_SCOPES: Record<DocumentOperationId, { scope: string; requirement: string }> = {
  deleteTokenExchangeProfile: { scope: 'delete:token_exchange_profiles', requirement: 'SCOPE-DELETE-REQUIRED' },
  updateSession: { scope: 'update:sessions', requirement: 'SCOPE-UPDATE-SESSION' },
  getResourceServer: { scope: 'read:resource_servers', requirement: 'SCOPE-READ-RESOURCE-SERVER' },
};

const SCOPE_FORM = /^[a-z][a-z0-9_]*:[a-z][a-z0-9_]*$/;
// OpenID Connect scopes ride along in user tokens; they are not permissions of this interface.
const OIDC_SCOPES: ReadonlySet<string> = new Set(['openid', 'profile', 'email', 'address', 'phone', 'offline_access']);

interface ScopeForms {
  malformed: string[];
  unknown: string[];
}

/** A token's scopes sorted once: its frozen scope list is shared by every exchange it authorises (see scopesOf). */
const scopeForms = perFrozenObject((scopes: readonly string[]): ScopeForms => {
  const forms: ScopeForms = { malformed: [], unknown: [] };
  for (const s of scopes) {
    if (!SCOPE_FORM.test(s)) {
      if (!OIDC_SCOPES.has(s)) forms.malformed.push(s);
    } else if (!isCatalogScope(s)) forms.unknown.push(s);
  }
  return forms;
});

const shortScope = (s: string): string => show(s, 40);

/** Scopes named per token and requirement: a token holds a few dozen at most. */
const SCOPES_NAMED = 10;

export function tokenScopesAreWellFormed({ exchange }: CheckInput): CheckResult {
  const scopes = scopesOf(exchange.token.claims);
  if (!scopes) return undefined;
  const { malformed, unknown } = scopeForms(scopes);
  // One finding per scope, so that a report names each scope once, whichever tokens carried it.
  const findings: Finding[] = [];
  for (const scope of malformed.slice(0, SCOPES_NAMED))
    findings.push(finding('SCOPE-FORMAT', 'client', 'scopes of the form <action>:<resource>', shortScope(scope)));
  for (const scope of unknown.slice(0, SCOPES_NAMED))
    findings.push(finding('SCOPE-IN-CATALOG', 'client', "scopes from the document's scope catalog", shortScope(scope)));
  return findings;
}

export function requiredScopeEnforced({ exchange, operation }: CheckInput): CheckResult {
  const status = exchange.response?.status;
  const claims = exchange.token.claims;
  // Only a token lacking the scope tests the rule; a throttled request says nothing about it.
  const id = documentOperation(operation);
  if (status === undefined || status === 429 || !claims || id === undefined) return undefined;
  const { scope, requirement } = REQUIRED_SCOPES[id];
  const granted = scopesOf(claims) ?? [];
  if (granted.includes(scope)) return undefined;
  if (!isSuccess(status)) return [];
  return [
    securityFinding(
      requirement,
      'a refusal (403)',
      String(status),
      `the target carried out a ${exchange.request.method} for a token without ${scope} (its scopes: ${show(granted.join(' ') || '(none)', 120)})`,
    ),
  ];
}

export function insufficientScopeNamesExpectedScope({ exchange }: CheckInput): CheckResult {
  const response = exchange.response;
  if (response?.status !== 403 || response.body?.truncated) return undefined;
  const { scope } = REQUIRED_SCOPES.deleteTokenExchangeProfile;
  const text = response.body?.text ?? '';
  if (text.includes(scope)) return [];
  return [
    finding(
      'SCOPE-DELETE-403',
      'implementation',
      `a 403 whose message states the expected scope ${scope}`,
      text === '' ? 'a 403 with no body' : show(text, 120),
    ),
  ];
}

export const scopeChecks = [
  defineCheck(tokenScopesAreWellFormed, ['SCOPE-FORMAT', 'SCOPE-IN-CATALOG'], EVERY_OPERATION),
  defineCheck(requiredScopeEnforced, ['SCOPE-DELETE-REQUIRED', 'SCOPE-UPDATE-SESSION', 'SCOPE-READ-RESOURCE-SERVER']),
  defineCheck(insufficientScopeNamesExpectedScope, ['SCOPE-DELETE-403'], ['deleteTokenExchangeProfile']),
];
