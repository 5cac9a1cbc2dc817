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
import { run as tokenCommand } from '../cli/token.ts';
import { startKeyUrlServer, type KeyUrlServer } from '../suites/key-url-server.ts';
import { tokenFor } from './helpers/reference.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const BIN = join(ROOT, 'bin/tmi-conform.js');
const dir = mkdtempSync(join(tmpdir(), 'tmi-attack-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Faults that accept an unsigned, a tampered, a key-confused and a foreign-signed token. */
const FAULTS = ['alg-none-accepted', 'tampered-payload-accepted', 'key-confusion-accepted', 'delete-invalid-signature-accepted'];
const ATTACKS = ['unsigned', 'tampered-scope', 'key-confusion', 'foreign-key'];

/**
 * The switches of the attack catalogue, each falling for its own attacks only (none skips the
 * signature check wholesale, as delete-invalid-signature-accepted does); a token with nothing
 * after its last dot is read unverified by signature-missing-accepted, so alg "none" passes too.
 */
const CATALOGUE_FAULTS = [
  'alg-none-any-case-accepted',
  'signature-missing-accepted',
  'zero-signature-accepted',
  'psychic-signature-accepted',
  'embedded-jwk-accepted',
  'embedded-x5c-accepted',
  'jku-followed',
  'x5u-followed',
  'kid-path-traversal-accepted',
  'kid-sql-injection-accepted',
  'hs256-empty-secret-accepted',
  'hs256-weak-secret-accepted',
  'hs256-client-secret-accepted',
];
const CATALOGUE_ATTACKS = [
  'unsigned',
  'alg-none-capitalized',
  'alg-none-uppercase',
  'alg-none-mixed-case',
  'signature-stripped',
  'signature-empty',
  'zero-signature',
  'psychic-es256',
  'psychic-es384',
  'embedded-jwk',
  'embedded-x5c',
  'jku',
  'x5u',
  'kid-path-traversal',
  'kid-sql-injection',
  'hs256-empty-secret',
  'hs256-weak-secret',
  'hs256-client-secret',
];

// The key URL the jku and x5u commands name ($KEY_URL): what `tmi-conform token --key-set` prints, served on loopback.
let keyServer: KeyUrlServer;
beforeAll(async () => {
  keyServer = await startKeyUrlServer();
});
afterAll(() => keyServer?.close());

function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = Object.fromEntries(
    Object.entries(process.env).filter(
      ([k]) =>
        !k.startsWith('VITEST') &&
        !k.startsWith('TMI_') &&
        k !== 'NODE_ENV' &&
        k !== 'GITHUB_STEP_SUMMARY' &&
        !['TOKEN', 'JWKS', 'KEY_URL', 'CLIENT_SECRET'].includes(k),
    ),
  );
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
    execFile('sh', ['-c', command], { cwd: ROOT, env: cleanEnv(env), timeout: 60_000 }, (error, stdout, stderr) =>
      error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(stdout),
    ),
  );
}

/** `$(npx tmi-conform token …)` in an attack case's curl command: the words after `token`. */
const TOKEN_COMMAND = /\$\(npx tmi-conform token ([^)]*)\)/g;

/**
 * The same command line through the same shell, with `tmi-conform token` run in this process
 * (cli/token.ts, the code the command starts): the shell expands the command's words as a user's
 * would and runs curl; only a Node process per command is saved. `npx tmi-conform token` itself
 * is run through npx by the first attack of each group (shell above).
 */
async function shellWithTokenInProcess(command: string, env: Record<string, string>): Promise<string> {
  const calls = [...command.matchAll(TOKEN_COMMAND)];
  expect(calls, command).toHaveLength(1);
  // The words of the token command as the shell gives them to npx, one per NUL.
  const words = (await shell(`printf '%s\\0' ${calls[0]![1]}`, env)).split('\0').slice(0, -1);
  let token = '';
  const code = await tokenCommand(words, { env: cleanEnv(env), out: (text) => (token += text) });
  expect(code, words.join(' ')).toBe(0);
  // The command line itself, unchanged: its npx is a shell function that prints the token made here.
  return shell(`npx() { printf '%s' "$ATTACK_TOKEN"; }; ${command}`, { ...env, ATTACK_TOKEN: token.trim() });
}

/** The status line of curl -i's output. */
const statusOf = (output: string) => Number(/^HTTP\/[\d.]+ (\d{3})/.exec(output)?.[1]);

/** The reference's profile whose client the evidence's token was of (its azp claim). */
function profileOf(ref: RunningReference, exchange: ExchangeEvidence): ProfileName {
  // A token with no signature part is no JWT, and keeps no claims: the suites make it from the full client's.
  if (exchange.credential?.claims === undefined) return 'full';
  const azp = exchange.credential.claims['azp'];
  const profile = (Object.keys(ref.clients) as ProfileName[]).find((p) => ref.clients[p].client_id === azp);
  if (!profile) throw new Error(`no client ${String(azp)}`);
  return profile;
}

const jwksOf = (ref: RunningReference) => `${ref.authUrl}/.well-known/jwks.json`;

describe.each([
  ['the first attacks', FAULTS, ATTACKS],
  ['the attack catalogue', CATALOGUE_FAULTS, CATALOGUE_ATTACKS],
])('an attack case reproduced from the report: %s', (_, FAULTS, ATTACKS) => {
  let faulty: RunningReference;
  let conforming: RunningReference;
  let report: Report;
  let stdout: string;
  let code: number | null;
  const reportDir = join(dir, `report-${FAULTS.length}`);
  /** The failing exchange of each attack, as the report keeps it. */
  const byAttack = new Map<string, ExchangeEvidence>();

  beforeAll(async () => {
    [faulty, conforming] = await Promise.all([startReference({ faults: FAULTS }), startReference()]);
    const config = join(dir, `faulty-${FAULTS.length}.yaml`);
    writeFileSync(config, stringify({ ...faulty.config(), rate_limit_probe: false }), { mode: 0o600 });
    ({ code, stdout } = await runSuites(['--config', config, '--requirement', 'AUTH-CREDENTIAL-REQUIRED', '--report-dir', reportDir]));
    report = JSON.parse(readFileSync(join(reportDir, 'report.json'), 'utf8')) as Report;
    const failing = report.requirements
      .find((r) => r.id === 'AUTH-CREDENTIAL-REQUIRED')!
      .evidence.filter((e: Evidence) => e.status === 'fail' && e.exchange?.credential?.attack);
    // The group's own attacks (delete-invalid-signature-accepted lets every forged token through on delete).
    for (const e of failing)
      if (!byAttack.has(e.exchange!.credential!.attack!) && ATTACKS.includes(e.exchange!.credential!.attack!))
        byAttack.set(e.exchange!.credential!.attack!, e.exchange!);
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
    // The weak secret is a word of the kit's list, kept so that the command signs with it again.
    if (byAttack.has('hs256-weak-secret'))
      expect(byAttack.get('hs256-weak-secret')!.credential).toMatchObject({ attack: 'hs256-weak-secret', attackSecret: 'secret' });
  });

  it('the console and report.md give a command that makes the attack token from $TOKEN, never $TOKEN itself as the credential', () => {
    const curl = stdout.split('\n').find((l) => l.trim().startsWith('curl ') && l.includes('token-exchange-profiles'))!;
    expect(curl).toMatch(/-H "authorization: [Bb]earer \$\(npx tmi-conform token --attack [a-z-]+( --\S+ \S+)?\)"/);
    expect(stdout).toContain("an attack case's command makes its attack token from it");
    const md = readFileSync(join(reportDir, 'report.md'), 'utf8');
    expect(md).toMatch(/\$\(npx tmi-conform token --attack [a-z-]+/);
    expect(md).toContain('a valid bearer token of the same client, which tmi-conform token turns into the attack token');
    if (byAttack.has('tampered-scope')) {
      expect(curlCommand(byAttack.get('tampered-scope')!, report.target)).toContain('--attack tampered-scope --scope delete:token_exchange_profiles');
      expect(curlCommand(byAttack.get('key-confusion')!, report.target)).toContain('--attack key-confusion --jwks "$JWKS"');
    } else {
      expect(curlCommand(byAttack.get('jku')!, report.target)).toContain('--attack jku --key-url "$KEY_URL"');
      expect(curlCommand(byAttack.get('hs256-weak-secret')!, report.target)).toContain("--attack hs256-weak-secret --secret 'secret'");
      const clientSecret = curlCommand(byAttack.get('hs256-client-secret')!, report.target);
      expect(clientSecret).toContain('--attack hs256-client-secret --scope delete:token_exchange_profiles');
      expect(curlVariables(clientSecret)).toEqual(['TOKEN', 'CLIENT_SECRET']);
      // The client's own secret is nowhere in the report.
      for (const file of ['report.json', 'report.md', 'report.html'])
        expect(readFileSync(join(reportDir, file), 'utf8')).not.toContain(faulty.clients.no_scope.client_secret);
    }
    // No working credential: no JWT anywhere in the report.
    for (const file of ['report.json', 'report.md', 'report.html'])
      expect(readFileSync(join(reportDir, file), 'utf8')).not.toMatch(/eyJ[\w-]+\.eyJ[\w-]+\.[\w-]*/);
  });

  it('run through a shell with a valid token of the same client, each command gets the faulty answer again, and 401 from a conforming reference', async () => {
    const runs = [...byAttack].flatMap(([attack, exchange]): Array<() => Promise<{ attack: string; ref: string; status: number; expected: number }>> => {
      const command = curlCommand(exchange, report.target);
      expect(curlVariables(command)[0], attack).toBe('TOKEN');
      const against = async (ref: RunningReference) => {
        const profile = profileOf(faulty, exchange);
        const token = await tokenFor(ref, profile);
        const env = {
          TOKEN: token,
          JWKS: jwksOf(ref),
          KEY_URL: keyServer.url(attack === 'x5u' ? 'x5u' : 'jku', 'reproduction'),
          CLIENT_SECRET: ref.clients[profile].client_secret,
        };
        const run = attack === ATTACKS[0] ? shell : shellWithTokenInProcess;
        return statusOf(await run(command.replaceAll(faulty.origin, ref.origin), env));
      };
      return [
        () => against(faulty).then((status) => ({ attack, ref: 'faulty', status, expected: exchange.response!.status })),
        () => against(conforming).then((status) => ({ attack, ref: 'conforming', status, expected: 401 })),
      ];
    });
    // Four shells at a time: the first attack's start a Node process (npx tmi-conform token) on a shared machine.
    const results: Array<Awaited<ReturnType<(typeof runs)[number]>>> = [];
    for (let i = 0; i < runs.length; i += 4) results.push(...(await Promise.all(runs.slice(i, i + 4).map((start) => start()))));
    for (const r of results) expect(r.status, `${r.attack} against the ${r.ref} reference`).toBe(r.expected);
    // The faulty reference carried the attacks out, as in the run.
    expect(results.filter((r) => r.ref === 'faulty').map((r) => r.status)).toEqual(ATTACKS.map(() => 204));
  }, 600_000);
});

describe('a claim profile case reproduced from the report: the token the reader configured, sent again', () => {
  let faulty: RunningReference;
  let conforming: RunningReference;
  let report: Report;
  const reportDir = join(dir, 'report-claims');
  /** The carried-out exchange of each claim requirement, as the report keeps it. */
  const carriedOut: ExchangeEvidence[] = [];
  const REQUIREMENTS = ['AUTH-AUDIENCE-401', 'AUTH-NOT-BEFORE-401'];

  beforeAll(async () => {
    [faulty, conforming] = await Promise.all([startReference({ faults: ['wrong-audience-accepted', 'not-yet-valid-accepted'] }), startReference()]);
    const config = join(dir, 'faulty-claims.yaml');
    writeFileSync(config, stringify({ ...faulty.config(), rate_limit_probe: false }), { mode: 0o600 });
    await runSuites(['--config', config, ...REQUIREMENTS.flatMap((id) => ['--requirement', id]), '--report-dir', reportDir]);
    report = JSON.parse(readFileSync(join(reportDir, 'report.json'), 'utf8')) as Report;
    // The example each requirement keeps of an exchange carried out with its token.
    for (const id of REQUIREMENTS) {
      const found = report.requirements
        .find((r) => r.id === id)!
        .evidence.find((e: Evidence) => e.status === 'warn' && e.exchange?.credential?.state !== undefined);
      if (found) carriedOut.push(found.exchange!);
    }
  }, 180_000);
  afterAll(async () => {
    await faulty?.close();
    await conforming?.close();
  });

  /** The token a reader would configure against `ref`: one for another of its APIs, or one whose nbf lies ahead. */
  async function givenTokens(ref: RunningReference): Promise<Record<string, string>> {
    return { OTHER_AUDIENCE_TOKEN: await tokenFor(ref, 'full', { audience: ref.otherAudience }), NOT_YET_VALID_TOKEN: ref.notYetValidToken };
  }

  it('each command names its token as a variable of its own, gets the faulty answer again, and 401 from a conforming reference', async () => {
    expect(carriedOut.map((e) => `${e.credential!.state} ${e.request.method} ${e.response!.status}`).sort()).toEqual([
      'not-yet-valid DELETE 204',
      'wrong-audience DELETE 204',
    ]);
    const [faultyTokens, conformingTokens] = await Promise.all([givenTokens(faulty), givenTokens(conforming)]);
    for (const exchange of carriedOut) {
      const command = curlCommand(exchange, report.target);
      expect(curlVariables(command)).toEqual([exchange.credential!.state === 'wrong-audience' ? 'OTHER_AUDIENCE_TOKEN' : 'NOT_YET_VALID_TOKEN']);
      expect(statusOf(await shell(command, faultyTokens)), command).toBe(exchange.response!.status);
      expect(statusOf(await shell(command.replaceAll(faulty.origin, conforming.origin), conformingTokens)), command).toBe(401);
    }
    // No working credential: no JWT anywhere in the report.
    for (const file of ['report.json', 'report.md', 'report.html'])
      expect(readFileSync(join(reportDir, file), 'utf8')).not.toMatch(/eyJ[\w-]+\.eyJ[\w-]+\.[\w-]*/);
  }, 120_000);
});
