// DELETE /token-exchange-profiles/{id}: "Success | `204`; the profile is deleted; no body."
import { describe, it } from 'vitest';
import { oddIdExamples, oddIds } from './arbitraries.ts';
import {
  api,
  checkIndependentCases,
  config,
  covers,
  deletedProfiles,
  expectExamined,
  expectNoFindings,
  expectSuccess,
  needs,
  needsProfile,
  needsServed,
  unknownId,
} from './context.ts';

const destructiveReason = 'allow_destructive is not set: nothing is deleted';

/** Why fewer profiles are left than the configuration lists: the target deleted some on the preflight's request without a token. */
const goneReason = () =>
  deletedProfiles.length > 0 ? ` (${deletedProfiles.join(', ')}: deleted by the target on the preflight's request without a token, see the report)` : '';

describe('delete a token exchange profile', () => {
  it(...covers('deleting a disposable profile answers 204 with no body', 'TEP-DELETE-204', 'TEP-DELETE-NO-BODY'), async (context) => {
    needsServed(context, 'deleteTokenExchangeProfile');
    needsProfile(context, 'full');
    needs(context, config.allowDestructive, destructiveReason);
    needs(
      context,
      config.fixtures.tokenExchangeProfiles.length > 0,
      `no disposable token exchange profile left in the configuration (fixtures.token_exchange_profiles)${goneReason()}`,
    );
    const answer = await api.deleteTokenExchangeProfile(config.fixtures.tokenExchangeProfiles[0]!);
    expectNoFindings(answer, 'TEP-DELETE-204', 'TEP-DELETE-NO-BODY');
    expectSuccess(answer, 'no 204 body was seen');
    expectExamined(answer, 'TEP-DELETE-204', 'no 204 body was seen');
  });

  it(...covers('every disposable profile listed can be deleted the same way', 'TEP-DELETE-204', 'TEP-DELETE-NO-BODY'), async (context) => {
    needsServed(context, 'deleteTokenExchangeProfile');
    needsProfile(context, 'full');
    needs(context, config.allowDestructive, destructiveReason);
    const rest = config.fixtures.tokenExchangeProfiles.slice(1);
    needs(context, rest.length > 0, `only one disposable token exchange profile left in the configuration${goneReason()}`);
    for (const id of rest) expectNoFindings(await api.deleteTokenExchangeProfile(id), 'TEP-DELETE-204', 'TEP-DELETE-NO-BODY');
  });

  it(...covers('deleting a profile that does not exist is not a server error', 'GEN-NO-SERVER-ERROR', 'GEN-STATUS-DOCUMENTED'), async (context) => {
    needsServed(context, 'deleteTokenExchangeProfile');
    needsProfile(context, 'full');
    // An id that exists nowhere: nothing is deleted, whatever the target does.
    const answer = await api.deleteTokenExchangeProfile(unknownId('profile'));
    expectNoFindings(answer, 'GEN-NO-SERVER-ERROR', 'GEN-STATUS-DOCUMENTED');
  });

  it(...covers('ids with reserved and unicode characters never give a 5xx', 'GEN-NO-SERVER-ERROR'), async (context) => {
    needsServed(context, 'deleteTokenExchangeProfile');
    needsProfile(context, 'full');
    needs(context, config.allowDestructive, destructiveReason);
    await checkIndependentCases(oddIds(), oddIdExamples(), async ({ value: id }) => {
      expectNoFindings(await api.deleteTokenExchangeProfile(id), 'GEN-NO-SERVER-ERROR');
    });
  });
});
