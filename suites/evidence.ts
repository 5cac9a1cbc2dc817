// What a suite test saw travels with the test itself: every judged exchange, redacted, is put
// in the test's `meta`, which vitest hands to the run's reporter in the main process. Secrets
// never reach the disk on the way.
import { AsyncLocalStorage } from 'node:async_hooks';
import type { RunnerTestCase } from 'vitest';
import { redactExchange, scrubSecrets, type SecretSink } from '../core/redact.ts';
import type { Judgement } from '../rules/index.ts';
import type { Exchange } from '../rules/types.ts';
import type { Recorder } from './api.ts';

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

/**
 * The evidence of one worker's tests: the test whose body is running, and what was recorded
 * outside any test (in hooks), which goes with the next test. Made once per worker
 * (suites/context.ts), where vitest's hooks (suites/setup.ts) and the suites' API client meet.
 */
export class TestEvidenceLog implements Recorder {
  private current: RunnerTestCase | undefined;
  /**
   * The test whose body is running, for tests that run concurrently (concurrentIt in context.ts):
   * its body runs in this scope (inTestScope), so that what it sends is its evidence, whichever
   * test began last.
   */
  private readonly scope = new AsyncLocalStorage<RunnerTestCase>();
  /** Exchanges made outside a test (in hooks) go with the next test. */
  private pending: RecordedExchange[] = [];
  private pendingUnplanned = 0;
  private pendingRisked = 0;
  /** What each exchange was recorded as, so that a failure can mark it. */
  private readonly recordedAs = new WeakMap<Exchange, RecordedExchange>();

  beginTest(task: RunnerTestCase): void {
    this.current = task;
    task.meta.tmi = { exchanges: this.pending, unplanned429: this.pendingUnplanned, risked429: this.pendingRisked };
    this.pending = [];
    this.pendingUnplanned = 0;
    this.pendingRisked = 0;
  }

  endTest(): void {
    this.current = undefined;
  }

  /** A test body that records its exchanges as its own evidence, whatever runs beside it. */
  inTestScope<C extends { task: unknown }>(body: (context: C) => Promise<void>): (context: C) => Promise<void> {
    return (context) => this.scope.run(context.task as RunnerTestCase, () => body(context));
  }

  /**
   * Records a judged exchange. A request the suite broke the rules with on purpose (to see it
   * refused) is the suite's doing, not a client's: its client findings are dropped.
   */
  exchange(exchange: Exchange, judgement: Judgement, deliberate: boolean): void {
    const recorded = redactedRecord(exchange, judgement, deliberate);
    this.recordedAs.set(exchange, recorded);
    const test = this.runningTest();
    if (test?.meta.tmi) test.meta.tmi.exchanges.push(recorded);
    else this.pending.push(recorded);
  }

  /**
   * The running test's failure concerns `exchange` (the report shows it, with a curl command for
   * it) and is evidence against `charged` (none: a precondition was not met).
   */
  markFailing(exchange: Exchange, charged: string[]): void {
    const recorded = this.recordedAs.get(exchange);
    if (recorded) recorded.failing = true;
    const test = this.runningTest();
    if (test?.meta.tmi) test.meta.tmi.charged = charged;
  }

  unplanned429(): void {
    const test = this.runningTest();
    if (test?.meta.tmi) test.meta.tmi.unplanned429++;
    else this.pendingUnplanned++;
  }

  risked429(): void {
    const test = this.runningTest();
    if (test?.meta.tmi) test.meta.tmi.risked429++;
    else this.pendingRisked++;
  }

  /** The test the running code belongs to. */
  private runningTest(): RunnerTestCase | undefined {
    return this.scope.getStore() ?? this.current;
  }
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
