// validate reads recordings made by anyone: a client secret its token request carried is masked
// wherever the same value turns up in a later exchange's evidence, in every report it writes.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { claims, jwt, session } from '../fixtures/exchanges.ts';
import { runCli } from './helpers/cli.ts';

const dir = mkdtempSync(join(tmpdir(), 'tmi-validate-secrets-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// Plain words: nothing but having been seen as a client secret gets it masked.
const SECRET = 'harbor lantern morning';
const entry = (method: string, url: string, requestBody: string | undefined, status: number, responseBody: string, contentType = 'application/json') => ({
  startedDateTime: '2027-01-15T08:00:00.000Z',
  request: {
    method,
    url,
    headers: [{ name: 'content-type', value: contentType }, ...(url.includes('/api/v2/') ? [{ name: 'authorization', value: `Bearer ${jwt(claims())}` }] : [])],
    ...(requestBody !== undefined ? { postData: { mimeType: contentType, text: requestBody } } : {}),
  },
  response: {
    status,
    headers: [{ name: 'content-type', value: 'application/json' }],
    content: { size: responseBody.length, mimeType: 'application/json', text: responseBody },
  },
});

const tokenRequest = (secret: string) =>
  entry(
    'POST',
    'https://tenant.example.com/oauth/token',
    `grant_type=client_credentials&client_id=app&client_secret=${encodeURIComponent(secret)}&audience=https%3A%2F%2Ftenant.example.com%2Fapi%2Fv2%2F`,
    200,
    JSON.stringify({ access_token: jwt(claims()), token_type: 'Bearer', expires_in: 86400 }),
    'application/x-www-form-urlencoded',
  );

describe('validate: a secret seen once is masked everywhere after', () => {
  it('a client secret from the token request, put into a later session_metadata, reaches no report', async () => {
    const metadata = { note: SECRET };
    const har = {
      log: {
        version: '1.2',
        creator: { name: 'x', version: '1' },
        entries: [
          // Earlier token requests fill the evidence a report keeps of token requests: the one
          // carrying SECRET is counted, never made into evidence, and must still be learned.
          ...['one', 'two', 'three'].map((other) => tokenRequest(`other ${other} words`)),
          tokenRequest(SECRET),
          entry(
            'PATCH',
            'https://tenant.example.com/api/v2/sessions/sess_1',
            JSON.stringify({ session_metadata: metadata }),
            200,
            JSON.stringify(session(metadata)),
          ),
        ],
      },
    };
    const path = join(dir, 'secret.har');
    writeFileSync(path, JSON.stringify(har));
    const reportDir = join(dir, 'reports');
    const result = await runCli(['validate', path, '--report-dir', reportDir]);
    expect(result.code, result.stderr).not.toBe(2);
    const written = ['report.json', 'report.md', 'report.html', 'junit.xml'].map((name) => readFileSync(join(reportDir, name), 'utf8'));
    // The session's evidence is in the report (its request body is kept), with the secret masked.
    expect(written[0]).toContain('/api/v2/sessions/sess_1');
    expect(written[0]).toContain('session_metadata');
    for (const text of [...written, result.stdout, result.stderr]) expect(text).not.toContain(SECRET);
  });
});
