// An attack case's curl command reproduces the attack: a run against a reference whose fault
// switches accept forged tokens records which attack each exchange sent, and the report's
// command makes that token again from a valid one ($TOKEN, through `tmi-conform token
// --attack`). Run through a shell with a fresh token of the same client, it gets the same
// answer from the faulty reference (the request carried out) and 401 from a conforming one.
// The report holds no working credential.
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startReference, type ProfileName, type RunningReference } from '../reference/index.ts';
import { curlCommand, curlVariables } from '../reports/curl.ts';
import type { Evidence, ExchangeEvidence, Report } from '../reports/model.ts';
import { reportSchemaError } from '../reports/schema.ts';
import { tokenFor } from './helpers/reference.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const BIN = join(ROOT, 'bin/tmi-conform.js');
const dir = mkdtempSync(join(tmpdir(), 'tmi-attack-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Faults that accept an unsigned, a tampered, a key-confused and a foreign-signed token. */
const FAULTS = ['alg-none-accepted', 'tampered-payload-accepted', 'key-confusion-accepted', 'delete-invalid-signature-accepted'];
const ATTACKS = ['unsigned', 'tampered-scope', 'key-confusion', 'foreign-key'];

function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('VITEST') && !k.startsWith('TMI_') && k !== 'NODE_ENV' && k !== 'GITHUB_STEP_SUMMARY' && k !== 'TOKEN' && k !== 'JWKS'));
  return { ...env, ...extra };
}

function runSuites(args: string[]): Promise<{ code: number | null; stdout: string }> {
  const child = spawn(process.execPath, [BIN, 'run', ...args], { env: cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  child.stdout.on('data', (c) => (stdout += c));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout })));
}

/** Runs a command line as a user's shell would, in the project (where npx finds tmi-conform), with TOKEN and JWKS set. */
function shell(command: string, env: Record<string, string>): Promise<string> {
  return new Promise((resolve, reject) =>
    execFile('sh', ['-c', command], { cwd: ROOT, env: cleanEnv(env), timeout: 60_000 }, (error, stdout, stderr) => (error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(stdout))),
  );
}

/** The status line of curl -i's output. */
const statusOf = (output: string) => Number(/^HTTP\/[\d.]+ (\d{3})/.exec(output)?.[1]);

/** The reference's profile whose client the evidence's token was of (its azp claim). */
function profileOf(ref: RunningReference, exchange: ExchangeEvidence): ProfileName {
  const azp = exchange.credential?.claims?.['azp'];
  const profile = (Object.keys(ref.clients) as ProfileName[]).find((p) => ref.clients[p].client_id === azp);
  if (!profile) throw new Error(`no client ${String(azp)}`);
  return profile;
}

const jwksOf = (ref: RunningReference) => `${ref.authUrl}/.well-known/jwks.json`;

describe('an attack case reproduced from the report', () => {
  let faulty: RunningReference;
  let conforming: RunningReference;
  let report: Report;
  let stdout: string;
  let code: number | null;
  const reportDir = join(dir, 'report');
  /** The failing exchange of each attack, as the report keeps it. */
  const byAttack = new Map<string, ExchangeEvidence>();

  beforeAll(async () => {
    [faulty, conforming] = await Promise.all([startReference({ faults: FAULTS }), startReference()]);
    const config = join(dir, 'faulty.yaml');
    writeFileSync(config, stringify({ ...faulty.config(), rate_limit_probe: false }), { mode: 0o600 });
    ({ code, stdout } = await runSuites(['--config', config, '--requirement', 'AUTH-CREDENTIAL-REQUIRED', '--report-dir', reportDir]));
    report = JSON.parse(readFileSync(join(reportDir, 'report.json'), 'utf8')) as Report;
    const failing = report.requirements.find((r) => r.id === 'AUTH-CREDENTIAL-REQUIRED')!.evidence.filter((e: Evidence) => e.status === 'fail' && e.exchange?.credential?.attack);
    for (const e of failing) if (!byAttack.has(e.exchange!.credential!.attack!)) byAttack.set(e.exchange!.credential!.attack!, e.exchange!);
  }, 180_000);
  afterAll(async () => {
    await faulty?.close();
    await conforming?.close();
  });

  it('the run fails, and report.json says which attack each failing exchange sent', () => {
    expect(code, stdout).toBe(1);
    expect(reportSchemaError(report)).toBeUndefined();
    expect([...byAttack.keys()].sort()).toEqual([...ATTACKS].sort());
    expect(byAttack.get('unsigned')!.credential).toMatchObject({ state: 'unsigned', alg: 'none', attack: 'unsigned' });
  });

  it('the console and report.md give a command that makes the attack token from $TOKEN, never $TOKEN itself as the credential', () => {
    const curl = stdout.split('\n').find((l) => l.trim().startsWith('curl ') && l.includes('token-exchange-profiles'))!;
    expect(curl).toMatch(/-H "authorization: [Bb]earer \$\(npx tmi-conform token --attack [a-z-]+( --\S+ \S+)?\)"/);
    expect(stdout).toContain("an attack case's command makes its attack token from it");
    const md = readFileSync(join(reportDir, 'report.md'), 'utf8');
    expect(md).toMatch(/\$\(npx tmi-conform token --attack [a-z-]+/);
    expect(md).toContain('a valid bearer token of the same client, which tmi-conform token turns into the attack token');
    expect(curlCommand(byAttack.get('tampered-scope')!, report.target)).toContain('--attack tampered-scope --scope delete:token_exchange_profiles');
    expect(curlCommand(byAttack.get('key-confusion')!, report.target)).toContain('--attack key-confusion --jwks "$JWKS"');
    // No working credential: no JWT anywhere in the report.
    for (const file of ['report.json', 'report.md', 'report.html']) expect(readFileSync(join(reportDir, file), 'utf8')).not.toMatch(/eyJ[\w-]+\.eyJ[\w-]+\.[\w-]*/);
  });

  it('run through a shell with a valid token of the same client, each command gets the faulty answer again, and 401 from a conforming reference', async () => {
    const runs = [...byAttack].flatMap(([attack, exchange]) => {
      const command = curlCommand(exchange, report.target);
      expect(curlVariables(command)[0], attack).toBe('TOKEN');
      const against = async (ref: RunningReference) => {
        const token = await tokenFor(ref, profileOf(faulty, exchange));
        return statusOf(await shell(command.replaceAll(faulty.origin, ref.origin), { TOKEN: token, JWKS: jwksOf(ref) }));
      };
      return [against(faulty).then((status) => ({ attack, ref: 'faulty', status, expected: exchange.response!.status })), against(conforming).then((status) => ({ attack, ref: 'conforming', status, expected: 401 }))];
    });
    const results = await Promise.all(runs);
    for (const r of results) expect(r.status, `${r.attack} against the ${r.ref} reference`).toBe(r.expected);
    // The faulty reference carried the attacks out, as in the run.
    expect(results.filter((r) => r.ref === 'faulty').map((r) => r.status)).toEqual(ATTACKS.map(() => 204));
  }, 180_000);
});
