// GET /resource-servers/{id}: by id or by audience, every documented field. Which fields an
// include_fields selection names is not shown in the document (no parameter for them is), so
// nothing about a selection is tested.
import { describe, it } from 'vitest';
import { INCLUDE_FIELDS_VALUES } from '../rules/checks/resource-servers.ts';
import { oddIdExamples, oddIds } from './arbitraries.ts';
import {
  api,
  checkIndependentCases,
  config,
  covers,
  expectCarriedOut,
  expectExamined,
  expectNoFindings,
  expectRefused,
  expectStatus,
  expectSuccess,
  needsProfile,
  needsResourceServer,
  needsServed,
  unknownId,
} from './context.ts';
import type { TestContext } from 'vitest';

const SHAPE = [
  'RS-RESPONSE-SCHEMA',
  'RS-SIGNING-ALG',
  'RS-TOKEN-DIALECT',
  'RS-TOKEN-ENCRYPTION',
  'RS-NAME-CHARACTERS',
  'RS-SIGNING-SECRET-LENGTH',
  'RS-TOKEN-LIFETIME-FOR-WEB',
  'RS-LOOKUP-BY-ID-OR-AUDIENCE',
  'GEN-JSON-RESPONSE',
];

function fixtures(context: TestContext): string[] {
  needsServed(context, 'getResourceServer');
  needsProfile(context, 'full');
  needsResourceServer(context);
  return config.fixtures.resourceServers;
}

// long: the operation's tests, one short `it` each, read as one list.
describe('get a resource server', () => {
  it(...covers('each fixture, read by id, comes back in the documented shape', ...SHAPE), async (context) => {
    for (const id of fixtures(context)) {
      const answer = await api.getResourceServer(id);
      expectNoFindings(answer, ...SHAPE);
      expectSuccess(answer, `resource server ${id} was not seen`);
      expectExamined(answer, 'RS-RESPONSE-SCHEMA', `resource server ${id} was not seen`);
    }
  });

  it(...covers('a resource server read answers 200', 'RS-SUCCESS-200'), async (context) => {
    const answer = await api.getResourceServer(fixtures(context)[0]!);
    expectSuccess(answer, 'no success status was seen');
    expectStatus(answer, 200, 'RS-SUCCESS-200');
  });

  it(...covers('each fixture is found by its audience, read back from identifier', 'RS-LOOKUP-BY-ID-OR-AUDIENCE'), async (context) => {
    for (const id of fixtures(context)) {
      const byId = await api.getResourceServer(id);
      const identifier = (byId.json as { identifier?: unknown } | undefined)?.identifier;
      expectSuccess(byId, `its identifier (the audience to look up) was not read`);
      expectExamined(byId, 'RS-RESPONSE-SCHEMA', `its identifier (the audience to look up) was not read`);
      // A missing or non-string identifier is RS-RESPONSE-SCHEMA's finding; without one there is no audience to look up.
      expectNoFindings(byId, 'RS-RESPONSE-SCHEMA');
      if (typeof identifier !== 'string') continue;
      const answer = await api.getResourceServer(identifier as string);
      expectNoFindings(answer, 'RS-LOOKUP-BY-ID-OR-AUDIENCE');
      expectCarriedOut(answer, `the audience ${identifier} to be found`, 'RS-LOOKUP-BY-ID-OR-AUDIENCE');
      expectExamined(answer, 'RS-LOOKUP-BY-ID-OR-AUDIENCE', 'the resource server found by its audience was not seen');
    }
  });

  // The parameter naming the fields is "not shown": the kit sends include_fields alone, as the
  // boolean the document states, and judges only the answer's documented shape.
  for (const value of INCLUDE_FIELDS_VALUES) {
    it(
      ...covers(
        `include_fields=${value} (the boolean the document states) answers the resource server in the documented shape`,
        'RS-INCLUDE-FIELDS-BOOLEAN',
        'RS-RESPONSE-SCHEMA',
      ),
      async (context) => {
        const answer = await api.getResourceServer(fixtures(context)[0]!, { query: `?include_fields=${value}` });
        expectNoFindings(answer, 'RS-RESPONSE-SCHEMA');
        expectExamined(answer, 'RS-RESPONSE-SCHEMA', 'the resource server was not seen');
      },
    );
  }

  it(...covers('an unknown resource server is answered with a JSON error, not a success', 'GEN-STATUS-DOCUMENTED', 'GEN-ERROR-BODY'), async (context) => {
    needsServed(context, 'getResourceServer');
    needsProfile(context, 'full');
    const answer = await api.getResourceServer(unknownId('resource-server'));
    expectNoFindings(answer, 'GEN-STATUS-DOCUMENTED', 'GEN-ERROR-BODY');
    expectRefused(answer, 'no error answer to an unknown resource server was seen');
  });

  it(...covers('ids and audiences with reserved and unicode characters never give a 5xx', 'GEN-NO-SERVER-ERROR'), async (context) => {
    needsServed(context, 'getResourceServer');
    needsProfile(context, 'full');
    await checkIndependentCases(oddIds(), oddIdExamples(), async ({ value: id }) => {
      expectNoFindings(await api.getResourceServer(id), 'GEN-NO-SERVER-ERROR');
    });
  });
});
