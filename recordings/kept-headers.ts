// Recorders keep what they keep. Some (go-vcr cassettes, hand-trimmed HARs) keep no response
// header but Content-Type: a 429 in them shows no X-RateLimit-* header although the tenant sent
// them. A requirement about response headers is judged only where the recording shows it kept
// them: some response of the same recording carries a header beyond Content-Type and
// Content-Length (Date, X-RateLimit-*, anything a server sends). Exchanges that would charge such
// a requirement are held until that is known, in their order, and at most HELD_AT_MOST of them.
import type { Judgement } from '../rules/index.ts';
import { RESPONSE_HEADER_REQUIREMENTS } from '../rules/index.ts';
import type { Exchange } from '../rules/types.ts';

/** Exchanges held back while a recording has not yet shown whether it keeps response headers. */
export const HELD_AT_MOST = 10_000;

/** Headers a recorder keeps even when it drops the rest, or makes up itself: no proof of anything. */
const NOT_PROOF: ReadonlySet<string> = new Set(['content-type', 'content-length']);

/** The response carries a header a recorder that drops headers would not have kept. */
export function showsKeptHeaders(exchange: Exchange): boolean {
  const headers = exchange.response?.headers;
  if (!headers) return false;
  for (const name in headers) if (!NOT_PROOF.has(name)) return true;
  return false;
}

/** The exchange's judgement puts a requirement about response headers to the test. */
function judgesResponseHeaders(judgement: Judgement): boolean {
  return judgement.examined.some((id) => RESPONSE_HEADER_REQUIREMENTS.has(id)) || judgement.findings.some((f) => RESPONSE_HEADER_REQUIREMENTS.has(f.requirement));
}

/** The judgement without the requirements about response headers, saying why. */
function withoutHeaderRequirements(judgement: Judgement): Judgement {
  return {
    ...judgement,
    findings: judgement.findings.filter((f) => !RESPONSE_HEADER_REQUIREMENTS.has(f.requirement)),
    examined: judgement.examined.filter((id) => !RESPONSE_HEADER_REQUIREMENTS.has(id)),
    responseHeadersNotKept: true,
  };
}

type Handed = (exchange: Exchange, judgement: Judgement | undefined) => void;

/** One recording's exchanges on their way to `hand`, held where its headers decide. */
export class KeptHeadersGate {
  private kept = false;
  private held: Array<[Exchange, Judgement]> = [];

  constructor(private readonly hand: Handed) {}

  pass(exchange: Exchange, judgement: Judgement | undefined): void {
    if (!this.kept && showsKeptHeaders(exchange)) {
      this.kept = true;
      this.release();
    }
    if (this.kept || judgement === undefined || !judgesResponseHeaders(judgement)) {
      this.hand(exchange, judgement);
      return;
    }
    this.held.push([exchange, judgement]);
    // A recording this long without one header beyond Content-Type keeps none.
    if (this.held.length >= HELD_AT_MOST) this.release(withoutHeaderRequirements);
  }

  /** The recording ended: what is still held was never shown to have its headers. */
  end(): void {
    this.release(withoutHeaderRequirements);
  }

  private release(change: (judgement: Judgement) => Judgement = (j) => j): void {
    const held = this.held;
    this.held = [];
    for (const [exchange, judgement] of held) this.hand(exchange, change(judgement));
  }
}
