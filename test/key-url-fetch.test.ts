// A token whose jku or x5u header names a key URL: a target on loopback that fetches it is seen
// doing so by the kit's key server (suites/key-url-server.ts), a security warning of its own
// (AUTH-KEY-URL-NOT-FETCHED), whether it then accepts the token or not. A conforming target
// fetches nothing.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { run } from '../cli/run.ts';
import type { Report } from '../reports/model.ts';

const dir = mkdtempSync(join(tmpdir(), 'tmi-key-url-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function runAgainst(name: string, faults: string[]): Promise<{ code: number | string; report: Report }> {
  const reportDir = join(dir, name);
  const write = process.stdout.write.bind(process.stdout);
  process.stdout.write = (() => true) as typeof process.stdout.write;
  const fault = faults.flatMap((f) => ['--fault', f]);
  const code = await run([...fault, '--requirement', 'AUTH-KEY-URL-NOT-FETCHED', '--fail-on', 'should', '--report-dir', reportDir]).finally(() => {
    process.stdout.write = write;
  });
  return { code, report: JSON.parse(readFileSync(join(reportDir, 'report.json'), 'utf8')) as Report };
}

describe('a key URL a token names', () => {
  it('fetched by the target (jku-followed, x5u-followed): a warning naming the request the kit saw; not fetched by the conforming reference', { timeout: 120_000 }, async () => {
    const faulty = await runAgainst('faulty', ['jku-followed', 'x5u-followed']);
    const requirement = faulty.report.requirements.find((r) => r.id === 'AUTH-KEY-URL-NOT-FETCHED')!;
    expect(faulty.code).toBe(1);
    expect(requirement.status).toBe('warn');
    const failed = faulty.report.tests.find((t) => t.name.includes('fetches the key URL'))!;
    // The token was carried out as well: each broken requirement is a line of the failure.
    expect(failed.message).toMatch(/AUTH-KEY-URL-NOT-FETCHED: security: the target fetched the key URL a token named, answering a GET/);
    const conforming = await runAgainst('conforming', []);
    expect(conforming.code).toBe(0);
    expect(conforming.report.requirements.find((r) => r.id === 'AUTH-KEY-URL-NOT-FETCHED')!.status).toBe('pass');
  });
});
