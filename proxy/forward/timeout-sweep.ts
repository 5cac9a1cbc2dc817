// The upstream timeout: exchanges whose target has been silent too long are cut. One sweep over
// the exchanges in flight replaces a timer per request; it runs a few times per timeout period,
// so a timeout fires at most a quarter period late.
import type { ClientRequest } from 'node:http';
import type { InFlightList } from './in-flight.ts';
import type { Transit } from './transit.ts';

/**
 * Sweeps `inFlight` until the returned timer is cleared, calling `onTimedOut` for each exchange
 * silent longer than `timeoutMs`, and `onAbandoned` for each whose client connection is gone
 * although its response never closed (a response queued behind pipelined requests on a
 * connection the client reset gets no 'close' event from Node).
 */
export function startTimeoutSweep(
  inFlight: InFlightList,
  timeoutMs: number,
  onTimedOut: (transit: Transit, proxyReq: ClientRequest) => void,
  onAbandoned: (transit: Transit) => void,
): NodeJS.Timeout {
  const timer = setInterval(() => sweep(inFlight, timeoutMs, onTimedOut, onAbandoned), Math.max(10, Math.min(1000, Math.floor(timeoutMs / 4))));
  timer.unref();
  return timer;
}

function sweep(
  inFlight: InFlightList,
  timeoutMs: number,
  onTimedOut: (transit: Transit, proxyReq: ClientRequest) => void,
  onAbandoned: (transit: Transit) => void,
): void {
  const limit = performance.now() - timeoutMs;
  for (const transit of inFlight.snapshot()) {
    // Its 'close' would have come with the socket's: a sweep later, it never will.
    if (transit.req.socket.destroyed && !transit.res.socket) {
      onAbandoned(transit);
      continue;
    }
    // A client still uploading sets the pace itself (Node's request timeout bounds it).
    if (!transit.flow.request.body.complete && !transit.flow.response) continue;
    // Nor a client reading slowly.
    if (transit.heldForClient) continue;
    if (transit.proxyReq && !transit.timedOut && transit.lastActivity < limit) onTimedOut(transit, transit.proxyReq);
  }
}
