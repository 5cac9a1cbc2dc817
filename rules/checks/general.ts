// Checks that hold for every operation (JSON bodies, no 5xx, error bodies), and the status codes of the document's three.
import { readKitYaml } from '../../core/kit-documents.ts';
import { once } from '../../core/memo.ts';
import { responseKey } from '../openapi/response-key.ts';
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
      finding(
        'GEN-JSON-RESPONSE',
        'implementation',
        'Content-Type application/json on a response with a body',
        contentType === undefined ? 'no Content-Type' : show(contentType),
      ),
    );
  }
  if (responseJson && !responseJson.ok) {
    findings.push(finding('GEN-JSON-RESPONSE', 'implementation', 'a body that parses as JSON', `${show(response.body.text, 60)} (${responseJson.error})`));
  }
  return findings;
}

/**
 * The responses schemas/openapi.yaml declares for each of the document's operations: for delete
 * the statuses the document lists, for the other two (whose success and error codes it does not
 * show) 200, inferred, and any 4XX. The kit's description and this rule are the same list.
 */
const documentedResponses = once((): Record<DocumentOperationId, Record<string, unknown>> => {
  const { paths } = readKitYaml('openapi.yaml') as {
    paths: Record<string, Record<string, { operationId: DocumentOperationId; responses: Record<string, unknown> }>>;
  };
  const operations = Object.values(paths).flatMap((methods) => Object.values(methods));
  return Object.fromEntries(operations.map((operation) => [operation.operationId, operation.responses])) as Record<
    DocumentOperationId,
    Record<string, unknown>
  >;
});

export function statusCodeIsDocumented({ exchange, operation }: CheckInput): CheckResult {
  const status = exchange.response?.status;
  const id = documentOperation(operation);
  if (status === undefined || status >= 500 || id === undefined) return undefined;
  const responses = documentedResponses()[id];
  if (responseKey(responses, status) !== undefined) return [];
  return [finding('GEN-STATUS-DOCUMENTED', 'implementation', `one of ${Object.keys(responses).join(', ')} for ${id}`, String(status))];
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
