// What every suite file shares inside the test worker: the run's configuration (handed over by
// `tmi-conform run` through vitest's provide/inject, never through a file), one API client,
// and the helpers that tie a test to the requirements it covers.
import type { Arbitrary } from 'fast-check';
import { inject, type TestContext } from 'vitest';
import { findingMessage } from '../rules/message.ts';
import { markFailing } from './evidence.ts';
import { ConformanceFailure, failureText, receivedAnswer } from './failure.ts';
import type { Profile, SuiteConfig } from './config.ts';
import type { Judged } from './http.ts';
import './tenant-tokens.ts';
import { SuiteApi } from './api.ts';
import { assertEdgesThenRandom } from './budget.ts';
export { covers } from './requirement-names.ts';
import type { CachedToken } from './tokens.ts';

declare module 'vitest' {
  interface ProvidedContext {
    tmiConfig: SuiteConfig;
    tmiTokens: Partial<Record<Profile, CachedToken>>;
  }
}

export const config: SuiteConfig = inject('tmiConfig');

// One client per worker: the run's files share its tokens, pacing and rate-limit history.
const shared = globalThis as { tmiSuiteApi?: SuiteApi };
export const api: SuiteApi = (shared.tmiSuiteApi ??= new SuiteApi(config, inject('tmiTokens')));

/** The test fails on an implementation finding about one of `ids`; other findings reach the report anyway. */
export function expectNoFindings(judged: Judged, ...ids: string[]): void {
  failOnFindings(judged, judged.findings.filter((f) => f.subject === 'implementation' && ids.includes(f.requirement)));
}

/**
 * For rules about the token the target issued (JWT format, scope form and catalog): the engine
 * files them under the client that sends the token, so findings of either subject count.
 */
export function expectIssuedTokenConforms(judged: Judged, ...ids: string[]): void {
  failOnFindings(judged, judged.findings.filter((f) => ids.includes(f.requirement)));
}

/**
 * Fails the running test in the kit's words: each line says what was expected and what was
 * received, and the exchange beneath says what was sent and what came back. The exchange is
 * marked, so the report shows it with a curl command that sends it again.
 */
function fail(judged: Judged, lines: string[]): never {
  markFailing(judged.exchange);
  throw new ConformanceFailure(failureText(lines, judged.exchange));
}

function failOnFindings(judged: Judged, findings: Judged['findings']): void {
  // The findings' own messages ("ID: expected …; received …") make the failure, so the report
  // can tell which of the test's requirements it is evidence against.
  if (findings.length > 0) fail(judged, findings.map(findingMessage));
}

/** The exchange did put `id` to the test (e.g. a success response that the rule could judge). */
export function expectExamined(judged: Judged, id: string, what: string): void {
  // Not "ID: expected …": an exchange that examined nothing is evidence against every requirement the test covers.
  if (!judged.examined.includes(id)) fail(judged, [`${what} (to put ${id} to the test); received ${receivedAnswer(judged.exchange)}`]);
}

/** The target answered `status`; `why` follows it in the message ("for a token without the scope"). */
export function expectStatus(judged: Judged, status: number, why?: string): void {
  if (judged.status !== status) fail(judged, [`expected ${status}${why ? ` ${why}` : ''}; received ${receivedAnswer(judged.exchange)}`]);
}

/** The target carried the request out (2xx): "expected <what> (2xx); received 404". */
export function expectSuccess(judged: Judged, what: string): void {
  if (judged.status < 200 || judged.status >= 300) fail(judged, [`expected ${what} (2xx); received ${receivedAnswer(judged.exchange)}`]);
}

/** Any other expectation about an answer: "expected <expected>; received <received>" (default: its status). */
export function expectAnswer(judged: Judged, met: boolean, expected: string, received: string = receivedAnswer(judged.exchange)): void {
  if (!met) fail(judged, [`expected ${expected}; received ${received}`]);
}

/** Skips the test, with the reason in the report, unless the run has what it needs. */
export function needs(context: TestContext, condition: boolean, reason: string): void {
  if (!condition) context.skip(reason);
}

export const needsProfile = (context: TestContext, profile: Profile) =>
  needs(context, api.has(profile), `no "${profile}" credentials in the configuration (credentials.${profile})`);

/**
 * Fixture sessions the suite may change: those whose original metadata is known, and with
 * allow_destructive those given by id only (their `original` is no metadata: they are left cleared).
 */
export const restorableSessions = () => config.fixtures.sessions.filter((s) => s.original !== undefined);

export const needsSession = (context: TestContext) =>
  needs(
    context,
    restorableSessions().length > 0,
    config.fixtures.sessions.length > 0
      ? 'the fixture sessions are given by id only: the suite cannot learn their original metadata, so it does not change them (give {id, session_metadata}, or set allow_destructive to test them and leave their metadata cleared)'
      : 'no fixture session in the configuration (fixtures.sessions)',
  );

export const needsResourceServer = (context: TestContext) => needs(context, config.fixtures.resourceServers.length > 0, 'no fixture resource server in the configuration (fixtures.resource_servers)');

/** An id that exists nowhere: safe to send requests that a faulty target might carry out. */
export const unknownId = (what: string) => `tmi-conform-unknown-${what}-${process.pid}`;

/**
 * A property of the run: every named edge case first, whatever --property-runs says, then the
 * run's random ones (config.propertyRuns), within its request budget.
 */
export function checkProperty<T>(arbitrary: Arbitrary<T>, edges: readonly T[], predicate: (value: T) => Promise<void>): Promise<void> {
  return assertEdgesThenRandom(arbitrary, edges, config.propertyRuns, predicate);
}
