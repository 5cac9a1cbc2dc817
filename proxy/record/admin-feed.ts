// Feeds the admin listener (proxy/admin/) from the pipeline: each judged flow's findings for the
// live page, its latency and its rate-limit reading (the counts are the judging session's tally,
// read by the metrics and the status alike). What it hands on is what the journal and the reports
// hold (the redacted exchange, the scrubbed findings), never the raw flow.
import type { AdminListener } from '../admin/admin.ts';
import type { Addon, Flow } from '../flow.ts';
import { entryDetails } from './record.ts';

export class AdminFeedAddon implements Addon {
  readonly name = 'admin';

  constructor(private readonly admin: AdminListener) {}

  done(flow: Flow): void {
    // The target answered: the HAR entry's timings.wait (to the response head).
    const upstreamSeconds = flow.response ? entryDetails(flow).timings!.wait / 1000 : undefined;
    this.admin.exchange({
      // A flow the recording step could not make safe shows nowhere: it is counted, its findings too, and nothing else.
      exchange: flow.safeExchange,
      judgement: flow.judgement,
      findings: flow.safeFindings ?? flow.judgement?.findings ?? [],
      ...(upstreamSeconds !== undefined ? { upstreamSeconds } : {}),
    });
  }

  flush(): void {
    this.admin.changed();
  }
}
