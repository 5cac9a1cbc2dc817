// validate over many files: a folder's recordings in name order, gzip told by its magic bytes
// (whatever the name), a plain segment preferred to its compressed copy, and a damaged gzip
// segment never "conforming": exit 2 naming the file, no report.
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claims, jwt } from '../fixtures/exchanges.ts';
import { startStubTarget } from '../fixtures/stub-target.ts';
import type { Report } from '../reports/model.ts';
import { recorded, startTestProxy } from './helpers/proxy.ts';
import { runCli } from './helpers/cli.ts';

const BIN = fileURLToPath(new URL('../bin/tmi-conform.js', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'tmi-validate-segments-'));
/** Three journals of 4 exchanges each, as the proxy wrote them: the lines of each. */
let parts: string[][];

beforeAll(async () => {
  const target = await startStubTarget();
  try {
    const under = await startTestProxy(target.origin);
    const token = jwt(claims());
    for (let i = 0; i < 12; i++) {
      const response = await fetch(`${under.proxy.origin}/api/v2/resource-servers/rs_${i}`, { headers: { authorization: `Bearer ${token}` } });
      await response.text();
    }
    await recorded(under.proxy, 12);
    await under.proxy.stop();
    const lines = readFileSync(under.journalPath, 'utf8')
      .split('\n')
      .filter((line) => line !== '');
    parts = [lines.slice(0, 4), lines.slice(4, 8), lines.slice(8)];
    await under.dispose();
  } finally {
    await target.close();
  }
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

const text = (lines: string[]) => `${lines.join('\n')}\n`;

const validate = (args: string[]) => runCli(['validate', ...args]);

const reportOf = (reportDir: string) => JSON.parse(readFileSync(join(reportDir, 'report.json'), 'utf8')) as Report;

describe('validate: segments, folders, gzip', () => {
  it('a folder: its segments, plain and gzipped, read in name order as one recording; other files beside them are left out', async () => {
    const folder = join(dir, 'mixed');
    mkdirSync(folder);
    writeFileSync(join(folder, 'traffic.000001.jsonl.gz'), gzipSync(text(parts[0]!)));
    writeFileSync(join(folder, 'traffic.000002.jsonl'), text(parts[1]!));
    writeFileSync(join(folder, 'traffic.000003.jsonl.gz'), gzipSync(text(parts[2]!)));
    writeFileSync(join(folder, 'notes.txt'), 'not a recording');
    const reportDir = join(dir, 'mixed-reports');
    const { code, stdout } = await validate([folder, '--report-dir', reportDir]);
    expect(code).toBe(0);
    expect(stdout).toContain('12 exchanges in 3 file(s): 12 judged');
    expect(reportOf(reportDir).traffic!.exchanges).toBe(12);
  });

  it('gzip is told by its magic bytes, not the name; a plain segment beside its compressed copy counts once', async () => {
    const folder = join(dir, 'twice');
    mkdirSync(folder);
    const misnamed = join(dir, 'misnamed.jsonl');
    writeFileSync(misnamed, gzipSync(text(parts[0]!)));
    const misnamedReports = join(dir, 'misnamed-reports');
    expect((await validate([misnamed, '--report-dir', misnamedReports])).code).toBe(0);
    expect(reportOf(misnamedReports).traffic!.exchanges).toBe(4);

    // Stopped between writing the .gz and removing the plain one: both are there, both whole.
    writeFileSync(join(folder, 'traffic.000001.jsonl'), text(parts[0]!));
    writeFileSync(join(folder, 'traffic.000001.jsonl.gz'), gzipSync(text(parts[0]!)));
    writeFileSync(join(folder, 'traffic.000002.jsonl'), text(parts[1]!));
    const reportDir = join(dir, 'twice-reports');
    const { code, stdout } = await validate([folder, '--report-dir', reportDir]);
    expect(code).toBe(0);
    expect(stdout).toContain('8 exchanges in 2 file(s)');
  });

  it('a damaged gzip segment is unreadable input: exit 2 naming the file, no report; the other segments are still summed up', async () => {
    const folder = join(dir, 'damaged');
    mkdirSync(folder);
    writeFileSync(join(folder, 'traffic.000001.jsonl'), text(parts[0]!));
    const whole = gzipSync(text(parts[1]!));
    const cut = join(folder, 'traffic.000002.jsonl.gz');
    writeFileSync(cut, whole.subarray(0, whole.length - 20));
    const corrupt = Buffer.from(gzipSync(text(parts[2]!)));
    corrupt[Math.floor(corrupt.length / 2)]! ^= 0xff;
    writeFileSync(join(folder, 'traffic.000003.jsonl.gz'), corrupt);
    const reportDir = join(dir, 'damaged-reports');
    const { code, stdout, stderr } = await validate([folder, '--report-dir', reportDir]);
    expect(code).toBe(2);
    expect(stderr).toContain(
      `tmi-conform validate: cannot read ${cut}: damaged gzip data (unexpected end of file): the compressed segment cannot be read in full`,
    );
    expect(stderr).toMatch(new RegExp(`cannot read ${join(folder, 'traffic.000003.jsonl.gz').replace(/[.]/g, '\\.')}: damaged gzip data`));
    expect(stdout).toContain('verdict: none');
    expect(existsSync(join(reportDir, 'report.json'))).toBe(false);
  });

  it('a folder with no recording in it is a usage error', async () => {
    const empty = join(dir, 'empty');
    mkdirSync(empty);
    copyFileSync(BIN, join(empty, 'tool.js'));
    const { code, stderr } = await validate([empty, '--report-dir', join(dir, 'empty-reports')]);
    expect(code).toBe(2);
    expect(stderr).toContain(`validate: ${empty} is a folder with no recording in it (a .jsonl, .jsonl.gz or .har file)`);
  });
});
