// What the client and the recording are told when the target fails: the status (502 or 504),
// the error code of the proxy's own answer, and a message saying what happened.
export interface UpstreamFailure {
  status: 502 | 504;
  code: string;
  message: string;
}

/** A failure of the target's that the proxy detects itself, coded for describeUpstreamFailure. */
export function upstreamError(message: string, code: string): NodeJS.ErrnoException {
  return Object.assign(new Error(message), { code });
}

/** The failure before any of the response reached the client: the proxy answers it itself. */
export function describeUpstreamFailure(error: NodeJS.ErrnoException, timedOut: boolean, timeoutMs: number): UpstreamFailure {
  if (timedOut || error.code === 'UPSTREAM_TIMEOUT')
    return { status: 504, code: 'upstream_timeout', message: `upstream did not answer within ${timeoutMs} ms` };
  switch (error.code) {
    case 'ECONNREFUSED':
      return { status: 502, code: 'upstream_refused', message: 'upstream refused the connection (ECONNREFUSED)' };
    case 'ECONNRESET':
    case 'EPIPE':
      return { status: 502, code: 'upstream_reset', message: `upstream closed the connection without answering (${error.code})` };
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return { status: 502, code: 'upstream_unknown_host', message: `upstream host could not be resolved (${error.code})` };
    case 'ETIMEDOUT':
      return { status: 504, code: 'upstream_timeout', message: 'upstream connection timed out (ETIMEDOUT)' };
    case 'UPSTREAM_BROKE_AFTER_HEAD':
      return { status: 502, code: 'upstream_reset', message: 'upstream closed the connection after the response head, before its body' };
    case 'UPSTREAM_INVALID_HEAD':
      return { status: 502, code: 'upstream_invalid_response', message: error.message };
    default:
      return { status: 502, code: 'upstream_error', message: `upstream failed: ${error.code ?? error.message}` };
  }
}

/** The failure after part of the response reached the client (whose response is cut short): the flow's error. */
export function midResponseFailure(timedOut: boolean, timeoutMs: number, otherwise: string): string {
  return timedOut ? `upstream sent nothing for ${timeoutMs} ms in the middle of the response` : otherwise;
}
