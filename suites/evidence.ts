// What a suite test saw travels with the test itself: every judged exchange, redacted, is put
// in the test's `meta`, which vitest hands to the run's reporter in the main process. Secrets
// never reach the disk on the way.
import { AsyncLocalStorage } from 'node:async_hooks';
import type { RunnerTestCase } from 'vitest';
import { redactExchange, scrubSecrets, type SecretSink } from '../core/redact.ts';
import type { Judgement } from '../rules/index.ts';
import type { Exchange } from '../rules/types.ts';

export interface RecordedExchange {
  exchange: Exchange;
  judgement: Judgement;
  /** A failed expectation of the test concerns this exchange (the last one marked is the one reported). */
  failing?: true;
}

export interface TestEvidence {
  exchanges: RecordedExchange[];
  /** 429s the test did not ask for: observed, waited out, retried. */
  unplanned429: number;
  /** 429s on requests the pacer sent early on purpose, to learn a window's length. */
  risked429: number;
  /**
   * The requirements the test's (last) failed expectation is evidence against; empty when the
   * expectation was a precondition (the test could not examine what it covers).
   */
  charged?: string[];
}

declare module 'vitest' {
  interface TaskMeta {
    tmi?: TestEvidence;
  }
}

let current: RunnerTestCase | undefined;
/**
 * The test whose body is running, for tests that run concurrently (concurrentIt in context.ts): its
 * body runs in this scope (inTestScope), so that what it sends is its evidence, whichever test
 * began last.
 */
const testScope = new AsyncLocalStorage<RunnerTestCase>();

/** The test the running code belongs to. */
const runningTest = (): RunnerTestCase | undefined => testScope.getStore() ?? current;

/** A test body that records its exchanges as its own evidence, whatever runs beside it. */
export function inTestScope<C extends { task: unknown }>(body: (context: C) => Promise<void>): (context: C) => Promise<void> {
  return (context) => testScope.run(context.task as RunnerTestCase, () => body(context));
}
/** Exchanges made outside a test (in hooks) go with the next test. */
let pending: RecordedExchange[] = [];
let pendingUnplanned = 0;
let pendingRisked = 0;
/** What each exchange of this worker was recorded as, so that a failure can mark it. */
const recordedAs = new WeakMap<Exchange, RecordedExchange>();

export function beginTest(task: RunnerTestCase): void {
  current = task;
  task.meta.tmi = { exchanges: pending, unplanned429: pendingUnplanned, risked429: pendingRisked };
  pending = [];
  pendingUnplanned = 0;
  pendingRisked = 0;
}

export function endTest(): void {
  current = undefined;
}

/**
 * Records a judged exchange. A request the suite broke the rules with on purpose (to see it
 * refused) is the suite's doing, not a client's: its client findings are dropped.
 */
export function recordExchange(exchange: Exchange, judgement: Judgement, deliberate: boolean): void {
  const recorded = redactedRecord(exchange, judgement, deliberate);
  recordedAs.set(exchange, recorded);
  const test = runningTest();
  if (test?.meta.tmi) test.meta.tmi.exchanges.push(recorded);
  else pending.push(recorded);
}

/**
 * What travels to the reporter of one judged exchange: the exchange redacted, and the
 * judgement's own fields (a Judged answer also holds the unredacted exchange), its findings
 * masked of the secrets the redaction found (a finding may quote a field that echoes one).
 */
export function redactedRecord(exchange: Exchange, judgement: Judgement, deliberate: boolean): RecordedExchange {
  const secrets: SecretSink = new Set();
  const safe = redactExchange(exchange, secrets);
  const kept: Judgement = { findings: [], examined: judgement.examined };
  for (const f of judgement.findings) {
    if (deliberate && f.subject === 'client') continue;
    const safeFinding = { ...f, expected: scrubSecrets(f.expected, secrets), received: scrubSecrets(f.received, secrets) };
    if (f.security !== undefined) safeFinding.security = scrubSecrets(f.security, secrets);
    kept.findings.push(safeFinding);
  }
  if (judgement.operation) kept.operation = judgement.operation;
  if (judgement.rateLimit !== undefined) kept.rateLimit = judgement.rateLimit;
  if (judgement.reached) kept.reached = judgement.reached;
  return { exchange: safe, judgement: kept };
}

/**
 * The running test's failure concerns `exchange` (the report shows it, with a curl command for
 * it) and is evidence against `charged` (none: a precondition was not met).
 */
export function markFailing(exchange: Exchange, charged: string[]): void {
  const recorded = recordedAs.get(exchange);
  if (recorded) recorded.failing = true;
  const test = runningTest();
  if (test?.meta.tmi) test.meta.tmi.charged = charged;
}

export function recordUnplanned429(): void {
  const test = runningTest();
  if (test?.meta.tmi) test.meta.tmi.unplanned429++;
  else pendingUnplanned++;
}

export function recordRisked429(): void {
  const test = runningTest();
  if (test?.meta.tmi) test.meta.tmi.risked429++;
  else pendingRisked++;
}
