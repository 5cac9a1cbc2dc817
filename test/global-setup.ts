// Before the tests: the kit compiled into dist/ (scripts/compiled.mjs) if a source changed since,
// so that every command a test starts runs the sources as they are now, compiled.
import { compile } from '../scripts/compiled.mjs';

export async function setup(): Promise<void> {
  await compile();
}
