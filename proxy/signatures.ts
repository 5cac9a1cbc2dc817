// Token signatures for the recorder thread: checking one is asynchronous (jose), judging is not,
// so each batch's tokens not seen before are checked first (prepare), and judging then reads
// the verdicts (verdictOf). Traffic repeats a few tokens: for a repeated one, prepare finds it
// among the last few headers and does no work, and the batch is judged at once.
import type { IncomingHttpHeaders } from 'node:http';
import type { JSONWebKeySet } from 'jose';
import { verifierFor, type SignatureVerdict, type TokenVerifier } from '../keys/verifier.ts';
import { bearerCredential } from '../rules/token.ts';
import type { Flow } from './flow.ts';

/** The tenant's keys as handed to the recorder thread (read once when the proxy starts). */
export interface ProxyJwks {
  jwks: JSONWebKeySet;
  /** The http(s) URL to fetch the set again from on an unknown key id; undefined: a file. */
  refetchFrom?: string;
}

const RECENT = 4;

export class FlowSignatures {
  private readonly headers: string[] = [];
  private readonly verdicts: SignatureVerdict[] = [];

  private constructor(private readonly verifier: TokenVerifier) {}

  static from(keys: ProxyJwks | undefined): FlowSignatures | undefined {
    if (!keys) return undefined;
    const made = verifierFor(keys.jwks, keys.refetchFrom !== undefined ? { refetchFrom: keys.refetchFrom } : {});
    return 'verifier' in made ? new FlowSignatures(made.verifier) : undefined;
  }

  /** The tokens of `flows` not checked yet, checked; undefined when there is none (the batch can be judged at once). */
  prepare(flows: readonly Flow[]): Promise<unknown> | undefined {
    let work: Array<Promise<SignatureVerdict>> | undefined;
    for (const flow of flows) {
      const header = authorization(flow.request.headers);
      if (header === undefined || this.recent(header) !== -1) continue;
      const credential = bearerCredential(header);
      if (credential === undefined || this.verifier.cached(credential) !== 'unknown') continue;
      (work ??= []).push(this.verifier.verify(credential));
    }
    return work && Promise.all(work);
  }

  /** What the tenant's keys say of the flow's token (after prepare); undefined: no bearer token, or cannot tell. */
  verdictOf(headers: IncomingHttpHeaders): SignatureVerdict {
    const header = authorization(headers);
    if (header === undefined) return undefined;
    const index = this.recent(header);
    if (index !== -1) return this.verdicts[index];
    const credential = bearerCredential(header);
    if (credential === undefined) return undefined;
    const verdict = this.verifier.cached(credential);
    if (verdict === 'unknown') return undefined;
    this.headers.unshift(header);
    this.verdicts.unshift(verdict);
    if (this.headers.length > RECENT) {
      this.headers.pop();
      this.verdicts.pop();
    }
    return verdict;
  }

  /** The index of a header among the last few whose verdict is known; -1 if not among them. */
  private recent(header: string): number {
    for (let i = 0; i < this.headers.length; i++) if (this.headers[i] === header) return i;
    return -1;
  }
}

function authorization(headers: IncomingHttpHeaders): string | undefined {
  const value = headers['authorization'];
  return typeof value === 'string' ? value : undefined;
}
