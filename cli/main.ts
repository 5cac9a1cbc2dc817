// `tmi-conform <command>`: dispatches to one module per command. Each module exports
// `run(argv): Promise<number>` (the exit code) and `help` (its --help text).
import { EXIT_OK, EXIT_USAGE, UsageError } from '../core/errors.ts';

interface CommandModule {
  help: string;
  run(argv: string[]): Promise<number>;
}

const COMMANDS: Record<string, { summary: string; load: () => Promise<CommandModule> }> = {
  run: { summary: 'run the conformance suites against an implementation (default: the embedded reference)', load: () => import('./run.ts') },
  proxy: { summary: 'recording, validating reverse proxy in front of a live tenant', load: () => import('./proxy.ts') },
  validate: { summary: 'judge recorded traffic offline (HAR 1.2, JSONL journal)', load: () => import('./validate.ts') },
  serve: { summary: 'start the reference implementation alone', load: () => import('./serve.ts') },
  report: {
    summary: 'reports: merge, baseline, diff, matrix (tmi-conform report --help)',
    load: () => import('./report.ts'),
  },
  token: { summary: "make an attack case's token again from a valid one in TOKEN: token --attack NAME", load: () => import('./token.ts') },
};

export const USAGE = `tmi-conform — conformance kit for the tenant management interface (/api/v2)

Usage: tmi-conform <command> [options]

Commands:
${Object.entries(COMMANDS)
  .map(([name, c]) => `  ${name.padEnd(10)}${c.summary}`)
  .join('\n')}

Run "tmi-conform <command> --help" for a command's options.
Exit codes: 0 every "must" requirement that was judged passed (with --fail-on should: and no
warning); 1 at least one failed; 2 usage or config error, unreadable input, or a setup error
found before any work (target unreachable, credentials refused); 130 run interrupted (no verdict).`;

export async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(USAGE + '\n');
    return name === undefined ? EXIT_USAGE : EXIT_OK;
  }
  if (name === '--version') {
    const { version } = await import('../core/version.ts');
    process.stdout.write(version + '\n');
    return EXIT_OK;
  }
  const command = COMMANDS[name];
  if (!command) {
    process.stderr.write(`tmi-conform: unknown command "${name}" (commands: ${Object.keys(COMMANDS).join(', ')})\n`);
    return EXIT_USAGE;
  }
  try {
    const module = await command.load();
    // After `--` come another program's arguments (proxy … -- CMD ARGS): its --help is not ours.
    const own = rest.includes('--') ? rest.slice(0, rest.indexOf('--')) : rest;
    if (own.includes('--help') || own.includes('-h')) {
      process.stdout.write(module.help.trimEnd() + '\n');
      return EXIT_OK;
    }
    return await module.run(rest);
  } catch (error) {
    if (error instanceof UsageError) {
      process.stderr.write(`tmi-conform: ${error.message}\n`);
      return error.exitCode;
    }
    // An unexpected failure is still one line; TMI_DEBUG=1 shows the stack for bug reports.
    const message = error instanceof Error ? error.message : String(error);
    process.stderr.write(`tmi-conform ${name}: internal error: ${message}\n`);
    if (process.env['TMI_DEBUG']) process.stderr.write(String((error as Error)?.stack) + '\n');
    return EXIT_USAGE;
  }
}
