// Checks that hold for every operation (JSON bodies, no 5xx, error bodies), and the status codes of the document's three.
import { schemaValidator } from '../schemas.ts';
import { defineCheck, documentOperation, EVERY_OPERATION, finding, isJsonMediaType, responseHeadersRecorded, show, type CheckInput } from './check.ts';
import type { DocumentOperationId, Finding } from '../types.ts';
import type { CheckResult } from './check.ts';

export function responseBodyIsJson(input: CheckInput): CheckResult {
  const { exchange, responseJson } = input;
  const response = exchange.response;
  if (!response?.body || response.status === 204 || response.status === 304) return undefined;
  const contentType = response.headers['content-type'];
  // A recording that kept no Content-Type: whether the body is JSON is told by the body alone.
  const typeRecorded = contentType !== undefined || responseHeadersRecorded(input);
  if (!typeRecorded && responseJson === undefined) return undefined;
  const findings: Finding[] = [];
  if (typeRecorded && !isJsonMediaType(contentType)) {
    findings.push(
      finding('GEN-JSON-RESPONSE', 'implementation', 'Content-Type application/json on a response with a body', contentType === undefined ? 'no Content-Type' : show(contentType)),
    );
  }
  if (responseJson && !responseJson.ok) {
    findings.push(finding('GEN-JSON-RESPONSE', 'implementation', 'a body that parses as JSON', `${show(response.body.text, 60)} (${responseJson.error})`));
  }
  return findings;
}

/** The status codes the document lists (delete) or the real service is known to use. */
export const DOCUMENTED_STATUSES: Record<DocumentOperationId, number[]> = {
  deleteTokenExchangeProfile: [204, 401, 403, 429],
  updateSession: [200, 400, 401, 403, 404, 429],
  getResourceServer: [200, 400, 401, 403, 404, 429],
};

export function statusCodeIsDocumented({ exchange, operation }: CheckInput): CheckResult {
  const status = exchange.response?.status;
  const id = documentOperation(operation);
  if (status === undefined || status >= 500 || id === undefined) return undefined;
  const documented = DOCUMENTED_STATUSES[id];
  if (documented.includes(status)) return [];
  return [finding('GEN-STATUS-DOCUMENTED', 'implementation', `one of ${documented.join(', ')} for ${id}`, String(status))];
}

export function noServerError({ exchange }: CheckInput): CheckResult {
  const status = exchange.response?.status;
  if (status === undefined) return undefined;
  if (status < 500) return [];
  return [finding('GEN-NO-SERVER-ERROR', 'implementation', 'no 5xx (the document lists none)', `${status} ${show(exchange.response?.body?.text ?? '', 60)}`)];
}

export function errorBodyIsObject({ exchange, responseJson }: CheckInput): CheckResult {
  const status = exchange.response?.status;
  if (status === undefined || status < 400 || !responseJson?.ok) return undefined;
  if (schemaValidator('error').validate(responseJson.value)) return [];
  return [finding('GEN-ERROR-BODY', 'implementation', 'an error body that is a JSON object', show(responseJson.value))];
}

export const generalChecks = [
  defineCheck(responseBodyIsJson, ['GEN-JSON-RESPONSE'], EVERY_OPERATION),
  defineCheck(statusCodeIsDocumented, ['GEN-STATUS-DOCUMENTED']),
  defineCheck(noServerError, ['GEN-NO-SERVER-ERROR'], EVERY_OPERATION),
  defineCheck(errorBodyIsObject, ['GEN-ERROR-BODY'], EVERY_OPERATION),
];
