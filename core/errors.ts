// Exit codes and the one-line errors of the command line (docs/architecture.md, "Public contract").
export const EXIT_OK = 0;
export const EXIT_FAILED = 1;
export const EXIT_USAGE = 2;
/** Stopped by SIGINT or SIGTERM (128 + SIGINT, as a shell reports a process Ctrl-C ended). */
export const EXIT_INTERRUPTED = 130;

/** Bad input from the user: printed as one line on stderr, exit code 2, never a stack trace. */
export class UsageError extends Error {
  readonly exitCode: number;
  constructor(message: string, exitCode = EXIT_USAGE) {
    super(message);
    this.name = 'UsageError';
    this.exitCode = exitCode;
  }
}
