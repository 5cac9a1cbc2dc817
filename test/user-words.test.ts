// Errors name the flag, variable or key as the user typed it, the value given, and what a valid
// one looks like; never the config schema's own words.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readReport } from '../reports/read.ts';
import { configFromEnv, configFromFlags, readConfigFile } from '../suites/config.ts';

const dir = mkdtempSync(join(tmpdir(), 'tmi-user-words-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const flags = (given: Record<string, string>) => () => configFromFlags((name) => given[name]);

describe('config errors in the words of the user', () => {
  it.each([
    [flags({ 'property-runs': '0' }), 'run: --property-runs: 0 is not a whole number from 1 to 1000 (default 25)'],
    [flags({ 'base-url': '127.0.0.1:4010' }), 'run: --base-url: "127.0.0.1:4010" is not an http(s) URL with its scheme, e.g. http://127.0.0.1:4010'],
    [
      flags({ 'base-url': 'ftp://tenant.example.com/api/v2' }),
      'run: --base-url: "ftp://tenant.example.com/api/v2" is not an http(s) URL, e.g. https://tenant.example.com/api/v2',
    ],
    [() => configFromEnv({ TMI_PROPERTY_RUNS: '5000' }), 'run: TMI_PROPERTY_RUNS: 5000 is not a whole number from 1 to 1000 (default 25)'],
    [() => configFromEnv({ TMI_ALLOW_DESTRUCTIVE: 'perhaps' }), 'run: TMI_ALLOW_DESTRUCTIVE: "perhaps" is not true or false'],
  ])('%#: %s', (make, message) => {
    expect(make).toThrow(message);
    try {
      make();
    } catch (error) {
      expect((error as Error).message).not.toMatch(/must (be|match|have)|pattern|\(top level\)/);
    }
  });

  it('a config file names the file and the key', async () => {
    const path = join(dir, 'tmi.yaml');
    writeFileSync(path, 'base_url: 127.0.0.1:4010\n');
    await expect(readConfigFile(path)).rejects.toThrow(
      `run: config ${path}: key "base_url": "127.0.0.1:4010" is not an http(s) URL with its scheme, e.g. http://127.0.0.1:4010`,
    );
  });
});

describe('a file given as a report that is none', () => {
  it('a HAR says it is a recording and how to judge it', async () => {
    const har = join(dir, 'traffic.har');
    writeFileSync(har, JSON.stringify({ log: { version: '1.2', creator: { name: 'x', version: '1' }, entries: [] } }));
    await expect(readReport(har, 'report merge')).rejects.toThrow(
      `report merge: ${har} is not a tmi-conform report: it is a HAR recording (tmi-conform validate FILE --report-dir DIR judges it; that DIR can be merged)`,
    );
  });

  it('any other JSON says it holds no report, without schema words', async () => {
    const other = join(dir, 'package.json');
    writeFileSync(other, JSON.stringify({ name: 'app' }));
    const error = await readReport(other, 'report diff').catch((e: Error) => e);
    expect((error as Error).message).toBe(
      `report diff: ${other} is not a tmi-conform report: it holds no report (a report is the report.json that run, proxy and validate write, or the directory holding it)`,
    );
  });
});
