// Loaded before every suite file: ties the exchanges a test makes to that test, and seeds the
// generated inputs with the run's seed, so that `run --seed N` generates the same inputs again.
import fc from 'fast-check';
import { afterEach, beforeEach, inject } from 'vitest';
import { evidence } from './context.ts';

// module-state: fast-check reads the seed of its properties (suites/budget.ts) from its global configuration.
fc.configureGlobal({ ...fc.readConfigureGlobal(), seed: inject('tmiConfig').seed });

beforeEach(({ task }) => evidence.beginTest(task));
afterEach(() => evidence.endTest());
