// Feeds every judged exchange to the report builder (kind "proxy"); the reports are written
// once, when the proxy stops. Findings reach it scrubbed of secrets, as in the journal.
import { ReportBuilder } from '../../reports/builder.ts';
import { INTERNAL_ERROR } from '../../reports/traffic.ts';
import type { OpenApiDescription } from '../../rules/openapi/description.ts';
import type { Addon, Flow } from '../flow.ts';

export class ReportAddon implements Addon {
  readonly name = 'report';
  readonly builder: ReportBuilder;

  /** `openapi`: the user's OpenAPI description judges the other operations, so its requirements are reported, and its coverage counted from the start. */
  constructor(target: string, openapi?: OpenApiDescription) {
    this.builder = new ReportBuilder({ kind: 'proxy', source: 'proxy', target, openapi: openapi !== undefined, ...(openapi ? { description: openapi.coverageFrame() } : {}) });
  }

  done(flow: Flow): void {
    if (!flow.safeExchange || !flow.judgement || !flow.safeFindings) {
      if (flow.internalError !== undefined) this.notJudged(String(flow.id));
      return;
    }
    // Without findings there is nothing to scrub: the judgement goes as it is. The exchange is the
    // redacted one: the session's known secrets are masked in it already.
    this.builder.addExchange(flow.safeExchange, flow.judgement.findings.length === 0 ? flow.judgement : { ...flow.judgement, findings: flow.safeFindings });
  }

  /** An exchange the kit failed on (a bug, said on the console with its cause, which may quote traffic: not repeated here). */
  notJudged(id: string): void {
    this.builder.addNotJudged(INTERNAL_ERROR, 1, [id]);
  }
}
