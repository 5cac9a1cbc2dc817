// The answers the proxy gives itself (a request it refuses, a target that failed): the API's
// error body, marked with X-TMI-Conform-Proxy-Error so that nobody takes them for the target's.
import type { ServerResponse } from 'node:http';
import { errorBody, JSON_CONTENT_TYPE, rawErrorResponse } from '../../core/http-error.ts';

const PROXY_ERROR_HEADER = 'X-TMI-Conform-Proxy-Error';

/** Answers `res` with the error. */
export function sendProxyError(res: ServerResponse, status: number, errorCode: string, message: string): void {
  const text = JSON.stringify(errorBody(status, message, errorCode));
  res.statusCode = status;
  res.setHeader('Content-Type', JSON_CONTENT_TYPE);
  res.setHeader('Content-Length', Buffer.byteLength(text));
  res.setHeader('Cache-Control', 'no-store');
  res.setHeader(PROXY_ERROR_HEADER, errorCode);
  res.end(text);
}

/** The same, as text written straight to a socket (no ServerResponse exists for a request that did not parse). */
export function rawProxyError(status: number, message: string, errorCode: string): string {
  return rawErrorResponse(status, message, errorCode, { [PROXY_ERROR_HEADER]: errorCode });
}
