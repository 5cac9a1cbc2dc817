// Turns a judged flow into what may reach the disk: a redacted HAR 1.2 entry with its
// `_conformance` note, and the findings with their messages scrubbed of the exchange's
// secrets (the report uses those). Nothing unredacted leaves this step.
import type { KnownSecrets } from '../../core/redact.ts';
import { recordExchange, type EntryDetails } from '../../recordings/write.ts';
import type { Addon, Flow } from '../flow.ts';

export interface RecordedFlow extends Flow {
  entry?: Record<string, unknown>;
}

export class RecordAddon implements Addon {
  readonly name = 'record';
  /** `known`: the judging session's learned secrets (a client secret sent to the token endpoint), masked wherever they turn up later. */
  constructor(private readonly known: KnownSecrets) {}

  done(flow: RecordedFlow): void {
    if (!flow.exchange) return;
    const judgement = flow.judgement ?? { findings: [], examined: [] };
    const recorded = recordExchange(flow.exchange, judgement, entryDetails(flow), this.known);
    if (flow.internalError !== undefined) (recorded.entry['_conformance'] as Record<string, unknown>)['error'] = flow.internalError;
    flow.entry = recorded.entry;
    flow.safeFindings = recorded.findings;
    flow.safeExchange = recorded.safe;
  }
}

const round = (ms: number) => Math.max(0, Math.round(ms * 1000) / 1000);

export function entryDetails(flow: Flow): EntryDetails {
  const { start, requestEnd, responseStart } = flow.marks;
  const end = flow.marks.end ?? performance.now();
  // The target may answer before the request body ended: "send" stops at the first of the two.
  const sent = Math.min(requestEnd ?? end, responseStart ?? end);
  const details: EntryDetails = {
    httpVersion: flow.response?.httpVersion ?? flow.httpVersion,
    timings: {
      send: round(sent - start),
      wait: round((responseStart ?? end) - sent),
      receive: responseStart === undefined ? 0 : round(end - responseStart),
    },
    requestBodySize: flow.request.body.bytes,
  };
  if (flow.response) {
    details.statusText = flow.response.statusText;
    details.responseBodySize = flow.response.body.bytes;
  }
  if (flow.proxyStatus !== undefined) details.comment = `no response from the target (${flow.error}); the proxy answered ${flow.proxyStatus}`;
  else if (flow.error !== undefined) details.comment = flow.error;
  return details;
}
