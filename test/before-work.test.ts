// What can be checked before the work starts is checked then, in one line with exit 2: the
// Node version, a report dir that cannot be written (a target sees no request first), and the
// config file a run takes from the working directory when none is named.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runCli, startCli, userEnv } from './helpers/cli.ts';

const BIN = fileURLToPath(new URL('../bin/tmi-conform.js', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'tmi-before-work-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A target that counts what reaches it and answers every request with a router's text 404. */
let requests = 0;
let target: Server;
let baseUrl: string;
beforeAll(async () => {
  target = createServer((req, res) => {
    requests++;
    req.resume();
    res.writeHead(404, { 'content-type': 'text/plain' }).end('no route');
  });
  await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(target.address() as AddressInfo).port}/api/v2`;
});
afterAll(() => new Promise<void>((resolve) => target.close(() => resolve())));
beforeEach(() => {
  requests = 0;
});

const oneLine = (stderr: string) => stderr.trimEnd().split('\n');

describe('the Node version', () => {
  it('an unsupported Node gets one line naming its version and the supported ones, exit 2, before any module of the kit loads', async () => {
    // Node 18 itself is not on the machine: its version is what the process reports, set before the entry point runs.
    const child = spawn(process.execPath, ['--import', 'data:text/javascript,Object.defineProperty(process.versions,"node",{value:"18.20.4"})', BIN, 'run'], {
      env: userEnv(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (c) => (stderr += c));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(code).toBe(2);
    expect(oneLine(stderr)).toEqual([
      'tmi-conform: Node.js 18.20.4 is not supported: use Node.js 20.19 or later, 22.12 or later, or 24 (package.json "engines")',
    ]);
  });
});

describe('a report dir that cannot be written is refused before the first request', () => {
  it('run: a report dir on procfs, in one line, at once, the target untouched', async () => {
    const started = Date.now();
    const { code, stdout, stderr } = await runCli(['run', '--base-url', baseUrl, '--report-dir', '/proc/tmi-conform-reports']);
    expect(code).toBe(2);
    expect(oneLine(stderr)).toEqual([
      "tmi-conform: cannot write reports to /proc/tmi-conform-reports: it is on procfs, the kernel's view, which holds no files (choose a directory on a disk)",
    ]);
    expect(stdout).toBe('');
    expect(requests).toBe(0);
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('run: a report dir below a file, the target untouched', async () => {
    const file = join(dir, 'a-file');
    writeFileSync(file, 'not a directory');
    const { code, stderr } = await runCli(['run', '--base-url', baseUrl, '--report-dir', join(file, 'reports')]);
    expect(code).toBe(2);
    expect(oneLine(stderr)).toEqual([`tmi-conform: cannot write reports to ${join(file, 'reports')}: a file stands where a directory is needed`]);
    expect(requests).toBe(0);
  });

  it('validate and proxy refuse a report dir on sysfs the same way', async () => {
    const har = join(dir, 'empty.har');
    writeFileSync(har, JSON.stringify({ log: { version: '1.2', creator: { name: 't', version: '1' }, entries: [] } }));
    const validate = await runCli(['validate', har, '--report-dir', '/sys/tmi-conform-reports']);
    expect(validate.code).toBe(2);
    expect(oneLine(validate.stderr)).toEqual([
      "tmi-conform: cannot write reports to /sys/tmi-conform-reports: it is on sysfs, the kernel's view, which holds no files (choose a directory on a disk)",
    ]);
    const proxy = await runCli(['proxy', '--target', baseUrl.replace('/api/v2', ''), '--listen', '127.0.0.1:0', '--report-dir', '/proc/tmi-conform-reports']);
    expect(proxy.code).toBe(2);
    expect(oneLine(proxy.stderr)).toHaveLength(1);
    expect(proxy.stderr).toContain('cannot write reports to /proc/tmi-conform-reports: it is on procfs');
    expect(requests).toBe(0);
  });
});

describe('the config file of the working directory', () => {
  it('tmi.yaml in the working directory is used when no --config is given, and the first line says so', async () => {
    const cwd = mkdtempSync(join(dir, 'project-'));
    writeFileSync(join(cwd, 'tmi.yaml'), `base_url: ${baseUrl}\ncredentials:\n  full: { token: not-a-real-token }\n`);
    const { code, stdout, stderr } = await startCli(['run', '--report-dir', join(cwd, 'reports')], { cwd }).exited;
    expect(stdout.split('\n')[0]).toBe('config: tmi.yaml (found in the working directory; --config FILE names another)');
    // The discovered target, not the embedded reference: it got the preflight's requests and serves nothing.
    expect(requests).toBeGreaterThan(0);
    expect(code).toBe(2);
    expect(oneLine(stderr)).toHaveLength(1);
  });

  it('tmi-conform.yaml comes before tmi.yaml; --config names another and nothing is discovered', async () => {
    const cwd = mkdtempSync(join(dir, 'project-'));
    writeFileSync(join(cwd, 'tmi.yaml'), 'base_url: http://127.0.0.1:9/api/v2\n');
    writeFileSync(join(cwd, 'tmi-conform.yaml'), `base_url: ${baseUrl}\ncredentials:\n  full: { token: not-a-real-token }\n`);
    const discovered = await startCli(['run', '--report-dir', join(cwd, 'reports')], { cwd }).exited;
    expect(discovered.stdout.split('\n')[0]).toBe('config: tmi-conform.yaml (found in the working directory; --config FILE names another)');
    expect(requests).toBeGreaterThan(0);
    requests = 0;
    writeFileSync(join(cwd, 'other.yaml'), `base_url: ${baseUrl}\ncredentials:\n  full: { token: not-a-real-token }\n`);
    const named = await startCli(['run', '--config', 'other.yaml', '--report-dir', join(cwd, 'reports')], { cwd }).exited;
    expect(named.stdout).not.toContain('found in the working directory');
    expect(requests).toBeGreaterThan(0);
  });
});
