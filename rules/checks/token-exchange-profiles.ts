// Delete a token exchange profile: "204; the profile is deleted; no body."
import { defineCheck, documentOperation, finding, isSuccess, show, type CheckInput, type CheckResult } from './check.ts';
import { describeBytes } from '../../core/body-limit.ts';

export function noContentHasNoBody({ exchange }: CheckInput): CheckResult {
  const response = exchange.response;
  if (response?.status !== 204) return undefined;
  const length = response.headers['content-length'];
  if (!response.body && (length === undefined || length === '0')) return [];
  const overLimit = response.body?.overLimit;
  const received = overLimit
    ? `a body of ${describeBytes(overLimit.bytes)} beginning ${show(response.body!.text, 60)}`
    : response.body
      ? `a body of ${response.body.text.length} characters: ${show(response.body.text, 60)}`
      : `Content-Length ${length}`;
  return [finding('TEP-DELETE-NO-BODY', 'implementation', 'a 204 with no body', received)];
}

export const tokenExchangeProfileChecks = [defineCheck(noContentHasNoBody, ['TEP-DELETE-NO-BODY'], ['deleteTokenExchangeProfile'])];

/** Success codes: 204 for the delete (stated); 200 for the others (inferred). */
const SUCCESS = {
  deleteTokenExchangeProfile: { status: 204, requirement: 'TEP-DELETE-204' },
  updateSession: { status: 200, requirement: 'SES-SUCCESS-200' },
  getResourceServer: { status: 200, requirement: 'RS-SUCCESS-200' },
} as const;

export function successStatusIsDocumented({ exchange, operation }: CheckInput): CheckResult {
  const status = exchange.response?.status;
  const id = documentOperation(operation);
  if (status === undefined || !isSuccess(status) || id === undefined) return undefined;
  const expected = SUCCESS[id];
  if (status === expected.status) return [];
  return [finding(expected.requirement, 'implementation', `${expected.status} on success`, String(status))];
}

export const successChecks = [defineCheck(successStatusIsDocumented, ['TEP-DELETE-204', 'SES-SUCCESS-200', 'RS-SUCCESS-200'])];
