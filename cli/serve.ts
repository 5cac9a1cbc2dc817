// Placeholder until the command lands; replaced by its implementation.
import { UsageError } from './errors.ts';

export const help = 'tmi-conform serve: not available yet';

export async function run(_argv: string[]): Promise<number> {
  throw new UsageError('serve: not available yet');
}
