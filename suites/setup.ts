// Loaded before every suite file: ties the exchanges a test makes to that test.
import { afterEach, beforeEach } from 'vitest';
import { beginTest, endTest } from './evidence.ts';

beforeEach(({ task }) => beginTest(task));
afterEach(() => endTest());
