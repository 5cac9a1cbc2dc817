// Findings are data: what was expected and what was received travel as fields, the check's
// name is set by defineCheck (which refuses a requirement its check does not declare), and
// the message people read is made from the fields where it is shown.
import { describe, expect, it } from 'vitest';
import { defineCheck, finding, UndeclaredRequirement, type CheckInput } from '../rules/checks/check.ts';
import { judgeExchange, matchOperation } from '../rules/index.ts';
import { findingMessage } from '../rules/message.ts';
import { recordExchange } from '../recordings/write.ts';
import { getExchange, resourceServer } from '../fixtures/exchanges.ts';

const inputFor = (exchange = getExchange()): CheckInput => ({
  exchange,
  operation: matchOperation(exchange.request.method, exchange.request.url)!,
  requestJson: undefined,
  responseJson: undefined,
  tracker: undefined,
  rateLimitObservation: undefined,
  credential: undefined,
});

describe('a finding', () => {
  it('carries expected and received as fields; its message is made from them', () => {
    const f = finding('RS-SIGNING-ALG', 'implementation', 'signing_alg to be one of "HS256"', '"HS512"');
    expect(f).toMatchObject({
      requirement: 'RS-SIGNING-ALG',
      level: 'must',
      subject: 'implementation',
      expected: 'signing_alg to be one of "HS256"',
      received: '"HS512"',
    });
    expect(findingMessage(f)).toBe('RS-SIGNING-ALG: expected signing_alg to be one of "HS256"; received "HS512"');
  });

  it('from the rule engine: the schema check says what the field should be and what came back', () => {
    const { findings } = judgeExchange(getExchange(resourceServer({ signing_alg: 'HS512' })));
    expect(findings).toContainEqual(
      expect.objectContaining({
        requirement: 'RS-SIGNING-ALG',
        check: 'responseBodyMatchesSchema',
        expected: 'signing_alg to be one of "HS256", "RS256", "RS512", "PS256"',
        received: '"HS512"',
      }),
    );
  });

  it("in the proxy's journal: requirement, level, subject, expected, received and message, secrets masked in each", () => {
    const secret = 'short-secret';
    const exchange = getExchange(resourceServer({ signing_secret: secret }));
    const judgement = judgeExchange(exchange);
    expect(judgement.findings.some((f) => f.requirement === 'RS-SIGNING-SECRET-LENGTH')).toBe(true);
    const { entry } = recordExchange(exchange, judgement);
    const [journal] = (entry['_conformance'] as { findings: Array<Record<string, string>> }).findings.filter(
      (f) => f['requirement'] === 'RS-SIGNING-SECRET-LENGTH',
    );
    expect(Object.keys(journal!).sort()).toEqual(['expected', 'level', 'message', 'received', 'requirement', 'subject']);
    expect(journal!['message']).toBe(findingMessage(journal as { requirement: string; expected: string; received: string }));
    expect(JSON.stringify(entry)).not.toContain(secret);
  });
});

describe('defineCheck', () => {
  function alwaysFindsAlg(): ReturnType<typeof finding>[] {
    return [finding('RS-SIGNING-ALG', 'implementation', 'an allowed signing_alg', '"none"')];
  }

  it("sets the check's name on its findings", () => {
    const check = defineCheck(alwaysFindsAlg, ['RS-SIGNING-ALG'], ['getResourceServer']);
    expect(check.name).toBe('alwaysFindsAlg');
    expect(check.run(inputFor())).toEqual([expect.objectContaining({ check: 'alwaysFindsAlg', requirement: 'RS-SIGNING-ALG' })]);
  });

  it('rejects a finding about a requirement the check does not declare', () => {
    const check = defineCheck(alwaysFindsAlg, ['RS-TOKEN-DIALECT'], ['getResourceServer']);
    expect(() => check.run(inputFor())).toThrow(UndeclaredRequirement);
    expect(() => check.run(inputFor())).toThrow(
      'check alwaysFindsAlg made a finding about RS-SIGNING-ALG, which it does not declare (it declares RS-TOKEN-DIALECT)',
    );
  });

  it('passes "nothing to examine" and "examined, conforming" through unchanged', () => {
    const nothing = defineCheck(
      function examinesNothing() {
        return undefined;
      },
      ['RS-SIGNING-ALG'],
    );
    const conforming = defineCheck(
      function findsNothing() {
        return [];
      },
      ['RS-SIGNING-ALG'],
    );
    expect(nothing.run(inputFor())).toBeUndefined();
    expect(conforming.run(inputFor())).toEqual([]);
  });
});
