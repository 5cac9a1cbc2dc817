// One suite test as the report lists it. A failed test's status follows the levels of the
// requirements it names: `warn` when all of them are `should`, otherwise (a `must` among them,
// or none the catalog knows) `fail`.
import type { Level } from '../rules/types.ts';
import type { Status, TestOutcome, TestResult } from './model.ts';

/** `message` and `counterexample` are the outcome's, already redacted; `levelOf` reads the catalog. */
export function testResult(source: string, outcome: TestOutcome, message: string | undefined, counterexample: string | undefined, levelOf: (id: string) => Level | undefined): TestResult {
  let status: Status = outcome.status;
  if (outcome.status === 'fail') {
    const levels = outcome.requirements.map(levelOf);
    status = levels.length > 0 && levels.every((level) => level === 'should') ? 'warn' : 'fail';
  }
  const result: TestResult = { source, name: outcome.name, requirements: [...outcome.requirements], status };
  if (outcome.file !== undefined) result.file = outcome.file;
  if (message !== undefined) result.message = message;
  if (counterexample !== undefined) result.counterexample = counterexample;
  if (outcome.durationMs !== undefined) result.durationMs = outcome.durationMs;
  return result;
}
