// What run, validate and proxy say on the terminal, and how: colour on a terminal (or as
// NO_COLOR, FORCE_COLOR, --color and --no-color say), --quiet (the verdict and reports lines
// only), --json (one JSON object per line on stdout per event, the human lines on stderr), and
// the progress of long work. The renderers (reports/console.ts, suites/reporter.ts) return
// plain lines; colour is given here, by what a line says, where it is written.
import picocolors from 'picocolors';
import type { FlagSpec, ParsedArgs } from './args.ts';
import { UsageError } from '../core/errors.ts';

type Colors = ReturnType<typeof picocolors.createColors>;

/** The output flags every command that prints a verdict takes. */
export const OUTPUT_FLAGS: Record<string, FlagSpec> = {
  color: { value: false },
  'no-color': { value: false },
  quiet: { value: false },
  json: { value: false },
};

/** Their --help lines. */
export const OUTPUT_HELP = `Output:
  --color, --no-color    colour on or off (default: on when the output is a terminal; NO_COLOR=1 turns it off,
                         FORCE_COLOR=1 on, either flag overrides both)
  --quiet                only the verdict line and the reports line on stdout (errors still go to stderr)
  --json                 one JSON object per line on stdout per event (README, "--json events"); the human
                         lines go to stderr`;

/**
 * Colour or not: --no-color, --color, then NO_COLOR (any value but empty), FORCE_COLOR ("0" or
 * "false": off), then whether the lines go to a terminal that is not "dumb".
 */
export function colourWanted(flags: ParsedArgs['flags'], env: NodeJS.ProcessEnv, tty: boolean): boolean {
  if (flags['no-color'] === true) return false;
  if (flags['color'] === true) return true;
  if (env['NO_COLOR']) return false;
  const force = env['FORCE_COLOR'];
  if (force !== undefined && force !== '') return force !== '0' && force !== 'false';
  return tty && env['TERM'] !== 'dumb';
}

/** One line, coloured by what it says: the verdict, the counts, security lines, failures, suite file marks. */
export function colourLine(line: string, c: Colors): string {
  if (line.startsWith('verdict: conforming')) return c.green(c.bold(line));
  if (line.startsWith('verdict: NOT conforming')) return c.red(c.bold(line));
  if (line.startsWith('verdict: ')) return c.yellow(c.bold(line));
  if (line.startsWith('SECURITY:')) return c.red(c.bold(line));
  const counts = line.replace(/\b([1-9]\d*) (pass(?:ed)?|fail(?:ed)?|warn(?:ed)?)\b/g, (text: string, _n: string, word: string) =>
    word.startsWith('pass') ? c.green(text) : word.startsWith('fail') ? c.red(text) : c.yellow(text),
  );
  return counts
    .replace(/^( {2})(✓)/, (_m, lead: string, mark: string) => lead + c.green(mark))
    .replace(/^( {2})(✗|FAIL)/, (_m, lead: string, mark: string) => lead + c.red(mark))
    .replace(/^( {2})(⚠|warn)( )/, (_m, lead: string, mark: string, space: string) => lead + c.yellow(mark) + space);
}

/** The lines --quiet keeps: the verdict, the reports, and the workflow commands a CI log reads as annotations. */
const keptWhenQuiet = (line: string): boolean => line.startsWith('verdict:') || line.startsWith('reports:') || line.startsWith('::');

/** How often progress is said at most: a terminal's line is rewritten; a log gets a new line. */
const PROGRESS_EVERY_MS = { tty: 5_000, log: 10_000, json: 5_000 };

export interface TerminalOptions {
  quiet: boolean;
  json: boolean;
  colour: boolean;
  /** The human lines go to a terminal (progress rewrites its line). */
  tty: boolean;
  out: (text: string) => void;
  err: (text: string) => void;
  now?: () => number;
}

export class Terminal {
  private readonly colours: Colors;
  private readonly now: () => number;
  private lastLineAt: number;
  /** A progress line is on the terminal, to be cleared before the next line. */
  private progressShown = false;

  constructor(private readonly options: TerminalOptions) {
    this.colours = picocolors.createColors(options.colour);
    this.now = options.now ?? Date.now;
    this.lastLineAt = this.now();
  }

  /** From the command's flags and the process's streams. */
  static of(
    command: string,
    args: ParsedArgs,
    streams: { out?: (text: string) => void; err?: (text: string) => void } = {},
    env: NodeJS.ProcessEnv = process.env,
  ): Terminal {
    if (args.flags['color'] === true && args.flags['no-color'] === true) throw new UsageError(`${command}: --color and --no-color exclude each other`);
    const json = args.flags['json'] === true;
    // With --json the human lines go to stderr: its terminal decides their colour.
    const stream = json ? process.stderr : process.stdout;
    const tty = stream.isTTY === true;
    return new Terminal({
      quiet: args.flags['quiet'] === true,
      json,
      colour: colourWanted(args.flags, env, tty),
      tty,
      out: streams.out ?? ((text) => process.stdout.write(text)),
      err: streams.err ?? ((text) => process.stderr.write(text)),
    });
  }

  get json(): boolean {
    return this.options.json;
  }

  get quiet(): boolean {
    return this.options.quiet;
  }

  /** A human line: stdout (stderr with --json); with --quiet only the verdict and reports lines. */
  line(text: string): void {
    if (this.options.quiet && !keptWhenQuiet(text)) return;
    this.writeHuman(`${colourLine(text, this.colours)}\n`);
    this.lastLineAt = this.now();
  }

  lines(texts: readonly string[]): void {
    for (const text of texts) this.line(text);
  }

  /** With --json: one event, one line of stdout. */
  event(event: Record<string, unknown> & { event: string }): void {
    if (this.options.json) this.options.out(`${JSON.stringify(event)}\n`);
  }

  /**
   * Where long work stands: said when nothing was said for a while (on a terminal its line is
   * rewritten; in a log, a line at most every 10 s; with --json, an event at most every 5 s).
   */
  progress(text: string, event: Record<string, unknown>): void {
    const every = this.options.json ? PROGRESS_EVERY_MS.json : this.options.tty ? PROGRESS_EVERY_MS.tty : PROGRESS_EVERY_MS.log;
    if (this.options.quiet || this.now() - this.lastLineAt < every) return;
    this.lastLineAt = this.now();
    if (this.options.json) {
      this.event({ event: 'progress', ...event });
      return;
    }
    const line = this.colours.dim(text);
    if (!this.options.tty) this.writeHuman(`${line}\n`);
    else {
      // The line itself clears the one it replaces.
      this.progressShown = false;
      this.writeHuman(`\r\x1b[2K${line}`);
      this.progressShown = true;
    }
  }

  private writeHuman(text: string): void {
    const write = this.options.json ? this.options.err : this.options.out;
    if (this.progressShown) {
      this.progressShown = false;
      write('\r\x1b[2K');
    }
    write(text);
  }
}
