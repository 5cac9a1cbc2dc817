// Placeholder until the command lands; replaced by its implementation.
import { UsageError } from './errors.ts';

export const help = 'tmi-conform run: not available yet';

export async function run(_argv: string[]): Promise<number> {
  throw new UsageError('run: not available yet');
}
