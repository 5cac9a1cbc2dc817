// Feeds every judged exchange to the report builder (kind "proxy"); the reports are written
// once, when the proxy stops. Findings reach it scrubbed of secrets, as in the journal.
import type { JudgingSession } from '../../judging/session.ts';
import type { ReportBuilder } from '../../reports/builder.ts';
import type { Addon, Flow } from '../flow.ts';

export class ReportAddon implements Addon {
  readonly name = 'report';
  readonly builder: ReportBuilder;

  /** The session's report (judging/session.ts), fed with the redacted exchanges. */
  constructor(private readonly session: JudgingSession) {
    this.builder = session.builder!;
  }

  /** Runs after the steps that may fail on a flow (judging, recording, the journal), so that the tally counts such a failure once. */
  done(flow: Flow): void {
    if (!flow.safeExchange || !flow.judgement || !flow.safeFindings) {
      // An exchange the kit failed on (a bug, said on the console with its cause, which may quote traffic: not repeated here).
      this.session.notJudged(String(flow.id), flow.exchange);
      return;
    }
    // Without findings there is nothing to scrub: the judgement goes as it is. The exchange is the
    // redacted one: the session's known secrets are masked in it already.
    this.session.record(
      flow.safeExchange,
      flow.judgement.findings.length === 0 ? flow.judgement : { ...flow.judgement, findings: flow.safeFindings },
      flow.internalError !== undefined,
    );
  }
}
