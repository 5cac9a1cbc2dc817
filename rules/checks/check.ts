// What a check is, and the one way findings are made.
import { credentialState, type CredentialState } from '../credential.ts';
import { requirement } from '../requirements.ts';
import { observationOf, type RateLimitObservation, type RateLimitTracker } from '../rate-limit-tracker.ts';
import type { OpenApiOperation } from '../openapi/description.ts';
import type { DocumentOperationId, Exchange, Finding, MatchedOperation, OperationId, Subject } from '../types.ts';

/** A JSON body parsed once per exchange: `ok` false when the text is not JSON. */
export type ParsedBody = { ok: true; value: unknown } | { ok: false; error: string };

/** Everything a check may look at. Built once per exchange by the engine. */
export interface CheckInput {
  exchange: Exchange;
  operation: MatchedOperation;
  /** undefined: no body, or a body not captured in full. */
  requestJson?: ParsedBody;
  responseJson?: ParsedBody;
  /** Earlier exchanges of this run or session (rate-limit sequence checks only). */
  tracker?: RateLimitTracker;
  /** The response's X-RateLimit-* reading, worked out once per exchange (see rateLimitObservationOf); null: none. */
  rateLimitObservation?: RateLimitObservation | null;
  /** The request's credential state, worked out once per exchange (see credentialStateOf). */
  credential?: CredentialState;
  /** The operation of the user's OpenAPI description (--openapi) an other operation's exchange matched. */
  openapi?: OpenApiOperation;
  /** What a check had to examine but could not, and why (see partNotJudged); the engine hands it on in the judgement. */
  partsNotJudged?: string[];
}

/**
 * A check met something it should examine but cannot judge (a schema of the user's OpenAPI
 * description that cannot be compiled): it examines nothing (undefined), and the reason, named
 * by its requirement, travels with the judgement to every report instead of passing in silence.
 */
export function partNotJudged(input: CheckInput, requirementId: string, what: string, reason: string): undefined {
  const line = `${what} (${requirementId}): ${reason}`;
  if (!input.partsNotJudged?.includes(line)) (input.partsNotJudged ??= []).push(line);
  return undefined;
}

/** The exchange's credential state, classified once and shared by the authentication checks. */
export function credentialStateOf(input: CheckInput): CredentialState {
  return (input.credential ??= credentialState(input.exchange));
}

/** The exchange's X-RateLimit-* observation, read once and shared by the checks and the tracker. */
export function rateLimitObservationOf(input: CheckInput): RateLimitObservation | undefined {
  if (input.rateLimitObservation === undefined) input.rateLimitObservation = observationOf(input.exchange) ?? null;
  return input.rateLimitObservation ?? undefined;
}

export interface Check {
  /** The function's name: it says what it checks. */
  name: string;
  /** The requirements its findings may name. */
  requirements: string[];
  /** Operations it applies to. */
  operations: OperationId[];
  /**
   * undefined: nothing in this exchange for the check to examine; []: examined, conforming;
   * RESPONSE_HEADERS_NOT_RECORDED: something to examine, in headers the recording did not keep.
   */
  run(input: CheckInput): CheckResult | NotRecorded;
}

export type CheckResult = Finding[] | undefined;

/**
 * What a check answers when the exchange holds something for it to examine in its response
 * headers, but the recording did not keep them (Exchange.response.headersRecorded): nothing is
 * examined or found, and the judgement names the requirement as not judged, and why.
 */
export const RESPONSE_HEADERS_NOT_RECORDED = Object.freeze({ notRecorded: 'response headers' as const });
export type NotRecorded = typeof RESPONSE_HEADERS_NOT_RECORDED;

/** The response's headers are as received: a header missing from them was not sent. */
export const responseHeadersRecorded = ({ exchange }: CheckInput): boolean => exchange.response?.headersRecorded !== false;

export const API_OPERATIONS: DocumentOperationId[] = ['deleteTokenExchangeProfile', 'updateSession', 'getResourceServer'];

/** The document's three operations and every other operation of the interface: where the general rules hold. */
export const EVERY_OPERATION: OperationId[] = [...API_OPERATIONS, 'otherOperation'];

/** The operation's id when it is one of the document's three, else undefined. */
export function documentOperation({ operation }: MatchedOperation): DocumentOperationId | undefined {
  return operation === 'getToken' || operation === 'otherOperation' ? undefined : operation;
}

/** A check returned a finding about a requirement it does not declare: a defect of the check. */
export class UndeclaredRequirement extends Error {
  override name = 'UndeclaredRequirement';
  constructor(check: string, requirementId: string, declared: readonly string[]) {
    super(`check ${check} made a finding about ${requirementId}, which it does not declare (it declares ${declared.join(', ')})`);
  }
}

/**
 * A check from its function: the function's name is the check's name, set on every finding it
 * makes, and a finding about a requirement outside `requirements` throws UndeclaredRequirement.
 * The wrapper is made once per check; per call it only walks the findings (usually none).
 */
export function defineCheck(
  judge: (input: CheckInput) => CheckResult | NotRecorded,
  requirements: string[],
  operations: OperationId[] = API_OPERATIONS,
): Check {
  const name = judge.name;
  return {
    name,
    requirements,
    operations,
    run(input: CheckInput): CheckResult | NotRecorded {
      const result = judge(input);
      if (!Array.isArray(result)) return result;
      for (let i = 0; i < result.length; i++) {
        const f = result[i]!;
        if (!requirements.includes(f.requirement)) throw new UndeclaredRequirement(name, f.requirement, requirements);
        f.check = name;
      }
      return result;
    },
  };
}

/**
 * A finding about `requirementId`, by `subject`: what was `expected`, what was `received`, and
 * (`pointer`) the one documented field of the body it is about, when it names one. defineCheck
 * names the check.
 */
export function finding(requirementId: string, subject: Subject, expected: string, received: string, pointer?: string): Finding {
  const f: Finding = { requirement: requirementId, level: requirement(requirementId).level, subject, check: '', expected, received };
  if (pointer !== undefined) f.pointer = pointer;
  return f;
}

/**
 * A security finding: the target carried out (`received`, a 2xx) what it should have refused.
 * `what` says what it carried out, in words.
 */
export function securityFinding(requirementId: string, expected: string, received: string, what: string): Finding {
  const f = finding(requirementId, 'implementation', expected, received);
  f.security = what;
  return f;
}

/** A short, printable rendering of a received value. */
export function show(value: unknown, max = 80): string {
  let text: string;
  if (value === undefined) text = 'nothing';
  else if (typeof value === 'string') text = JSON.stringify(value);
  else {
    try {
      text = JSON.stringify(value) ?? String(value);
    } catch {
      text = String(value);
    }
  }
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

export const isSuccess = (status: number): boolean => status >= 200 && status < 300;

const JSON_MEDIA_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;

/** A Content-Type of JSON: application/json or application/<something>+json, with or without parameters. */
export const isJsonMediaType = (contentType: string | undefined): boolean => contentType !== undefined && JSON_MEDIA_TYPE.test(contentType);

export function jsonObject(body: ParsedBody | undefined): Record<string, unknown> | undefined {
  if (!body?.ok) return undefined;
  const v = body.value;
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
}
