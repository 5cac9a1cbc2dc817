// The example CI workflow does what docs/reports.md promises: start an implementation, run the
// suite into a report directory, upload it, publish junit.xml, even when the run failed.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { packageRoot } from '../core/paths.ts';

interface Step {
  name?: string;
  uses?: string;
  run?: string;
  if?: string;
  with?: Record<string, unknown>;
}

const workflow = parse(readFileSync(join(packageRoot, 'docs', 'ci', 'github-actions.yml'), 'utf8')) as { on: unknown; jobs: Record<string, { steps: Step[] }> };
const steps = Object.values(workflow.jobs)[0]!.steps;
const index = (match: (s: Step) => boolean) => steps.findIndex(match);

describe('docs/ci/github-actions.yml', () => {
  it('starts an implementation, then runs the suite into a report directory', () => {
    const serve = index((s) => /tmi-conform serve --listen 127\.0\.0\.1:\d+ --config-out tmi\.yaml .*&/.test(s.run ?? ''));
    const run = index((s) => /tmi-conform run --config tmi\.yaml --report-dir reports\/ci/.test(s.run ?? ''));
    expect(serve).toBeGreaterThan(-1);
    expect(run).toBeGreaterThan(serve);
  });

  it('uploads the reports and publishes junit.xml after the run, whatever its verdict', () => {
    const run = index((s) => /tmi-conform run/.test(s.run ?? ''));
    const upload = steps[index((s) => (s.uses ?? '').startsWith('actions/upload-artifact@'))]!;
    const junit = steps[index((s) => (s.uses ?? '').startsWith('mikepenz/action-junit-report@'))]!;
    expect(steps.indexOf(upload)).toBeGreaterThan(run);
    expect(steps.indexOf(junit)).toBeGreaterThan(run);
    expect(upload.with).toMatchObject({ path: 'reports/ci/' });
    expect(junit.with).toMatchObject({ report_paths: 'reports/ci/junit.xml' });
    for (const step of [upload, junit]) expect(step.if).toMatch(/!cancelled\(\)|always\(\)/);
  });
});
