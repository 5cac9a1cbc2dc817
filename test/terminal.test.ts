// The terminal layer (cli/terminal.ts): when colour is on, what a line's colour follows, what
// --quiet keeps, that --json writes only JSON on stdout, and how often progress is said.
import { describe, expect, it } from 'vitest';
import picocolors from 'picocolors';
import { progressLine } from '../cli/events.ts';
import { colourLine, colourWanted, Terminal, type TerminalOptions } from '../cli/terminal.ts';

const ESC = '\x1b[';

describe('colour: flags over NO_COLOR over FORCE_COLOR over the terminal', () => {
  it.each([
    [{}, {}, true, true],
    [{}, {}, false, false],
    [{}, { TERM: 'dumb' }, true, false],
    [{}, { NO_COLOR: '1' }, true, false],
    [{}, { NO_COLOR: '' }, true, true],
    [{}, { FORCE_COLOR: '1' }, false, true],
    [{}, { FORCE_COLOR: '0' }, true, false],
    [{}, { NO_COLOR: '1', FORCE_COLOR: '1' }, false, false],
    [{ 'no-color': true }, { FORCE_COLOR: '1' }, true, false],
    [{ color: true }, { NO_COLOR: '1' }, false, true],
  ])('flags %j, env %j, terminal %s: %s', (flags, env, tty, wanted) => {
    expect(colourWanted(flags, env, tty)).toBe(wanted);
  });
});

describe('a line is coloured by what it says', () => {
  const c = picocolors.createColors(true);
  it.each([
    ['verdict: conforming (fail-on must) in 1.0 s', '\x1b[32m'],
    ['verdict: NOT conforming (fail-on must) in 1.0 s', '\x1b[31m'],
    ['SECURITY: the target carried out requests it should have refused: AUTH-X (1 exchange(s))', '\x1b[31m'],
    ['  ✓ authentication                   9 passed · 0 failed · 0 warned · 0 skipped  (1.0 s)', '\x1b[32m✓'],
    ['  ✗ authentication                   8 passed · 1 failed · 0 warned · 0 skipped  (1.0 s)', '\x1b[31m✗'],
    ['  FAIL AUTH-CREDENTIAL-REQUIRED      expected 401; received 200', '\x1b[31mFAIL'],
    ['requirements: 17 pass · 2 fail · 1 warn · 30 skip', '\x1b[31m2 fail'],
  ])('%s', (line, colour) => {
    const coloured = colourLine(line, c);
    expect(coloured).toContain(colour);
    // Colour only: the words stay as they were.
    expect(coloured.replace(/\x1b\[\d+m/g, '')).toBe(line);
  });

  it('a count of 0 and an ordinary line stay plain', () => {
    expect(colourLine('requirements: 17 pass · 0 fail · 0 warn · 30 skip', c)).not.toContain('\x1b[31m');
    expect(colourLine('seed 42 (tmi-conform run --seed 42 generates the same inputs again)', c)).not.toContain(ESC);
  });

  it('without colour nothing changes', () => {
    expect(colourLine('verdict: NOT conforming', picocolors.createColors(false))).toBe('verdict: NOT conforming');
  });
});

function terminal(options: Partial<TerminalOptions> & { clock?: { now: number } } = {}) {
  const out: string[] = [];
  const err: string[] = [];
  const clock = options.clock ?? { now: 0 };
  const t = new Terminal({
    quiet: false,
    json: false,
    colour: false,
    tty: false,
    out: (s) => out.push(s),
    err: (s) => err.push(s),
    now: () => clock.now,
    ...options,
  });
  return { t, out, err, clock };
}

const PROGRESS = { suite: 'token-attacks', finished: 3, planned: 12, requests: 40, pacer: { limit: 5, windowMs: 1000, waitMs: 800 } };

describe('Terminal', () => {
  it('--quiet keeps the verdict and reports lines only', () => {
    const { t, out } = terminal({ quiet: true });
    t.lines([
      'tmi-conform run → http://127.0.0.1:1/api/v2',
      '  ✓ authentication  9 passed',
      'requirements: 1 pass · 0 fail · 0 warn · 0 skip',
      'verdict: conforming',
      'reports: r/report.json',
      'seed: 42',
    ]);
    t.progress('  … token-attacks', {});
    expect(out.join('')).toBe('verdict: conforming\nreports: r/report.json\n');
  });

  it('--json: events on stdout, one per line; the human lines on stderr', () => {
    const { t, out, err } = terminal({ json: true });
    t.line('verdict: conforming');
    t.event({ event: 'verdict', passed: true });
    expect(out).toEqual(['{"event":"verdict","passed":true}\n']);
    expect(err.join('')).toBe('verdict: conforming\n');
  });

  it('without --json no event is written', () => {
    const { t, out, err } = terminal();
    t.event({ event: 'verdict', passed: true });
    expect([...out, ...err]).toEqual([]);
  });

  it('in a log, progress fills silences of 10 s with a line, at most every 10 s', () => {
    const { t, out, clock } = terminal();
    t.line('seed 42');
    clock.now = 9_000;
    t.progress(progressLine(PROGRESS), {});
    expect(out).toEqual(['seed 42\n']);
    clock.now = 10_000;
    t.progress(progressLine(PROGRESS), {});
    expect(out.at(-1)).toBe('  … token-attacks: 3 of 12 tests finished; 40 requests sent; pacer: 5 per 1.0 s, waiting 0.8 s\n');
    clock.now = 19_000;
    t.progress(progressLine(PROGRESS), {});
    expect(out).toHaveLength(2);
    clock.now = 20_500;
    t.progress(progressLine(PROGRESS), {});
    expect(out).toHaveLength(3);
  });

  it('on a terminal, progress rewrites one line, cleared before the next line', () => {
    const { t, out, clock } = terminal({ tty: true });
    clock.now = 5_000;
    t.progress('  … a', {});
    clock.now = 10_000;
    t.progress('  … b', {});
    t.line('  ✓ token-attacks');
    expect(out).toEqual(['\r\x1b[2K  … a', '\r\x1b[2K  … b', '\r\x1b[2K', '  ✓ token-attacks\n']);
  });

  it('--json: progress is an event, at most every 5 s', () => {
    const { t, out, clock } = terminal({ json: true });
    clock.now = 5_000;
    t.progress('  … a', { suite: 'a' });
    clock.now = 6_000;
    t.progress('  … a', { suite: 'a' });
    expect(out).toEqual(['{"event":"progress","suite":"a"}\n']);
  });
});

describe('the progress line', () => {
  it('says what the pacer knows, and that nothing is known yet', () => {
    expect(progressLine({ ...PROGRESS, pacer: { waitMs: 0 } })).toBe(
      '  … token-attacks: 3 of 12 tests finished; 40 requests sent; pacer: no rate limit heard yet',
    );
    expect(progressLine({ ...PROGRESS, planned: undefined, pacer: { limit: 5, waitMs: 0 } })).toBe(
      '  … token-attacks: 3 of ? tests finished; 40 requests sent; pacer: limit 5, window not yet learned',
    );
  });
});
