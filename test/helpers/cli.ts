// `tmi-conform COMMAND …` run as a user runs it: a child process of bin/tmi-conform.js, its
// first stdout line (the "listening on" line of proxy and serve), stderr as it grows, and how it
// ended.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const BIN = fileURLToPath(new URL('../../bin/tmi-conform.js', import.meta.url));

export interface CliChild {
  /** Resolves with the first stdout line. */
  firstLine: Promise<string>;
  /** Resolves once stderr contains `text`. */
  stderrContains(text: string): Promise<void>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>;
  kill(signal: NodeJS.Signals): void;
}

/** Starts `tmi-conform ...args`; GITHUB_STEP_SUMMARY is emptied so that no report reaches a CI job's summary from a test. */
export function startCli(args: string[], options: { cwd?: string } = {}): CliChild {
  const child = spawn(process.execPath, [BIN, ...args], {
    env: { ...process.env, GITHUB_STEP_SUMMARY: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(options.cwd ? { cwd: options.cwd } : {}),
  });
  let stdout = '';
  let stderr = '';
  const stderrWaiters: Array<{ text: string; resolve: () => void }> = [];
  let resolveLine!: (line: string) => void;
  const firstLine = new Promise<string>((resolve) => (resolveLine = resolve));
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
    if (stdout.includes('\n')) resolveLine(stdout.split('\n')[0]!);
  });
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
    for (const waiter of stderrWaiters.filter((w) => stderr.includes(w.text))) {
      stderrWaiters.splice(stderrWaiters.indexOf(waiter), 1);
      waiter.resolve();
    }
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>((resolve) =>
    child.on('close', (code, signal) => {
      resolveLine(stdout.split('\n')[0]!);
      resolve({ code, signal, stdout, stderr });
    }),
  );
  return {
    firstLine,
    stderrContains: (text) => (stderr.includes(text) ? Promise.resolve() : new Promise((resolve) => stderrWaiters.push({ text, resolve }))),
    exited,
    kill: (signal) => child.kill(signal),
  };
}

/** The environment of a user's shell: none of the test runner's own variables, no TMI_* setting, no CI job summary. */
export function userEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !k.startsWith('VITEST') && !k.startsWith('TMI_') && k !== 'NODE_ENV' && k !== 'GITHUB_STEP_SUMMARY'),
  );
  return { ...env, ...extra };
}

/** Runs `tmi-conform ...args` to its end in a user's environment; asynchronous, so a server in the test's process keeps answering. */
export function runCli(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [BIN, ...args], { env: userEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c) => (stdout += c));
  child.stderr.on('data', (c) => (stderr += c));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}
