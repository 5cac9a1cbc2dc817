// What a check is, and the one way findings are made.
import { requirement } from '../requirements.ts';
import { observationOf, type RateLimitObservation, type RateLimitTracker } from '../rate-limit-tracker.ts';
import type { Exchange, Finding, MatchedOperation, OperationId, Subject } from '../types.ts';

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
  /** undefined: nothing in this exchange for the check to examine; []: examined, conforming. */
  run(input: CheckInput): CheckResult;
}

export type CheckResult = Finding[] | undefined;

export const API_OPERATIONS: OperationId[] = ['deleteTokenExchangeProfile', 'updateSession', 'getResourceServer'];

export function defineCheck(
  run: (input: CheckInput) => CheckResult,
  requirements: string[],
  operations: OperationId[] = API_OPERATIONS,
): Check {
  return { name: run.name, requirements, operations, run };
}

/**
 * A finding about `requirementId`, by `subject`. The message reads
 * "<ID> <expected>; received <received>".
 */
export function finding(check: string, requirementId: string, subject: Subject, expected: string, received: string): Finding {
  return {
    requirement: requirementId,
    level: requirement(requirementId).level,
    subject,
    check,
    message: `${requirementId}: expected ${expected}; received ${received}`,
  };
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

export function responseStatus(input: CheckInput): number | undefined {
  return input.exchange.response?.status;
}

export function jsonObject(body: ParsedBody | undefined): Record<string, unknown> | undefined {
  if (!body?.ok) return undefined;
  const v = body.value;
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
}
