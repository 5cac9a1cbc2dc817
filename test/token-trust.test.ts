// Token trust, as issue 15's "Done when" puts it, on the observation side: the proxy in front of
// a reference that accepts forged credentials reports each 2xx as a security finding, with the
// request's non-secret claims as evidence and no token on disk; validate exits 1 on its HAR
// and journal; a reference that answers 503 over its limit fails RL-THROTTLED-429; and against
// the conforming reference the same traffic gives no finding.
import { spawn, spawnSync } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { JSONWebKeySet } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startReference, type RunningReference } from '../reference/index.ts';
import { learnTenant, tenantTokensData } from '../keys/tenant.ts';
import type { Report } from '../reports/model.ts';
import { keyConfusionTokens, unsignedToken, withScopeAdded } from '../suites/tokens.ts';
import { startCli } from './helpers/cli.ts';
import { readJournal, recorded, startTestProxy, type ProxyUnderTest, type RecordedEntry } from './helpers/proxy.ts';
import { tokenFor } from './helpers/reference.ts';

const BIN = fileURLToPath(new URL('../bin/tmi-conform.js', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'tmi-token-trust-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function validate(...args: string[]) {
  const result = spawnSync(process.execPath, [BIN, 'validate', ...args], { encoding: 'utf8', env: { ...process.env, GITHUB_STEP_SUMMARY: '' } });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** The proxy in front of `ref`, with what the tenant says of its tokens learned as the proxy command learns it. */
async function proxyWithKeys(ref: RunningReference): Promise<ProxyUnderTest> {
  const tenant = await learnTenant({ wellKnownAt: ref.origin });
  if (!tenant.keys || !('jwks' in tenant.keys)) throw new Error(tenant.keys?.problem ?? 'no keys');
  return startTestProxy(ref.origin, { tenant: tenantTokensData(tenant) });
}

interface Attack {
  name: string;
  method: 'GET' | 'DELETE';
  path: string;
  authorization?: string;
}

/** Every credential attack the reference's fault switches accept, as requests through a proxy. */
async function attacks(ref: RunningReference): Promise<{ list: Attack[]; tokens: string[] }> {
  const full = await tokenFor(ref, 'full');
  const noScope = await tokenFor(ref, 'no_scope');
  const jwks = (await (await fetch(`${ref.origin}/.well-known/jwks.json`)).json()) as JSONWebKeySet;
  const [confused] = await keyConfusionTokens(full, jwks);
  const profiles = ref.fixtures.token_exchange_profiles;
  const rs = `/api/v2/resource-servers/${ref.fixtures.resource_servers[0]}`;
  const tampered = withScopeAdded(noScope, 'delete:token_exchange_profiles');
  const list: Attack[] = [
    {
      name: 'genuine no_scope read, refused for its scope (the tampered-payload switch remembers its signature)',
      method: 'GET',
      path: rs,
      authorization: `Bearer ${noScope}`,
    },
    { name: 'no Authorization header', method: 'DELETE', path: `/api/v2/token-exchange-profiles/${profiles[0]}` },
    { name: 'alg none', method: 'GET', path: rs, authorization: `Bearer ${unsignedToken(full)}` },
    { name: 'tampered payload', method: 'DELETE', path: `/api/v2/token-exchange-profiles/${profiles[1]}`, authorization: `Bearer ${tampered}` },
    { name: 'key confusion', method: 'GET', path: rs, authorization: `Bearer ${confused!}` },
    { name: 'expired token', method: 'DELETE', path: `/api/v2/token-exchange-profiles/${profiles[2]}`, authorization: `Bearer ${ref.expiredToken}` },
  ];
  return { list, tokens: [full, noScope, tampered, confused!, ref.expiredToken, unsignedToken(full)] };
}

async function send(under: ProxyUnderTest, list: Attack[]): Promise<number[]> {
  const statuses: number[] = [];
  for (const attack of list) {
    const response = await fetch(under.proxy.origin + attack.path, {
      method: attack.method,
      headers: attack.authorization ? { authorization: attack.authorization } : {},
    });
    await response.arrayBuffer();
    statuses.push(response.status);
  }
  await recorded(under.proxy, list.length);
  await under.proxy.stop();
  return statuses;
}

const findingsOf = (entry: RecordedEntry) => entry._conformance.findings.filter((f) => f.subject === 'implementation');

describe('the proxy in front of a reference that accepts forged credentials', () => {
  let ref: RunningReference;
  let under: ProxyUnderTest;
  let entries: RecordedEntry[];
  let report: Report;
  let list: Attack[];
  let tokens: string[];

  beforeAll(async () => {
    ref = await startReference({
      faults: ['missing-token-accepted', 'alg-none-accepted', 'tampered-payload-accepted', 'key-confusion-accepted', 'expired-token-accepted'],
      rateLimit: false,
    });
    under = await proxyWithKeys(ref);
    ({ list, tokens } = await attacks(ref));
    expect(await send(under, list)).toEqual([403, 204, 200, 204, 200, 204]);
    entries = readJournal(under.journalPath);
    report = JSON.parse(readFileSync(join(under.reportDir, 'report.json'), 'utf8')) as Report;
  });

  afterAll(async () => {
    await under?.dispose();
    await ref?.close();
  });

  it('each accepted attack is a security finding of the requirement it breaks; the genuine request none', () => {
    const byAttack = entries.map((e) => findingsOf(e).map((f) => `${f.requirement}/${f.level}`));
    // The 401 rule of the credential's kind is broken by the same 2xx (the expired token has none).
    expect(byAttack).toEqual([
      [],
      ['AUTH-CREDENTIAL-REQUIRED/must', 'AUTH-MISSING-TOKEN-401/must'],
      ['AUTH-CREDENTIAL-REQUIRED-OTHER/must', 'AUTH-INVALID-SIGNATURE-401-OTHER/should'],
      ['AUTH-CREDENTIAL-REQUIRED/must', 'AUTH-INVALID-SIGNATURE-401/must'],
      ['AUTH-CREDENTIAL-REQUIRED-OTHER/must', 'AUTH-INVALID-SIGNATURE-401-OTHER/should'],
      ['AUTH-CREDENTIAL-REQUIRED/must'],
    ]);
    for (const entry of entries.slice(1)) {
      const [f, ...others] = findingsOf(entry) as Array<{ message: string; security?: string }>;
      expect(f!.security).toMatch(/^the target carried out a (DELETE|PATCH|GET) sent with /);
      expect(f!.message).toContain(`: security: ${f!.security} (expected a refusal (401), received 2`);
      for (const other of others) expect(other.message).toContain(`: security: ${f!.security} (expected 401 for `);
    }
    // The proxy checked the signatures: the tampered and the key-confusion tokens did not verify.
    expect(entries.map((e) => e._conformance.token['signatureValid'])).toEqual([true, undefined, false, false, false, true]);
  });

  it("fails the report, with the request's credential and non-secret claims as evidence", () => {
    expect(report.passed).toBe(false);
    const required = report.requirements.find((r) => r.id === 'AUTH-CREDENTIAL-REQUIRED')!;
    expect(required.status).toBe('fail');
    const states = required.evidence.map((e) => e.exchange?.credential?.state);
    expect(states).toEqual(expect.arrayContaining(['absent', 'signature-invalid', 'expired']));
    const tampered = required.evidence.find((e) => e.exchange?.credential?.state === 'signature-invalid')!.exchange!.credential!;
    expect(tampered).toMatchObject({
      alg: 'RS256',
      signatureValid: false,
      claims: { azp: ref.clients.no_scope.client_id, scope: expect.stringContaining('delete:token_exchange_profiles') },
    });
    const other = report.requirements.find((r) => r.id === 'AUTH-CREDENTIAL-REQUIRED-OTHER')!;
    expect(other.status).toBe('fail');
    expect(other.evidence.map((e) => e.exchange?.credential?.state)).toEqual(expect.arrayContaining(['unsigned', 'signature-invalid']));
    // The 401 rules the same exchanges broke fail too, as security findings: none reads as not examined.
    const status = (id: string) => report.requirements.find((r) => r.id === id)!;
    for (const [id, expected, exchanges] of [
      ['AUTH-MISSING-TOKEN-401', 'fail', 1],
      ['AUTH-INVALID-SIGNATURE-401', 'fail', 1],
      ['AUTH-INVALID-SIGNATURE-401-OTHER', 'warn', 2],
    ] as const) {
      expect(status(id).status, id).toBe(expected);
      expect(status(id).counts.security, id).toBe(exchanges);
    }
  });

  it('writes no token to the journal, the HAR file or the reports', () => {
    const files = [under.journalPath, under.harPath, ...readdirSync(under.reportDir).map((name) => join(under.reportDir, name))];
    for (const file of files) {
      const text = readFileSync(file, 'utf8');
      for (const token of tokens) expect(text.includes(token.slice(token.indexOf('.'))), file).toBe(false);
      expect(text, file).not.toMatch(/eyJ[A-Za-z0-9_-]{10,}\.eyJ/);
    }
  });

  it('validate exits 1 on the HAR file and on the journal, naming the requirement, each authentication requirement as the proxy reported it', () => {
    for (const file of [under.harPath, under.journalPath]) {
      const reportDir = join(dir, `validated-${file.endsWith('.har') ? 'har' : 'jsonl'}`);
      const { code, stdout, stderr } = validate(file, '--report-dir', reportDir);
      expect(stderr).toBe('');
      expect(code, stdout).toBe(1);
      expect(stdout).toMatch(/AUTH-CREDENTIAL-REQUIRED\s+must\s+implementation\s+3/);
      expect(stdout).toMatch(/AUTH-CREDENTIAL-REQUIRED-OTHER\s+must\s+implementation\s+2/);
      expect(stdout).toMatch(/AUTH-INVALID-SIGNATURE-401\s+must\s+implementation\s+1/);
      expect(stdout).not.toContain('credentials not recorded');
      const validated = JSON.parse(readFileSync(join(reportDir, 'report.json'), 'utf8')) as Report;
      const auth = (r: Report) => r.requirements.filter((x) => x.id.startsWith('AUTH-')).map((x) => [x.id, x.status, x.counts.security]);
      expect(auth(validated), file).toEqual(auth(report));
    }
  });
});

describe('the same traffic through the proxy in front of the conforming reference', () => {
  let ref: RunningReference;
  let under: ProxyUnderTest;
  let entries: RecordedEntry[];
  let report: Report;

  beforeAll(async () => {
    ref = await startReference({ rateLimit: false });
    under = await proxyWithKeys(ref);
    const { list } = await attacks(ref);
    expect(await send(under, list)).toEqual([403, 401, 401, 401, 401, 401]);
    entries = readJournal(under.journalPath);
    report = JSON.parse(readFileSync(join(under.reportDir, 'report.json'), 'utf8')) as Report;
  });

  afterAll(async () => {
    await under?.dispose();
    await ref?.close();
  });

  it('no implementation finding, the credential rules examined and passed', () => {
    expect(entries.flatMap(findingsOf)).toEqual([]);
    expect(report.passed).toBe(true);
    expect(report.summary.warn).toBe(0);
    for (const id of [
      'AUTH-CREDENTIAL-REQUIRED',
      'AUTH-CREDENTIAL-REQUIRED-OTHER',
      'AUTH-MISSING-TOKEN-401',
      'AUTH-INVALID-SIGNATURE-401',
      'AUTH-INVALID-SIGNATURE-401-OTHER',
    ]) {
      expect(report.requirements.find((r) => r.id === id)!.status, id).toBe('pass');
    }
  });

  it('validate exits 0 on its HAR file', () => {
    const { code, stdout } = validate(under.harPath, '--report-dir', join(dir, 'conforming'));
    expect(code, stdout).toBe(0);
  });
});

describe('a reference that answers 503 instead of 429 over its rate limit', () => {
  const run = async (faults: string[]) => {
    const ref = await startReference({ faults, rateLimit: { limit: 3, windowSeconds: 600 } });
    const under = await startTestProxy(ref.origin);
    try {
      const token = await tokenFor(ref, 'full');
      const path = `/api/v2/resource-servers/${ref.fixtures.resource_servers[0]}`;
      const list: Attack[] = Array.from({ length: 5 }, () => ({ name: 'read', method: 'GET', path, authorization: `Bearer ${token}` }));
      const statuses = await send(under, list);
      return {
        statuses,
        entries: readJournal(under.journalPath),
        report: JSON.parse(readFileSync(join(under.reportDir, 'report.json'), 'utf8')) as Report,
        harPath: under.harPath,
        dispose: () => under.dispose(),
      };
    } finally {
      await ref.close();
    }
  };

  it('throttled-503: RL-THROTTLED-429 fails, naming the status; validate exits 1 on the HAR', async () => {
    const faulty = await run(['throttled-503']);
    try {
      expect(faulty.statuses).toEqual([200, 200, 200, 503, 503]);
      const found = faulty.entries.flatMap(findingsOf).filter((f) => f.requirement === 'RL-THROTTLED-429');
      expect(found).toHaveLength(2);
      expect(found[0]!.message).toContain('received 503');
      expect(faulty.report.requirements.find((r) => r.id === 'RL-THROTTLED-429')!.status).toBe('fail');
      const { code, stdout } = validate(faulty.harPath, '--report-dir', join(dir, 'throttled'));
      expect(code).toBe(1);
      expect(stdout).toMatch(/RL-THROTTLED-429\s+must\s+implementation\s+2/);
    } finally {
      await faulty.dispose();
    }
  });

  it('the conforming reference answers 429: the rule is examined and passes', async () => {
    const conforming = await run([]);
    try {
      expect(conforming.statuses).toEqual([200, 200, 200, 429, 429]);
      expect(conforming.entries.flatMap(findingsOf)).toEqual([]);
      expect(conforming.report.requirements.find((r) => r.id === 'RL-THROTTLED-429')!.status).toBe('pass');
    } finally {
      await conforming.dispose();
    }
  });
});

describe('tmi-conform proxy and validate read the JWKS as users give it', () => {
  let ref: RunningReference;
  beforeAll(async () => {
    ref = await startReference({ faults: ['tampered-payload-accepted'], rateLimit: false });
  });
  afterAll(async () => {
    await ref?.close();
  });

  it('proxy fetches it from the target by default: a tampered token that got a 2xx fails the report', async () => {
    const reportDir = join(dir, 'cli-proxy');
    const child = startCli(['proxy', '--target', ref.origin, '--listen', '127.0.0.1:0', '--report-dir', reportDir, '--status-interval', '0']);
    const origin = (await child.firstLine).slice('listening on '.length);
    const noScope = await tokenFor(ref, 'no_scope');
    const rs = `${origin}/api/v2/resource-servers/${ref.fixtures.resource_servers[0]}`;
    expect((await fetch(rs, { headers: { authorization: `Bearer ${noScope}` } })).status).toBe(403);
    const tampered = withScopeAdded(noScope, 'delete:token_exchange_profiles');
    expect(
      (
        await fetch(`${origin}/api/v2/token-exchange-profiles/${ref.fixtures.token_exchange_profiles[0]}`, {
          method: 'DELETE',
          headers: { authorization: `Bearer ${tampered}` },
        })
      ).status,
    ).toBe(204);
    // Both exchanges recorded (the journal follows the responses), then stop.
    const journal = join(reportDir, 'traffic.jsonl');
    const lines = () => {
      try {
        return readFileSync(journal, 'utf8')
          .split('\n')
          .filter((line) => line !== '').length;
      } catch {
        return 0;
      }
    };
    while (lines() < 2) await new Promise((resolve) => setTimeout(resolve, 20));
    child.kill('SIGTERM');
    const { code, stderr } = await child.exited;
    expect(code).toBe(0);
    expect(stderr).not.toContain('signatures not verified');
    const report = JSON.parse(readFileSync(join(reportDir, 'report.json'), 'utf8')) as Report;
    expect(report.requirements.find((r) => r.id === 'AUTH-CREDENTIAL-REQUIRED')!.status).toBe('fail');
  });

  it('a --jwks that cannot be read is a usage error: one line, exit 2', () => {
    const missing = join(dir, 'no-such-jwks.json');
    const proxy = spawnSync(process.execPath, [BIN, 'proxy', '--target', ref.origin, '--jwks', missing, '--report-dir', join(dir, 'x')], { encoding: 'utf8' });
    const offline = validate(join(dir, 'whatever.har'), '--jwks', missing);
    writeFileSync(join(dir, 'empty.har'), JSON.stringify({ log: { version: '1.2', entries: [] } }));
    const offlineExisting = validate(join(dir, 'empty.har'), '--jwks', missing, '--report-dir', join(dir, 'y'));
    for (const { status, stderr } of [proxy, { status: offlineExisting.code, stderr: offlineExisting.stderr }]) {
      expect(status).toBe(2);
      expect(stderr.trimEnd().split('\n')).toHaveLength(1);
      expect(stderr).toContain('no-such-jwks.json could not be read');
    }
    expect(offline.code).toBe(2);
  });
});

describe("proxy: the issuer from the target's discovery document, not from its address", () => {
  let ref: RunningReference;
  afterAll(() => ref?.close());

  /** One genuine delete through a proxy that learned `issuer` (or what the target says), and its implementation findings. */
  async function genuineDelete(issuer?: string): Promise<string[]> {
    const tenant = await learnTenant({ ...(issuer !== undefined ? { issuer } : {}), wellKnownAt: ref.origin });
    const under = await startTestProxy(ref.origin, { tenant: tenantTokensData(tenant) });
    try {
      const full = await tokenFor(ref, 'full');
      expect(
        await send(under, [
          {
            name: 'genuine delete',
            method: 'DELETE',
            path: `/api/v2/token-exchange-profiles/${ref.fixtures.token_exchange_profiles[0]}`,
            authorization: `Bearer ${full}`,
          },
        ]),
      ).toEqual([204]);
      return readJournal(under.journalPath).flatMap((e) => findingsOf(e).map((f) => f.requirement));
    } finally {
      await under.dispose();
    }
  }

  it('a tenant whose issuer names its public URL: its tokens pass; a token naming another issuer is judged so', async () => {
    ref = await startReference({ publicUrl: 'https://tenant.example.invalid', rateLimit: false });
    expect(await genuineDelete()).toEqual([]);
    expect(await genuineDelete('https://another-tenant.example.com/')).toEqual(['AUTH-CREDENTIAL-REQUIRED']);
  }, 60_000);
});

describe('tmi-conform run against a target that serves no JWKS', () => {
  let ref: RunningReference;
  let target: Server;
  let origin: string;

  beforeAll(async () => {
    ref = await startReference();
    // The reference behind a front that serves neither a discovery document nor a JWKS (as many implementations).
    target = createServer(async (req, res) => {
      if (req.url === '/.well-known/jwks.json' || req.url === '/.well-known/openid-configuration') return void res.writeHead(404).end();
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const headers = Object.fromEntries(
        Object.entries(req.headers).filter(([name]) => !['host', 'connection', 'content-length'].includes(name)) as Array<[string, string]>,
      );
      const answer = await fetch(ref.origin + req.url, { method: req.method!, headers, ...(chunks.length > 0 ? { body: Buffer.concat(chunks) } : {}) });
      const body = Buffer.from(await answer.arrayBuffer());
      const out: Record<string, string> = {};
      answer.headers.forEach((value, name) => {
        if (!['content-encoding', 'transfer-encoding', 'connection', 'content-length'].includes(name)) out[name] = value;
      });
      res.writeHead(answer.status, out).end(answer.status === 204 ? undefined : body);
    });
    await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(target.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    target?.closeAllConnections();
    await new Promise((resolve) => target?.close(resolve));
    await ref?.close();
  });

  it('says once that signatures are not verified and that the issuer is not known, judges the rest, and passes', async () => {
    const config = ref.config();
    const path = join(dir, 'no-jwks.json');
    // YAML reads JSON; the reference's clients, the front's address.
    writeFileSync(path, JSON.stringify({ ...config, base_url: `${origin}/api/v2`, auth_url: origin, audience: config.audience }), { mode: 0o600 });
    const child = spawn(
      process.execPath,
      [
        BIN,
        'run',
        '--config',
        path,
        '--requirement',
        'AUTH-CREDENTIAL-REQUIRED',
        '--requirement',
        'AUTH-CREDENTIAL-REQUIRED-OTHER',
        '--report-dir',
        join(dir, 'no-jwks-run'),
      ],
      {
        env: { ...process.env, GITHUB_STEP_SUMMARY: '' },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(stderr.match(/signatures not verified: no JWKS/g), stderr).toHaveLength(1);
    expect(stderr).toContain(`${origin}/.well-known/jwks.json answered 404`);
    expect(code, stdout + stderr).toBe(0);
    expect(stdout).toContain('verdict: conforming');
    expect(stdout).toMatch(/tests: [1-9]\d* passed · 0 failed/);
    // No discovery document and no keys to verify a token with: the issuer is not guessed from the address.
    expect(stdout).toContain('issuer not known: not judged');
    // So no token from "another" issuer can be made: those attacks are skipped, saying why.
    const report = JSON.parse(readFileSync(join(dir, 'no-jwks-run', 'report.json'), 'utf8')) as Report;
    const otherIssuer = report.tests.filter(
      (t) => t.name.includes('a token from another issuer') && t.requirements.some((id) => id.startsWith('AUTH-CREDENTIAL-REQUIRED')),
    );
    expect(otherIssuer.length).toBeGreaterThan(0);
    for (const test of otherIssuer) expect(test).toMatchObject({ status: 'skip', message: expect.stringContaining("the tenant's issuer is not known") });
  }, 120_000);
});
