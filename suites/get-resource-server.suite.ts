// GET /resource-servers/{id}: by id or by audience, include_fields, every documented field.
import { describe, it } from 'vitest';
import { oddIdExamples, oddIds } from './arbitraries.ts';
import { api, checkProperty, config, covers, expectAnswer, expectExamined, expectNoFindings, expectStatus, expectSuccess, needsProfile, needsResourceServer, unknownId } from './context.ts';
import type { TestContext } from 'vitest';

const SHAPE = ['RS-RESPONSE-SCHEMA', 'RS-SIGNING-ALG', 'RS-TOKEN-DIALECT', 'RS-TOKEN-ENCRYPTION', 'RS-NAME-CHARACTERS', 'RS-SIGNING-SECRET-LENGTH', 'RS-TOKEN-LIFETIME-FOR-WEB', 'RS-LOOKUP-BY-ID-OR-AUDIENCE', 'GEN-JSON-RESPONSE'];

function fixtures(context: TestContext): string[] {
  needsProfile(context, 'full');
  needsResourceServer(context);
  return config.fixtures.resourceServers;
}

describe('get a resource server', () => {
  it(covers('each fixture, read by id, comes back in the documented shape', ...SHAPE), async (context) => {
    for (const id of fixtures(context)) {
      const answer = await api.getResourceServer(id);
      expectNoFindings(answer, ...SHAPE);
      expectSuccess(answer, `${id} to be found`);
      expectExamined(answer, 'RS-RESPONSE-SCHEMA', `expected resource server ${id}`);
    }
  });

  it(covers('a resource server read answers 200', 'RS-SUCCESS-200'), async (context) => {
    const answer = await api.getResourceServer(fixtures(context)[0]!);
    expectStatus(answer, 200);
  });

  it(covers('each fixture is found by its audience, read back from identifier', 'RS-LOOKUP-BY-ID-OR-AUDIENCE'), async (context) => {
    for (const id of fixtures(context)) {
      const byId = await api.getResourceServer(id);
      const identifier = (byId.json as { identifier?: unknown } | undefined)?.identifier;
      expectAnswer(byId, typeof identifier === 'string', `resource server ${id} with an identifier (a string)`, `${byId.status}, identifier ${identifier === undefined ? 'missing' : JSON.stringify(identifier)}`);
      const answer = await api.getResourceServer(identifier as string);
      expectNoFindings(answer, 'RS-LOOKUP-BY-ID-OR-AUDIENCE');
      expectSuccess(answer, `the audience ${identifier} to be found`);
      expectExamined(answer, 'RS-LOOKUP-BY-ID-OR-AUDIENCE', 'expected the resource server');
    }
  });

  it(covers('include_fields=true with fields returns only the fields named', 'RS-FIELDS-SELECTION'), async (context) => {
    const answer = await api.getResourceServer(fixtures(context)[0]!, { query: '?fields=id,name,identifier&include_fields=true' });
    expectExamined(answer, 'RS-FIELDS-SELECTION', 'expected the selected fields');
    expectNoFindings(answer, 'RS-FIELDS-SELECTION');
  });

  it(covers('include_fields=false with fields leaves the fields named out', 'RS-FIELDS-SELECTION'), async (context) => {
    const answer = await api.getResourceServer(fixtures(context)[0]!, { query: '?fields=signing_secret,scopes&include_fields=false' });
    expectExamined(answer, 'RS-FIELDS-SELECTION', 'expected the remaining fields');
    expectNoFindings(answer, 'RS-FIELDS-SELECTION');
  });

  it(covers('an unknown resource server is answered with a JSON error, not a success', 'GEN-STATUS-DOCUMENTED', 'GEN-ERROR-BODY'), async (context) => {
    needsProfile(context, 'full');
    const answer = await api.getResourceServer(unknownId('resource-server'));
    expectNoFindings(answer, 'GEN-STATUS-DOCUMENTED', 'GEN-ERROR-BODY');
    expectAnswer(answer, answer.status >= 400, 'a 4xx for an unknown resource server');
  });

  it(covers('ids and audiences with reserved and unicode characters never give a 5xx', 'GEN-NO-SERVER-ERROR'), async (context) => {
    needsProfile(context, 'full');
    await checkProperty(oddIds(), oddIdExamples(), async ({ value: id }) => {
      expectNoFindings(await api.getResourceServer(id), 'GEN-NO-SERVER-ERROR');
    });
  });
});
