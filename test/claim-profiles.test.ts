// The claim profiles: tokens the tenant itself signed that every operation must refuse, one for
// another of its APIs (AUTH-AUDIENCE-401) and one not valid yet (AUTH-NOT-BEFORE-401). The
// embedded reference hands both over (credentials.other_audience, credentials.not_yet_valid):
// a target that accepts them is warned about with a security finding, the conforming one passes,
// and a configuration without them leaves both not examined, naming the key that would.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { afterAll, describe, expect, it } from 'vitest';
import { run } from '../cli/run.ts';
import { startReference } from '../reference/index.ts';
import type { Report } from '../reports/model.ts';

const dir = mkdtempSync(join(tmpdir(), 'tmi-claim-profiles-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const CLAIM_RULES = ['AUTH-AUDIENCE-401', 'AUTH-NOT-BEFORE-401'];

async function runWith(name: string, args: string[]): Promise<{ code: number | string; report: Report }> {
  const reportDir = join(dir, name);
  const write = process.stdout.write.bind(process.stdout);
  process.stdout.write = (() => true) as typeof process.stdout.write;
  const code = await run([...args, ...CLAIM_RULES.flatMap((id) => ['--requirement', id]), '--fail-on', 'should', '--report-dir', reportDir]).finally(() => {
    process.stdout.write = write;
  });
  return { code, report: JSON.parse(readFileSync(join(reportDir, 'report.json'), 'utf8')) as Report };
}

const statusOf = (report: Report, id: string) => report.requirements.find((r) => r.id === id)!;

describe('the claim profiles', () => {
  it('accepted by the target (wrong-audience-accepted, not-yet-valid-accepted): a security warning of each; refused by the conforming reference: a pass', {
    timeout: 180_000,
  }, async () => {
    const faulty = await runWith('faulty', ['--fault', 'wrong-audience-accepted', '--fault', 'not-yet-valid-accepted']);
    expect(faulty.code).toBe(1);
    for (const id of CLAIM_RULES) expect(statusOf(faulty.report, id).status, id).toBe('warn');
    const failed = faulty.report.tests.filter((t) => t.name.startsWith('token attacks > every operation refuses a token') && t.status === 'fail');
    expect(failed.map((t) => t.message).join('\n')).toMatch(
      /AUTH-AUDIENCE-401: security: the target carried out a DELETE sent with a token for another audience \(aud "https:\/\/orders\.example\.com\/api"/,
    );
    expect(failed.map((t) => t.message).join('\n')).toMatch(
      /AUTH-NOT-BEFORE-401: security: the target carried out a DELETE sent with a token not yet valid \(nbf \d+/,
    );
    // A delete without a valid credential was carried out as well: the stated rule fails.
    expect(statusOf(faulty.report, 'AUTH-CREDENTIAL-REQUIRED').status).toBe('fail');

    const conforming = await runWith('conforming', []);
    expect(conforming.code).toBe(0);
    for (const id of CLAIM_RULES) expect(statusOf(conforming.report, id).status, id).toBe('pass');
  });

  it('not configured: each is not examined, with the config key that would examine it', { timeout: 180_000 }, async () => {
    const ref = await startReference();
    try {
      const { other_audience: _o, not_yet_valid: _n, ...credentials } = ref.config().credentials;
      const file = join(dir, 'without-claims.yaml');
      writeFileSync(file, stringify({ ...ref.config(), credentials }));
      const { code, report } = await runWith('without', ['--config', file]);
      expect(code).toBe(0);
      const audience = statusOf(report, 'AUTH-AUDIENCE-401');
      expect(audience.status).toBe('skip');
      expect(audience.reason).toMatch(/no other audience token in the configuration: set credentials\.other_audience .*TMI_OTHER_AUDIENCE_TOKEN/);
      const notBefore = statusOf(report, 'AUTH-NOT-BEFORE-401');
      expect(notBefore.status).toBe('skip');
      expect(notBefore.reason).toMatch(/no not yet valid token in the configuration: set credentials\.not_yet_valid .*TMI_NOT_YET_VALID_TOKEN/);
    } finally {
      await ref.close();
    }
  });
});
