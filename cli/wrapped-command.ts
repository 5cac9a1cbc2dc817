// The command of `tmi-conform proxy … -- CMD ARGS…`: looked up before anything starts, run
// with the terminal's stdin/stdout/stderr and an environment of its own, and its end turned
// into an exit code the way shells do (its own code, or 128 + the number of the signal that
// ended it), so that a script sees the same code through the proxy as without it.
import { spawn } from 'node:child_process';
import { accessSync, constants, statSync } from 'node:fs';
import { constants as osConstants } from 'node:os';
import { delimiter, join, resolve } from 'node:path';

/** As shells, env, nohup and xargs report a command that cannot be run. */
export const EXIT_COMMAND_NOT_FOUND = 127;
export const EXIT_COMMAND_NOT_EXECUTABLE = 126;

/** CMD cannot be run; `exitCode` is 127 (not found) or 126 (not executable). */
export class CommandError extends Error {
  override name = 'CommandError';
  constructor(
    message: string,
    readonly exitCode: number,
  ) {
    super(message);
  }
}

/** Where the command is, as a shell finds it: the path itself when it has a slash, else the first match on PATH. */
export function findCommand(name: string, path = process.env['PATH'] ?? ''): string {
  const candidates = name.includes('/')
    ? [resolve(name)]
    : path
        .split(delimiter)
        .filter((dir) => dir !== '')
        .map((dir) => join(dir, name));
  let notExecutable: string | undefined;
  for (const candidate of candidates) {
    try {
      if (!statSync(candidate).isFile()) continue;
    } catch {
      continue;
    }
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      notExecutable ??= candidate;
    }
  }
  if (notExecutable !== undefined) throw new CommandError(`cannot run "${name}": ${notExecutable} is not executable`, EXIT_COMMAND_NOT_EXECUTABLE);
  throw new CommandError(`cannot run "${name}": ${name.includes('/') ? 'no such file' : 'command not found on PATH'}`, EXIT_COMMAND_NOT_FOUND);
}

export interface CommandEnd {
  /** The exit code a shell would report for it. */
  exitCode: number;
  /** How it ended, in words: "exited with 3", "was ended by SIGTERM". */
  how: string;
}

export interface RunningCommand {
  /** Resolves once the command has ended (never rejects: a failure to start is an end too). */
  ended: Promise<CommandEnd>;
  /** Passes a signal on to the command (while it runs). */
  signal(signal: NodeJS.Signals): void;
}

/** Runs `file` (found by findCommand) with `args`; `name` is the command as typed, its argv[0]. */
export function startCommand(file: string, name: string, args: string[], env: NodeJS.ProcessEnv): RunningCommand {
  const child = spawn(file, args, { stdio: 'inherit', env, argv0: name });
  const ended = new Promise<CommandEnd>((resolve) => {
    child.once('error', (error: NodeJS.ErrnoException) => {
      const exitCode = error.code === 'ENOENT' ? EXIT_COMMAND_NOT_FOUND : EXIT_COMMAND_NOT_EXECUTABLE;
      resolve({ exitCode, how: `could not start (${error.message})` });
    });
    child.once('exit', (code, signal) => {
      if (signal !== null) resolve({ exitCode: 128 + (osConstants.signals[signal] ?? 0), how: `was ended by ${signal}` });
      else resolve({ exitCode: code ?? 0, how: `exited with ${code ?? 0}` });
    });
  });
  return {
    ended,
    signal: (signal) => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    },
  };
}
