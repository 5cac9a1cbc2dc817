// How a suite test's failure reads: the kit's words and the exchange, and for a property the
// failing run's words with fast-check's shrunk counterexample beneath (never the runner's text).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ConformanceFailure, describeTestError, exchangeLine, failureText, readPropertyFailure } from '../suites/failure.ts';
import { getExchange } from '../fixtures/exchanges.ts';

describe('a suite failure', () => {
  it('says what was expected and received, then the exchange: method, URL, status and the start of the body', () => {
    const exchange = getExchange({ statusCode: 404, message: 'Not found' }, 'rs_1', { status: 404 });
    expect(exchangeLine(exchange)).toBe('GET https://tenant.example.com/api/v2/resource-servers/rs_1 → 404 {"statusCode":404,"message":"Not found"}');
    expect(failureText(['expected 200; received 404'], exchange)).toBe(
      'expected 200; received 404\n  GET https://tenant.example.com/api/v2/resource-servers/rs_1 → 404 {"statusCode":404,"message":"Not found"}',
    );
    expect(describeTestError(new ConformanceFailure('expected 200; received 404'))).toEqual({ message: 'expected 200; received 404' });
  });

  it("a property: the failing run's words first, the shrunk counterexample and fast-check's replay path beneath", () => {
    let error: Error | undefined;
    try {
      fc.assert(
        fc.property(fc.integer({ min: 0, max: 1000 }), (n) => {
          if (n >= 10) throw new ConformanceFailure(`GEN-X: expected a number below 10; received ${n}`);
        }),
        { seed: 42 },
      );
    } catch (caught) {
      error = caught as Error;
    }
    expect(readPropertyFailure(error!.message)).toMatchObject({ counterexample: '[10]', seed: '42', path: expect.stringMatching(/^[\d:]+$/) });
    const described = describeTestError(error!);
    expect(described.counterexample).toBe('[10]');
    expect(described.message).toMatch(
      /^GEN-X: expected a number below 10; received 10\n {2}counterexample: \[10\] \(shrunk \d+ time\(s\); fast-check seed 42, path "[\d:]+"\)$/,
    );
    expect(described.message).not.toContain('Property failed');
  });
});
