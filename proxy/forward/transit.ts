// The transport state of one exchange while the proxy relays it (server.ts); addons see only
// its Flow. It hangs on the request, the response and the target's response as a property, not
// in a WeakMap (cheaper for the garbage collector), so that the stream listeners can be shared
// functions instead of closures made for every request.
import type { ClientRequest, IncomingMessage, ServerResponse } from 'node:http';
import type { Flow } from '../flow.ts';

export const TRANSIT = Symbol('transit');
export type InTransit<T> = T & { [TRANSIT]?: Transit };

/** What the shared stream listeners call back on the server relaying the exchange (server.ts ProxyServer). */
export interface Relay {
  /** Writes the target's head to the client; false when it cannot be relayed (the client got a 502 instead). */
  writeResponseHead(transit: Transit): boolean;
  onUpstreamBroke(transit: Transit): void;
  onResponseClosed(transit: Transit): void;
}

export interface Transit {
  server: Relay;
  /** Neighbours in the list of exchanges in flight (in-flight.ts). */
  previous: Transit | undefined;
  next: Transit | undefined;
  flow: Flow;
  req: IncomingMessage;
  res: ServerResponse;
  proxyReq?: ClientRequest;
  /** The target's response being relayed. */
  proxyRes?: IncomingMessage;
  /** Its head (proxyRes.headers, readied for the client) is written with the first chunk or the end: until then a failure can still be answered with a 502 or 504. */
  headPending: boolean;
  /** The target's response is paused until the client reads what it was sent: the client sets the pace, no upstream timeout applies. */
  heldForClient: boolean;
  timedOut: boolean;
  retried: boolean;
  /** The request has no body, so it may be sent again on a fresh connection. */
  bodyless: boolean;
  /** The client asked to close its connection after this exchange. */
  clientCloses: boolean;
  /** performance.now() of the last byte either way: the upstream timeout counts from it. */
  lastActivity: number;
  /** The exchange has left the list in flight and been handed on: it is finished only once. */
  done: boolean;
}
