// Feeds the admin listener (proxy/admin/) from the pipeline, after the status addon: each judged
// flow's metrics, its findings for the live page and its rate-limit reading. What it hands on is
// what the journal and the reports hold (the redacted exchange, the scrubbed findings), never the
// raw flow. Earlier exchanges of a resumed journal are counted too, so that the metrics equal the
// status counts.
import type { Judgement } from '../../rules/index.ts';
import type { Exchange } from '../../rules/types.ts';
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
      status: flow.response?.status,
      judgement: flow.judgement,
      findings: flow.safeFindings ?? flow.judgement?.findings ?? [],
      failed: flow.error !== undefined,
      ...(upstreamSeconds !== undefined ? { upstreamSeconds } : {}),
    });
  }

  flush(): void {
    this.admin.changed();
  }

  /** An exchange of an earlier session, judged again from a resumed journal (no judgement: the judge failed). */
  earlier(exchange: Exchange, judgement: Judgement | undefined): void {
    this.admin.metrics.exchange({ exchange, status: exchange.response?.status, judgement, findings: judgement?.findings ?? [], failed: exchange.error !== undefined });
  }
}
