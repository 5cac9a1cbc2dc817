import { describe, expect, it, vi } from 'vitest';
import { parseArgs, type FlagSpec } from '../cli/args.ts';
import { main } from '../cli/main.ts';
import { UsageError } from '../core/errors.ts';

const SPEC: Record<string, FlagSpec> = {
  target: { value: true },
  fault: { value: true, repeat: true },
  verbose: { value: false },
};

function usageError(argv: string[]): UsageError {
  try {
    parseArgs('demo', argv, SPEC);
  } catch (error) {
    if (error instanceof UsageError) return error;
    throw error;
  }
  throw new Error(`no usage error for ${JSON.stringify(argv)}`);
}

describe('parseArgs (the kit\'s strict flags)', () => {
  it('reads values given as --x V and --x=V, switches, repeats and positionals', () => {
    const args = parseArgs('demo', ['a.har', '--target', 'http://t', '--fault=one', '--verbose', '--fault', 'two', 'b.har'], SPEC);
    expect(args.flags).toEqual({ target: 'http://t', fault: ['one', 'two'], verbose: true });
    expect(args.positionals).toEqual(['a.har', 'b.har']);
    expect(args.rest).toEqual([]);
  });

  it('keeps the last value of a flag that does not repeat, as before', () => {
    expect(parseArgs('demo', ['--target', 'a', '--target=b'], SPEC).flags['target']).toBe('b');
  });

  it('takes an empty value given as --x= and a value starting with one dash', () => {
    expect(parseArgs('demo', ['--target='], SPEC).flags['target']).toBe('');
    expect(parseArgs('demo', ['--target', '-5'], SPEC).flags['target']).toBe('-5');
  });

  it('hands everything after -- over untouched, flags of another program included', () => {
    const argv = ['--target', 'http://t', '--', 'node', 'app.js', '--help', '--target', 'x', '--'];
    const args = parseArgs('demo', argv, SPEC);
    expect(args.flags).toEqual({ target: 'http://t' });
    expect(args.rest).toEqual(['node', 'app.js', '--help', '--target', 'x', '--']);
    expect(args.positionals).toEqual(args.rest);
  });

  it.each([
    [['--colour'], 'demo: unknown option --colour (see tmi-conform demo --help)'],
    [['--colour=red'], 'demo: unknown option --colour (see tmi-conform demo --help)'],
    [['-x'], 'demo: unknown option -x (see tmi-conform demo --help)'],
    [['--constructor'], 'demo: unknown option --constructor (see tmi-conform demo --help)'],
    [['--target'], 'demo: --target needs a value'],
    [['--target', '--verbose'], 'demo: --target needs a value'],
    [['--target', '--'], 'demo: --target needs a value'],
    [['--verbose=yes'], 'demo: --verbose takes no value'],
  ])('%j is one usage error line: %s', (argv, message) => {
    const error = usageError(argv);
    expect(error.message).toBe(message);
    expect(error.exitCode).toBe(2);
  });

  it('through the command line: an unknown flag is one line on stderr and exit code 2; --help after -- is not the kit\'s', async () => {
    const written: string[] = [];
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => (written.push(String(chunk)), true));
    const stdout = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
    try {
      expect(await main(['validate', 'x.har', '--colour'])).toBe(2);
      expect(written.join('')).toBe('tmi-conform: validate: unknown option --colour (see tmi-conform validate --help)\n');
      written.length = 0;
      expect(await main(['serve', '--', '--help'])).toBe(2);
      expect(written.join('')).toBe('tmi-conform: serve: unexpected argument "--help"\n');
      expect(stdout).not.toHaveBeenCalled();
    } finally {
      stderr.mockRestore();
      stdout.mockRestore();
    }
  });
});
