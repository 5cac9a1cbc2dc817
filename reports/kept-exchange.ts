// An exchange as a report keeps it: its redacted evidence is made only when some requirement
// keeps it (most exchanges are counted, not kept), and once; its findings are masked the same way.
import { findingMessage } from '../rules/message.ts';
import type { Exchange, Finding } from '../rules/types.ts';
import { scrubSecrets, type KnownSecrets, type SecretSink } from '../core/redact.ts';
import { exchangeEvidence } from './exchange-evidence.ts';
import type { ExchangeEvidence, ReportedFinding } from './model.ts';

export class KeptExchange {
  private kept: ExchangeEvidence | undefined;
  /** Secret values the redaction masked: a finding's message quoting one is masked the same way. */
  private secrets: SecretSink | undefined;

  /** `known`: secrets seen in earlier exchanges of the source, masked here too (core/redact.ts KnownSecrets). */
  constructor(
    private readonly exchange: Exchange,
    readonly operation: string,
    private readonly known?: KnownSecrets,
  ) {}

  evidence(): ExchangeEvidence {
    if (!this.kept) {
      this.secrets = new Set();
      this.kept = exchangeEvidence(this.exchange, this.operation, this.secrets, this.known);
    }
    return this.kept;
  }

  /** The token attack the exchange sent, if a suite made its token to be refused (no redaction needed: it is a name). */
  credentialAttack(): string | undefined {
    return this.exchange.token.attack;
  }

  /** A finding as a report shows it: its documented fields, masked like the evidence, and its message. */
  reported(f: Finding): ReportedFinding {
    this.evidence();
    return reportedFinding(f, this.secrets!);
  }
}

/**
 * Only the finding's documented fields reach a report, so report.json keeps its schema; what
 * it quotes of the exchange is masked as the exchange's evidence is, then the message is made.
 */
function reportedFinding(f: Finding, secrets: SecretSink): ReportedFinding {
  const expected = scrubSecrets(f.expected, secrets);
  const received = scrubSecrets(f.received, secrets);
  const reported: ReportedFinding = { requirement: f.requirement, level: f.level, subject: f.subject, check: f.check, expected, received, message: '' };
  if (f.security !== undefined) reported.security = scrubSecrets(f.security, secrets);
  // Made from the document's shape, never from the exchange: nothing in it to mask.
  if (f.pointer !== undefined) reported.pointer = f.pointer;
  reported.message = findingMessage(reported);
  return reported;
}
