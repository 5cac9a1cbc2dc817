// A flow is one exchange as the proxy sees it, from the request line to the end of the
// response (or its failure). The server fills it in as bytes pass; once the response is sent
// it goes through the addons (judge, journal, report, status), each doing one thing with it.
import type { IncomingHttpHeaders } from 'node:http';
import type { Judgement } from '../rules/index.ts';
import type { Exchange, Finding } from '../rules/types.ts';
import type { BodyCapture } from './forward/capture.ts';

export interface Flow {
  /** 1, 2, 3… in order of arrival within a proxy session. */
  id: number;
  /** Epoch milliseconds when the request line arrived. */
  startedAt: number;
  /** performance.now() marks: arrival, request body end, response head, end. */
  marks: { start: number; requestEnd?: number; responseStart?: number; end?: number };
  clientAddress: string;
  httpVersion: string;
  request: {
    method: string;
    /** Path and query as forwarded (base path included). */
    path: string;
    /** Headers as forwarded to the target. */
    headers: IncomingHttpHeaders;
    body: BodyCapture;
  };
  response?: {
    status: number;
    statusText: string;
    httpVersion: string;
    headers: IncomingHttpHeaders;
    body: BodyCapture;
  };
  /** What went wrong, when the exchange did not complete. */
  error?: string;
  /** Status the proxy answered itself (502/504) when the target gave no response. */
  proxyStatus?: number;

  // Filled in by the addons, in order.
  exchange?: Exchange;
  judgement?: Judgement;
  /** The judgement's findings with messages scrubbed of secrets: what may be written anywhere. */
  safeFindings?: Finding[];
  /** The exchange redacted as the journal holds it (the report keeps its evidence from this, never from the raw one). */
  safeExchange?: Exchange;
  /** A rule or writer failed on this flow (a bug, reported, never fatal to the proxy). */
  internalError?: string;
}

/** One concern applied to every finished flow. Hooks run in order, synchronously. */
export interface Addon {
  readonly name: string;
  /** A flow whose response has been sent (or that failed). */
  done?(flow: Flow): void;
  /** After each batch of `done` calls: write what was buffered. */
  flush?(): void;
  /** At stop, after the last flush. */
  close?(): Promise<void> | void;
}
