// PATCH /sessions/{id}: session_metadata set, replaced, cleared by null or {}, limits enforced.
// Only sessions whose original metadata is known are changed; the run puts it back.
import { afterAll, describe, it } from 'vitest';
import { isSuccess } from '../rules/checks/check.ts';
import { invalidSessionUpdates, invalidUpdateExamples, oddIdExamples, oddIds, validMetadataExamples, validSessionMetadata } from './arbitraries.ts';
import {
  api,
  checkIndependentCases,
  checkProperty,
  covers,
  expectAnswer,
  expectCarriedOut,
  expectExamined,
  expectNoFindings,
  expectRefused,
  expectStatus,
  expectSuccess,
  needsProfile,
  needsServed,
  needsSession,
  restorableSessions,
  served,
  unknownId,
} from './context.ts';
import type { TestContext } from 'vitest';

/** The session the tests change, once the test may use one. */
function sessionFor(context: TestContext): string {
  needsServed(context, 'updateSession');
  needsProfile(context, 'full');
  needsSession(context);
  return restorableSessions()[0]!.id;
}

afterAll(async () => {
  // The run restores every changed session at its end too, even when interrupted; this keeps
  // the target tidy between files.
  if (!served('updateSession')) return;
  for (const session of restorableSessions())
    await api.updateSession(session.id, { session_metadata: session.original!.session_metadata }).catch(() => undefined);
});

// long: the operation's tests, one short `it` each, read as one list.
describe('update session', () => {
  it(
    ...covers(
      'setting session_metadata answers with the session in the documented shape',
      'SES-RESPONSE-SCHEMA',
      'SES-METADATA-MAX-PROPERTIES',
      'SES-METADATA-VALUE-LENGTH',
      'SES-REQUEST-CONTENT-TYPE',
      'SES-REQUEST-BODY',
      'GEN-JSON-RESPONSE',
    ),
    async (context) => {
      const answer = await api.updateSession(sessionFor(context), { session_metadata: { plan: 'gold', locale: 'en-GB', note: 'set by tmi-conform' } });
      expectNoFindings(answer, 'SES-RESPONSE-SCHEMA', 'SES-METADATA-MAX-PROPERTIES', 'SES-METADATA-VALUE-LENGTH', 'GEN-JSON-RESPONSE');
      expectCarriedOut(answer, 'the update within the limits to be carried out', 'SES-METADATA-MAX-PROPERTIES', 'SES-METADATA-VALUE-LENGTH');
      expectExamined(answer, 'SES-RESPONSE-SCHEMA', 'the updated session was not seen');
    },
  );

  it(
    ...covers('the update answers 200 with the metadata sent, for the session named in the path', 'SES-SUCCESS-200', 'SES-METADATA-ECHOED', 'SES-ID-MATCHES'),
    async (context) => {
      const answer = await api.updateSession(sessionFor(context), { session_metadata: { tier: 'silver' } });
      expectNoFindings(answer, 'SES-SUCCESS-200', 'SES-METADATA-ECHOED', 'SES-ID-MATCHES');
      expectSuccess(answer, 'no success status was seen');
      expectStatus(answer, 200, 'SES-SUCCESS-200');
      expectExamined(answer, 'SES-METADATA-ECHOED', 'the updated session was not seen');
    },
  );

  for (const [label, cleared] of [
    ['null', null],
    ['{}', {}],
  ] as const) {
    it(...covers(`sending ${label} removes all session metadata`, 'SES-METADATA-CLEARED'), async (context) => {
      const id = sessionFor(context);
      expectSuccess(await api.updateSession(id, { session_metadata: { a: '1', b: '2' } }), 'no metadata was set to be removed');
      const answer = await api.updateSession(id, { session_metadata: cleared });
      expectExamined(answer, 'SES-METADATA-CLEARED', `the session was not seen after sending ${label}`);
      expectNoFindings(answer, 'SES-METADATA-CLEARED');
    });
  }

  it(
    ...covers(
      'any session_metadata within the limits (25 properties, 255 characters) is accepted',
      'SES-RESPONSE-SCHEMA',
      'SES-METADATA-MAX-PROPERTIES',
      'SES-METADATA-VALUE-LENGTH',
    ),
    async (context) => {
      const id = sessionFor(context);
      await checkProperty(validSessionMetadata(), validMetadataExamples(), async ({ value: metadata }) => {
        const answer = await api.updateSession(id, { session_metadata: metadata });
        expectNoFindings(answer, 'SES-RESPONSE-SCHEMA', 'SES-METADATA-MAX-PROPERTIES', 'SES-METADATA-VALUE-LENGTH');
        expectCarriedOut(answer, 'metadata within the limits to be accepted', 'SES-METADATA-MAX-PROPERTIES', 'SES-METADATA-VALUE-LENGTH');
      });
    },
  );

  it(
    ...covers(
      'session_metadata that breaks the rules is refused, not stored',
      'SES-INVALID-UPDATE-REFUSED',
      'SES-METADATA-MAX-PROPERTIES',
      'SES-METADATA-VALUE-LENGTH',
    ),
    async (context) => {
      const id = sessionFor(context);
      // Each case is refused (what is examined), and a refused update leaves the session as it was: no case changes what another sees.
      await checkIndependentCases(invalidSessionUpdates(), invalidUpdateExamples(), async ({ why, body }) => {
        const answer = await api.updateSession(id, body, { deliberate: true });
        expectNoFindings(answer, 'SES-INVALID-UPDATE-REFUSED', 'SES-METADATA-MAX-PROPERTIES', 'SES-METADATA-VALUE-LENGTH');
        expectAnswer(answer, !isSuccess(answer.status), 'SES-INVALID-UPDATE-REFUSED', `${why} to be refused`);
      });
    },
  );

  it(...covers('an unknown session is answered with a JSON error, not a success', 'GEN-STATUS-DOCUMENTED', 'GEN-ERROR-BODY'), async (context) => {
    needsServed(context, 'updateSession');
    needsProfile(context, 'full');
    const answer = await api.updateSession(unknownId('session'), { session_metadata: null });
    expectNoFindings(answer, 'GEN-STATUS-DOCUMENTED', 'GEN-ERROR-BODY');
    expectRefused(answer, 'no error answer to an unknown session was seen');
  });

  it(...covers('session ids with reserved and unicode characters never give a 5xx', 'GEN-NO-SERVER-ERROR'), async (context) => {
    needsServed(context, 'updateSession');
    needsProfile(context, 'full');
    await checkIndependentCases(oddIds(), oddIdExamples(), async ({ value: id }) => {
      expectNoFindings(await api.updateSession(id, { session_metadata: null }), 'GEN-NO-SERVER-ERROR');
    });
  });
});
