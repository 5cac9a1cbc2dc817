// The library API refuses what the commands refuse, with the same one-line errors: options that
// cannot be meant are usage errors before anything starts, and a report that is not one is named.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadReport, runSuites } from '../api/index.ts';
import { UsageError } from '../core/errors.ts';

const dir = mkdtempSync(join(tmpdir(), 'tmi-api-options-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('library API: usage errors', () => {
  it('runSuites with credentials but no base_url is refused before the embedded reference starts', async () => {
    const refused = runSuites({ config: { credentials: { full: { token: 'not-for-the-reference' } } } });
    await expect(refused).rejects.toBeInstanceOf(UsageError);
    await expect(refused).rejects.toThrow('runSuites: credentials or fixtures are configured but no base_url: say which implementation they are for');
  });

  it('loadReport names a file that is not a report, and a place with none', async () => {
    const notReport = join(dir, 'report.json');
    writeFileSync(notReport, JSON.stringify({ hello: 'world' }));
    await expect(loadReport(notReport)).rejects.toThrow(
      new RegExp(`^loadReport: ${notReport.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')} is not a tmi-conform report: `),
    );
    await expect(loadReport(join(dir, 'missing'))).rejects.toThrow(`loadReport: cannot read ${join(dir, 'missing')}: no such file or directory`);
  });
});

describe('library API: the package entry', () => {
  it('api/entry.js exports every function api/index.ts exports', async () => {
    const index = await import('../api/index.ts');
    // @ts-expect-error: entry.js is plain JavaScript without declarations (dist/ holds them).
    const entry = (await import('../api/entry.js')) as Record<string, unknown>;
    const functions = Object.keys(index).filter((name) => typeof (index as Record<string, unknown>)[name] === 'function');
    expect(functions.length).toBeGreaterThan(0);
    for (const name of functions) expect(typeof entry[name], name).toBe('function');
  });
});
