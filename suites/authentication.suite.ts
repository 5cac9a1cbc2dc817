// Authentication and scopes: bearer JWTs, the 401 rules, and each operation's scope.
import { describe } from 'vitest';
import { isSuccess } from '../rules/checks/check.ts';
import { REQUIRED_SCOPES } from '../rules/checks/scopes.ts';
import {
  api,
  concurrentIt,
  config,
  covers,
  expectAnswer,
  expectExamined,
  expectIssuedTokenConforms,
  expectNoFindings,
  expectStatus,
  needs,
  needsProfile,
  needsResourceServer,
  needsServed,
  needsSession,
  restorableSessions,
  served,
  unknownId,
} from './context.ts';
import { scopesOfToken } from './tokens.ts';

const someResourceServer = () => config.fixtures.resourceServers[0] ?? unknownId('resource-server');

describe('authentication', () => {
  // Requests without a credential, or with a malformed one, are attacked in token-attacks.suite.ts.

  concurrentIt(...covers('a token with an invalid signature is refused with 401 when deleting', 'AUTH-INVALID-SIGNATURE-401'), async (context) => {
    needsServed(context, 'deleteTokenExchangeProfile');
    needsProfile(context, 'full');
    const answer = await api.deleteTokenExchangeProfile(unknownId('profile'), { as: 'corrupted-signature' });
    expectNoFindings(answer, 'AUTH-INVALID-SIGNATURE-401');
    expectExamined(answer, 'AUTH-INVALID-SIGNATURE-401', 'no refusal of the corrupted signature was seen');
  });

  concurrentIt(
    ...covers('a token with an invalid signature is refused with 401 when updating a session or reading a resource server', 'AUTH-INVALID-SIGNATURE-401-OTHER'),
    async (context) => {
      needsServed(context, 'updateSession', 'getResourceServer');
      needsProfile(context, 'full');
      const answers = [];
      if (served('updateSession')) answers.push(await api.updateSession(unknownId('session'), { session_metadata: null }, { as: 'corrupted-signature' }));
      if (served('getResourceServer')) answers.push(await api.getResourceServer(someResourceServer(), { as: 'corrupted-signature' }));
      for (const answer of answers) {
        expectNoFindings(answer, 'AUTH-INVALID-SIGNATURE-401-OTHER');
        expectExamined(answer, 'AUTH-INVALID-SIGNATURE-401-OTHER', 'no refusal of the corrupted signature was seen');
      }
    },
  );

  concurrentIt(...covers('a client that is not global is refused with 401 when deleting', 'AUTH-NON-GLOBAL-401'), async (context) => {
    needsServed(context, 'deleteTokenExchangeProfile');
    needsProfile(context, 'non_global');
    const answer = await api.deleteTokenExchangeProfile(unknownId('profile'), { as: 'non_global' });
    expectNoFindings(answer, 'AUTH-NON-GLOBAL-401');
    expectExamined(
      answer,
      'AUTH-NON-GLOBAL-401',
      'no answer to a client that is not global was seen (its token was judged invalid, or the request was throttled)',
    );
  });

  concurrentIt(
    ...covers('the tokens issued are JWTs whose scopes have the form <action>:<resource>', 'AUTH-TOKEN-IS-JWT', 'SCOPE-FORMAT', 'AUTH-BEARER-HEADER'),
    async (context) => {
      needsServed(context, 'getResourceServer');
      needsProfile(context, 'full');
      const answer = await api.getResourceServer(someResourceServer());
      expectExamined(answer, 'AUTH-TOKEN-IS-JWT', 'the token the target issued was not judged');
      // AUTH-BEARER-HEADER is about the header the kit wrote: covered here, never charged to the target.
      expectIssuedTokenConforms(answer, 'AUTH-TOKEN-IS-JWT', 'SCOPE-FORMAT');
    },
  );
});

// long: the scope tests, one short `it` each, read as one list.
describe('scopes', () => {
  concurrentIt(...covers('deleting without delete:token_exchange_profiles is refused', 'SCOPE-DELETE-REQUIRED'), async (context) => {
    needsServed(context, 'deleteTokenExchangeProfile');
    needsProfile(context, 'no_scope');
    needs(
      context,
      !scopesOfToken(await api.tokens.token('no_scope')).includes('delete:token_exchange_profiles'),
      'the no_scope profile holds delete:token_exchange_profiles',
    );
    const answer = await api.deleteTokenExchangeProfile(unknownId('profile'), { as: 'no_scope' });
    expectNoFindings(answer, 'SCOPE-DELETE-REQUIRED');
    expectExamined(answer, 'SCOPE-DELETE-REQUIRED', 'no answer to a token without the scope was seen');
    expectAnswer(answer, !isSuccess(answer.status), 'SCOPE-DELETE-REQUIRED', 'a refusal of a delete by a token without delete:token_exchange_profiles');
  });

  concurrentIt(
    ...covers('insufficient scope is answered 403 with a message that names delete:token_exchange_profiles', 'SCOPE-DELETE-403'),
    async (context) => {
      needsServed(context, 'deleteTokenExchangeProfile');
      needsProfile(context, 'no_scope');
      needs(
        context,
        !scopesOfToken(await api.tokens.token('no_scope')).includes('delete:token_exchange_profiles'),
        'the no_scope profile holds delete:token_exchange_profiles',
      );
      const answer = await api.deleteTokenExchangeProfile(unknownId('profile'), { as: 'no_scope' });
      expectNoFindings(answer, 'SCOPE-DELETE-403');
      expectStatus(answer, 403, 'SCOPE-DELETE-403', 'for a token without the scope');
    },
  );

  concurrentIt(...covers('updating a session without update:sessions is refused', 'SCOPE-UPDATE-SESSION'), async (context) => {
    needsServed(context, 'updateSession');
    needsProfile(context, 'no_scope');
    needsSession(context);
    needs(
      context,
      !scopesOfToken(await api.tokens.token('no_scope')).includes(REQUIRED_SCOPES.updateSession.scope),
      'the no_scope profile holds update:sessions',
    );
    // The session's own metadata is sent: even a target that wrongly accepts changes nothing.
    const session = restorableSessions()[0]!;
    const answer = await api.updateSession(session.id, { session_metadata: session.original!.session_metadata }, { as: 'no_scope' });
    expectNoFindings(answer, 'SCOPE-UPDATE-SESSION');
    expectExamined(answer, 'SCOPE-UPDATE-SESSION', 'no answer to a token without update:sessions was seen');
  });

  concurrentIt(...covers('reading a resource server without read:resource_servers is refused', 'SCOPE-READ-RESOURCE-SERVER'), async (context) => {
    needsServed(context, 'getResourceServer');
    needsProfile(context, 'no_scope');
    needsResourceServer(context);
    needs(
      context,
      !scopesOfToken(await api.tokens.token('no_scope')).includes(REQUIRED_SCOPES.getResourceServer.scope),
      'the no_scope profile holds read:resource_servers',
    );
    const answer = await api.getResourceServer(config.fixtures.resourceServers[0]!, { as: 'no_scope' });
    expectNoFindings(answer, 'SCOPE-READ-RESOURCE-SERVER');
    expectExamined(answer, 'SCOPE-READ-RESOURCE-SERVER', 'no answer to a token without read:resource_servers was seen');
  });

  concurrentIt(...covers("the scopes granted are in the document's scope catalog", 'SCOPE-IN-CATALOG'), async (context) => {
    needsServed(context, 'getResourceServer');
    needsProfile(context, 'full');
    const answer = await api.getResourceServer(someResourceServer());
    expectExamined(answer, 'SCOPE-IN-CATALOG', 'the scopes of the token the target issued were not judged');
    expectIssuedTokenConforms(answer, 'SCOPE-IN-CATALOG');
  });
});
