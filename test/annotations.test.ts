// Under GitHub Actions, a report's failures and warnings become workflow commands (::error,
// ::warning) titled with the requirement, so that the job's page shows them; accepted failures
// are not annotated; the count is capped, with a notice of how many more.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { ANNOTATIONS_PER_LEVEL, workflowCommands } from '../reports/annotations.ts';
import { applyBaseline } from '../reports/baseline.ts';
import type { RequirementResult } from '../reports/model.ts';
import { getExchange, resourceServer } from '../fixtures/exchanges.ts';
import { reportOfRead } from './helpers/reports.ts';
import { harEntry } from '../recordings/write.ts';

const BIN = fileURLToPath(new URL('../bin/tmi-conform.js', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'tmi-annotations-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('workflowCommands', () => {
  it('one ::error per failed requirement, titled with its id and title, with what the first evidence said and its exchange', () => {
    const alg = workflowCommands(reportOfRead({ signing_alg: 'HS512' })).find((c) => c.startsWith('::error title=RS-SIGNING-ALG '))!;
    expect(alg).toContain('::must: expected signing_alg to be one of');
    expect(alg).toContain('received "HS512" (GET https://tenant.example.com/api/v2/resource-servers/rs_1 → 200)');
    for (const c of workflowCommands(reportOfRead({ signing_alg: 'HS512' }))) expect(c).toMatch(/^::(error|warning|notice) title=[^:\n]+::[^\n]+$/);
  });

  it('escapes what the runner reads: %, CR and LF in the message; also : and , in the title', () => {
    const base = reportOfRead({ signing_alg: 'HS512' });
    const odd: RequirementResult = {
      ...base.requirements[0]!,
      id: 'X-1',
      title: 'a: b, c',
      status: 'fail',
      evidence: [{ source: 's', kind: 'exchange', status: 'fail', message: 'X-1: 100% wrong\r\nnext' }],
    };
    expect(workflowCommands({ ...base, requirements: [odd] })).toEqual([
      '::error title=X-1 a%3A b%2C c::must: 100%25 wrong%0D; 0 finding(s), see the report'.replace('; 0', `; ${odd.counts.findings}`),
    ]);
  });

  it('a failure the baseline accepts is not annotated', () => {
    const accepted = applyBaseline(reportOfRead({ signing_alg: 'HS512' }), { source: 'b.yaml', entries: [{ requirement: 'RS-SIGNING-ALG', reason: 'known' }] });
    expect(workflowCommands(accepted).some((c) => c.includes('RS-SIGNING-ALG'))).toBe(false);
  });

  it(`at most ${ANNOTATIONS_PER_LEVEL} per level, then a notice with how many more`, () => {
    const base = reportOfRead({ signing_alg: 'HS512' });
    const failing = (i: number): RequirementResult => ({ ...base.requirements[0]!, id: `X-${i}`, status: 'fail', evidence: [] });
    const many = { ...base, requirements: Array.from({ length: ANNOTATIONS_PER_LEVEL + 3 }, (_, i) => failing(i)) };
    const commands = workflowCommands(many);
    expect(commands.filter((c) => c.startsWith('::error'))).toHaveLength(ANNOTATIONS_PER_LEVEL);
    expect(commands.at(-1)).toBe('::notice title=tmi-conform::3 more failed requirement(s) in report.md and report.html');
  });
});

describe('validate under GITHUB_ACTIONS=true', () => {
  it('prints the workflow commands of a faulty recording; without it, none', () => {
    const journal = join(dir, 'bad.jsonl');
    writeFileSync(journal, `${JSON.stringify(harEntry(getExchange(resourceServer({ signing_alg: 'HS512' }))))}\n`);
    const validate = (env: Record<string, string>) =>
      spawnSync(process.execPath, [BIN, 'validate', journal, '--report-dir', join(dir, 'reports')], {
        encoding: 'utf8',
        env: { ...process.env, GITHUB_STEP_SUMMARY: '', GITHUB_ACTIONS: '', ...env },
      });
    const onGitHub = validate({ GITHUB_ACTIONS: 'true' });
    expect(onGitHub.status).toBe(1);
    expect(onGitHub.stdout).toMatch(/^::error title=RS-SIGNING-ALG .*::must: /m);
    expect(validate({}).stdout).not.toContain('::error');
  });
});
