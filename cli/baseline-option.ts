// --baseline FILE, as run, validate and proxy take it: read before anything starts, so that a
// baseline that cannot be used (unreadable, malformed, naming an unknown requirement) is a usage
// error (exit 2) and never a verdict.
import { loadBaseline } from '../reports/baseline.ts';
import type { Baseline } from '../reports/model.ts';

export async function baselineOption(path: string | undefined): Promise<Baseline | undefined> {
  return path === undefined ? undefined : loadBaseline(path);
}
