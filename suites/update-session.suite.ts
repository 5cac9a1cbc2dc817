// PATCH /sessions/{id}: session_metadata set, replaced, cleared by null or {}, limits enforced.
// Only sessions whose original metadata is known are changed; the run puts it back.
import { afterAll, describe, it } from 'vitest';
import { isSuccess } from '../rules/checks/check.ts';
import { invalidSessionUpdates, invalidUpdateExamples, oddIdExamples, oddIds, validMetadataExamples, validSessionMetadata } from './arbitraries.ts';
import { api, checkProperty, covers, expectAnswer, expectExamined, expectNoFindings, expectStatus, expectSuccess, needsProfile, needsSession, restorableSessions, unknownId } from './context.ts';
import type { TestContext } from 'vitest';


/** The session the tests change, once the test may use one. */
function sessionFor(context: TestContext): string {
  needsProfile(context, 'full');
  needsSession(context);
  return restorableSessions()[0]!.id;
}

afterAll(async () => {
  // The run restores every changed session at its end too, even when interrupted; this keeps
  // the target tidy between files.
  for (const session of restorableSessions()) await api.updateSession(session.id, { session_metadata: session.original!.session_metadata }).catch(() => undefined);
});

describe('update session', () => {
  it(covers('setting session_metadata answers with the session in the documented shape', 'SES-RESPONSE-SCHEMA', 'SES-METADATA-MAX-PROPERTIES', 'SES-METADATA-VALUE-LENGTH', 'SES-REQUEST-CONTENT-TYPE', 'SES-REQUEST-BODY', 'GEN-JSON-RESPONSE'), async (context) => {
    const answer = await api.updateSession(sessionFor(context), { session_metadata: { plan: 'gold', locale: 'en-GB', note: 'set by tmi-conform' } });
    expectNoFindings(answer, 'SES-RESPONSE-SCHEMA', 'SES-METADATA-MAX-PROPERTIES', 'SES-METADATA-VALUE-LENGTH', 'GEN-JSON-RESPONSE');
    expectSuccess(answer, 'the update to succeed');
    expectExamined(answer, 'SES-RESPONSE-SCHEMA', 'expected the updated session');
  });

  it(covers('the update answers 200 with the metadata sent, for the session named in the path', 'SES-SUCCESS-200', 'SES-METADATA-ECHOED', 'SES-ID-MATCHES'), async (context) => {
    const answer = await api.updateSession(sessionFor(context), { session_metadata: { tier: 'silver' } });
    expectNoFindings(answer, 'SES-SUCCESS-200', 'SES-METADATA-ECHOED', 'SES-ID-MATCHES');
    expectStatus(answer, 200);
    expectExamined(answer, 'SES-METADATA-ECHOED', 'expected the updated session');
  });

  for (const [label, cleared] of [['null', null], ['{}', {}]] as const) {
    it(covers(`sending ${label} removes all session metadata`, 'SES-METADATA-CLEARED'), async (context) => {
      const id = sessionFor(context);
      expectSuccess(await api.updateSession(id, { session_metadata: { a: '1', b: '2' } }), 'the metadata to be set first');
      const answer = await api.updateSession(id, { session_metadata: cleared });
      expectExamined(answer, 'SES-METADATA-CLEARED', `expected the session back after sending ${label}`);
      expectNoFindings(answer, 'SES-METADATA-CLEARED');
    });
  }

  it(covers('any session_metadata within the limits (25 properties, 255 characters) is accepted', 'SES-RESPONSE-SCHEMA', 'SES-METADATA-MAX-PROPERTIES', 'SES-METADATA-VALUE-LENGTH'), async (context) => {
    const id = sessionFor(context);
    await checkProperty(validSessionMetadata(), validMetadataExamples(), async ({ value: metadata }) => {
      const answer = await api.updateSession(id, { session_metadata: metadata });
      expectNoFindings(answer, 'SES-RESPONSE-SCHEMA', 'SES-METADATA-MAX-PROPERTIES', 'SES-METADATA-VALUE-LENGTH');
      expectSuccess(answer, 'valid metadata to be accepted');
    });
  });

  it(covers('session_metadata that breaks the rules is refused, not stored', 'SES-INVALID-UPDATE-REFUSED', 'SES-METADATA-MAX-PROPERTIES', 'SES-METADATA-VALUE-LENGTH'), async (context) => {
    const id = sessionFor(context);
    await checkProperty(invalidSessionUpdates(), invalidUpdateExamples(), async ({ why, body }) => {
      const answer = await api.updateSession(id, body, { deliberate: true });
      expectNoFindings(answer, 'SES-INVALID-UPDATE-REFUSED', 'SES-METADATA-MAX-PROPERTIES', 'SES-METADATA-VALUE-LENGTH');
      expectAnswer(answer, !isSuccess(answer.status), `${why} to be refused`);
    });
  });

  it(covers('an unknown session is answered with a JSON error, not a success', 'GEN-STATUS-DOCUMENTED', 'GEN-ERROR-BODY'), async (context) => {
    needsProfile(context, 'full');
    const answer = await api.updateSession(unknownId('session'), { session_metadata: null });
    expectNoFindings(answer, 'GEN-STATUS-DOCUMENTED', 'GEN-ERROR-BODY');
    expectAnswer(answer, answer.status >= 400, 'a 4xx for an unknown session');
  });

  it(covers('session ids with reserved and unicode characters never give a 5xx', 'GEN-NO-SERVER-ERROR'), async (context) => {
    needsProfile(context, 'full');
    await checkProperty(oddIds(), oddIdExamples(), async ({ value: id }) => {
      expectNoFindings(await api.updateSession(id, { session_metadata: null }), 'GEN-NO-SERVER-ERROR');
    });
  });
});
