// Get a resource server: invariants the schema cannot express, lookup by id or audience,
// and the include_fields query parameter.
import { decodeSegment } from '../operations.ts';
import { defineCheck, finding, isSuccess, jsonObject, show, type CheckInput, type CheckResult } from './check.ts';

function returnedResourceServer(input: CheckInput): Record<string, unknown> | undefined {
  const status = input.exchange.response?.status;
  return status !== undefined && isSuccess(status) && !input.exchange.response?.body?.truncated ? jsonObject(input.responseJson) : undefined;
}

export function tokenLifetimeForWebWithinTokenLifetime(input: CheckInput): CheckResult {
  const rs = returnedResourceServer(input);
  const web = rs?.['token_lifetime_for_web'];
  const lifetime = rs?.['token_lifetime'];
  if (typeof web !== 'number' || typeof lifetime !== 'number') return undefined;
  if (web <= lifetime) return [];
  return [
    finding(
      'RS-TOKEN-LIFETIME-FOR-WEB',
      'implementation',
      `token_lifetime_for_web not greater than token_lifetime (${lifetime})`,
      String(web),
      '/token_lifetime_for_web',
    ),
  ];
}

export function resourceServerMatchesLookup(input: CheckInput): CheckResult {
  const rs = returnedResourceServer(input);
  const { rawId, id } = input.operation;
  if (!rs || rawId === undefined || id === undefined) return undefined;
  const returnedId = rs['id'];
  const identifier = rs['identifier'];
  // With a fields selection either may be left out; judge only when both are there.
  if (typeof returnedId !== 'string' || typeof identifier !== 'string') return undefined;
  // Clients encode an audience once or twice; any of these readings names the same server.
  const names = [rawId, id, decodeSegment(id)];
  if (names.includes(returnedId) || names.includes(identifier)) return [];
  return [
    finding(
      'RS-LOOKUP-BY-ID-OR-AUDIENCE',
      'implementation',
      `the resource server whose id or identifier is ${show(id)}`,
      `id ${show(returnedId)}, identifier ${show(identifier)}`,
    ),
  ];
}

/** "`include_fields`: boolean, optional": the values a client may send. */
export const INCLUDE_FIELDS_VALUES: readonly string[] = ['true', 'false'];

export function includeFieldsIsBoolean({ operation }: CheckInput): CheckResult {
  const value = operation.query['include_fields'];
  if (value === undefined) return undefined;
  if (INCLUDE_FIELDS_VALUES.includes(value)) return [];
  return [finding('RS-INCLUDE-FIELDS-BOOLEAN', 'client', 'include_fields=true or include_fields=false', `include_fields=${show(value)}`)];
}

export const resourceServerChecks = [
  defineCheck(tokenLifetimeForWebWithinTokenLifetime, ['RS-TOKEN-LIFETIME-FOR-WEB'], ['getResourceServer']),
  defineCheck(resourceServerMatchesLookup, ['RS-LOOKUP-BY-ID-OR-AUDIENCE'], ['getResourceServer']),
  defineCheck(includeFieldsIsBoolean, ['RS-INCLUDE-FIELDS-BOOLEAN'], ['getResourceServer']),
];
