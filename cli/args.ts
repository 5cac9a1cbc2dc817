// Strict flags on node:util parseArgs: every command declares its flags; anything else is a usage
// error of one line. parseArgs tokenizes (`--x V`, `--x=V`, `--`); the kit's rules are applied to its
// tokens, so the messages name the flag as the user typed it.
import { parseArgs as tokenize } from 'node:util';
import { UsageError } from '../core/errors.ts';

export interface FlagSpec {
  /** Flag takes a value (`--x V` or `--x=V`); otherwise it is a boolean switch. */
  value: boolean;
  /** May be given several times; values accumulate. Otherwise the last one given counts. */
  repeat?: boolean;
}

export interface ParsedArgs {
  flags: Record<string, string | string[] | boolean>;
  /** Arguments that are not flags, including everything after `--`. */
  positionals: string[];
  /** Everything after the first `--`, untouched (also at the end of positionals); empty without `--`. */
  rest: string[];
}

export function parseArgs(command: string, argv: string[], spec: Record<string, FlagSpec>): ParsedArgs {
  const options = Object.fromEntries(
    Object.entries(spec).map(([name, flag]) => [name, { type: flag.value ? ('string' as const) : ('boolean' as const), multiple: flag.repeat === true }]),
  );
  // Not parseArgs' strict mode: its errors are several sentences long and name no command.
  const { values, positionals, tokens } = tokenize({ args: argv, options, strict: false, allowPositionals: true, tokens: true });
  let rest: string[] = [];
  for (const token of tokens) {
    if (token.kind === 'option-terminator') rest = argv.slice(token.index + 1);
    if (token.kind !== 'option') continue;
    const flag = Object.hasOwn(spec, token.name) ? spec[token.name] : undefined;
    if (!flag) throw new UsageError(`${command}: unknown option ${token.rawName} (see tmi-conform ${command} --help)`);
    if (!flag.value && token.value !== undefined) throw new UsageError(`${command}: ${token.rawName} takes no value`);
    // `--x --y`: parseArgs would take "--y" as the value of --x; the kit reads it as a forgotten value.
    if (flag.value && (token.value === undefined || (!token.inlineValue && token.value.startsWith('--')))) {
      throw new UsageError(`${command}: ${token.rawName} needs a value`);
    }
  }
  const flags: ParsedArgs['flags'] = {};
  for (const [name, value] of Object.entries(values)) if (value !== undefined) flags[name] = value as string | string[] | boolean;
  return { flags, positionals, rest };
}

export const stringFlag = (args: ParsedArgs, name: string): string | undefined => {
  const v = args.flags[name];
  return typeof v === 'string' ? v : undefined;
};

/** Parses HOST:PORT (port 0 = a free port). */
/** --max-body-bytes and its like: a whole number of bytes, at least 1. */
export function bytesFlag(command: string, args: ParsedArgs, name: string, fallback: number): number {
  const value = stringFlag(args, name);
  if (value === undefined) return fallback;
  if (!/^\d{1,12}$/.test(value) || Number(value) < 1) throw new UsageError(`${command}: --${name} expects a whole number of bytes (1 or more), got "${value}"`);
  return Number(value);
}

export function parseListen(command: string, value: string): { host: string; port: number } {
  const match = /^(\[[^\]]+\]|[^:]+):(\d{1,5})$/.exec(value);
  const port = match ? Number(match[2]) : NaN;
  if (!match) throw new UsageError(`${command}: --listen expects HOST:PORT (e.g. 127.0.0.1:8080), got "${value}"`);
  if (port > 65535) throw new UsageError(`${command}: --listen: port ${port} is above 65535 in "${value}"`);
  return { host: match[1]!.replace(/^\[|\]$/g, ''), port };
}
