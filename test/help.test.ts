// The top-level help and the README's command table name every command and every report
// subcommand, and the top-level exit codes agree with those of run --help.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { USAGE } from '../cli/main.ts';
import { help as runHelp } from '../cli/run.ts';

const README = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
const REPORT_SUBCOMMANDS = ['merge', 'baseline', 'diff', 'matrix'];

describe('the commands as the help and the README list them', () => {
  it('the top-level help names every report subcommand', () => {
    const reportLine = USAGE.split('\n').find((line) => line.startsWith('  report '))!;
    for (const sub of REPORT_SUBCOMMANDS) expect(reportLine).toContain(sub);
  });

  it("the README's command table has a row for every report subcommand", () => {
    for (const sub of REPORT_SUBCOMMANDS) expect(README).toMatch(new RegExp(`^\\| \`tmi-conform report ${sub} `, 'm'));
  });

  it('the top-level help gives the exit codes run --help gives, 130 included', () => {
    for (const code of ['0 ', '1 ', '2 ', '130 ']) {
      expect(USAGE).toContain(code);
      expect(runHelp).toContain(code);
    }
    expect(USAGE).toMatch(/130 run interrupted/);
  });
});

describe('the metrics as the README lists them', () => {
  const source = readFileSync(new URL('../proxy/admin/metrics.ts', import.meta.url), 'utf8');
  const names = [...source.matchAll(/'(tmi_conform_[a-z_]+)'/g)].map((m) => m[1]!);

  it('every metric the proxy exposes has a row in the README', () => {
    expect(names.length).toBeGreaterThan(10);
    for (const name of names) expect(README, name).toContain(`\`${name}\``);
  });

  it('every special label value the proxy writes is explained there', () => {
    for (const value of [
      'outside_api',
      'not_judged',
      'otherOperation',
      'getToken',
      '`none`',
      '(other)',
      '`document`',
      '`responses`',
      '`values`',
      '`operations`',
      '`description`',
      '`description-responses`',
    ])
      expect(README, value).toContain(value);
  });
});
