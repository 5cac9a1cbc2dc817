// The API's error answer, as both the proxy (answering for a target that failed, or refusing a
// request) and the reference implementation write it: the real service's body shape
// (statusCode, error, message, errorCode; described in schemas/error.schema.json, none of it
// required by the document), and its raw HTTP form for a socket with no ServerResponse (a request
// that did not parse, a CONNECT).
import { STATUS_CODES } from 'node:http';

export const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

export interface ErrorBody {
  statusCode: number;
  error: string;
  message: string;
  errorCode: string;
}

export function errorBody(status: number, message: string, errorCode: string): ErrorBody {
  return { statusCode: status, error: STATUS_CODES[status] ?? 'Error', message, errorCode };
}

/** The whole answer, head and body, closing the connection; `headers` go between Content-Length and Connection. */
export function rawErrorResponse(status: number, message: string, errorCode: string, headers: Record<string, string> = {}): string {
  const text = JSON.stringify(errorBody(status, message, errorCode));
  let head =
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}\r\n` + `Content-Type: ${JSON_CONTENT_TYPE}\r\n` + `Content-Length: ${Buffer.byteLength(text)}\r\n`;
  for (const name in headers) head += `${name}: ${headers[name]}\r\n`;
  return head + 'Connection: close\r\n\r\n' + text;
}
