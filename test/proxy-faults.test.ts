// The proxy in front of a non-conforming reference: each fault switch shows up as the finding
// of the requirement it breaks, in the journal and in the report, and a finding about a secret
// (a signing secret cut short) does not quote it.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FAULTS, startReference, type RunningReference } from '../reference/index.ts';
import type { Report } from '../reports/model.ts';
import { tokenFor } from './helpers/reference.ts';
import { readJournal, recorded, startTestProxy, type ProxyUnderTest, type RecordedEntry } from './helpers/proxy.ts';

const FAULT_NAMES = ['rate-limit-429-without-headers', 'delete-without-scope', 'rs-signing-secret-short'] as const;

describe('the proxy in front of a reference with faults switched on', () => {
  let ref: RunningReference;
  let under: ProxyUnderTest;
  let entries: RecordedEntry[];
  let report: Report;
  let cutSecret: string;

  beforeAll(async () => {
    ref = await startReference({ faults: [...FAULT_NAMES], rateLimit: { limit: 5, windowSeconds: 600 } });
    under = await startTestProxy(ref.origin);
    // Tokens come straight from the reference: only the API calls go through the proxy.
    const full = await tokenFor(ref, 'full');
    const noScope = await tokenFor(ref, 'no_scope');
    let count = 0;
    const get = async (path: string, token: string, method = 'GET') => {
      count++;
      const response = await fetch(under.proxy.origin + path, { method, headers: { authorization: `Bearer ${token}` } });
      return { status: response.status, text: await response.text() };
    };
    const deleted = await get(`/api/v2/token-exchange-profiles/${ref.fixtures.token_exchange_profiles[0]}`, noScope, 'DELETE');
    expect(deleted.status).toBe(204); // the fault: deleted without the scope
    const hs256 = await get(`/api/v2/resource-servers/${ref.fixtures.resource_servers[1]}`, full);
    cutSecret = (JSON.parse(hs256.text) as { signing_secret: string }).signing_secret;
    expect(cutSecret).toHaveLength(8);
    let throttled = 0;
    while (throttled < 2) if ((await get(`/api/v2/resource-servers/${ref.fixtures.resource_servers[0]}`, full)).status === 429) throttled++;
    await recorded(under.proxy, count);
    await under.proxy.stop();
    entries = readJournal(under.journalPath);
    report = JSON.parse(readFileSync(join(under.reportDir, 'report.json'), 'utf8')) as Report;
  });

  afterAll(async () => {
    await under?.dispose();
    await ref?.close();
  });

  it.each(FAULT_NAMES)('%s: the requirement it breaks is found, and fails the report', (fault) => {
    const requirement = FAULTS[fault]!.requirement;
    const found = entries.flatMap((e) => e._conformance.findings).filter((f) => f.requirement === requirement);
    expect(found.length).toBeGreaterThan(0);
    expect(found[0]).toMatchObject({ level: 'must', subject: 'implementation' });
    expect(report.requirements.find((r) => r.id === requirement)?.status).toBe('fail');
  });

  it('attaches each finding to the exchange that shows it', () => {
    const byRequirement = (id: string) => entries.filter((e) => e._conformance.findings.some((f) => f.requirement === id));
    expect(byRequirement('SCOPE-DELETE-REQUIRED').map((e) => [e.request!.method, e.response!.status])).toEqual([['DELETE', 204]]);
    expect(byRequirement('RL-429-HEADERS').every((e) => e.response!.status === 429)).toBe(true);
    expect(byRequirement('RL-429-HEADERS')).toHaveLength(2);
    expect(report.passed).toBe(false);
  });

  it('masks the cut signing secret in the finding message, the journal and the report', () => {
    const message = entries.flatMap((e) => e._conformance.findings).find((f) => f.requirement === 'RS-SIGNING-SECRET-LENGTH')!.message;
    expect(message).toContain('RS-SIGNING-SECRET-LENGTH');
    expect(message).not.toContain(cutSecret);
    for (const file of [
      under.journalPath,
      under.harPath,
      join(under.reportDir, 'report.json'),
      join(under.reportDir, 'report.md'),
      join(under.reportDir, 'report.html'),
    ]) {
      expect(readFileSync(file, 'utf8').includes(`"${cutSecret}"`), file).toBe(false);
    }
  });
});
