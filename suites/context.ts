// What every suite file shares inside the test worker: the run's configuration (handed over by
// `tmi-conform run` through vitest's provide/inject, never through a file), one API client,
// and the helpers that tie a test to the requirements it covers.
import type { Arbitrary } from 'fast-check';
import { inject, it, type TestContext, type TestOptions } from 'vitest';
import { findingMessage } from '../rules/message.ts';
import { isSuccess } from '../rules/checks/check.ts';
import { TestEvidenceLog } from './evidence.ts';
import { ConformanceFailure, failureText, receivedAnswer } from './failure.ts';
import type { Profile, SuiteConfig } from './config.ts';
import type { Judged } from './http.ts';
import { SuiteApi } from './api.ts';
import { TenantTokens } from '../keys/tenant.ts';
import { receiveHandover, reportProgress, whenInterrupted, type Handover, type HandoverAddress } from './handover.ts';
import { assertEdgesThenRandom, assertEdgesThenRandomConcurrently } from './budget.ts';
export { covers } from './requirement-tags.ts';
import type { ApiOperationId } from '../rules/checks/served.ts';
import { notServedReason } from './preflight.ts';

declare module 'vitest' {
  interface ProvidedContext {
    /** The run's configuration as the preflight started with it. */
    tmiConfig: SuiteConfig;
    /** Where the preflight's outcome is had (suites/handover.ts). */
    tmiHandover: HandoverAddress;
  }
}

/** What the run's files share in the worker: the preflight's outcome, and one client with its tokens, pacing, rate-limit history and its tests' evidence. */
interface SuiteWorker {
  handover: Handover;
  config: SuiteConfig;
  api: SuiteApi;
  evidence: TestEvidenceLog;
}

/** The worker's share, made once: the preflight's outcome had, the client made, the interrupt, Ctrl-C and the progress line attended to. */
async function startWorker(given: SuiteConfig, address: HandoverAddress): Promise<SuiteWorker> {
  // The worker starts while the preflight runs; no test sends a request before it ended.
  const handover = await receiveHandover(address);
  const config: SuiteConfig = {
    ...given,
    tokenUrls: handover.tokenUrls,
    fixtures: { ...given.fixtures, tokenExchangeProfiles: given.fixtures.tokenExchangeProfiles.filter((id) => !handover.deletedProfiles.includes(id)) },
  };
  const evidence = new TestEvidenceLog();
  // Every token the suites send is settled against what the run learned of the tenant's tokens
  // when it started (keys/tenant.ts: the issuer and the keys, from the config, the discovery
  // document or its tokens).
  const api = new SuiteApi(config, TenantTokens.fromData(handover.tenant), handover.tokens, evidence);
  // An interrupt of the run reaches the worker from the main process (suites/handover.ts): the
  // client's waits and requests end at once, so the tests and hooks still running end with them.
  void whenInterrupted(address).then(() => api.interrupt());
  // A terminal's Ctrl-C reaches this process too (it is in the run's process group). The main
  // process says what it does: the first one ends no more than the waits and requests (above),
  // the second ends everything at once, as it ends the main process.
  process.once('SIGINT', () => process.once('SIGINT', () => process.exit(130)));
  // The run's progress line (suites/progress.ts): what only the worker knows, posted to the main process.
  reportProgress(address, () => ({ requests: api.sent, pacer: api.pacer.state() }));
  return { handover, config, api, evidence };
}

// module-state: vitest evaluates this module once per worker, for all the run's files (suites/runner.ts: isolate false): the worker's one share.
const worker = await startWorker(inject('tmiConfig'), inject('tmiHandover'));

/**
 * Fixture profiles the target deleted on the preflight's request without a token (a security
 * finding the preflight reported): they are gone, so no suite sends them a request.
 */
export const deletedProfiles: string[] = worker.handover.deletedProfiles;
/** The configuration, with the token endpoint where the preflight had its tokens, and the fixture profiles that are left. */
export const config: SuiteConfig = worker.config;
export const api: SuiteApi = worker.api;
/** The running test's evidence: vitest's hooks (suites/setup.ts) tell it which test runs. */
export const evidence: TestEvidenceLog = worker.evidence;

// How a test's expectations charge requirements. A test fails only in the kit's words, and its
// failure is evidence against exactly the requirements it names:
// - the findings it stopped at ("ID: expected …; received …"), and first of all any security
//   finding on the exchange (the target carried out a request it should have refused);
// - an expectation that is a requirement itself (expectStatus, expectAnswer, expectCarriedOut);
// - nothing, when a precondition was not met (expectSuccess, expectExamined): the test could not
//   examine what it covers, and says why ("not examined: the DELETE answered 404, so no 204 body
//   was seen"). Requirements about the kit's own request are never among them.

/** The test fails on an implementation finding about one of `ids`; other findings reach the report anyway. */
export function expectNoFindings(judged: Judged, ...ids: string[]): void {
  failOnSecurityFindings(judged);
  failOnFindings(
    judged,
    judged.findings.filter((f) => f.subject === 'implementation' && ids.includes(f.requirement)),
  );
}

/**
 * For rules about the token the target issued (JWT format, scope form and catalog): the engine
 * files them under the client that sends the token, so findings of either subject count.
 */
export function expectIssuedTokenConforms(judged: Judged, ...ids: string[]): void {
  failOnSecurityFindings(judged);
  failOnFindings(
    judged,
    judged.findings.filter((f) => ids.includes(f.requirement)),
  );
}

/**
 * Fails the running test in the kit's words: each line says what was expected and what was
 * received, and the exchange beneath says what was sent and what came back. The exchange is
 * marked, so the report shows it with a curl command that sends it again; `charged` are the
 * requirements the failure is evidence against.
 */
function fail(judged: Judged, lines: string[], charged: string[]): never {
  evidence.markFailing(judged.exchange, charged);
  throw new ConformanceFailure(failureText(lines, judged.exchange));
}

function failOnFindings(judged: Judged, findings: Judged['findings']): void {
  // The findings' own messages ("ID: expected …; received …") make the failure.
  if (findings.length > 0) fail(judged, findings.map(findingMessage), [...new Set(findings.map((f) => f.requirement))]);
}

/** The target carried out what it should have refused: whatever the test is about, that is what it reports. */
function failOnSecurityFindings(judged: Judged): void {
  failOnFindings(
    judged,
    judged.findings.filter((f) => f.security !== undefined && f.subject === 'implementation'),
  );
}

/** "the DELETE answered 404" / "the PATCH got no response (…)": what happened, as a not-examined reason starts. */
function whatHappened(judged: Judged): string {
  const { method } = judged.exchange.request;
  const response = judged.exchange.response;
  if (!response) return `the ${method} got no response${judged.exchange.error ? ` (${judged.exchange.error})` : ''}`;
  return `the ${method} answered ${response.status}`;
}

/** A precondition of the test: unmet, the test ends "not examined: <what happened>, so <so>" and charges nothing. */
function precondition(judged: Judged, met: boolean, so: string): void {
  failOnSecurityFindings(judged);
  if (!met) fail(judged, [`not examined: ${whatHappened(judged)}, so ${so}`], []);
}

/** The exchange did put `id` to the test; otherwise the test could not examine it (`so`: what was not seen). */
export function expectExamined(judged: Judged, id: string, so: string): void {
  precondition(judged, judged.examined.includes(id), so);
}

/** The target carried the request out (2xx), as the rest of the test needs; otherwise `so` says what was not seen. */
export function expectSuccess(judged: Judged, so: string): void {
  precondition(judged, isSuccess(judged.status), so);
}

/** The target refused the request (4xx), as the rest of the test needs; otherwise `so` says what was not seen. */
export function expectRefused(judged: Judged, so: string): void {
  precondition(judged, judged.status >= 400 && judged.status < 500, so);
}

/** The target answered `status`, as `requirementId` asks: "ID: expected 200; received 201". */
export function expectStatus(judged: Judged, status: number, requirementId: string, why?: string): void {
  failOnSecurityFindings(judged);
  if (judged.status !== status)
    fail(judged, [`${requirementId}: expected ${status}${why ? ` ${why}` : ''}; received ${receivedAnswer(judged.exchange)}`], [requirementId]);
}

/** Any other expectation that is `requirementId` itself: "ID: expected <expected>; received <received>" (default: its status). */
export function expectAnswer(judged: Judged, met: boolean, requirementId: string, expected: string, received: string = receivedAnswer(judged.exchange)): void {
  failOnSecurityFindings(judged);
  if (!met) fail(judged, [`${requirementId}: expected ${expected}; received ${received}`], [requirementId]);
}

/**
 * Statuses that answer something other than what the request asks for: the credential (401,
 * 403), the rate limit (429), a failure of the server (5xx). Each has rules of its own; none
 * shows the target's answer to the request itself.
 */
const answersSomethingElse = (status: number): boolean => status === 401 || status === 403 || status === 429 || status >= 500;

/**
 * The target carried out a request the document says it serves (a fixture read by its audience,
 * metadata within the limits): a refusal of the request itself (400, 404, 422, …) is evidence
 * against `requirementIds`; a refusal for another reason (credential, rate limit, server error)
 * or no answer leaves the test not examined.
 */
export function expectCarriedOut(judged: Judged, expected: string, ...requirementIds: string[]): void {
  failOnSecurityFindings(judged);
  if (isSuccess(judged.status)) return;
  if (judged.exchange.response === undefined || answersSomethingElse(judged.status)) precondition(judged, false, `${expected} could not be judged`);
  fail(
    judged,
    requirementIds.map((id) => `${id}: expected ${expected} (2xx); received ${receivedAnswer(judged.exchange)}`),
    requirementIds,
  );
}

/** Skips the test, with the reason in the report, unless the run has what it needs. */
export function needs(context: TestContext, condition: boolean, reason: string): void {
  if (!condition) context.skip(reason);
}

const notServed: ApiOperationId[] = worker.handover.notServed;

/** The target serves the operation (the run's preflight found it answering). */
export const served = (operation: ApiOperationId): boolean => !notServed.includes(operation);

/** Skips the test, with the reason, when the target serves none of `operations` (a test of several uses those it serves). */
export function needsServed(context: TestContext, ...operations: ApiOperationId[]): void {
  needs(context, operations.some(served), operations.map(notServedReason).join('; '));
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

export const needsResourceServer = (context: TestContext) =>
  needs(context, config.fixtures.resourceServers.length > 0, 'no fixture resource server in the configuration (fixtures.resource_servers)');

/** An id that exists nowhere: safe to send requests that a faulty target might carry out. */
export const unknownId = (what: string) => `tmi-conform-unknown-${what}-${process.pid}`;

/**
 * A property of the run: every named edge case first, whatever --property-runs says, then the
 * run's random ones (config.propertyRuns), within its request budget.
 */
export function checkProperty<T>(arbitrary: Arbitrary<T>, edges: readonly T[], predicate: (value: T) => Promise<void>): Promise<void> {
  return assertEdgesThenRandom(arbitrary, edges, config.propertyRuns, predicate);
}

/**
 * checkProperty for a property whose cases share no state (no case changes what another
 * examines, none depends on another's order): the same cases, several at a time when the
 * target is far enough away for that to pay (suites/pacing.ts), one at a time otherwise.
 */
export function checkIndependentCases<T>(arbitrary: Arbitrary<T>, edges: readonly T[], predicate: (value: T) => Promise<void>): Promise<void> {
  return assertEdgesThenRandomConcurrently(arbitrary, edges, config.propertyRuns, predicate, () => api.pacer.widestMaxInFlight());
}

/**
 * A test that runs beside the other such tests of its file (vitest's it.concurrent, at most
 * maxConcurrency at once), its exchanges recorded as its own evidence. Only for tests that share
 * no state with each other: each sends what it examines and judges its own answers. The pacer
 * decides how many requests actually go at once (one at a time against a nearby target).
 * `options` declare the requirements it covers: `concurrentIt(...covers(title, ...ids), body)`.
 */
export function concurrentIt(name: string, options: TestOptions, body: (context: TestContext) => Promise<void>): void {
  it.concurrent(name, options, evidence.inTestScope(body));
}
