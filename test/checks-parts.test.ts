// The parts every check is made of (rules/checks/check.ts) and the preflight's served check
// (rules/checks/served.ts), called directly with exact results.
import { describe, expect, it } from 'vitest';
import {
  defineCheck,
  finding,
  isSuccess,
  jsonObject,
  securityFinding,
  show,
  UndeclaredRequirement,
  type CheckInput,
  type CheckResult,
} from '../rules/checks/check.ts';
import { operationIsServed, type ServedProbe } from '../rules/checks/served.ts';
import { buildExchange } from '../rules/exchange.ts';
import { deleteExchange, getExchange } from '../fixtures/exchanges.ts';

describe('show', () => {
  it('quotes strings, renders other values as JSON, and cuts at the limit with …', () => {
    expect(show(undefined)).toBe('nothing');
    expect(show('a"b')).toBe('"a\\"b"');
    expect(show({ a: [1, null] })).toBe('{"a":[1,null]}');
    expect(show(() => 1)).toBe('() => 1');
    expect(show(10n)).toBe('10');
    expect(show('x'.repeat(100))).toBe(`"${'x'.repeat(79)}…`);
    expect(show('x'.repeat(78))).toBe(`"${'x'.repeat(78)}"`);
    expect(show('abcdef', 4)).toBe('"abc…');
    expect(show('ab', 4)).toBe('"ab"');
  });
});

describe('isSuccess, jsonObject', () => {
  it('success is 200 to 299', () => {
    expect([199, 200, 250, 299, 300].map(isSuccess)).toEqual([false, true, true, true, false]);
  });

  it('jsonObject: a parsed JSON object only', () => {
    expect(jsonObject({ ok: true, value: { a: 1 } })).toEqual({ a: 1 });
    expect(jsonObject({ ok: true, value: [1] })).toBeUndefined();
    expect(jsonObject({ ok: true, value: null })).toBeUndefined();
    expect(jsonObject({ ok: true, value: 'a' })).toBeUndefined();
    expect(jsonObject({ ok: false, error: 'bad' })).toBeUndefined();
    expect(jsonObject(undefined)).toBeUndefined();
  });
});

describe('defineCheck, finding, securityFinding', () => {
  const input = { exchange: deleteExchange(), operation: { operation: 'deleteTokenExchangeProfile', query: {}, prefix: '' } } as CheckInput;

  it('names each finding after the check, and refuses a finding about an undeclared requirement', () => {
    function judgeTwo(): CheckResult {
      return [finding('GEN-STATUS-DOCUMENTED', 'implementation', 'e', 'r'), finding('GEN-NO-SERVER-ERROR', 'client', 'e2', 'r2')];
    }
    const check = defineCheck(judgeTwo, ['GEN-STATUS-DOCUMENTED', 'GEN-NO-SERVER-ERROR'], ['getResourceServer']);
    expect(check).toMatchObject({ name: 'judgeTwo', requirements: ['GEN-STATUS-DOCUMENTED', 'GEN-NO-SERVER-ERROR'], operations: ['getResourceServer'] });
    expect(check.run(input)).toEqual([
      { requirement: 'GEN-STATUS-DOCUMENTED', level: 'should', subject: 'implementation', check: 'judgeTwo', expected: 'e', received: 'r' },
      { requirement: 'GEN-NO-SERVER-ERROR', level: 'should', subject: 'client', check: 'judgeTwo', expected: 'e2', received: 'r2' },
    ]);
    const narrow = defineCheck(judgeTwo, ['GEN-STATUS-DOCUMENTED']);
    expect(narrow.operations).toEqual(['deleteTokenExchangeProfile', 'updateSession', 'getResourceServer']);
    expect(() => narrow.run(input)).toThrow(UndeclaredRequirement);
    expect(() => narrow.run(input)).toThrow(
      'check judgeTwo made a finding about GEN-NO-SERVER-ERROR, which it does not declare (it declares GEN-STATUS-DOCUMENTED)',
    );
    expect(
      defineCheck(
        function nothing() {
          return undefined;
        },
        ['GEN-STATUS-DOCUMENTED'],
      ).run(input),
    ).toBeUndefined();
    expect(
      defineCheck(
        function none() {
          return [];
        },
        ['GEN-STATUS-DOCUMENTED'],
      ).run(input),
    ).toEqual([]);
  });

  it('a security finding is an implementation finding that says what was carried out', () => {
    expect(securityFinding('AUTH-CREDENTIAL-REQUIRED', 'a refusal (401)', '204', 'the target carried out a DELETE')).toEqual({
      requirement: 'AUTH-CREDENTIAL-REQUIRED',
      level: 'must',
      subject: 'implementation',
      check: '',
      expected: 'a refusal (401)',
      received: '204',
      security: 'the target carried out a DELETE',
    });
  });
});

describe('operationIsServed', () => {
  const probe = (what: string, status?: number, type?: string): ServedProbe => ({
    what,
    exchange:
      status === undefined
        ? buildExchange({ method: 'GET', url: '/api/v2/resource-servers/x', error: 'ECONNREFUSED' })
        : getExchange({}, 'x', { status, responseHeaders: type === undefined ? {} : { 'content-type': type }, responseBody: '' }),
  });
  const route = 'GET /resource-servers/{id}';

  it('served when any answer is not 404 or 405; not judged without answers', () => {
    expect(operationIsServed('getResourceServer', [probe('a', 404), probe('b', 401)])).toEqual([]);
    expect(operationIsServed('getResourceServer', [probe('a'), probe('b')])).toBeUndefined();
    expect(operationIsServed('getResourceServer', [])).toBeUndefined();
  });

  it('one answer to every request is said once, with each request', () => {
    expect(
      operationIsServed('getResourceServer', [
        probe('without a token', 404, 'text/html; charset=utf-8'),
        probe('with a token', 404, 'text/html'),
        probe('lost'),
      ]),
    ).toEqual([
      {
        requirement: 'GEN-OPERATION-SERVED',
        level: 'must',
        subject: 'implementation',
        check: 'operationIsServed',
        expected: `${route} to be served`,
        received: `${route} is not served by the target: 404 "text/html" to every request (without a token; with a token)`,
      },
    ]);
  });

  it('served when the answers differ: a router gives one answer whatever the id, the token and the parameters', () => {
    expect(operationIsServed('getResourceServer', [probe('without a token', 404, 'text/plain'), probe('with a token', 405, 'text/plain')])).toEqual([]);
    expect(operationIsServed('getResourceServer', [probe('for an unknown id', 404, 'text/plain'), probe('for a fixture', 404, 'text/html')])).toEqual([]);
    expect(operationIsServed('getResourceServer', [probe('for an unknown id', 404), probe('for a fixture', 404, 'text/plain')])).toEqual([]);
  });

  it("served when the one answer is the interface's JSON: a 404 in JSON is the operation's own", () => {
    expect(
      operationIsServed('getResourceServer', [
        probe('without a token', 404, 'application/json'),
        probe('with a token', 404, 'application/json; charset=utf-8'),
      ]),
    ).toEqual([]);
    expect(operationIsServed('getResourceServer', [probe('without a token', 405, 'application/problem+json')])).toEqual([]);
  });
});
