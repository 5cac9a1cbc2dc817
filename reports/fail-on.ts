// --fail-on must|should: which failed requirements make the exit code 1.
import { UsageError } from '../core/errors.ts';

export type FailOn = 'must' | 'should';

export function parseFailOn(value: string | undefined): FailOn {
  if (value === undefined || value === 'must') return 'must';
  if (value === 'should') return 'should';
  throw new UsageError(`--fail-on expects "must" or "should", got "${value}"`);
}
