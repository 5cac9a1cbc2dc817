// The curl command of a failing exchange: method, URL, headers and body as sent, quoted for a
// POSIX shell, the bearer token as $TOKEN and no secret; and which exchange a requirement's
// command sends.
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { exchangeEvidence } from '../reports/builder.ts';
import { curlCommand, curlVariableMeanings, curlVariables, reproducible } from '../reports/curl.ts';
import type { Evidence, RequirementResult } from '../reports/model.ts';
import { deleteExchange, getExchange, jwt, claims, updateExchange } from '../fixtures/exchanges.ts';
import type { TokenAttack } from '../rules/types.ts';

/** The words a shell makes of `command` (echoed back by printf), with TOKEN set. */
const words = (command: string, env: Record<string, string> = {}) =>
  execFileSync('sh', ['-c', `set -- ${command.replace(/^curl /, '')}; printf '%s\\n' "$@"`], {
    env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', ...env },
    encoding: 'utf8',
  })
    .split('\n')
    .slice(0, -1);

describe('curlCommand', () => {
  it('a GET: the URL and the headers as sent, the bearer token as $TOKEN, nothing curl sets itself', () => {
    const token = jwt(claims());
    const exchange = getExchange(undefined, 'rs_1', {
      requestHeaders: {
        Authorization: `Bearer ${token}`,
        Accept: 'application/json',
        Host: 'tenant.example.com',
        'Content-Length': '0',
        'User-Agent': 'sdk/1.0',
      },
    });
    const command = curlCommand(exchangeEvidence(exchange));
    expect(command).toBe(`curl -i 'https://tenant.example.com/api/v2/resource-servers/rs_1' -H "authorization: Bearer $TOKEN" -H 'accept: application/json'`);
    expect(command).not.toContain(token.split('.')[1]!);
    expect(curlVariables(command)).toEqual(['TOKEN']);
    expect(words(command, { TOKEN: 'abc' })).toEqual([
      '-i',
      'https://tenant.example.com/api/v2/resource-servers/rs_1',
      '-H',
      'authorization: Bearer abc',
      '-H',
      'accept: application/json',
    ]);
  });

  it('a PATCH with a body: -X and --data-raw, quotes in the body and the URL survive the shell', () => {
    const sent = { session_metadata: { note: `it's "quoted" $HOME \`x\`` } };
    const exchange = updateExchange(sent, undefined, { url: "https://tenant.example.com/api/v2/sessions/it's" });
    const command = curlCommand(exchangeEvidence(exchange));
    expect(command).toMatch(/^curl -i -X 'PATCH' /);
    const argv = words(command, { TOKEN: 't' });
    expect(argv).toContain("https://tenant.example.com/api/v2/sessions/it's");
    expect(JSON.parse(argv[argv.indexOf('--data-raw') + 1]!)).toEqual(sent);
    expect(argv).toContain('content-type: application/json');
  });

  it('other masked credentials become variables too; a URL without its origin takes the target', () => {
    const evidence = {
      startedAt: '2027-01-15T08:00:00.000Z',
      request: { method: 'GET', url: '/api/v2/resource-servers/[x]', headers: { 'x-api-key': '[REDACTED]******', authorization: 'Basic [REDACTED]' } },
    };
    const command = curlCommand(evidence, 'http://127.0.0.1:4010/api/v2');
    expect(command).toBe(
      `curl -i --globoff 'http://127.0.0.1:4010/api/v2/resource-servers/[x]' -H "x-api-key: $X_API_KEY" -H "authorization: Basic $BASIC_CREDENTIALS"`,
    );
    expect(curlVariables(command)).toEqual(['X_API_KEY', 'BASIC_CREDENTIALS']);
    expect(curlCommand(evidence)).toContain(`"$TARGET_ORIGIN"'/api/v2/resource-servers/[x]'`);
  });

  it('says so when the report cut the body it would send', () => {
    const exchange = updateExchange({ session_metadata: { v: 'a'.repeat(3000) } });
    expect(curlCommand(exchangeEvidence(exchange))).toMatch(/ {2}# the body was cut in the report: send the full body from the recording$/);
  });
});

describe('curlCommand of an attack case', () => {
  /** The evidence of a DELETE the suite sent with an attack token (as suites/api.ts marks it). */
  const attacked = (attack: TokenAttack, operation = true) =>
    exchangeEvidence(deleteExchange({ tokenFacts: { signatureValid: false, attack } }), operation ? 'deleteTokenExchangeProfile' : undefined);
  const URL = `'https://tenant.example.com/api/v2/token-exchange-profiles/tep_1'`;

  it('makes the attack token from $TOKEN with tmi-conform token, never sends $TOKEN itself as the credential', () => {
    for (const attack of ['unsigned', 'corrupted-signature', 'foreign-key'] as const) {
      const command = curlCommand(attacked(attack));
      expect(command).toBe(`curl -i -X 'DELETE' ${URL} -H "authorization: Bearer $(npx tmi-conform token --attack ${attack})"`);
      expect(curlVariables(command)).toEqual(['TOKEN']);
      expect(curlVariableMeanings(command)).toBe('a valid bearer token of the same client, which tmi-conform token turns into the attack token');
    }
    // The report still holds the attack in the exchange's credential, not the token.
    expect(attacked('unsigned').credential).toMatchObject({ attack: 'unsigned' });
    expect(JSON.stringify(attacked('unsigned'))).not.toMatch(/eyJ[\w-]+\.eyJ/);
  });

  it("tampered-scope adds the operation's scope and sends the genuine token first; key-confusion reads the JWKS; expired cannot be made", () => {
    // A test's exchange comes without its operation: the URL tells it.
    for (const operation of [true, false]) {
      const tampered = curlCommand(attacked('tampered-scope', operation));
      expect(tampered).toBe(
        `curl -s -o /dev/null -X 'DELETE' ${URL} -H "authorization: Bearer $TOKEN"; curl -i -X 'DELETE' ${URL} -H "authorization: Bearer $(npx tmi-conform token --attack tampered-scope --scope delete:token_exchange_profiles)"`,
      );
    }
    const confused = curlCommand(attacked('key-confusion'));
    expect(confused).toContain(`-H "authorization: Bearer $(npx tmi-conform token --attack key-confusion --jwks "$JWKS")"`);
    expect(curlVariables(confused)).toEqual(['TOKEN', 'JWKS']);
    expect(curlVariableMeanings(confused)).toMatch(/^TOKEN a valid bearer token of the same client, .*, JWKS the tenant's JSON Web Key Set \(URL or file\)$/);
    const expired = curlCommand(attacked('expired'));
    expect(expired).toContain('-H "authorization: Bearer $EXPIRED_TOKEN"');
    expect(curlVariables(expired)).toEqual(['EXPIRED_TOKEN']);
  });

  it('a token for another audience, or not valid yet, is the one the reader configured: no command makes it', () => {
    for (const [state, variable] of [
      ['wrong-audience', 'OTHER_AUDIENCE_TOKEN'],
      ['not-yet-valid', 'NOT_YET_VALID_TOKEN'],
    ] as const) {
      const command = curlCommand({ ...attacked('expired'), credential: { state } });
      expect(command).toContain(`-H "authorization: Bearer $${variable}"`);
      expect(curlVariables(command)).toEqual([variable]);
      expect(curlVariableMeanings(command)).toMatch(/^a token the tenant signed /);
    }
    // A token of the tenant that is simply valid is sent as $TOKEN.
    expect(curlCommand({ ...attacked('expired'), credential: { state: 'valid' } })).toContain('Bearer $TOKEN"');
  });

  it('the shell reads the command as one curl call whose credential is the output of tmi-conform token', () => {
    // A stand-in for npx that says what it was asked: the quoting survives the shell.
    const argv = execFileSync(
      'sh',
      ['-c', `npx() { printf 'made(%s)' "$*"; }; set -- ${curlCommand(attacked('key-confusion')).replace(/^curl /, '')}; printf '%s\\n' "$@"`],
      { env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', JWKS: 'https://tenant.example.com/.well-known/jwks.json' }, encoding: 'utf8' },
    ).split('\n');
    expect(argv).toContain('authorization: Bearer made(tmi-conform token --attack key-confusion --jwks https://tenant.example.com/.well-known/jwks.json)');
  });
});

describe('reproducible', () => {
  const exchange = exchangeEvidence(getExchange());
  const requirement = (status: RequirementResult['status'], evidence: Evidence[]) => ({ status, evidence }) as RequirementResult;

  it("a failed test's own exchange first, else the first failing exchange; none for a passing requirement", () => {
    const byExchange: Evidence = { source: 'run', kind: 'exchange', status: 'fail', exchange };
    const byTest: Evidence = { source: 'run', kind: 'test', status: 'fail', exchange: { ...exchange, id: 'test' } };
    const withoutExchange: Evidence = { source: 'run', kind: 'test', status: 'fail' };
    expect(reproducible(requirement('fail', [withoutExchange, byExchange, byTest]))).toBe(byTest);
    expect(reproducible(requirement('fail', [withoutExchange, byExchange]))).toBe(byExchange);
    expect(reproducible(requirement('fail', [withoutExchange]))).toBeUndefined();
    expect(reproducible(requirement('pass', [{ ...byExchange, status: 'pass' }]))).toBeUndefined();
  });
});
