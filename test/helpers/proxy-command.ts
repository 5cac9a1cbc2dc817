// `tmi-conform proxy` run in the test's own process (cli/proxy.ts run), as its flags make it:
// started until its "listening on" line, stopped as a signal would stop it, or refused.
import { expect } from 'vitest';
import { run } from '../../cli/proxy.ts';
import { UsageError } from '../../core/errors.ts';

export interface ProxyCommand {
  /** The listening line's URL. */
  url: string;
  /** Stops it (as SIGTERM does) and waits for its exit code and what it printed. */
  stop(): Promise<{ code: number; out: string; err: string }>;
}

/** `proxy --target ORIGIN --listen 127.0.0.1:0 --status-interval 0 ...flags`, once listening. */
export async function startProxyCommand(targetOrigin: string, flags: string[]): Promise<ProxyCommand> {
  let stop!: () => void;
  const stopped = new Promise<void>((resolve) => (stop = resolve));
  let out = '';
  let err = '';
  let listening!: (origin: string) => void;
  const origin = new Promise<string>((resolve) => (listening = resolve));
  const done = run(['--target', targetOrigin, '--listen', '127.0.0.1:0', '--status-interval', '0', ...flags], {
    stopped,
    out: (text) => {
      out += text;
      const match = /listening on (\S+)/.exec(out);
      if (match) listening(match[1]!);
    },
    err: (text) => (err += text),
  });
  const url = await Promise.race([origin, done.then(() => Promise.reject(new Error(`ended before listening: ${err}`)))]);
  return {
    url,
    async stop() {
      stop();
      return { code: await done, out, err };
    },
  };
}

/** Starts the proxy command expecting a refusal: the UsageError's message, exit code 2. */
export async function proxyCommandRefusal(targetOrigin: string, flags: string[]): Promise<string> {
  const error = await run(['--target', targetOrigin, '--listen', '127.0.0.1:0', '--status-interval', '0', ...flags], {
    stopped: Promise.resolve(),
    out: () => {},
    err: () => {},
  }).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(UsageError);
  expect((error as UsageError).exitCode).toBe(2);
  return (error as UsageError).message;
}
