// The benchmark's child processes: started, awaited until they say where they listen, stopped;
// every one of them is killed when the benchmark exits, however it exits.
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { packageRoot } from '../../core/paths.ts';

export interface Running {
  child: ChildProcess;
  origin: string;
}

/** Every child started, killed when this process exits. */
const started: ChildProcess[] = [];
process.on('exit', () => {
  for (const child of started) if (child.exitCode === null) child.kill('SIGKILL');
});

export async function launch(command: string, args: string[], ready: RegExp = /listening on (https?:\/\/\S+)/): Promise<Running> {
  const child = spawn(command, args, { cwd: packageRoot, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, GITHUB_STEP_SUMMARY: '' } });
  started.push(child);
  return { child, origin: await waitForLine(child, ready) };
}

export async function stop(running: Running): Promise<void> {
  if (running.child.exitCode !== null) return;
  const exited = new Promise((resolve) => running.child.once('exit', resolve));
  running.child.kill('SIGTERM');
  await exited;
}

function waitForLine(child: ChildProcess, pattern: RegExp): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = pattern.exec(out);
      if (match) resolve(match[1] ?? '');
    });
    child.stderr!.on('data', (chunk: Buffer) => (err += chunk.toString()));
    child.once('exit', (code) => reject(new Error(`exited (${code}) before it was ready: ${err.trim().split('\n').slice(-3).join(' ')}`)));
  });
}

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

export async function waitForPort(port: number): Promise<void> {
  for (let attempt = 0; attempt < 300; attempt++) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (open) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`nothing listens on port ${port} after 30 s`);
}
