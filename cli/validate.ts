// Placeholder until the command lands; replaced by its implementation.
import { UsageError } from './errors.ts';

export const help = 'tmi-conform validate: not available yet';

export async function run(_argv: string[]): Promise<number> {
  throw new UsageError('validate: not available yet');
}
