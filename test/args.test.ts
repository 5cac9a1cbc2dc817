import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
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

describe("parseArgs (the kit's strict flags)", () => {
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

  it("through the command line: an unknown flag is one line on stderr and exit code 2; --help after -- is not the kit's", async () => {
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

describe('errors the user caused name their cause in one line (exit 2), never "internal error"', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tmi-args-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** Runs the command in process; what it wrote to stderr, and whether Node was asked to print a warning. */
  async function runMain(argv: string[]): Promise<{ code: number; stderr: string; warned: boolean }> {
    const written: string[] = [];
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => (written.push(String(chunk)), true));
    const stdout = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
    const warning = vi.spyOn(process, 'emitWarning').mockImplementation(() => {});
    try {
      const code = await main(argv);
      return { code, stderr: written.join(''), warned: warning.mock.calls.length > 0 };
    } finally {
      stderr.mockRestore();
      stdout.mockRestore();
      warning.mockRestore();
    }
  }

  const file = (name: string, text: string) => {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  };

  it.each([
    [
      ['proxy', '--listen', '127.0.0.1:70000', '--target', 'http://127.0.0.1:9'],
      'tmi-conform: proxy: --listen: port 70000 is above 65535 in "127.0.0.1:70000"\n',
    ],
    [
      ['proxy', '--target', 'http://h:70000'],
      'tmi-conform: proxy: --target expects an http(s) URL such as https://tenant.example.com, got "http://h:70000" (port 70000 is above 65535)\n',
    ],
    [['run', '--base-url', 'http://127.0.0.1:99999/api/v2'], 'tmi-conform: run: --base-url: port 99999 is above 65535 in "http://127.0.0.1:99999/api/v2"\n'],
    [
      ['run', '--base-url', 'http://127.0.0.1:9/api/v2', '--auth-url', 'https://[::1]:123456/'],
      'tmi-conform: run: --auth-url: port 123456 is above 65535 in "https://[::1]:123456/"\n',
    ],
  ])('%j', async (argv, message) => {
    const { code, stderr } = await runMain(argv);
    expect(code).toBe(2);
    expect(stderr).toBe(message);
  });

  it('a YAML tag in the config file (!!js/function) is one line naming the file and the line, and no Node warning', async () => {
    const config = file('tagged.yaml', 'audience: x\nbase_url: !!js/function "function () {}"\n');
    const { code, stderr, warned } = await runMain(['run', '--config', config]);
    expect(code).toBe(2);
    expect(stderr).toBe(`tmi-conform: run: config ${config}: unknown tag !!js/function at line 2 (the config is plain YAML, without tags)\n`);
    expect(warned).toBe(false);
  });

  it('a report directory that is a file, for validate and report merge', async () => {
    const notADir = file('reports-here', 'x');
    const recording = file('one.jsonl', '{"request": {"method": "GET", "url": "http://t/x"}, "response": {"status": 200}}\n');
    const validate = await runMain(['validate', recording, '--report-dir', notADir]);
    expect(validate).toMatchObject({ code: 2, stderr: `tmi-conform: cannot write reports to ${notADir}: it is a file, not a directory\n` });
    const reportDir = join(dir, 'reports');
    expect((await runMain(['validate', recording, '--report-dir', reportDir])).code).toBe(0);
    const merge = await runMain(['report', 'merge', reportDir, '--out', notADir]);
    expect(merge).toMatchObject({ code: 2, stderr: `tmi-conform: cannot write reports to ${notADir}: it is a file, not a directory\n` });
  });

  it('a report directory that is a file, for proxy: said before it listens', async () => {
    const notADir = file('proxy-reports-here', 'x');
    const proxy = await runMain(['proxy', '--target', 'http://127.0.0.1:9', '--listen', '127.0.0.1:0', '--report-dir', notADir]);
    expect(proxy).toMatchObject({ code: 2, stderr: `tmi-conform: cannot write reports to ${notADir}: it is a file, not a directory\n` });
  });
});
