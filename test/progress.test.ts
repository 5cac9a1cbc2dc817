// Where a run stands (suites/progress.ts): the reporter's files and tests and the worker's
// reports put together, said only while a suite file runs.
import { describe, expect, it } from 'vitest';
import { ProgressTally, type SuiteProgress } from '../suites/progress.ts';

describe('ProgressTally', () => {
  it('the running file, its tests finished of planned, and the requests and pacer the worker reported', () => {
    const said: SuiteProgress[] = [];
    const tests: unknown[] = [];
    const tally = new ProgressTally({ progress: (p) => said.push(p), test: (t) => tests.push(t) });
    const file = '/kit/suites/token-attacks.suite.ts';
    tally.collected(file, 12);
    // Before the file starts: nothing to say.
    tally.workerReported({ requests: 3, pacer: { waitMs: 0 } });
    expect(said).toEqual([]);
    tally.started(file);
    tally.testFinished(
      file,
      {
        name: 'token attacks > delete refuses',
        requirements: ['AUTH-CREDENTIAL-REQUIRED'],
        status: 'fail',
        durationMs: 40,
        message: 'AUTH-CREDENTIAL-REQUIRED: expected 401; received 204',
      },
      'fail',
    );
    tally.workerReported({ requests: 40, pacer: { limit: 5, windowMs: 1000, waitMs: 700 } });
    expect(tests).toEqual([
      {
        suite: 'token-attacks',
        name: 'token attacks > delete refuses',
        status: 'fail',
        requirements: ['AUTH-CREDENTIAL-REQUIRED'],
        durationMs: 40,
        message: 'AUTH-CREDENTIAL-REQUIRED: expected 401; received 204',
      },
    ]);
    expect(said).toEqual([
      { suite: 'token-attacks', finished: 1, planned: 12, requests: 3, pacer: { waitMs: 0 } },
      { suite: 'token-attacks', finished: 1, planned: 12, requests: 40, pacer: { limit: 5, windowMs: 1000, waitMs: 700 } },
    ]);
    tally.ended(file);
    tally.workerReported({ requests: 41, pacer: { waitMs: 0 } });
    expect(said).toHaveLength(2);
  });
});
