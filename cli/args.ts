// A small, strict flag parser: every command declares its flags; anything else is a usage error.
import { UsageError } from './errors.ts';

export interface FlagSpec {
  /** Flag takes a value (`--x V` or `--x=V`); otherwise it is a boolean switch. */
  value: boolean;
  /** May be given several times; values accumulate. */
  repeat?: boolean;
}

export interface ParsedArgs {
  flags: Record<string, string | string[] | boolean>;
  positionals: string[];
}

export function parseArgs(command: string, argv: string[], spec: Record<string, FlagSpec>): ParsedArgs {
  const flags: ParsedArgs['flags'] = {};
  const positionals: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--') {
      positionals.push(...argv.slice(i + 1));
      break;
    }
    if (!arg.startsWith('--') || arg === '--') {
      positionals.push(arg);
      continue;
    }
    const eq = arg.indexOf('=');
    const name = arg.slice(2, eq === -1 ? undefined : eq);
    const flag = spec[name];
    if (!flag) throw new UsageError(`${command}: unknown option --${name} (see tmi-conform ${command} --help)`);
    if (!flag.value) {
      if (eq !== -1) throw new UsageError(`${command}: --${name} takes no value`);
      flags[name] = true;
      continue;
    }
    let value: string | undefined;
    if (eq !== -1) value = arg.slice(eq + 1);
    else {
      value = argv[i + 1];
      i++;
    }
    if (value === undefined || (eq === -1 && value.startsWith('--'))) throw new UsageError(`${command}: --${name} needs a value`);
    if (flag.repeat) flags[name] = [...((flags[name] as string[] | undefined) ?? []), value];
    else flags[name] = value;
  }
  return { flags, positionals };
}

export const stringFlag = (args: ParsedArgs, name: string): string | undefined => {
  const v = args.flags[name];
  return typeof v === 'string' ? v : undefined;
};

/** Parses HOST:PORT (port 0 = a free port). */
export function parseListen(command: string, value: string): { host: string; port: number } {
  const match = /^(\[[^\]]+\]|[^:]+):(\d{1,5})$/.exec(value);
  const port = match ? Number(match[2]) : NaN;
  if (!match || port > 65535) throw new UsageError(`${command}: --listen expects HOST:PORT (e.g. 127.0.0.1:8080), got "${value}"`);
  return { host: match[1]!.replace(/^\[|\]$/g, ''), port };
}
