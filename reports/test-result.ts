// One suite test as the report lists it. A failed test's status follows the levels of the
// requirements its failure is evidence against: `warn` when all of them are `should`, otherwise
// (a `must` among them, or none the catalog knows) `fail`. A test that ended before it examined
// anything it covers charges nothing: it is a `skip` whose message says why it was not examined.
import type { Level } from '../rules/types.ts';
import type { Status, TestOutcome, TestResult } from './model.ts';

/** `message` and `counterexample` are the outcome's, already redacted; `levelOf` reads the catalog. */
export function testResult(
  source: string,
  outcome: TestOutcome,
  message: string | undefined,
  counterexample: string | undefined,
  levelOf: (id: string) => Level | undefined,
): TestResult {
  let status: Status = outcome.status;
  const charged = chargedBy(outcome);
  if (outcome.status === 'fail') {
    const levels = charged.map(levelOf);
    status = notExamined(outcome) ? 'skip' : levels.length > 0 && levels.every((level) => level === 'should') ? 'warn' : 'fail';
  }
  const result: TestResult = { source, name: outcome.name, requirements: [...outcome.requirements], status };
  if (outcome.status === 'fail' && outcome.charged !== undefined) result.charged = [...charged];
  if (outcome.file !== undefined) result.file = outcome.file;
  if (message !== undefined) result.message = message;
  if (counterexample !== undefined) result.counterexample = counterexample;
  if (outcome.durationMs !== undefined) result.durationMs = outcome.durationMs;
  return result;
}

/** The requirements a test's outcome is evidence against: none unless it failed. */
export function chargedBy(outcome: TestOutcome): string[] {
  if (outcome.status !== 'fail') return [];
  return outcome.charged ?? outcome.requirements;
}

/** A failed test that charges nothing: it ended before it examined what it covers. */
export const notExamined = (outcome: TestOutcome): boolean => outcome.status === 'fail' && outcome.charged !== undefined && outcome.charged.length === 0;

const NOT_EXAMINED = 'not examined: ';

/** The words a not-examined test is reported with: "not examined: <why>". */
export const notExaminedMessage = (message: string | undefined): string =>
  message?.startsWith(NOT_EXAMINED) ? message : `${NOT_EXAMINED}${message ?? 'the test ended early'}`;
